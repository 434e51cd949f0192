"""The JSON Schema converter's grammar text (``Rules.text``) holds only the rules its root reaches:
rules made for branches the conversion dropped are left out (on snapcraft's schema they were
6,912 rules nobody referenced), and a rule name spelled inside a literal or a class is no
reference."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from gbnf_sampler import _core
from gbnf_sampler.schema.emit import DISTINCT_ITEMS_DIRECTIVE, Rules


def _defined(text: str) -> set[str]:
    return {line.split(" ::= ")[0] for line in text.splitlines() if " ::= " in line}


def test_rules_the_root_does_not_reach_are_left_out() -> None:
    rules = Rules()
    rules.define("a", '"b c" [d-e] c')
    rules.define("b", '"1"')
    rules.define("c", '"\\"d\\"" | d{0,2}')
    rules.define("d", '"2"')
    rules.define("e", '"3"')
    rules.define("dropped", "b e")
    rules.add_distinct("items", '"[" d "]"')
    rules.add_distinct("unused-items", '"[" e "]"')
    rules.define("ws", '" "?')
    text = rules.text("a ws")
    assert _defined(text) == {"root", "a", "c", "d", "ws"}
    assert f"{DISTINCT_ITEMS_DIRECTIVE} items" not in text
    assert gs.Grammar.from_gbnf(text).warnings == []

    rules.define("a", '"b c" [d-e] c items')
    text = rules.text("a ws")
    assert _defined(text) == {"root", "a", "c", "d", "ws", "items"}
    assert f"{DISTINCT_ITEMS_DIRECTIVE} items" in text
    assert f"{DISTINCT_ITEMS_DIRECTIVE} unused-items" not in text


NAMES = [f"r{i}" for i in range(8)]


@st.composite
def rule_sets(draw: st.DrawFn) -> tuple[Rules, str]:
    """Rules referencing each other at random, with rule names also written inside literals and
    classes (which reference nothing), and a root expression."""
    rules = Rules()
    for name in NAMES:
        parts = []
        for _ in range(draw(st.integers(0, 3))):
            other = draw(st.sampled_from(NAMES))
            parts.append(
                draw(st.sampled_from([other, f'"{other}"', f"[{other}]", f"{other}{{0,2}}"]))
            )
        rules.define(name, '"x" | ' + " ".join(parts) if parts else '""')  # each can finish
    root = " | ".join(draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=2)))
    return rules, root


@settings(max_examples=200, deadline=None)
@given(rule_sets())
def test_the_text_holds_exactly_the_reached_rules(case: tuple[Rules, str]) -> None:
    rules, root = case
    everything = f"root ::= {root}\n" + "".join(
        f"{name} ::= {body}\n" for name, body in rules.bodies.items()
    )
    full = gs.Grammar.from_gbnf(everything)
    reached = set(_core.DoctorAnalysis(full._core).reached_from("root"))
    text = rules.text(root)
    assert _defined(text) == reached | {"root"}
    assert gs.Grammar.from_gbnf(text).warnings == []
