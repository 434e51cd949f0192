"""Unicode property escapes of ECMA-262 regexes (``\\p{L}``, ``\\p{gc=Lu}``, ``\\P{Nd}``...).

Only General_Category values are supported (short or long names, optionally after ``gc=`` or
``General_Category=``): they are the ones Python's ``unicodedata`` knows, so the code-point
ranges are computed here, once, from the Unicode version of the running Python
(``unicodedata.unidata_version``; 14.0.0 on Python 3.11). Scripts and binary properties
(``Script=Latin``, ``Alphabetic``...) raise ``KeyError`` with the reason.
"""

from __future__ import annotations

import functools
import sys
import unicodedata

from . import tree
from .tree import Ranges

UNICODE_VERSION = unicodedata.unidata_version

_LONG_NAMES = {
    "Letter": "L",
    "Cased_Letter": "LC",
    "Uppercase_Letter": "Lu",
    "Lowercase_Letter": "Ll",
    "Titlecase_Letter": "Lt",
    "Modifier_Letter": "Lm",
    "Other_Letter": "Lo",
    "Mark": "M",
    "Combining_Mark": "M",
    "Nonspacing_Mark": "Mn",
    "Spacing_Mark": "Mc",
    "Enclosing_Mark": "Me",
    "Number": "N",
    "Decimal_Number": "Nd",
    "digit": "Nd",
    "Letter_Number": "Nl",
    "Other_Number": "No",
    "Punctuation": "P",
    "punct": "P",
    "Connector_Punctuation": "Pc",
    "Dash_Punctuation": "Pd",
    "Open_Punctuation": "Ps",
    "Close_Punctuation": "Pe",
    "Initial_Punctuation": "Pi",
    "Final_Punctuation": "Pf",
    "Other_Punctuation": "Po",
    "Symbol": "S",
    "Math_Symbol": "Sm",
    "Currency_Symbol": "Sc",
    "Modifier_Symbol": "Sk",
    "Other_Symbol": "So",
    "Separator": "Z",
    "Space_Separator": "Zs",
    "Line_Separator": "Zl",
    "Paragraph_Separator": "Zp",
    "Other": "C",
    "Control": "Cc",
    "cntrl": "Cc",
    "Format": "Cf",
    "Surrogate": "Cs",
    "Private_Use": "Co",
    "Unassigned": "Cn",
}


@functools.lru_cache(maxsize=1)
def _categories() -> dict[str, Ranges]:
    """Two-letter General_Category -> code-point ranges (one pass over all code points)."""
    runs: dict[str, list[tuple[int, int]]] = {}
    start, current = 0, unicodedata.category(chr(0))
    for cp in range(1, sys.maxunicode + 2):
        cat = unicodedata.category(chr(cp)) if cp <= sys.maxunicode else ""
        if cat != current:
            runs.setdefault(current, []).append((start, cp - 1))
            start, current = cp, cat
    return {cat: tree.normalize(r) for cat, r in runs.items()}


def general_category(name: str) -> Ranges:
    """The code points of a ``\\p{...}`` body; raises ``KeyError`` (with the reason)."""
    key, _, value = name.partition("=")
    if value:
        if key not in ("gc", "General_Category"):
            raise KeyError(f"Unicode property {key!r} is not supported (only General_Category)")
        name = value
    short = _LONG_NAMES.get(name, name)
    table = _categories()
    if short == "LC":
        return tree.normalize(table["Lu"] + table["Ll"] + table["Lt"])
    if len(short) == 1:
        parts = [r for cat, ranges in table.items() if cat[0] == short for r in ranges]
        if parts:
            return tree.normalize(parts)
    if short in table:
        return table[short]
    raise KeyError(f"unknown or unsupported Unicode property {name!r} (General_Category only)")


__all__ = ["UNICODE_VERSION", "general_category"]
