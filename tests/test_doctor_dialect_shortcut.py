"""The llama.cpp dialect check's shortcut: llama.cpp's expansion is replayed only when a
repetition or left-recursion finding is possible (``repetitions_within_limits``,
``_Dialect.no_left_recursion``). Both proofs must be sound: whenever the full replay finds
something, the shortcut is not taken, so the findings with it equal those without it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from assets import llama_cpp_grammars
from gbnf_sampler.doctor.dialect import _Dialect, _findings
from gbnf_sampler.doctor.facts import Facts
from gbnf_sampler.doctor.llama_sim import expand, left_cycles, repetitions_within_limits
from gbnf_sampler.doctor.source import source_of_grammar
from strategies import gbnf_texts, grammars

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from bench_parse import generated_grammar

# Grammars at and around each limit, and each way llama.cpp's left-recursion check fires.
EDGES = {
    "count-at-limit": 'root ::= "a"{2000}\n',
    "count-over": 'root ::= "a"{2001}\n',
    "upper-at-limit": 'root ::= "a"{0,2000}\n',
    "upper-over": 'root ::= "a"{3,2001}\n',
    "product-under": 'root ::= ("a"{0,50}){39}\n',  # (50 + the group's rule) x 39 = 1989
    "product-at": 'root ::= ("a"{0,50}){40}\n',
    "names-over": "root ::= (a b c d e f g h i j){182}\n"
    + "".join(f'{n} ::= "{n}"\n' for n in "abcdefghij"),
    "stacked-under": 'root ::= "a"{44}{45}\n',
    "stacked-over": 'root ::= "a"{45}{45}\n',
    "names-first-seen": "root ::= (a b c d e f g h i j){181}\n"
    + "".join(f'{n} ::= "{n}"\n' for n in "abcdefghij"),
    "nested-groups": 'root ::= ((("a" "b"){0,9} "c"){0,9} "d"){0,30}\n',  # 21 x 30
    "nested-over": 'root ::= ((("a" "b"){0,9} "c"){0,9} "d"){0,96}\n',  # 21 x 96
    "left-recursion": 'root ::= root "a" | "b"\n',
    "left-through-empty": 'root ::= e root "a" | "b"\ne ::= | "x"\n',
    "hidden-left": 'root ::= e\ne ::= n e "x" | "y"\nn ::= m\nm ::= | "z"\n',
    "loop-over-empty-group": 'root ::= ("a" | "")*\n',
    "loop-over-empty-rule": 'root ::= ws*\nws ::= | " "\n',
    "loop-over-optional": 'root ::= "a"?*\n',
    "loop-clamped-upper": 'root ::= ("a" | ""){0,2500}\n',
    "bounded-loop-over-empty": 'root ::= ("a" | ""){0,40}\n',
    "any-class-loop": 'root ::= [^]* "x"\n',
    "any-class-left": 'root ::= [^] root | "x"\n',
    "redefined-loop": 'root ::= ("" | "a")+\nroot ::= "b"\n',
    "clean": 'root ::= item ("," item){0,20}\nitem ::= [a-z]+ | "(" root ")"\n',
}


# The ones the shortcut proves clean ("a"{2000} is refused: the product is at the limit).
TAKEN = {
    "product-under",
    "stacked-under",
    "names-first-seen",
    "nested-groups",
    "bounded-loop-over-empty",
    "clean",
}


def _both(text: str, root: str = "root") -> tuple[list[str], list[str], _Dialect]:
    grammar = gs.Grammar.from_gbnf(text, root=root)
    parsed = source_of_grammar(grammar, text)

    def run(shortcut: bool) -> tuple[list[str], _Dialect]:
        dialect = _Dialect(text, parsed, grammar.root, Facts(grammar.rules, grammar.root))
        return [f.rendered for f in _findings(dialect, shortcut)], dialect

    fast, dialect = run(True)
    full, _ = run(False)
    return fast, full, dialect


def _assert_sound(text: str, root: str = "root") -> bool:
    """The proofs hold whenever they claim to; returns whether the shortcut was taken."""
    fast, full, dialect = _both(text, root)
    assert fast == full
    expansion = expand(dialect.parsed)
    within = repetitions_within_limits(dialect.parsed)
    if within:
        assert not expansion.issues, expansion.issues
    no_left = dialect.no_left_recursion()
    if no_left:
        assert not left_cycles(expansion)
        assert not dialect.true_left_recursive()
    return within and no_left


@pytest.mark.parametrize("name", sorted(EDGES))
def test_edges(name: str) -> None:
    taken = _assert_sound(EDGES[name])
    assert taken == (name in TAKEN), name


def test_findings_at_the_edges_are_real() -> None:
    for name in (
        "count-at-limit",
        "count-over",
        "product-at",
        "stacked-over",
        "names-over",
        "nested-over",
        "left-recursion",
        "hidden-left",
        "loop-over-empty-rule",
        "loop-clamped-upper",
        "any-class-loop",
    ):
        fast, _, _ = _both(EDGES[name])
        assert any("llama.cpp" in f for f in fast), name


def test_llama_cpp_grammars() -> None:
    try:
        paths = llama_cpp_grammars()
    except Exception as e:  # the assets are optional outside CI (CI=true makes them required)
        pytest.skip(f"llama.cpp grammars not available: {e}")
    for path in paths.values():
        _assert_sound(path.read_text(encoding="utf-8"))


def test_the_benchmark_grammar_takes_the_shortcut() -> None:
    assert _assert_sound(generated_grammar(300))


_REPEAT = st.sampled_from(["*", "+", "?", "{2}", "{0,3}", "{1,}", "{,4}", "{7,9}", "{0,45}"])


@st.composite
def _nested(draw: st.DrawFn, depth: int = 0) -> str:
    """An element with repetitions nested in groups, counts near the limits' products."""
    if depth >= 3 or draw(st.booleans()):
        base = draw(st.sampled_from(['"a"', '""', "x", "e", "[^]", "[b-c]"]))
    else:
        parts = draw(st.lists(_nested(depth + 1), min_size=1, max_size=3))
        alternatives = draw(st.sampled_from([" ", " | "]))
        base = "(" + alternatives.join(parts) + ")"
    ops = draw(st.lists(_REPEAT, max_size=2))
    count = draw(st.sampled_from(["", "", "{44}", "{46}", "{0,60}", "{2001}"]))
    return base + "".join(ops) + count


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_nested(), min_size=1, max_size=3), st.booleans())
def test_random_nested_repetitions(parts: list[str], left: bool) -> None:
    x = "root" if left else '"x"'
    text = f'root ::= {" ".join(parts)} | "z"\nx ::= {x} "y" | "w"\ne ::= | "q"\n'
    _assert_sound(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_grammars(data: st.DataObject) -> None:
    rules, root = data.draw(grammars())
    _assert_sound(data.draw(gbnf_texts(rules, root)), root)
