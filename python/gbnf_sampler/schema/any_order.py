"""Objects whose members may come in any order (``property_order="any"``), exactly.

JSON objects list their keys in any order, each at most once. The grammar keeps, per object,
the set S of declared properties already written: one rule per reachable S (the seen set is what
forbids a duplicate, and it is all a state needs when there are no count bounds)::

    obj-S ::= "" | sep ( m_i obj-S+{i} | ... | extra obj-S )

``"" ``only when every required property is in S; ``m_i`` is "key i, colon, value i" for each
declared property i not in S; ``extra`` is one member with an undeclared key
(``additionalProperties``/``patternProperties``, keys never equal to a declared name), which
leaves S unchanged, so undeclared members interleave anywhere. When ``minProperties`` or
``maxProperties`` counts members and undeclared members exist, the state also holds how many of
those were written (saturating at the bound); without undeclared members the count is |S|.
States from which no valid object can be finished are left out, so no rule leads to a dead end.

A set of n declared properties in any order needs 2^n states (every subset is a different
future: the keys still allowed), and no context-free grammar does much better, so the number
of rules is bounded by :data:`~gbnf_sampler.limits.MAX_ANY_ORDER_STATES` (twelve properties;
more with a small ``maxProperties``): above it the object is reported (SchemaError when strict;
with ``strict=False`` it falls back to the schema's order with a SchemaWarning).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

from .emit import NEVER, Rules


@dataclass(frozen=True)
class Member:
    key: str  # GBNF for the key string
    value: str  # rule for the value
    required: bool


def any_order_states(n: int, lo: int, hi: int | None, extra: bool) -> int:
    """An upper bound on the subset rules :class:`AnyOrder` makes for n declared members."""
    top = n if hi is None else min(n, hi)
    subsets = sum(comb(n, i) for i in range(top + 1))
    counted = extra and (lo > 1 or hi is not None)
    if counted:
        return subsets * ((hi if hi is not None else lo) + 1)
    return subsets  # (and one more: "only undeclared members so far")


class AnyOrder:
    """The member list of one object in any order: :meth:`body` is what goes between the braces
    (NEVER when no non-empty member list is valid)."""

    def __init__(
        self,
        rules: Rules,
        members: list[Member],
        extra: str | None,
        bounds: tuple[int, int | None],
        layout: tuple[str, str],
        hint: str,
    ) -> None:
        self.rules = rules
        self.members = members
        self.extra = extra
        self.lo, self.hi = bounds
        self.sep, self.colon = layout
        self.hint = hint
        self.required = sum(1 << i for i, m in enumerate(members) if m.required)
        # The first member makes lo = 1 hold; only larger bounds need undeclared members counted.
        self.counted = extra is not None and (self.lo > 1 or self.hi is not None)
        self.cap = (self.hi if self.hi is not None else self.lo) if self.counted else 1
        self.names: dict[tuple[int, int], str] = {}
        self.pairs = [
            self.rules.add(f"{hint}-kv", f"{m.key} {self.colon} {m.value}") for m in members
        ]

    def body(self) -> str:
        """The first member and the rest (the empty object is the caller's)."""
        options = self._moves(0, 0)
        return "(" + " | ".join(options) + ")" if options else NEVER

    # --- states -------------------------------------------------------------------------------
    def _total(self, written: int, extras: int) -> int:
        # Uncounted, ``extras`` is 1 only in the state "no declared member, some undeclared".
        return written.bit_count() + (extras if self.extra is not None else 0)

    def _live(self, written: int, extras: int) -> bool:
        """Whether some valid object continues from here (count bounds and required keys)."""
        total = self._total(written, extras)
        missing = (self.required & ~written).bit_count()
        if self.hi is not None and total + missing > self.hi:
            return False
        room = len(self.members) - written.bit_count()
        return self.extra is not None or total + room >= self.lo

    def _closable(self, written: int, extras: int) -> bool:
        total = self._total(written, extras)
        return self.required & ~written == 0 and total >= self.lo

    def _next_extras(self, written: int, extras: int) -> int:
        if self.counted:
            return min(extras + 1, self.cap)
        return 1 if written == 0 else 0  # only "started or not" matters before any key

    def _moves(self, written: int, extras: int) -> list[str]:
        """``m_i next`` for every allowed next member (no separator)."""
        full = self.hi is not None and self._total(written, extras) >= self.hi
        out: list[str] = []
        if full:
            return out
        for i, pair in enumerate(self.pairs):
            if not written & (1 << i) and self._live(written | (1 << i), extras):
                nxt = self.state(written | (1 << i), 0 if not self.counted else extras)
                out.append(f"{pair} {nxt}")
        if self.extra is not None:
            after = self._next_extras(written, extras)
            if self._live(written, after):
                out.append(f"{self.extra} {self.state(written, after)}")
        return out

    def state(self, written: int, extras: int) -> str:
        """The rule for the rest of an object (members after at least one were written)."""
        key = (written, extras)
        if key not in self.names:
            name = self.rules.reserve(f"{self.hint}-{written:x}-{extras}")
            self.names[key] = name
            options = ['""'] if self._closable(written, extras) else []
            moves = self._moves(written, extras)
            if moves:
                options.append(f"{self.sep} (" + " | ".join(moves) + ")")
            self.rules.define(name, " | ".join(options) if options else NEVER)
        return self.names[key]


__all__ = ["AnyOrder", "Member", "any_order_states"]
