"""Lookahead assertions ``(?=X)`` / ``(?!X)``, compiled exactly into an automaton.

A lookahead tests the rest of the string from where it stands, and in a full match the rest of
the string is what the remainder of the pattern (its continuation ``K``) matches. Building the
pattern right to left, with ``K`` as an automaton (``Σ`` any code point):

    (?=X) K  =  K ∩ X·Σ*          (?!X) K  =  K ∖ X·Σ*
    A B   K  =  A (B K)           (A|B) K  =  A K ∪ B K

and a lookahead-free ``A`` is concatenated (``A·K``). A ``$`` in ``X`` ends it instead of
``Σ*``; a ``^`` in ``X`` holds only where the lookahead stands at the start of the string.
Bounded repetitions around a lookahead are unrolled (up to ``MAX_UNROLL`` copies); unbounded
ones, and ``^`` where the position is not known, raise :class:`RegexSyntaxError`. Automaton
sizes are capped by ``_dfa.MAX_STATES``.
"""

from __future__ import annotations

from . import _dfa, _regex_parse, _rx
from ._regex_parse import RegexSyntaxError
from ._rx import Node

MAX_UNROLL = 64
ANY_STRING: Node = _rx.Rep(_rx.Chars(_dfa.ALL), 0, None)


def has_lookahead(node: Node) -> bool:
    return _rx.holds(node, _rx.Look)


def resolve(node: Node, search: bool) -> Node:
    """``node`` (anchors resolved, see ``_regex_parse.anchor``) with its lookaheads compiled:
    unchanged without any, else one :class:`_rx.Lang`."""
    if not has_lookahead(node):
        return node
    try:
        return _rx.Lang(_build(node, _epsilon(), True, search))
    except _dfa.TooLarge as err:
        raise RegexSyntaxError(f"lookahead needs too large an automaton ({err})", 0) from None


def _epsilon() -> _dfa.Dfa:
    return _dfa.Dfa([{}], {0})


def _concat(node: Node, rest: _dfa.Dfa) -> _dfa.Dfa:
    return _dfa.minimize(_dfa.from_regex(_rx.seq(node, _rx.Lang(rest))))


def _build(node: Node, rest: _dfa.Dfa, at_start: bool | None, search: bool) -> _dfa.Dfa:
    """The automaton of ``node`` followed by ``rest``; ``at_start``: whether ``node`` stands at
    the start of the string (None: not known)."""
    if not has_lookahead(node):
        return _concat(node, rest)
    if isinstance(node, _rx.Look):
        body = _build(_body(node, at_start, search), _epsilon(), at_start, search)
        return _dfa.minimize(_dfa.intersect(rest, _dfa.complement(body) if node.negate else body))
    if isinstance(node, _rx.Seq):
        return _build_seq(node.items, rest, at_start, search)
    if isinstance(node, _rx.Alt):
        parts = [_rx.Lang(_build(b, rest, at_start, search)) for b in node.items]
        return _dfa.minimize(_dfa.from_regex(_rx.Alt(tuple(parts))))
    assert isinstance(node, _rx.Rep)  # the only node kind left that can hold a lookahead
    return _build_rep(node, rest, at_start, search)


def _build_seq(
    items: tuple[Node, ...], rest: _dfa.Dfa, at_start: bool | None, search: bool
) -> _dfa.Dfa:
    end = len(items)
    while end > 0:
        first = end
        while first > 0 and not has_lookahead(items[first - 1]):
            first -= 1
        if first < end:  # a lookahead-free run: one concatenation
            rest = _concat(_rx.seq(*items[first:end]), rest)
            end = first
            continue
        rest = _build(items[end - 1], rest, _position(items[: end - 1], at_start), search)
        end -= 1
    return rest


def _position(before: tuple[Node, ...], at_start: bool | None) -> bool | None:
    """Whether what follows ``before`` stands at the start of the string."""
    if at_start is False or any(_rx.length_bounds(i)[0] > 0 for i in before):
        return False
    if at_start and all(isinstance(i, _rx.Look) for i in before):
        return True
    return None


def _build_rep(node: _rx.Rep, rest: _dfa.Dfa, at_start: bool | None, search: bool) -> _dfa.Dfa:
    """``x{m,n} K = x^m (K ∪ x (K ∪ x (...)))``: unrolled."""
    if node.max is None or node.max > MAX_UNROLL:
        raise RegexSyntaxError(
            f"lookahead inside a repetition of more than {MAX_UNROLL} (or unbounded) copies "
            "is not supported",
            0,
        )
    inner = False if at_start is False else None
    tail = rest
    for _ in range(node.max - node.min):
        looped = _build(node.item, tail, inner, search)
        tail = _dfa.minimize(_dfa.from_regex(_rx.Alt((_rx.Lang(rest), _rx.Lang(looped)))))
    for _ in range(node.min):
        tail = _build(node.item, tail, inner, search)
    return tail


def _body(look: _rx.Look, at_start: bool | None, search: bool) -> Node:
    """What the lookahead's body matches from its position to the end of the string."""
    either = look.reading == "either" and search  # Python's '$' also matches before a final \n
    dollar = _rx.rep(_rx.char(0x0A), 0, 1) if either else _rx.EMPTY
    body = _regex_parse.strip_anchor(look.body, "$", ANY_STRING, dollar)
    held = _regex_parse.strip_anchor(body, "^", None, _rx.EMPTY)
    failed = _regex_parse.strip_anchor(body, "^", None, _rx.NEVER)
    if at_start is None and held != failed:
        raise RegexSyntaxError("'^' in a lookahead that may not be at the start", 0)
    body = held if at_start else failed
    if _regex_parse.has_anchor(body):
        raise RegexSyntaxError("'^' or '$' in the middle of a lookahead is not supported", 0)
    return _regex_parse.simplify(body)
