"""Exact grammars for JSON numbers in a range, and integers that are multiples of a number.

Integers: every decimal spelling without leading zeros of every integer in ``[lo, hi]`` (``-0``
for zero too where negative values are in the range); for a ``number`` with an integral
``multipleOf`` also with one zero fraction digit (``4.0``, as json.dumps writes a float). Other
spellings (``1.0`` for ``type: integer``, ``4.00``, ``1e3``) are refused: a generated ``1.0``
reads as a float in most languages, longer zero runs let a model write zeros without end, and
the exponent forms together are not context-free (the exponent would have to count digits).
Numbers with a bound of 0 on one side only (``minimum: 0``...): every spelling, exponents too
(after a mantissa of 0 or of at least 1, within +-300: no value a reader rounds to 0; no ``-0``
beside ``minimum: 0``). With other bounds: every spelling ``-?I(.F)?`` (no exponent) whose
value is in the interval, ``-0`` when 0 and negative values are, and the spellings json.dumps
writes for magnitudes below 1e-4 (``5e-05``) when
the interval holds all of them; other exponent forms (``1e3``, ``0.1e1``) are refused: with a
bound, all of them together are not context-free (sound, but incomplete for them).
``enum``/``const`` numbers: their plain digits, trailing fraction zeros and a zero exponent
allowed, and json.dumps' spelling (:func:`literal_number_gbnf`).
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal

from ..limits import MAX_ENUMERATED_MULTIPLES, MAX_MULTIPLE_OF_STATES
from ..regex import automata, tree
from ..regex.tree import EMPTY, NEVER, Chars, Node

DIGIT = Chars(((0x30, 0x39),))
DIGITS = tree.Rep(DIGIT, 0, None)
INTEGER: Node = tree.seq(
    tree.rep(tree.char(0x2D), 0, 1),
    tree.alt(tree.char(0x30), tree.seq(Chars(((0x31, 0x39),)), DIGITS)),
)
FRACTION: Node = tree.seq(tree.char(0x2E), tree.Rep(DIGIT, 1, None))
EXPONENT: Node = tree.seq(
    Chars(((0x45, 0x45), (0x65, 0x65))),
    tree.rep(Chars(((0x2B, 0x2B), (0x2D, 0x2D))), 0, 1),
    tree.Rep(DIGIT, 1, None),
)

NUMBER: Node = tree.seq(INTEGER, tree.rep(FRACTION, 0, 1), tree.rep(EXPONENT, 0, 1))


def _digits(lo: int, hi: int) -> Node:
    return Chars(((0x30 + lo, 0x30 + hi),))


def _same_length(lo: str, hi: str) -> Node:
    """Digit strings of equal length between lo and hi (as numbers), inclusive."""
    if not lo:
        return EMPTY
    if lo[0] == hi[0]:
        return tree.seq(tree.char(ord(lo[0])), _same_length(lo[1:], hi[1:]))
    n = len(lo) - 1
    a, b = int(lo[0]), int(hi[0])
    options: list[Node] = []
    low_full = set(lo[1:]) <= {"0"}
    high_full = set(hi[1:]) <= {"9"}
    first = a if low_full else a + 1
    last = b if high_full else b - 1
    if not low_full:
        options.append(tree.seq(tree.char(ord(lo[0])), _same_length(lo[1:], "9" * n)))
    if first <= last:
        options.append(tree.seq(_digits(first, last), tree.rep(DIGIT, n, n)))
    if not high_full:
        options.append(tree.seq(tree.char(ord(hi[0])), _same_length("0" * n, hi[1:])))
    return tree.alt(*options)


def natural_range(lo: int, hi: int | None) -> Node:
    """Decimal spellings (no leading zeros) of the integers lo..hi, 0 <= lo; hi None: no bound."""
    if hi is not None and hi < lo:
        return NEVER
    options: list[Node] = []
    length = len(str(lo))
    top = hi if hi is not None else 10**length - 1
    while True:
        start = max(lo, 10 ** (length - 1) if length > 1 else 0)
        end = min(top, 10**length - 1)
        if start <= end:
            options.append(_same_length(str(start), str(end)))
        if end >= top:
            break
        length += 1
    if hi is None:
        options.append(tree.seq(Chars(((0x31, 0x39),)), tree.Rep(DIGIT, length, None)))
    return tree.alt(*options)


# The zero fraction an integral number's digits may carry, as json.dumps writes a float: ``4.0``.
# One zero only: after "4." a model that meant a fraction finds only "0" allowed, and a longer
# run let it write zeros until max_tokens (measured with the embedded model).
ZERO_TAIL: Node = tree.rep(tree.literal(".0"), 0, 1)


def integer_spellings(lo: int | None, hi: int | None, zero_tail: bool) -> Node:
    """Integers in [lo, hi] (None: unbounded on that side), ``-0`` too when negative values
    are in the range (else a "-" could only become 0: a trap for a model and a dead end for
    distinct items); ``zero_tail``: also with :data:`ZERO_TAIL` after the digits."""
    digits = integer_range(lo, hi)
    if (lo is None or lo < 0) and (hi is None or hi >= 0):
        digits = tree.alt(digits, tree.literal("-0"))
    return tree.seq(digits, ZERO_TAIL) if zero_tail and digits != NEVER else digits


def integer_range(lo: int | None, hi: int | None) -> Node:
    """Integers in [lo, hi] (None: unbounded on that side), one spelling each."""
    options: list[Node] = []
    if lo is None or lo < 0:
        mag_lo = 1 if hi is None or hi >= 0 else -hi
        mag_hi = None if lo is None else -lo
        neg = natural_range(mag_lo, mag_hi)
        if neg != NEVER:
            options.append(tree.seq(tree.char(0x2D), neg))
    if hi is None or hi >= 0:
        pos = natural_range(max(lo or 0, 0), hi)
        if pos != NEVER:
            options.append(pos)
    return tree.alt(*options) if options else NEVER


# --- fractions: digit strings F compared as the value 0.F ----------------------------------------

Frac = tuple[bool, Node]  # (the empty fraction is in the set, node for non-empty digit strings)

_POSITIVE: Node = tree.seq(tree.Rep(tree.char(0x30), 0, None), Chars(((0x31, 0x39),)), DIGITS)


def _after(d: int, sub: Frac) -> Node:
    empty_ok, node = sub
    tail = tree.alt(EMPTY, node) if empty_ok else node
    return tree.seq(tree.char(0x30 + d), tail)


def _frac_ge(d: str, inclusive: bool) -> Frac:
    if not d:
        return (True, tree.Rep(DIGIT, 1, None)) if inclusive else (False, _POSITIVE)
    first = int(d[0])
    options = [_after(first, _frac_ge(d[1:], inclusive))]
    if first < 9:
        options.insert(0, tree.seq(_digits(first + 1, 9), DIGITS))
    return False, tree.alt(*options)


def _frac_le(d: str, inclusive: bool) -> Frac:
    if not d:
        return (True, tree.Rep(tree.char(0x30), 1, None)) if inclusive else (False, NEVER)
    first = int(d[0])
    options = [_after(first, _frac_le(d[1:], inclusive))]
    if first > 0:
        options.insert(0, tree.seq(_digits(0, first - 1), DIGITS))
    return True, tree.alt(*options)


def _frac_between(lo: str, lo_inc: bool, hi: str, hi_inc: bool) -> Frac:
    if not lo:
        if lo_inc:
            return _frac_le(hi, hi_inc)
        if not hi:
            return False, NEVER
        return _positive_le(hi, hi_inc)
    if not hi:
        return False, NEVER  # lo > 0 = hi
    a, b = int(lo[0]), int(hi[0])
    if a == b:
        return False, _after(a, _frac_between(lo[1:], lo_inc, hi[1:], hi_inc))
    options = [_after(a, _frac_ge(lo[1:], lo_inc))]
    if a + 1 <= b - 1:
        options.append(tree.seq(_digits(a + 1, b - 1), DIGITS))
    options.append(_after(b, _frac_le(hi[1:], hi_inc)))
    return False, tree.alt(*options)


def _positive_le(hi: str, hi_inc: bool) -> Frac:
    """0 < 0.F <= 0.hi (or < when not inclusive)."""
    first = int(hi[0])
    options: list[Node] = []
    if first == 0:
        options.append(_after(0, _positive_le(hi[1:], hi_inc) if hi[1:] else (False, NEVER)))
    else:
        options.append(tree.seq(tree.char(0x30), _POSITIVE))
        if first > 1:
            options.append(tree.seq(_digits(1, first - 1), DIGITS))
        options.append(_after(first, _frac_le(hi[1:], hi_inc)))
    return False, tree.alt(*(o for o in options if o != NEVER)) if options else NEVER


def _with_point(frac: Frac) -> Node:
    empty_ok, node = frac
    dotted = NEVER if node == NEVER else tree.seq(tree.char(0x2E), node)
    return (
        tree.alt(EMPTY, dotted) if empty_ok and dotted != NEVER else (EMPTY if empty_ok else dotted)
    )


def _split(x: Decimal) -> tuple[int, str]:
    """Integer part and fraction digits (no trailing zeros) of a non-negative decimal."""
    whole = int(x)
    frac = format(x - whole, "f").partition(".")[2].rstrip("0")
    return whole, frac


_ANY_FRACTION = tree.rep(FRACTION, 0, 1)


def magnitude_range(lo: Decimal, lo_inc: bool, hi: Decimal | None, hi_inc: bool) -> Node:
    """Spellings ``I(.F)?`` of the values in the interval, 0 <= lo."""
    lo_i, lo_f = _split(lo)
    if hi is None:
        return tree.alt(
            tree.seq(tree.literal(str(lo_i)), _with_point(_frac_ge(lo_f, lo_inc))),
            tree.seq(natural_range(lo_i + 1, None), _ANY_FRACTION),
        )
    hi_i, hi_f = _split(hi)
    if lo_i == hi_i:
        return tree.seq(
            tree.literal(str(lo_i)), _with_point(_frac_between(lo_f, lo_inc, hi_f, hi_inc))
        )
    options = [tree.seq(tree.literal(str(lo_i)), _with_point(_frac_ge(lo_f, lo_inc)))]
    middle = natural_range(lo_i + 1, hi_i - 1)
    if middle != NEVER:
        options.append(tree.seq(middle, _ANY_FRACTION))
    options.append(tree.seq(tree.literal(str(hi_i)), _with_point(_frac_le(hi_f, hi_inc))))
    return tree.alt(*(o for o in options if o != NEVER))


def number_range(lo: Decimal | None, lo_inc: bool, hi: Decimal | None, hi_inc: bool) -> Node:
    """JSON numbers (no exponent) in the interval; None: unbounded on that side."""
    if lo is not None and hi is not None and (lo > hi or (lo == hi and not (lo_inc and hi_inc))):
        return NEVER
    options: list[Node] = []
    if lo is None or lo < 0:  # negative values: "-" and a magnitude in (max(-hi, 0), -lo]
        if hi is not None and hi < 0:
            m_lo, m_lo_inc = -hi, hi_inc
        else:
            m_lo, m_lo_inc = Decimal(0), False
        m_hi = None if lo is None else -lo
        neg = magnitude_range(m_lo, m_lo_inc, m_hi, lo_inc)
        if neg != NEVER:
            options.append(tree.seq(tree.char(0x2D), neg))
    if hi is None or hi >= 0:
        p_lo, p_lo_inc = (Decimal(0), True) if lo is None or lo < 0 else (lo, lo_inc)
        pos = magnitude_range(p_lo, p_lo_inc, hi, hi_inc)
        if pos != NEVER:
            options.append(pos)
    return tree.alt(*options) if options else NEVER


# Magnitudes by sign: zero (``0``, ``0.00``) and above zero (``0.5``, ``12``, ``3.0``).
ZERO_MAGNITUDE: Node = tree.seq(
    tree.char(0x30),
    tree.rep(tree.seq(tree.char(0x2E), tree.Rep(tree.char(0x30), 1, None)), 0, 1),
)
NONZERO_DIGIT = Chars(((0x31, 0x39),))
POSITIVE_MAGNITUDE: Node = tree.alt(
    tree.seq(tree.literal("0."), tree.Rep(tree.char(0x30), 0, None), NONZERO_DIGIT, DIGITS),
    tree.seq(NONZERO_DIGIT, DIGITS, tree.rep(FRACTION, 0, 1)),
)
# Exponents stay within +-300: a double holds every value spelled so (JSON readers round
# 1e-400 to 0, which would break a bound of 0).
MAX_EXPONENT = 300
E = Chars(((0x45, 0x45), (0x65, 0x65)))
LEADING_ZEROS = tree.Rep(tree.char(0x30), 0, None)
# Above zero with an exponent: a mantissa of at least 1 (fewer: ever smaller values, see above).
POSITIVE_EXPONENT_FORM: Node = tree.seq(
    NONZERO_DIGIT,
    DIGITS,
    tree.rep(FRACTION, 0, 1),
    E,
    tree.rep(Chars(((0x2B, 0x2B), (0x2D, 0x2D))), 0, 1),
    LEADING_ZEROS,
    natural_range(0, MAX_EXPONENT),
)
# What json.dumps writes for a magnitude below 1e-4: one digit, a fraction, an exponent <= -5.
SMALL_MAGNITUDE: Node = tree.seq(
    NONZERO_DIGIT,
    tree.rep(FRACTION, 0, 1),
    E,
    tree.char(0x2D),
    LEADING_ZEROS,
    natural_range(5, MAX_EXPONENT),
)
SMALL_BOUND = Decimal("1e-4")
# Numbers that are not integers, in the spellings json.dumps writes: a fraction with a nonzero
# digit, or one nonzero digit (and a fraction) before an exponent from -1 to -MAX_EXPONENT
# (``1.5e-05``: below 1, and above 0 for every reader). Other spellings (``15e-1``) are left
# out: with any exponent, telling integers apart is not a regular language.
NON_INTEGRAL: Node = tree.alt(
    tree.seq(INTEGER, tree.char(0x2E), DIGITS, NONZERO_DIGIT, DIGITS),
    tree.seq(
        tree.rep(tree.char(0x2D), 0, 1),
        NONZERO_DIGIT,
        tree.rep(FRACTION, 0, 1),
        E,
        tree.char(0x2D),
        LEADING_ZEROS,
        natural_range(1, MAX_EXPONENT),
    ),
)


def bounded_number(lo: Decimal | None, lo_inc: bool, hi: Decimal | None, hi_inc: bool) -> Node:
    """JSON numbers in the interval (at least one bound). A bound of 0 on one side only: every
    spelling the sign decides (exponents after a mantissa of at least 1, or of 0, within
    +-:data:`MAX_EXPONENT`). Otherwise the spellings of
    :func:`number_range`, ``-0`` (``-0.0``) when 0 and negative values are in the interval
    (a "-" that can only become 0 is left out), and the forms json.dumps writes for magnitudes below
    1e-4 (``5e-05``, ``-2.5e-07``) on each side of 0 where the interval holds all of them."""
    zero = tree.seq(ZERO_MAGNITUDE, tree.rep(EXPONENT, 0, 1))
    positive = tree.alt(POSITIVE_MAGNITUDE, POSITIVE_EXPONENT_FORM)
    minus = tree.char(0x2D)
    if lo == 0 and hi is None:
        return tree.alt(positive, zero) if lo_inc else positive
    if hi == 0 and lo is None:
        negative = tree.seq(minus, positive)
        return tree.alt(negative, zero, tree.seq(minus, zero)) if hi_inc else negative
    options = [number_range(lo, lo_inc, hi, hi_inc)]
    below = lo is None or lo < 0
    above = hi is None or hi > 0
    zero_in = (below or (lo == 0 and lo_inc)) and (above or (hi == 0 and hi_inc))
    if zero_in and below:
        options.append(tree.seq(minus, ZERO_MAGNITUDE))
    if (lo is None or lo <= 0) and (hi is None or hi >= SMALL_BOUND):
        options.append(SMALL_MAGNITUDE)
    if (hi is None or hi >= 0) and (lo is None or lo <= -SMALL_BOUND):
        options.append(tree.seq(minus, SMALL_MAGNITUDE))
    return tree.alt(*(o for o in options if o != NEVER)) if options else NEVER


def literal_number_gbnf(v: int | float) -> str:
    """GBNF for the spellings of the number ``v`` an ``enum``/``const`` accepts: its plain
    decimal digits with any number of zeros after them in a fraction and an optional zero
    exponent (``1``, ``1.0``, ``1.00e0``, ``1E+00`` for 1; ``2.5``, ``2.50`` for 2.5; also
    ``-0`` for 0), and Python's own spelling (``json.dumps``: ``1e-05``). Other spellings of the
    same value (``10e-1``, ``0.1e1`` for 1) are refused: all of them together are not a
    context-free language (a decimal exponent would have to count the zeros it shifts)."""
    if isinstance(v, float) and not math.isfinite(v):
        return tree.literal_gbnf(json.dumps(v))
    value = Decimal(str(v))
    plain = format(abs(value).normalize(), "f")
    sign = '"-"?' if value == 0 else ('"-"' if value < 0 else "")
    digits = f'"{plain}" "0"*' if "." in plain else f'"{plain}" ("." "0"+)?'
    forms = [f'{sign} {digits} ([eE] [+-]? "0"+)?'.strip()]
    dumped = json.dumps(v)
    if not re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", dumped):  # an exponent, as json.dumps prints it
        forms.append(tree.literal_gbnf(dumped))
    return "(" + " | ".join(forms) + ")"


def small_multiples(k: int, lo: int, hi: int) -> list[int] | None:
    """The multiples of k in [lo, hi], or None when there are too many to list."""
    first = -(-lo // k) * k
    if first > hi:
        return []
    count = (hi - first) // k + 1
    if count > MAX_ENUMERATED_MULTIPLES:
        return None
    return list(range(first, hi + 1, k))


def multiple_of_rules(k: int, prefix: str) -> tuple[str, dict[str, str]]:
    """Integers divisible by k as right-recursive remainder rules. Returns (expression, rules)."""
    if k <= 0 or k > MAX_MULTIPLE_OF_STATES:
        raise ValueError(f"multipleOf {k} needs more than {MAX_MULTIPLE_OF_STATES} states")
    rules: dict[str, str] = {}
    for r in range(k):
        targets: dict[int, list[int]] = {}
        for d in range(10):
            targets.setdefault((r * 10 + d) % k, []).append(d)
        alts = [f"{_digit_class(ds)} {prefix}-{t}" for t, ds in sorted(targets.items())]
        if r == 0:
            alts.insert(0, '""')
        rules[f"{prefix}-{r}"] = " | ".join(alts)
    starts: dict[int, list[int]] = {}
    for d in range(1, 10):
        starts.setdefault(d % k, []).append(d)
    first = " | ".join(f"{_digit_class(ds)} {prefix}-{t}" for t, ds in sorted(starts.items()))
    return f'"-"? ("0" | {first})', rules


def multiples_dfa(k: int) -> automata.Dfa:
    """Every string ``-?[0-9]+`` whose digits spell a multiple of ``k``: the remainder so far
    is the state (1 + r; 0 the start, k + 1 after the sign). Intersected with a range's
    spellings it gives the range's multiples, leading zeros left to the range."""
    if k <= 0 or k > MAX_MULTIPLE_OF_STATES:
        raise ValueError(f"multipleOf {k} needs more than {MAX_MULTIPLE_OF_STATES} states")

    def digits_from(r: int) -> dict[int, tree.Ranges]:
        row: dict[int, list[tuple[int, int]]] = {}
        for d in range(10):
            row.setdefault(1 + (r * 10 + d) % k, []).append((0x30 + d, 0x30 + d))
        return {target: tuple(ranges) for target, ranges in row.items()}

    start = digits_from(0)
    start[k + 1] = ((0x2D, 0x2D),)
    trans = [start, *(digits_from(r) for r in range(k)), digits_from(0)]
    return automata.Dfa(trans, {1})


def zero_tail_gbnf() -> str:
    """:data:`ZERO_TAIL` as GBNF (parenthesized)."""
    return "(" + tree.to_gbnf(ZERO_TAIL) + ")"


def _digit_class(ds: list[int]) -> str:
    if len(ds) == 1:
        return f'"{ds[0]}"'
    return "[" + "".join(str(d) for d in ds) + "]"
