"""Arrays with ``contains``: some of the items also match a second schema.

With items ``X`` and contained items ``Y`` (``items`` and ``contains`` both), an array holding at
least ``m`` (``minContains``, default 1) such items is ``X* (Y X*){m}`` between the brackets (an
ambiguous grammar: which items count does not matter to the matcher). A ``maxContains`` bound
``n`` needs the items that do not count, ``X'`` (``items`` and not ``contains``, through
:func:`~gbnf_sampler.schema.logic.negate`): ``X'* (Y X'*){m,n}``. With ``maxItems``, or a
``minItems`` above ``m``, the items are counted by rules (j items, h contained ones), at most
:data:`~gbnf_sampler.limits.MAX_CONTAINS_STATES` of them. ``prefixItems`` and ``uniqueItems``
beside ``contains`` are not combined: the ``contains`` keywords are reported as unsupported.
"""

from __future__ import annotations

from typing import Any

from ..limits import MAX_CONTAINS_STATES
from .context import SubschemaCompiler
from .emit import NEVER, Rules, quantified, wrap
from .logic import negate
from .scalars import Unsupported, kw_int, pointer

CONTAINS_KEYWORDS = ("contains", "minContains", "maxContains")


class ContainsUnsupported(Unsupported):
    """A ``contains`` this module does not combine with the array's other keywords."""


def contains_bounds(flat: dict[str, Any], path: str) -> tuple[int, int | None]:
    """``minContains`` (default 1) and ``maxContains``."""
    low = kw_int(flat, "minContains", path, 1) or 0
    return low, kw_int(flat, "maxContains", path)


def _check_neighbours(flat: dict[str, Any], path: str) -> None:
    hi = kw_int(flat, "maxItems", path)
    where = pointer(path, "contains")
    if flat.get("prefixItems"):
        raise ContainsUnsupported("contains beside prefixItems cannot be expressed", where)
    if flat.get("uniqueItems") is True and (hi is None or hi > 1):
        raise ContainsUnsupported("contains beside uniqueItems cannot be expressed", where)


def contains_array_rule(
    conv: SubschemaCompiler, flat: dict[str, Any], path: str, depth: int, hint: str
) -> str | None:
    """The rule of the arrays ``flat`` (which has ``contains``) accepts; None when none is.
    Raises :class:`ContainsUnsupported` (before any rule is added) where it cannot."""
    _check_neighbours(flat, path)
    low, high = contains_bounds(flat, path)
    lo = kw_int(flat, "minItems", path, 0) or 0
    hi = kw_int(flat, "maxItems", path)
    if (high is not None and high < low) or (hi is not None and hi < max(lo, low)):
        return None
    counts = _Counts(low, high, lo, hi)
    if counts.counted and counts.size() > MAX_CONTAINS_STATES:
        raise ContainsUnsupported(
            f"contains with these minItems/maxItems/minContains/maxContains needs more than "
            f"{MAX_CONTAINS_STATES} counting rules",
            pointer(path, "contains"),
        )
    items = flat.get("items", True)
    others = items
    if high is not None:
        miss = negate(flat["contains"], conv.logic_flatten)
        if miss is None:
            raise ContainsUnsupported(
                "maxContains needs the negation of contains, which cannot be expressed",
                pointer(path, "maxContains"),
            )
        others = {"allOf": [items, miss]}
    hit = conv.value({"allOf": [items, flat["contains"]]}, pointer(path, "contains"), depth + 1)
    other = conv.value(others, pointer(path, "items"), depth + 1)
    if high == 0:
        hit = None  # no item may count: the array holds "other" items only
    sep = conv.layout.sep(conv.layout.depth(depth))
    if counts.counted:
        body = counts.rules(conv.rules, f"{hint}-items", hit, other, sep)
    else:
        body = _body(hit, other, low, sep, high)
    return wrap(conv.rules, conv.layout, body, "[]", low == 0 and lo == 0, depth, hint)


class _Counts:
    """Arrays counted item by item: rule (j, h) = "j items written (saturating at minItems
    when there is no maxItems), h of them contained ones (up to maxContains, or minContains
    when there is none: past it the other items take contained ones too)"."""

    def __init__(self, low: int, high: int | None, lo: int, hi: int | None) -> None:
        self.low, self.lo, self.hi = low, lo, hi
        self.counted = hi is not None or lo > max(low, 1)
        self.cap_items = hi if hi is not None else lo
        self.cap_hits = high if high is not None else low

    def size(self) -> int:
        return self.cap_items * (self.cap_hits + 1)

    def moves(self, j: int, h: int, hit: bool, other: bool) -> list[tuple[bool, int, int]]:
        """(is a contained item, next state) for the item after state (j, h) (j = 0: the first)."""
        if self.hi is not None and j >= self.hi:
            return []
        nj = min(j + 1, self.cap_items)
        out = [(False, nj, h)] if other else []
        if hit and h < self.cap_hits:
            out.append((True, nj, h + 1))
        return out

    def may_end(self, j: int, h: int) -> bool:
        return j >= 1 and j >= self.lo and h >= self.low

    def rules(self, rules: Rules, hint: str, hit: str | None, other: str | None, sep: str) -> str:
        states = [(j, h) for j in range(1, self.cap_items + 1) for h in range(self.cap_hits + 1)]
        live = {s for s in states if self.may_end(*s)}
        changed = True
        while changed:  # a state is live when it may end or move to a live one
            changed = False
            for s in states:
                if s not in live and any(
                    (n, m) in live for _, n, m in self.moves(*s, hit is not None, other is not None)
                ):
                    live.add(s)
                    changed = True
        names = {s: rules.reserve(f"{hint}-{s[0]}-{s[1]}") for s in states if s in live}
        for s, name in names.items():
            rules.define(name, self._options(s, names, hit, other, f"{sep} "))
        return self._options((0, 0), names, hit, other, "")

    def _options(
        self,
        state: tuple[int, int],
        names: dict[tuple[int, int], str],
        hit: str | None,
        other: str | None,
        lead: str,
    ) -> str:
        options = ['""'] if self.may_end(*state) else []
        for counts, j, h in self.moves(*state, hit is not None, other is not None):
            if (j, h) in names:
                options.append(f"{lead}{hit if counts else other} {names[(j, h)]}")
        if not options:
            return NEVER
        return options[0] if len(options) == 1 else "(" + " | ".join(options) + ")"


def _body(hit: str | None, other: str | None, low: int, sep: str, high: int | None) -> str:
    """Items between the brackets: ``other`` items around ``low..high`` ``hit`` items (at
    least one item in all)."""
    before = "" if other is None else f"({other} {sep})* "
    after = "" if other is None else f" ({sep} {other})*"
    if hit is None:
        if low > 0 or other is None:
            return NEVER
        return f"{other}{after}"
    extra = max(0, low - 1)  # hits after the first; past low, "other" items take them too
    later = quantified(f"{after} {sep} {hit}".strip(), extra, extra if high is None else high - 1)
    first = f"{before}{hit}"
    body = first if later == '""' else f"{first} {later}"
    body = f"{body}{after}"
    if low == 0 and other is not None:
        return f"({body} | {other}{after})"
    return body


__all__ = [
    "CONTAINS_KEYWORDS",
    "ContainsUnsupported",
    "contains_array_rule",
    "contains_bounds",
]
