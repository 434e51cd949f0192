"""The regex engine: regular expressions (the ECMA-262 dialect of JSON Schema ``pattern``) parsed
into a small tree (:mod:`.tree`), turned into automata where a tree cannot say it (:mod:`.automata`,
lookaheads in :mod:`.lookaround`, Unicode properties in :mod:`.unicode_props`), and printed as
GBNF (:mod:`.convert`)."""

from __future__ import annotations

from .convert import regex_to_gbnf

__all__ = ["regex_to_gbnf"]
