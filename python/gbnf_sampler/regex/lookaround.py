"""Lookahead assertions ``(?=X)`` / ``(?!X)``, compiled exactly into an automaton.

A lookahead tests the rest of the string from where it stands, and in a full match the rest of
the string is what the remainder of the pattern (its continuation ``K``) matches. Building the
pattern right to left, with ``K`` as an automaton (``Σ`` any code point):

    (?=X) K  =  K ∩ X·Σ*          (?!X) K  =  K ∖ X·Σ*
    A B   K  =  A (B K)           (A|B) K  =  A K ∪ B K

and a lookahead-free ``A`` is concatenated (``A·K``). A ``$`` in ``X`` ends it instead of
``Σ*``; a ``^`` in ``X`` holds only where the lookahead stands at the start of the string.
Bounded repetitions around a lookahead are unrolled (up to ``MAX_LOOKAHEAD_UNROLL`` copies);
longer and unbounded ones (``^((?!--).)*$``) take the markers of :mod:`.assertions` instead, and
here raise :class:`RegexSyntaxError`, as does a ``^`` where the position is not known.
Automaton sizes are capped by ``limits.MAX_DFA_STATES``.
"""

from __future__ import annotations

from ..limits import MAX_LOOKAHEAD_UNROLL
from . import automata, parser, tree
from .parser import RegexSyntaxError
from .tree import Node

ANY_STRING: Node = tree.Rep(tree.Chars(automata.ALL), 0, None)


def has_lookahead(node: Node) -> bool:
    return tree.holds(node, tree.Look)


def resolve(node: Node, search: bool) -> Node:
    """``node`` (anchors resolved, see ``parser.anchor``) with its lookaheads compiled:
    unchanged without any, else one :class:`tree.Lang`."""
    if not has_lookahead(node):
        return node
    try:
        return tree.Lang(_build(node, _epsilon(), True, search))
    except automata.TooLarge as err:
        raise RegexSyntaxError(f"lookahead needs too large an automaton ({err})", 0) from None


def _epsilon() -> automata.Dfa:
    return automata.Dfa([{}], {0})


def _concat(node: Node, rest: automata.Dfa) -> automata.Dfa:
    return automata.minimize(automata.from_regex(tree.seq(node, tree.Lang(rest))))


def _build(node: Node, rest: automata.Dfa, at_start: bool | None, search: bool) -> automata.Dfa:
    """The automaton of ``node`` followed by ``rest``; ``at_start``: whether ``node`` stands at
    the start of the string (None: not known)."""
    if not has_lookahead(node):
        return _concat(node, rest)
    if isinstance(node, tree.Look):
        return automata.minimize(automata.intersect(rest, condition(node, at_start, search)))
    if isinstance(node, tree.Seq):
        return _build_seq(node.items, rest, at_start, search)
    if isinstance(node, tree.Alt):
        parts = [tree.Lang(_build(b, rest, at_start, search)) for b in node.items]
        return automata.minimize(automata.from_regex(tree.Alt(tuple(parts))))
    assert isinstance(node, tree.Rep)  # the only node kind left that can hold a lookahead
    return _build_rep(node, rest, at_start, search)


def _build_seq(
    items: tuple[Node, ...], rest: automata.Dfa, at_start: bool | None, search: bool
) -> automata.Dfa:
    end = len(items)
    while end > 0:
        first = end
        while first > 0 and not has_lookahead(items[first - 1]):
            first -= 1
        if first < end:  # a lookahead-free run: one concatenation
            rest = _concat(tree.seq(*items[first:end]), rest)
            end = first
            continue
        rest = _build(items[end - 1], rest, _position(items[: end - 1], at_start), search)
        end -= 1
    return rest


def _position(before: tuple[Node, ...], at_start: bool | None) -> bool | None:
    """Whether what follows ``before`` stands at the start of the string."""
    if at_start is False or any(tree.length_bounds(i)[0] > 0 for i in before):
        return False
    if at_start and all(isinstance(i, tree.Look) for i in before):
        return True
    return None


def _build_rep(
    node: tree.Rep, rest: automata.Dfa, at_start: bool | None, search: bool
) -> automata.Dfa:
    """``x{m,n} K = x^m (K ∪ x (K ∪ x (...)))``: unrolled."""
    if node.max is None or node.max > MAX_LOOKAHEAD_UNROLL:
        raise RegexSyntaxError(
            f"lookahead inside a repetition of more than {MAX_LOOKAHEAD_UNROLL} "
            "(or unbounded) copies is not supported",
            0,
        )
    inner = False if at_start is False else None
    tail = rest
    for _ in range(node.max - node.min):
        looped = _build(node.item, tail, inner, search)
        tail = automata.minimize(
            automata.from_regex(tree.Alt((tree.Lang(rest), tree.Lang(looped))))
        )
    for _ in range(node.min):
        tail = _build(node.item, tail, inner, search)
    return tail


def condition(look: tree.Look, at_start: bool | None, search: bool) -> automata.Dfa:
    """The minimal automaton of what the rest of the string must be where ``look`` stands
    (``at_start``: whether that is the start of the string; None: not known)."""
    body = _build(_body(look, at_start, search), _epsilon(), at_start, search)
    return automata.minimize(automata.complement(body) if look.negate else body)


def _body(look: tree.Look, at_start: bool | None, search: bool) -> Node:
    """What the lookahead's body matches from its position to the end of the string."""
    either = look.reading == "either" and search  # Python's '$' also matches before a final \n
    dollar = tree.rep(tree.char(0x0A), 0, 1) if either else tree.EMPTY
    body = parser.strip_anchor(look.body, "$", ANY_STRING, dollar)
    held = parser.strip_anchor(body, "^", None, tree.EMPTY)
    failed = parser.strip_anchor(body, "^", None, tree.NEVER)
    if at_start is None and held != failed:
        raise RegexSyntaxError("'^' in a lookahead that may not be at the start", 0)
    body = held if at_start else failed
    if parser.has_anchor(body):
        raise RegexSyntaxError("'^' or '$' in the middle of a lookahead is not supported", 0)
    return parser.simplify(body)
