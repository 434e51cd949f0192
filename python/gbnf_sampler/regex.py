"""Regular expressions (the ECMA-262 dialect of JSON Schema ``pattern``) -> GBNF.

``regex_to_gbnf(pattern)`` gives a grammar for the strings that *fully* match ``pattern`` (``^``
and ``$`` at the ends are accepted and change nothing). Code points are matched one by one, as
with the ``u`` flag: ``.`` is any code point except line terminators, ``\\d \\w \\s`` have their
ECMA-262 (ASCII for ``\\d \\w``) meaning. Unsupported (``SchemaError`` with path ``""`` and the
position in the message): backreferences, lookaround, ``\\b``/``\\B``, ``\\p{...}``, anchors in
the middle of a pattern.
"""

from __future__ import annotations

from typing import Any

from . import _regex_parse, _rx
from .errors import SchemaError


def regex_to_gbnf(pattern: str, **options: Any) -> str:
    """GBNF (root rule ``root``) for the strings that fully match ``pattern``.

    Options: ``search=True`` gives JSON Schema semantics instead (an unanchored search: the
    strings that *contain* a match, unless the pattern is anchored with ``^``/``$``).
    """
    search = bool(options.pop("search", False))
    if options:
        raise TypeError(f"unknown option(s): {', '.join(sorted(options))}")
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be str, not {type(pattern).__name__}")
    try:
        node = _regex_parse.anchor(_regex_parse.parse(pattern), search=search)
        node = _rx.without(node, ())  # empty classes ([], [^\s\S]) match nothing
        if node == _rx.NEVER:
            raise SchemaError(f"regex {pattern!r} matches nothing", "")
        return f"root ::= {_rx.to_gbnf(node)}\n"
    except _regex_parse.RegexSyntaxError as err:
        raise SchemaError(f"regex {pattern!r}: {err}", "") from None
    except RecursionError:  # a backstop: MAX_GROUP_DEPTH stops realistic patterns first
        raise SchemaError(f"regex {pattern[:80]!r}...: too deeply nested to convert", "") from None


__all__ = ["regex_to_gbnf"]
