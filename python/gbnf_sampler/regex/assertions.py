"""Zero-width assertions anywhere in a pattern: ``^``/``$`` in the middle, ``\\b``/``\\B`` and
lookbehind ``(?<=X)``/``(?<!X)``, compiled exactly into an automaton.

Each assertion becomes a marker, a symbol outside Unicode that no character set matches, so the
pattern's automaton reads strings of characters and markers. What an assertion asks is then a
regular condition on where its marker may stand, checked by a small automaton run in product
with the pattern's:

* ``^``: no character before it (``$``: none after it; Python's ``$`` also before a final
  ``\\n``, the "either" reading);
* ``\\b``/``\\B``: the characters on both sides are (or are not) one word and one non-word
  character (the string's ends count as non-word). ECMA-262's ``\\w`` is ASCII, Python's
  Unicode: the "both" reading asks the boundary to hold under both, "either" under one;
* ``(?<=X)``: the characters before it are in ``Σ*X`` (``(?<!X)``: are not); an ``X`` branch
  that starts with ``^`` asks for exactly ``X`` before it;
* ``(?=X)``: the characters after it are in ``X·Σ*`` (``(?!X)``: are not). Its automaton starts
  an obligation at each marker (a run of ``X·Σ*``'s automaton) and accepts when every one it
  started accepts; a state is the set of the obligations' states, so repeated lookaheads
  (``^((?!--).)*$``) stay finite.

The markers are then erased (each becomes an empty move) and the automaton made deterministic
again. A pattern whose only assertions are lookaheads outside long repetitions goes through
:mod:`.lookaround`, whose algebra builds smaller automata.
"""

from __future__ import annotations

from collections.abc import Callable

from ..limits import MAX_LOOKAHEAD_UNROLL
from . import automata, edges, lookaround, parser, tree
from .parser import RegexSyntaxError
from .tree import Node, Ranges

BOS, EOS, WORD_EDGE, NOT_WORD_EDGE = 0x110000, 0x110001, 0x110002, 0x110003
FIRST_LOOK = 0x110004  # lookaround i is marker FIRST_LOOK + i
_ANY: Node = tree.Rep(tree.Chars(automata.ALL), 0, None)
_ECMA_WORD: Ranges = parser.WORD


def compile_pattern(parsed: Node, search: bool, reading: str = "both") -> Node:
    """The tree of a parsed pattern with its anchors and assertions resolved: a plain tree,
    or a :class:`tree.Lang` when an assertion needs an automaton."""
    if not _needs_markers(parsed, search, reading):
        return lookaround.resolve(parser.anchor(parsed, search, reading), search)
    plain = _one_boundary(parsed, search, reading)
    if plain is not None:
        return plain
    try:
        return tree.Lang(_Markers(reading).compile(parsed, search))
    except automata.TooLarge as err:
        raise RegexSyntaxError(f"assertions need too large an automaton ({err})", 0) from None


def _needs_markers(node: Node, search: bool, reading: str) -> bool:
    if _has(node, lambda n: isinstance(n, tree.Anchor) and n.kind in "bB"):
        return True
    if _has(node, lambda n: isinstance(n, tree.Look) and n.behind):
        return True
    if _has(node, _long_repetition_of_lookahead):
        return True  # beyond what the algebra of lookaround unrolls
    try:
        parser.anchor(node, search, reading)
    except RegexSyntaxError:
        return True  # an anchor that is not at an end of the pattern
    return False


def _has(node: Node, test: Callable[[Node], bool]) -> bool:
    if test(node):
        return True
    if isinstance(node, (tree.Seq, tree.Alt)):
        return any(_has(i, test) for i in node.items)
    if isinstance(node, tree.Rep):
        return _has(node.item, test)
    if isinstance(node, tree.Look):
        return _has(node.body, test)
    return False


def _long_repetition_of_lookahead(node: Node) -> bool:
    return (
        isinstance(node, tree.Rep)
        and (node.max is None or node.max > MAX_LOOKAHEAD_UNROLL)
        and tree.holds(node.item, tree.Look)
    )


def _plain(node: Node) -> bool:
    return not _has(node, lambda n: isinstance(n, (tree.Anchor, tree.Look)))


def trim_search_ends(node: Node) -> Node:
    """The same search language with less counting at the ends: next to the ``.*`` of a search,
    ``x{m,n}`` is ``x{m}`` (``.*x{m,n}`` = ``.*x{m}``) and ``x{0,n}`` is nothing, for items
    without assertions. ``[a-z]{1,256}\\.[a-z]+\\b`` would otherwise count to 256 in the
    deterministic automaton of every start position."""
    items = list(node.items) if isinstance(node, tree.Seq) else [node]
    for end in (0, -1):
        while items:
            rep = items[end]
            if not isinstance(rep, tree.Rep) or not _plain(rep):
                break
            if rep.min > 0:
                if rep.max != rep.min:
                    items[end] = tree.Rep(rep.item, rep.min, rep.min)
                break
            items.pop(end)
    return tree.seq(*items) if items else tree.EMPTY


def _one_boundary(parsed: Node, search: bool, reading: str) -> Node | None:
    """A pattern whose only assertion is one ``\\b``/``\\B`` between plain parts, rewritten
    without it: for each pair of character classes the boundary allows on its two sides, the
    left part ending with the one and the right part starting with the other (or at the end
    of the string, which counts as non-word). A plain tree needs no automaton: a search for
    ``https?://[-a-z.]{1,256}\\.[a-z()]{1,6}\\b`` took minutes there and then failed at
    the state cap. None when the pattern is not of that shape."""
    node = trim_search_ends(parsed) if search else parsed
    items = list(node.items) if isinstance(node, tree.Seq) else [node]
    marks = [k for k, i in enumerate(items) if isinstance(i, tree.Anchor) and i.kind in "bB"]
    if len(marks) != 1:
        return None
    k = marks[0]
    pad = tree.Rep(tree.Chars(automata.ALL), 0, None) if search else None
    dollar = tree.rep(tree.char(0x0A), 0, 1) if reading == "either" and search else tree.EMPTY
    left = parser.strip_anchor(tree.Seq(tuple(items[:k])), "^", pad)
    right = parser.strip_anchor(tree.Seq(tuple(items[k + 1 :])), "$", pad, dollar)
    if not (_plain(left) and _plain(right)):
        return None
    try:
        return _split_at_boundary(left, right, reading, want=items[k] == tree.Anchor("b"))
    except edges.NotPlain:
        return None


def _split_at_boundary(left: Node, right: Node, reading: str, want: bool) -> Node:
    boundary = _BoundaryAutomaton(reading, ())
    classes = boundary.classes
    edge_l, body_l = edges.peel(parser.simplify(left), first=False)
    edge_r, body_r = edges.peel(parser.simplify(right), first=True)
    options = []
    for before in range(3):
        after = [
            edges.starting_with(edge_r, classes[c], empty=c == 0)
            for c in range(3)
            if boundary.holds(before, c, want)
        ]
        if after:
            tail = tree.seq(tree.alt(*after), body_r)
            options.append(tree.seq(edges.ending_with(edge_l, classes[before], before == 0), tail))
    found = [o for o in options if o != tree.NEVER]
    return parser.simplify(tree.seq(body_l, tree.alt(*found))) if found else tree.NEVER


class _Markers:
    def __init__(self, reading: str) -> None:
        self.reading = reading
        self.looks: list[tree.Look] = []
        self.search = False

    def compile(self, parsed: Node, search: bool) -> automata.Dfa:
        self.search = search
        # The anchors at the ends pin their branches there (a search pads the others with .*):
        # as markers, with .* on both sides, the automaton would track every start position.
        pad = _ANY if search else None
        either = self.reading == "either" and search
        dollar = tree.rep(tree.char(0x0A), 0, 1) if either else tree.EMPTY
        node = trim_search_ends(parsed) if search else parsed
        node = parser.strip_anchor(parser.strip_anchor(node, "^", pad), "$", pad, dollar)
        dfa = automata.from_regex(self.mark(node))
        dfa = automata.intersect(dfa, self.edges())
        dfa = automata.intersect(dfa, self.boundaries())
        for i, look in enumerate(self.looks):
            if look.behind:
                dfa = automata.intersect(dfa, self.lookbehind(i, look))
            else:
                dfa = self.with_lookahead(dfa, i, look)
            dfa = automata.minimize(dfa)
        return automata.minimize(erase_markers(dfa))

    def mark(self, node: Node) -> Node:
        """``node`` with its assertions replaced by markers."""
        if isinstance(node, tree.Anchor):
            marker = {"^": BOS, "$": EOS, "b": WORD_EDGE, "B": NOT_WORD_EDGE}[node.kind]
            return tree.char(marker)
        if isinstance(node, tree.Look):
            self.looks.append(node)
            return tree.char(FIRST_LOOK + len(self.looks) - 1)
        if isinstance(node, tree.Seq):
            return tree.Seq(tuple(self.mark(i) for i in node.items))
        if isinstance(node, tree.Alt):
            return tree.Alt(tuple(self.mark(i) for i in node.items))
        if isinstance(node, tree.Rep):
            return tree.Rep(self.mark(node.item), node.min, node.max)
        return node

    def markers(self) -> Ranges:
        return ((BOS, FIRST_LOOK + max(len(self.looks), 1) - 1),)

    def edges(self) -> automata.Dfa:
        """``^`` before any character, ``$`` after all (Python: or before a final newline).
        States: 0 nothing read, 1 characters read, 2 ``$`` held after characters, 3 the final
        newline read, 4 ``$`` held with nothing read (where ``^`` still holds: ``$^`` matches
        the empty string)."""
        others = tree.subtract(self.markers(), ((BOS, EOS),))
        chars = automata.ALL
        start = {0: tree.normalize(((BOS, BOS), *others)), 1: chars, 4: ((EOS, EOS),)}
        middle = {1: tree.normalize((*chars, *others)), 2: ((EOS, EOS),)}
        end: dict[int, Ranges] = {2: tree.normalize(((EOS, EOS), *others))}
        empty_end: dict[int, Ranges] = {4: tree.normalize(((BOS, EOS), *others))}
        if self.reading == "either":
            end[3] = ((0x0A, 0x0A),)
            empty_end[3] = ((0x0A, 0x0A),)
        return automata.Dfa([start, middle, end, {}, empty_end], {0, 1, 2, 3, 4})

    def boundaries(self) -> automata.Dfa:
        """``\\b``/``\\B``: states (class of the previous character, classes the next may have)."""
        return _BoundaryAutomaton(self.reading, self.markers()).build()

    def lookbehind(self, i: int, look: tree.Look) -> automata.Dfa:
        """Marker i only where the characters before it end with (or, negated, do not end
        with) a match of the body."""
        body = parser.strip_anchor(look.body, "^", _ANY, tree.EMPTY)
        if parser.has_anchor(body) or tree.holds(body, tree.Look):
            raise RegexSyntaxError(
                "'$', \\b, an inner '^' or a lookaround inside a lookbehind is not supported", 0
            )
        prefix = automata.from_regex(parser.simplify(body))
        marker = FIRST_LOOK + i
        others = tree.subtract(self.markers(), ((marker, marker),))
        dead = len(prefix.trans)
        trans: list[dict[int, Ranges]] = []
        for s, row in enumerate([*prefix.trans, {}]):
            new: dict[int, Ranges] = {t: r for t, r in row.items()}
            covered = tree.normalize(r for ranges in row.values() for r in ranges)
            rest = tree.complement(covered) if s < dead else automata.ALL
            if rest:
                new[dead] = tree.normalize((*new.get(dead, ()), *rest))
            loops = list(others)
            if (s in prefix.accept) != look.negate:
                loops.append((marker, marker))
            if loops:
                new[s] = tree.normalize((*new.get(s, ()), *loops))
            trans.append(new)
        return automata.Dfa(trans, set(range(dead + 1)))

    def with_lookahead(self, dfa: automata.Dfa, i: int, look: tree.Look) -> automata.Dfa:
        """``dfa`` with marker i only where the characters after it match (or, negated, do not
        match) the body followed by anything: the product of ``dfa`` with the obligations its
        markers start, built from the start (a checker on its own would have to allow the
        marker anywhere, and so every set of obligations). A product state is a state of
        ``dfa`` and the set of states of the obligations started on the way (one sure to hold
        is dropped); one that can no longer hold ends the run. Built over the classes of code
        points that no move tells apart, as ``automata.intersect``."""
        if _has(look.body, _inner_assertion):
            raise RegexSyntaxError("a lookbehind or \\b/\\B inside a lookahead is not supported", 0)
        rest = lookaround.condition(look, None, self.search)
        marker = FIRST_LOOK + i
        # Classes never mix characters and markers, and this marker is a class of its own.
        apart = automata.Dfa([{0: ((marker, marker),)}, {0: automata.ALL}], set())
        classes, (rows, rest_rows, _) = automata.shared_classes([dfa, rest, apart])
        obligations = _Obligations(rest, rest_rows)
        own = {k for k, ranges in enumerate(classes) if ranges[0][0] == marker}
        is_char = [ranges[0][0] <= tree.MAX_CODEPOINT for ranges in classes]
        start: tuple[int, frozenset[int]] = (0, frozenset())
        index = {start: 0}
        order = [start]
        moves: list[dict[int, list[int]]] = []  # per product state: target -> classes
        while len(moves) < len(order):
            state, held = order[len(moves)]
            targets: dict[int, list[int]] = {}
            for k, target in rows[state].items():
                after = (
                    obligations.step(held, k)
                    if is_char[k]
                    else (obligations.start(held) if k in own else held)
                )
                if after is not None:
                    number = automata.number_state(index, order, (target, after))
                    targets.setdefault(number, []).append(k)
            moves.append(targets)
        accept = {
            k
            for k, (state, held) in enumerate(order)
            if state in dfa.accept and held <= rest.accept
        }
        return automata.Dfa(automata.class_moves_to_ranges(moves, classes), accept)


def _inner_assertion(node: Node) -> bool:
    return (isinstance(node, tree.Look) and node.behind) or (
        isinstance(node, tree.Anchor) and node.kind in "bB"
    )


class _Obligations:
    """Sets of states of a lookahead's condition (one per marker passed), stepped together;
    a state sure to accept whatever follows is dropped, None is a set that can no longer
    hold."""

    def __init__(self, rest: automata.Dfa, rows: list[dict[int, int]]) -> None:
        self.rest = rest
        self.rows = rows
        self.sure = automata.universal_states(rest)
        self.steps: dict[tuple[frozenset[int], int], frozenset[int] | None] = {}

    def start(self, held: frozenset[int]) -> frozenset[int] | None:
        if not self.rest.accept:
            return None  # the condition matches nothing: the marker never holds
        return held if 0 in self.sure else held | {0}

    def step(self, held: frozenset[int], k: int) -> frozenset[int] | None:
        """``held`` after a character of class ``k``."""
        if not held:
            return held
        key = (held, k)
        if key not in self.steps:
            targets = [self.rows[q].get(k) for q in held]
            self.steps[key] = (
                None
                if None in targets
                else frozenset(t for t in targets if t is not None and t not in self.sure)
            )
        return self.steps[key]


class _BoundaryAutomaton:
    """Word boundaries. A class of characters: 0 non-word under both readings (and the string's
    ends), 1 word under both, 2 word to Python only (non-ASCII letters and digits)."""

    def __init__(self, reading: str, markers: Ranges) -> None:
        self.reading = reading
        self.markers = markers
        python_word = parser._python_shorthands()["w"]
        self.classes: list[Ranges] = [
            tree.complement(tree.normalize((*_ECMA_WORD, *python_word))),
            _ECMA_WORD,
            tree.subtract(python_word, _ECMA_WORD),
        ]

    def holds(self, prev: int, nxt: int, want: bool) -> bool:
        ecma = (prev == 1) != (nxt == 1)
        python = (prev != 0) != (nxt != 0)
        both = (ecma == want, python == want)
        return all(both) if self.reading == "both" else any(both)

    def build(self) -> automata.Dfa:
        # State (prev class, allowed next classes as a frozenset).
        states: dict[tuple[int, frozenset[int]], int] = {}
        order: list[tuple[int, frozenset[int]]] = []
        trans: list[dict[int, Ranges]] = []
        everything = frozenset(range(3))

        def index(state: tuple[int, frozenset[int]]) -> int:
            return automata.number_state(states, order, state)

        index((0, everything))
        while len(trans) < len(order):
            prev, allowed = order[len(trans)]
            row: dict[int, list[tuple[int, int]]] = {}
            for cls in allowed:
                target = index((cls, everything))
                row.setdefault(target, []).extend(self.classes[cls])
            for marker, want in ((WORD_EDGE, True), (NOT_WORD_EDGE, False)):
                narrowed = frozenset(c for c in allowed if self.holds(prev, c, want))
                row.setdefault(index((prev, narrowed)), []).append((marker, marker))
            other = tree.subtract(self.markers, ((WORD_EDGE, NOT_WORD_EDGE),))
            row.setdefault(len(trans), []).extend(other)
            trans.append({t: tree.normalize(r) for t, r in row.items()})
        accept = {i for i, (_, allowed) in enumerate(order) if 0 in allowed}
        return automata.Dfa(trans, accept)


def erase_markers(dfa: automata.Dfa) -> automata.Dfa:
    """The automaton of the same strings with the markers (code points past Unicode) deleted:
    marker moves become empty moves, and the subset construction makes it deterministic (over
    the classes of code points no move tells apart, as ``automata.intersect``)."""
    apart = automata.Dfa([{0: automata.ALL}], set())  # classes never mix characters and markers
    classes, (rows, _) = automata.shared_classes([dfa, apart])
    is_marker = [ranges[0][0] > tree.MAX_CODEPOINT for ranges in classes]
    empty_moves = [[t for k, t in row.items() if is_marker[k]] for row in rows]

    def closure(states: frozenset[int]) -> frozenset[int]:
        out = set(states)
        todo = list(states)
        while todo:
            for t in empty_moves[todo.pop()]:
                if t not in out:
                    out.add(t)
                    todo.append(t)
        return frozenset(out)

    order, moves = automata.determinize(
        closure(frozenset([0])),
        lambda s: ((k, t) for k, t in rows[s].items() if not is_marker[k]),
        closure,
    )
    accept = {i for i, states in enumerate(order) if states & dfa.accept}
    return automata.Dfa(automata.class_moves_to_ranges(moves, classes), accept)


__all__ = ["compile_pattern", "erase_markers"]
