"""``ambiguous_growth``: rules whose matcher state grows with the input, measured.

The matcher keeps every parse of the text so far; for an unambiguous grammar its state (live
parser items) stays bounded by the grammar's size, but an ambiguous recursive rule can keep one
item per position where a parse may have started, so each step costs more as the text grows.
Only recursion that is not a tail call can do that (right recursion reuses its caller's stack
entry and a non-recursive grammar is finite-state), so the candidates are the rule-graph cycles
with a reference that is not in tail position. For each candidate the check starts the grammar's
automaton at the cycle, generates sample sentences of increasing lengths (:mod:`.sample`, biased
towards the recursive alternatives), feeds them to a byte-level :class:`Matcher` and compares the
largest ``state_size`` seen. A cycle whose state grows is then re-measured with each of its
alternatives removed in turn: the ones whose removal stops the growth are named. The core does the
sampling and the feeding (``DoctorAnalysis.measure_growth``: the same sentences from the same
seed); :func:`_measure` is the reference it is tested against.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from .. import _core, syntax
from ..errors import GrammarError, GrammarTooComplexError
from ..grammar import Grammar
from ..limits import DEFAULT_MAX_HISTORY_BYTES, MAX_AUTOMATON_NESTING, MAX_AUTOMATON_SIZE
from ..limits import DOCTOR_MAX_ABLATIONS as MAX_ABLATIONS
from ..limits import DOCTOR_MEASURE_STATE_SIZE as MEASURE_STATE_CAP
from .facts import Facts, rules_with_tokens
from .findings import Finding
from .locate import Locator
from .sample import Minimums, Sampler
from .source import rule_slices
from .tree import Rules, reachable, reference_graph, rules_to_gbnf, to_gbnf, walk

LENGTHS = (24, 96, 384, 1536)  # target lengths (code points) of the sample sentences
SAMPLES = 2  # sentences per length
CHUNK = 4  # bytes fed per accept_bytes call (state_size is read between calls)
MIN_GROWTH = 8  # items: a step smaller than this is noise
GROWTH_RATIO = 1.8  # each length's largest state must exceed the previous one's this many times
WIND_DOWN = 8  # code points before the target where non-recursive alternatives come back
# The same, for the core's measurement (DoctorAnalysis.measure_growth).
_SETTINGS = (
    list(LENGTHS),
    SAMPLES,
    CHUNK,
    MIN_GROWTH,
    GROWTH_RATIO,
    WIND_DOWN,
    MEASURE_STATE_CAP,
    DEFAULT_MAX_HISTORY_BYTES,
)


@dataclass(frozen=True)
class Measurement:
    """Per sentence length: the largest ``state_size`` seen (``sizes``), the bytes fed until
    then (``fed``; feeding stops once growth is shown) and the longest sentence (``lengths``)."""

    sizes: tuple[int, ...]
    fed: tuple[int, ...]
    lengths: tuple[int, ...]

    @property
    def grows(self) -> bool:
        """Each longer batch reached a state clearly larger than the batch before: the growth
        follows the length (a grammar that is merely wide somewhere reaches its widest point
        once and stays there)."""
        return len(self.sizes) == len(LENGTHS) and self.steps_grow()

    def steps_grow(self) -> bool:
        """Every length measured so far grew over the one before."""
        pairs = list(zip(self.sizes, self.sizes[1:], strict=False))
        reached = all(
            b >= 3 * max(a, 1) for a, b in zip(self.lengths, self.lengths[1:], strict=False)
        )
        return reached and all(b >= GROWTH_RATIO * a and b - a >= MIN_GROWTH for a, b in pairs)

    def describe(self) -> str:
        return ", ".join(f"{s} after {n} bytes" for s, n in zip(self.sizes, self.fed, strict=True))


def _tail_refs(body: syntax.Node) -> set[int]:
    """ids of the references in tail position of a rule body (the last item of an alternative,
    not inside a repetition): calls the matcher makes without growing the stack."""
    tails: set[int] = set()
    alternatives = body.items if isinstance(body, syntax.Alternation) else (body,)
    for alt in alternatives:
        last = alt.items[-1] if isinstance(alt, syntax.Sequence) and alt.items else alt
        if isinstance(last, syntax.RuleRef):
            tails.add(id(last))
    return tails


def candidates(facts: Facts) -> list[list[str]]:
    """Rule-graph cycles with a reference inside the cycle that is not a tail call, reachable
    from the root (found by the core when the facts came from it; this search is the
    reference)."""
    if facts.growth_candidates is not None:
        return facts.growth_candidates
    out = []
    for component in facts.components:
        members = set(component)
        if not members & facts.recursive or not members & facts.reachable:
            continue
        for rule in component:
            body = facts.rules[rule]
            tails = _tail_refs(body)
            if any(
                isinstance(n, syntax.RuleRef) and n.name in members and id(n) not in tails
                for n in walk(body)
            ):
                out.append(component)
                break
    return out


def cycle_favour(cycle: set[str]) -> Callable[[syntax.Alternation, int, int], bool]:
    """The sampler's bias for measuring ``cycle``: an alternative is favoured when it
    references a rule of the cycle, or when fewer than WIND_DOWN code points are left."""
    recursive: dict[tuple[int, int], bool] = {}

    def favour(node: syntax.Alternation, i: int, room: int) -> bool:
        key = (id(node), i)
        if key not in recursive:
            recursive[key] = any(
                isinstance(n, syntax.RuleRef) and n.name in cycle for n in walk(node.items[i])
            )
        # Far from the target only the recursive alternatives are taken, so sentences reach it.
        return recursive[key] or room < WIND_DOWN

    return favour


def _measure(
    automaton: _core.Automaton,
    rules: Rules,
    root: str,
    cycle: set[str],
    minimums: Minimums | None = None,
) -> Measurement:
    sampler = Sampler(rules, favour=cycle_favour(cycle), minimums=minimums)
    sizes: list[int] = []
    fed: list[int] = []
    lengths: list[int] = []
    for target in LENGTHS:
        enough = int(GROWTH_RATIO * sizes[-1]) + MIN_GROWTH if sizes else MEASURE_STATE_CAP
        best, longest = (0, 0), 0
        for _ in range(SAMPLES):
            text = sampler.sentence(root, target)
            if text is None:
                break
            data = text.encode("utf-8", "surrogatepass")
            best = max(best, _largest_state(automaton, data, enough))
            longest = max(longest, len(data))
        sizes.append(best[0])
        fed.append(best[1])
        lengths.append(longest)
        if not Measurement(tuple(sizes), tuple(fed), tuple(lengths)).steps_grow():
            break  # the usual case: no growth between the first two lengths, nothing more to pay
    return Measurement(tuple(sizes), tuple(fed), tuple(lengths))


def _measured(
    analysis: _core.DoctorAnalysis | None,
    automaton: _core.Automaton,
    rules: Rules,
    root: str,
    component: list[str],
    minimums: Callable[[], Minimums],
) -> Measurement:
    """:func:`_measure`, by the core when ``analysis`` (of the grammar ``rules`` were read from)
    is given and its sampler can follow this one (the same sentences, from the same seed);
    ``minimums``: the shortest derivations this module's sampler needs otherwise."""
    if analysis is not None:
        got = analysis.measure_growth(automaton, root, component, _SETTINGS)
        if got is not None:
            return Measurement(*got)
    return _measure(automaton, rules, root, set(component), minimums())


def _largest_state(automaton: _core.Automaton, data: bytes, enough: int) -> tuple[int, int]:
    """(the largest state seen while feeding ``data`` to a byte-level matcher of ``automaton``,
    bytes fed). Stops early once the state reaches ``enough`` (growth is shown; the rest would
    only cost time)."""
    matcher = _core.Matcher(automaton, MEASURE_STATE_CAP, 0, DEFAULT_MAX_HISTORY_BYTES)
    largest = matcher.state_size
    fed = 0
    try:
        for fed in range(CHUNK, len(data) + CHUNK, CHUNK):
            if not matcher.accept_bytes(data[fed - CHUNK : fed]):
                break
            largest = max(largest, matcher.state_size)
            if largest >= enough:
                break
    except GrammarTooComplexError:
        return MEASURE_STATE_CAP, fed
    return largest, min(fed, len(data))


def _subgrammar(
    rules: Rules,
    root: str,
    slices: dict[str, list[tuple[int, int]]] | None = None,
    text: str = "",
    graph: dict[str, list[str]] | None = None,
    tokens: set[str] | None = None,
) -> tuple[dict[str, syntax.Node], Grammar] | None:
    """The rules ``root`` reaches, and their grammar (None when it cannot be measured at byte
    level: token references). With the source ``text`` and its :func:`rule_slices`, the grammar
    is parsed from the rules' own text (cheaper than printing them). ``graph``: the rules'
    reference graph, ``tokens``: the rules holding a token reference (``rules_with_tokens`` of
    at least the rules ``root`` reaches), when the caller has them."""
    keep = reachable(graph if graph is not None else reference_graph(rules), root)
    names = [n for n in rules if n in keep]
    sub = {n: rules[n] for n in names}
    if rules_with_tokens(sub) if tokens is None else tokens & keep:
        return None
    if slices is not None and all(n in slices for n in names):
        pieces = [text[a:b] for n in names for a, b in slices[n]]
        try:
            return sub, Grammar.from_gbnf("\n".join(pieces), root=root)
        except GrammarError:
            pass  # a definition-looking line inside a literal: print the rules instead
    try:
        return sub, Grammar.from_gbnf(rules_to_gbnf(sub, names), root=root)
    except (GrammarError, RecursionError):
        return None


def _without(rules: Rules, rule: str, index: int) -> dict[str, syntax.Node]:
    body = rules[rule]
    assert isinstance(body, syntax.Alternation)
    rest = body.items[:index] + body.items[index + 1 :]
    out = dict(rules)
    out[rule] = rest[0] if len(rest) == 1 else syntax.Alternation(rest)
    return out


def _culprits(
    rules: Rules, root: str, component: list[str], graph: dict[str, list[str]], fast: bool
) -> list[tuple[str, int, Measurement]]:
    """(rule, alternative index, measurement without it) for each alternative whose removal
    stops the growth. ``rules``: what ``root`` reaches, without token references; ``graph``:
    their reference graph, or one of a grammar they are part of (removing an alternative only
    removes references: rules it leaves unreachable are carried along unused); ``fast``: measured
    by the core (else by :func:`_measure`, the reference)."""
    found: list[tuple[str, int, Measurement]] = []
    tried = 0
    for rule in component:
        body = rules[rule]
        if not isinstance(body, syntax.Alternation):
            continue
        for index in range(len(body.items)):
            if tried >= MAX_ABLATIONS:
                return found
            tried += 1
            built = _subgrammar(_without(rules, rule, index), root, graph=graph, tokens=set())
            if built is None:
                continue
            sub, grammar = built
            try:
                automaton = grammar.automaton()
            except GrammarTooComplexError:
                continue
            analysis = _core.DoctorAnalysis(grammar._core)
            after = _measured(
                analysis if fast else None,
                automaton,
                sub,
                root,
                component,
                lambda: analysis.shortest_derivations([root]),  # noqa: B023 (called at once)
            )
            if not after.grows:
                found.append((rule, index, after))
    return found


def check_growth(facts: Facts, loc: Locator) -> list[Finding]:
    found = candidates(facts)
    if not found:
        return []
    roots = [component[0] for component in found]
    minimums = functools.cache(lambda: facts.shortest(roots))
    out = []
    for component in found:
        root = component[0]
        keep = facts.reached_from(root)
        if facts.token_rules & keep:
            continue  # not measurable at byte level
        measured = _rooted(facts, root) or _own_grammar(facts, loc, root)
        if measured is None:
            continue
        rules, automaton = measured
        before = _measured(facts.analysis, automaton, rules, root, component, minimums)
        if before.grows:
            sub = {name: facts.rules[name] for name in facts.rules if name in keep}  # converts few
            out.append(_finding(facts, loc, sub, root, component, before))
    return out


def _rooted(facts: Facts, root: str) -> tuple[Rules, _core.Automaton] | None:
    """The diagnosed grammar's automaton started at ``root`` (its other rules are built only if
    reached), when the facts came from the core grammar."""
    if facts.core is None:
        return None
    try:
        automaton = _core.Automaton.build(
            facts.core, MAX_AUTOMATON_SIZE, MAX_AUTOMATON_NESTING, root
        )
    except GrammarTooComplexError:
        return None  # the grammar's own root reaches a rule refused up front: measure apart
    return facts.rules, automaton


def _own_grammar(facts: Facts, loc: Locator, root: str) -> tuple[Rules, _core.Automaton] | None:
    """The rules ``root`` reaches as a grammar of their own, and its automaton."""
    slices = rule_slices(loc.text) if loc.text is not None else None
    built = _subgrammar(facts.rules, root, slices, loc.text or "", facts.graph, set())
    if built is None:
        return None
    rules, grammar = built
    try:
        return rules, grammar.automaton()
    except GrammarTooComplexError:
        return None


def _finding(
    facts: Facts, loc: Locator, sub: Rules, root: str, component: list[str], m: Measurement
) -> Finding:
    culprits = _culprits(sub, root, component, facts.graph, facts.analysis is not None)
    measured = f"largest state on sample sentences: {m.describe()}"
    if not culprits:
        message = (
            f'rule "{root}" makes the matcher state grow with the input ({measured}): the '
            "grammar has many parses of the same text here, and each step gets slower"
        )
        return loc.finding("ambiguous_growth", message, _generic_fix(root), root)
    rule, index, _ = culprits[-1]
    body = facts.rules[rule]
    assert isinstance(body, syntax.Alternation)
    names = _alternatives(culprits)
    shown = to_gbnf(body.items[index])
    message = (
        f'rule "{rule}" makes the matcher state grow with the input ({measured}): the grammar has '
        f"many parses of the same text here; removing {names} stops the growth "
        f"(marked: {shown[:60]})"
    )
    return loc.finding(
        "ambiguous_growth", message, _fix(rule, body, index), rule, body.items[index]
    )


def _alternatives(culprits: list[tuple[str, int, Measurement]]) -> str:
    """'alternative 1 or 2 of "x" or alternative 3 of "y"'."""
    by_rule: dict[str, list[str]] = {}
    for rule, index, _ in culprits:
        by_rule.setdefault(rule, []).append(str(index + 1))
    parts = []
    for rule, indices in by_rule.items():
        noun = "alternative" if len(indices) == 1 else "alternatives"
        listed = indices[0] if len(indices) == 1 else ", ".join(indices[:-1]) + " or " + indices[-1]
        parts.append(f'{noun} {listed} of "{rule}"')
    return " or ".join(parts)


def _fix(rule: str, body: syntax.Alternation, index: int) -> str:
    alt = body.items[index]
    if (
        isinstance(alt, syntax.Sequence)
        and len(alt.items) >= 3
        and alt.items[0] == alt.items[-1] == syntax.RuleRef(rule)
    ):
        bases = [b for i, b in enumerate(body.items) if i != index]
        if not any(syntax.RuleRef(rule) == n for b in bases for n in walk(b)):
            base = to_gbnf(bases[0]) if len(bases) == 1 else f"({' | '.join(map(to_gbnf, bases))})"
            sep = " ".join(to_gbnf(i) for i in alt.items[1:-1])
            return f"write it without the ambiguity: {rule} ::= {base} ({sep} {base})*"
    return _generic_fix(rule)


def _generic_fix(rule: str) -> str:
    return (
        f'rewrite "{rule}" so that each text has one parse: merge alternatives that start the '
        "same way and let one alternative recurse (for a list: x ::= item (sep item)* rather "
        "than x ::= x sep x | item)"
    )


__all__ = ["Measurement", "candidates", "check_growth", "cycle_favour"]
