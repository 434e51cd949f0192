"""Pathological grammars and inputs: the state stays bounded by a small function of the grammar
size (asserted on the deterministic state_size counter, not on time), or the matcher refuses
with GrammarTooComplexError naming the limit, leaving its state unchanged."""

from __future__ import annotations

import pytest

import gbnf_sampler as gs

MB = 1 << 20


def matcher(text: str, **kw: int) -> gs.Matcher:
    return gs.Matcher(gs.Grammar.from_gbnf(text), **kw)


def max_state(m: gs.Matcher, data: bytes, chunk: int = 1) -> int:
    """Feeds data in chunks and returns the largest state_size seen."""
    worst = m.state_size
    for i in range(0, len(data), chunk):
        assert m.accept_bytes(data[i : i + chunk])
        worst = max(worst, m.state_size)
    return worst


@pytest.mark.parametrize(
    "text",
    [
        'root ::= ("a" | "a")*',
        'root ::= (("a")*)*',
        'root ::= ((("a")*)+)*',
        'root ::= ("a" | "a" | "aa" | "a"?)*',
        'root ::= x*\nx ::= "a" | "a" | y\ny ::= "a"',
    ],
)
def test_ambiguous_repetition_is_bounded(text: str) -> None:
    m = matcher(text)
    assert max_state(m, b"a" * 2000) <= 16
    assert m.accept_bytes(b"a" * MB)
    assert m.can_terminate()
    assert m.state_size <= 16


def test_many_optionals_are_bounded() -> None:
    n = 500
    m = matcher("root ::= " + "x? " * n + '\nx ::= "x"')
    worst = max_state(m, b"x" * n)
    assert worst <= 4 * n
    assert m.can_terminate()
    assert not m.accept_bytes(b"x")


def test_large_repetition_bound_is_exact() -> None:
    g = gs.Grammar.from_gbnf('root ::= "x"{0,100000}')
    m = gs.Matcher(g)
    assert m.accept_bytes(b"x" * 100000)
    assert m.state_size <= 2
    assert m.can_terminate()
    assert not m.accept_bytes(b"x")
    m2 = gs.Matcher(gs.Grammar.from_gbnf('root ::= "x"{99999,100000} "!"'))
    assert m2.accept_bytes(b"x" * 99998)
    assert not m2.accept_bytes(b"!")
    assert m2.accept_bytes(b"xx")
    assert not m2.accept_bytes(b"x")
    assert m2.accept_bytes(b"!")
    assert m2.can_terminate()


def test_million_repetition_bound() -> None:
    m = matcher('root ::= "ab"{1000000}')
    assert m.accept_bytes(b"ab" * 999999)
    assert not m.can_terminate()
    assert m.accept_bytes(b"ab")
    assert m.can_terminate()
    assert not m.accept_bytes(b"a")


def test_automaton_size_limit() -> None:
    g = gs.Grammar.from_gbnf('root ::= ((("a"){1000}){1000}){1000}')
    with pytest.raises(gs.GrammarTooComplexError) as info:
        gs.Matcher(g)
    assert info.value.limit == "max_automaton_size"


def test_automaton_size_limit_of_a_reachable_rule_refused_up_front() -> None:
    # Rules are built on first reach, but one whose size is sure to pass the limit is refused
    # when the matcher is made, naming the rule, not in the middle of a generation.
    g = gs.Grammar.from_gbnf('root ::= "a" big | "b"\nbig ::= ((("a"){1000}){1000}){1000}')
    with pytest.raises(gs.GrammarTooComplexError, match="rule 'big' expands to at least") as info:
        gs.Matcher(g)
    assert info.value.limit == "max_automaton_size"


@pytest.mark.parametrize(
    ("max_length", "message"),
    [
        # The string's character rule is inlined into every copy of the count: the size bound
        # counts it in full (it counted a call), enough to refuse this one unbuilt...
        (1_000_000, "rule 'text' expands to at least"),
        # ...and a bound this large a share of the limit gets the rule built with the matcher:
        # too large only once built (its epsilon closures), it is refused there, not by the step
        # that first reaches the string.
        (200_000, "rule 'text' passes max_automaton_size .* once built"),
    ],
)
def test_long_json_string_refused_up_front(max_length: int, message: str) -> None:
    schema = {"type": "object", "properties": {"text": {"type": "string", "maxLength": max_length}}}
    with pytest.raises(gs.GrammarTooComplexError, match=message) as info:
        gs.Matcher(gs.Grammar.from_json_schema(schema))
    assert info.value.limit == "max_automaton_size"


def test_long_json_string_within_the_limit_builds() -> None:
    schema = {"type": "object", "properties": {"text": {"type": "string", "maxLength": 20_000}}}
    m = gs.Matcher(gs.Grammar.from_json_schema(schema))
    assert m.accept_bytes(b'{"text": "' + b"x" * 20_000 + b'"}') and m.can_terminate()
    assert not m.accept_bytes(b"x")


def test_huge_rule_the_root_never_reaches_is_not_refused() -> None:
    g = gs.Grammar.from_gbnf('root ::= "b"\nbig ::= ((("a"){1000}){1000}){1000}')
    m = gs.Matcher(g)
    assert m.accept_bytes(b"b") and m.can_terminate()


def test_automaton_size_limit_of_a_rule_built_on_first_reach() -> None:
    # 6,000 optional "a"s: a small NFA, but each state's epsilon closure holds every later "a"
    # edge, so the built rule has about 18 million edges. No cheap bound sees that: the step
    # that enters the rule is refused naming the limit, and the matcher keeps its state.
    g = gs.Grammar.from_gbnf('root ::= "a" big | "b"\nbig ::= ("a"?){6000}')
    m = gs.Matcher(g)
    with pytest.raises(gs.GrammarTooComplexError) as info:
        m.accept_bytes(b"a")
    assert info.value.limit == "max_automaton_size"
    assert m.accept_bytes(b"b") and m.can_terminate()


@pytest.mark.parametrize(
    "text", ['root ::= root root | "a"', 'root ::= "a" root | "a" root root | ""']
)
def test_exponentially_ambiguous_grammars(text: str) -> None:
    # Polynomial: the state grows linearly with the input for these grammars...
    m = matcher(text)
    worst = max_state(m, b"a" * 60)
    assert worst <= 4 * 61
    assert m.can_terminate()
    # ...so a long input reaches the cap and is refused cleanly, state unchanged.
    m = matcher(text, max_state_size=20000)
    before = m.state_size
    with pytest.raises(gs.GrammarTooComplexError) as info:
        m.accept_bytes(b"a" * MB)
    assert info.value.limit == "max_state_size"
    assert "max_state_size" in str(info.value)
    assert m.state_size == before
    assert m.rollback_available == 0
    assert m.accept_bytes(b"aa") and m.can_terminate()


def test_state_cap_is_per_step_and_configurable() -> None:
    text = "root ::= " + "x? " * 200 + '\nx ::= "x"'
    with pytest.raises(gs.GrammarTooComplexError):
        matcher(text, max_state_size=50).accept_bytes(b"x")
    assert matcher(text).accept_bytes(b"x" * 200)


def test_deep_nesting_in_grammar_is_refused_by_the_parser() -> None:
    with pytest.raises(gs.GrammarError) as info:
        gs.Grammar.from_gbnf("root ::= " + "(" * 10000 + '"a"' + ")" * 10000)
    assert info.value.code == "nesting_too_deep"


def test_deep_but_allowed_nesting() -> None:
    depth = 200
    m = matcher("root ::= " + "(" * depth + '"a"' + ")*" * depth)
    assert m.accept_bytes(b"a" * 1000)
    assert m.state_size <= 4 * depth + 4


def test_deep_input_nesting_right_recursion() -> None:
    m = matcher('root ::= "a" root | "b"')
    assert m.accept_bytes(b"a" * MB)
    assert m.state_size <= 4
    assert m.accept_bytes(b"b") and m.can_terminate()


def test_deep_input_nesting_center_recursion() -> None:
    m = matcher('root ::= "(" root ")" | "x"')
    depth = 100000
    assert m.accept_bytes(b"(" * depth + b"x")
    assert m.state_size <= 4
    assert m.accept_bytes(b")" * depth)
    assert m.can_terminate()
    assert not m.accept_bytes(b")")


def test_left_recursion_long_input() -> None:
    m = matcher('root ::= root "+" num | num\nnum ::= [0-9]+')
    assert m.accept_bytes(b"1" + b"+23" * 300000)
    assert m.state_size <= 8
    assert m.can_terminate()


def test_forced_bytes_is_bounded() -> None:
    m = matcher('root ::= "a"{100000} "b"')
    forced = m.forced_bytes()
    assert forced == b"a" * 65536
    assert m.state_size <= 2


def test_long_rule_chain() -> None:
    n = 5000
    text = "root ::= r0\n" + "".join(f'r{i} ::= "a" r{i + 1}\n' for i in range(n)) + f'r{n} ::= "!"'
    m = matcher(text)
    assert m.accept_bytes(b"a" * n)
    assert m.state_size <= 4
    assert m.forced_bytes() == b"!"
    assert m.accept_bytes(b"!") and m.can_terminate()


def test_doubling_rule_chain_is_not_expanded_exponentially() -> None:
    depth = 40
    text = "root ::= r0\n" + "".join(f"r{i} ::= r{i + 1} r{i + 1}\n" for i in range(depth))
    text += f'r{depth} ::= "a"'
    m = matcher(text)
    assert m.accept_bytes(b"a" * 10000)
    assert m.state_size <= 4 * depth
    assert not m.can_terminate()
    assert m.forced_bytes() == b"a" * 65536
