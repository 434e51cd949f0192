"""Walking the syntax tree (:mod:`gbnf_sampler.syntax`): children, references, node paths,
strongly connected components of the rule graph, and a printer back to GBNF.

Everything here works on ``Grammar.rules`` (rule name -> tree) and is iterative where a tree may
be deep; nodes are identified by ``id()`` (equal subtrees in different places are different
nodes).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping
from typing import TypeVar

from .. import syntax

Rules = Mapping[str, syntax.Node]
N = TypeVar("N", bound=Hashable)  # a graph's nodes: rule names, or llama.cpp's rule ids


_SEQUENCE = syntax.Sequence
_ALTERNATION = syntax.Alternation
_REPEAT = syntax.Repeat


def children(node: syntax.Node) -> tuple[syntax.Node, ...]:
    kind = type(node)
    if kind is _SEQUENCE or kind is _ALTERNATION:
        return node.items  # type: ignore[union-attr]
    if kind is _REPEAT:
        return (node.item,)  # type: ignore[union-attr]
    return ()


def walk(node: syntax.Node) -> Iterator[syntax.Node]:
    """Every node of the subtree, parents before children, in source order."""
    stack = [node]
    pop, extend = stack.pop, stack.extend
    while stack:
        current = pop()
        yield current
        kind = type(current)
        if kind is _SEQUENCE or kind is _ALTERNATION:
            extend(reversed(current.items))  # type: ignore[union-attr]
        elif kind is _REPEAT:
            stack.append(current.item)  # type: ignore[union-attr]


def references(node: syntax.Node) -> Iterator[str]:
    """The rule names referenced in the subtree (with repeats)."""
    ref = syntax.RuleRef
    for n in walk(node):
        if type(n) is ref:
            yield n.name


def path_to(root: syntax.Node, target: syntax.Node) -> tuple[int, ...] | None:
    """Child indices leading from ``root`` to the node object ``target`` (by identity)."""
    stack: list[tuple[syntax.Node, tuple[int, ...]]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        stack.extend((c, (*path, i)) for i, c in enumerate(children(node)))
    return None


def node_at(root: syntax.Node, path: tuple[int, ...]) -> syntax.Node | None:
    node = root
    for i in path:
        kids = children(node)
        if i >= len(kids):
            return None
        node = kids[i]
    return node


def reference_graph(rules: Rules) -> dict[str, list[str]]:
    """Rule -> the distinct defined rules its body references, in first-reference order (the
    order of :func:`references`; one inlined walk per rule, the hottest loop on large
    grammars)."""
    graph: dict[str, list[str]] = {}
    ref = syntax.RuleRef
    for name, body in rules.items():
        found: dict[str, None] = {}
        stack = [body]
        pop, extend, push = stack.pop, stack.extend, stack.append
        while stack:
            current = pop()
            kind = type(current)
            if kind is _SEQUENCE or kind is _ALTERNATION:
                extend(reversed(current.items))  # type: ignore[union-attr]
            elif kind is _REPEAT:
                push(current.item)  # type: ignore[union-attr]
            elif kind is ref and current.name in rules:  # type: ignore[union-attr]
                found[current.name] = None  # type: ignore[union-attr]
        graph[name] = list(found)
    return graph


def reachable(graph: Mapping[str, list[str]], start: str) -> set[str]:
    seen = {start}
    work = [start]
    while work:
        for nxt in graph.get(work.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                work.append(nxt)
    return seen


def strongly_connected(graph: Mapping[N, list[N]]) -> list[list[N]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit); each component
    lists its rules in discovery order."""
    index: dict[N, int] = {}
    low: dict[N, int] = {}
    on_stack: set[N] = set()
    stack: list[N] = []
    components: list[list[N]] = []
    for start in graph:
        if start in index:
            continue
        work: list[tuple[N, int]] = [(start, 0)]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, i = work[-1]
            edges = graph.get(node, [])
            if i < len(edges):
                work[-1] = (node, i + 1)
                nxt = edges[i]
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(component[::-1])
    return components


def cycles(graph: Mapping[N, list[N]]) -> list[list[N]]:
    """The strongly connected components that hold a cycle (two or more nodes, or a self-loop).
    Nodes that cannot reach a cycle are peeled off first (repeatedly dropping nodes whose edges
    all lead to dropped nodes), so a graph without cycles costs one linear pass."""
    remaining = {node: len(edges) for node, edges in graph.items()}
    into: dict[N, list[N]] = {}
    for node, edges in graph.items():
        for nxt in edges:
            into.setdefault(nxt, []).append(node)
    sinks = [node for node, count in remaining.items() if count == 0]
    while sinks:
        node = sinks.pop()
        del remaining[node]
        for prev in into.get(node, ()):
            if prev in remaining:
                remaining[prev] -= 1
                if remaining[prev] == 0:
                    sinks.append(prev)
    if not remaining:
        return []
    rest = {node: [n for n in graph[node] if n in remaining] for node in remaining}
    return [c for c in strongly_connected(rest) if len(c) > 1 or c[0] in rest[c[0]]]


def fixpoint(
    rules: Rules, users: Mapping[str, list[str]], holds: Callable[[str, set[str]], bool]
) -> set[str]:
    """The least set of rules S such that every rule for which ``holds(rule, S)`` is in S (for
    a ``holds`` that only grows with S): a worklist that re-examines a rule only when a rule it
    references has just joined."""
    found: set[str] = set()
    work = list(reversed(list(rules)))
    pending = set(work)
    while work:
        name = work.pop()
        pending.discard(name)
        if name in found or not holds(name, found):
            continue
        found.add(name)
        for user in users.get(name, ()):
            if user not in found and user not in pending:
                pending.add(user)
                work.append(user)
    return found


def users_of(graph: Mapping[str, list[str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, refs in graph.items():
        for ref in refs:
            out.setdefault(ref, []).append(name)
    return out


# --- printing ---------------------------------------------------------------------------------


def _char(cp: int, in_class: bool) -> str:
    special = {0x22: '\\"', 0x5C: "\\\\", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}
    if in_class:
        special = {0x5C: "\\\\", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x5D: "\\]", 0x5B: "\\["}
        special.update({0x2D: "\\-", 0x5E: "\\x5E"})
    if cp in special:
        return special[cp]
    if 0x20 <= cp < 0x7F:
        return chr(cp)
    if cp < 0x80:
        return f"\\x{cp:02X}"
    if cp <= 0xFFFF and not (0xD800 <= cp <= 0xDFFF) and chr(cp).isprintable():
        return chr(cp)
    return f"\\u{cp:04X}" if cp <= 0xFFFF else f"\\U{cp:08X}"


def _suffix(low: int, high: int | None) -> str:
    if (low, high) == (0, None):
        return "*"
    if (low, high) == (1, None):
        return "+"
    if (low, high) == (0, 1):
        return "?"
    if high is None:
        return f"{{{low},}}"
    return f"{{{low}}}" if low == high else f"{{{low},{high}}}"


def to_gbnf(node: syntax.Node, rename: Callable[[str], str] = str) -> str:
    """GBNF text for a node (an alternation at the top is not parenthesised). Accepted by the
    core's parser and by llama.cpp's (escapes limited to what both read)."""
    if isinstance(node, syntax.Literal):
        return '"' + "".join(_char(c, False) for c in node.codepoints) + '"'
    if isinstance(node, syntax.CharClass):
        body = "".join(
            _char(lo, True) if lo == hi else f"{_char(lo, True)}-{_char(hi, True)}"
            for lo, hi in node.ranges
        )
        return f"[{'^' if node.negated else ''}{body}]"
    if isinstance(node, syntax.AnyChar):
        return "."
    if isinstance(node, syntax.RuleRef):
        return rename(node.name)
    if isinstance(node, syntax.TokenRef):
        text = f"<[{node.token_id}]>" if node.token_id is not None else str(node.text)
        return ("!" if node.negated else "") + text
    if isinstance(node, syntax.Repeat):
        return _atom(node.item, rename) + _suffix(node.min, node.max)
    if isinstance(node, syntax.Sequence):
        if not node.items:
            return '""'
        return " ".join(
            f"({to_gbnf(i, rename)})" if isinstance(i, syntax.Alternation) else to_gbnf(i, rename)
            for i in node.items
        )
    return " | ".join(to_gbnf(i, rename) for i in node.items)


def _atom(node: syntax.Node, rename: Callable[[str], str]) -> str:
    text = to_gbnf(node, rename)
    if isinstance(node, (syntax.Sequence, syntax.Alternation)) and not (
        isinstance(node, syntax.Sequence) and not node.items
    ):
        return f"({text})"
    return text


def rules_to_gbnf(rules: Rules, names: list[str] | None = None) -> str:
    """``name ::= body`` lines for ``names`` (default: every rule)."""
    return "".join(f"{n} ::= {to_gbnf(rules[n])}\n" for n in (names or list(rules)))


__all__ = [
    "Rules",
    "children",
    "cycles",
    "fixpoint",
    "node_at",
    "path_to",
    "reachable",
    "reference_graph",
    "references",
    "rules_to_gbnf",
    "strongly_connected",
    "to_gbnf",
    "users_of",
    "walk",
]
