"""Argument checks shared by the core types: API misuse raises TypeError or ValueError naming
the expected and the actual value, never a crash in the extension."""

from __future__ import annotations

import operator

import numpy as np


def checked_int(name: str, value: object, minimum: int | None = 0) -> int:
    """``value`` as an int (not a bool), at least ``minimum`` unless that is None."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got bool")
    try:
        n = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{name} must be an int, got {type(value).__name__}") from None
    if minimum is not None and n < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {n}")
    return n


def check_uint32(name: str, value: object, minimum: int, bound: int = 2**32) -> int:
    """A plain int in ``[minimum, bound)`` (the C++ side stores it as uint32 or uint64)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be int, got {type(value).__name__}")
    if not minimum <= value < bound:
        limit = "2**32" if bound == 2**32 else "2**63"
        raise ValueError(f"{name} must be in [{minimum}, {limit}), got {value}")
    return value


class GrammarDefault:
    """The default of an option whose value comes from the grammar (``Grammar.max_whitespace``)."""

    def __repr__(self) -> str:
        return "<the grammar's default>"


GRAMMAR_DEFAULT = GrammarDefault()


def whitespace_bound(value: int | GrammarDefault | None, grammar_default: int | None) -> int:
    """``max_whitespace`` for the core: the bound, or -1 for none (None given, or the grammar's
    default is None)."""
    if isinstance(value, GrammarDefault):
        value = grammar_default
    if value is None:
        return -1
    return check_uint32("max_whitespace", value, 0, 2**32 - 1)


def check_token_id(value: object, vocab_size: int, what: str = "token_id") -> int:
    """A token id as an int in [0, vocab_size): TypeError for a non-int (bool and float
    included), ValueError out of range."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    token_id = int(value)
    if not 0 <= token_id < vocab_size:
        raise ValueError(f"{what} {token_id} is out of range for a vocabulary of size {vocab_size}")
    return token_id


def as_id(value: object, name: str) -> int:
    """An int (or an integer with ``__index__``, e.g. numpy's), never a bool or a float."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must hold ints, got bool ({value!r})")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{name} must hold ints, got {type(value).__name__} ({value!r})") from None
