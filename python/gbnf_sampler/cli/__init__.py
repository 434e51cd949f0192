"""The ``gbnf-sampler`` command line (also ``python -m gbnf_sampler``)."""

from __future__ import annotations

from .main import build_parser, main

__all__ = ["build_parser", "main"]
