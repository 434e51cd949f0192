"""The grammar doctor: generation hazards of grammars that parse fine (see :mod:`.api`)."""

from __future__ import annotations

from .api import CODES, DIALECTS, Report, diagnose, diagnose_schema
from .findings import Finding

__all__ = ["CODES", "DIALECTS", "Finding", "Report", "diagnose", "diagnose_schema"]
