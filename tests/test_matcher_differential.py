"""The matcher against the reference Earley recognizer (tests/reference.py) on random grammars
(tests/strategies.py): they agree on viability of every prefix, completeness, and forced bytes,
for sentences of the grammar and for mutated (often invalid, often non-UTF-8) inputs."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from reference import Reference
from strategies import grammars, mutations, sentences, to_gbnf_text

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

Case = tuple[gs.Grammar, Reference, bytes]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    rules, root = draw(grammars())
    grammar = gs.Grammar.from_gbnf(to_gbnf_text(rules, root), root=root)
    sentence = draw(sentences(rules, root))
    data = draw(st.one_of(st.just(sentence), mutations(sentence)))
    return grammar, Reference(rules, root), data


def viable_length(m: gs.Matcher, data: bytes) -> int:
    """Feeds data byte by byte; returns how many bytes were accepted before the first refusal."""
    for i in range(len(data)):
        if not m.accept_bytes(data[i : i + 1]):
            return i
    return len(data)


@SETTINGS
@given(cases())
def test_whole_input_agrees(case: Case) -> None:
    grammar, ref, data = case
    m = gs.Matcher(grammar)
    viable = ref.is_viable_prefix(data)
    assert m.accept_bytes(data) == viable
    if viable:
        assert m.can_terminate() == ref.accepts(data)
        assert m.forced_bytes() == ref.forced_next(data)


@SETTINGS
@given(cases())
def test_every_prefix_agrees(case: Case) -> None:
    grammar, ref, data = case
    m = gs.Matcher(grammar, max_rollback=0)
    n = viable_length(m, data)
    assert ref.is_viable_prefix(data[:n])
    if n < len(data):
        assert not ref.is_viable_prefix(data[: n + 1])
    assert m.can_terminate() == ref.accepts(data[:n])


@SETTINGS
@given(cases(), st.data())
def test_next_bytes_agree(case: Case, data_strategy: st.DataObject) -> None:
    grammar, ref, data = case
    m = gs.Matcher(grammar)
    n = viable_length(m, data)
    prefix = data[:n]
    probes = data_strategy.draw(st.lists(st.integers(0, 255), min_size=1, max_size=12))
    expected = ref.next_bytes(prefix)
    for byte in probes:
        assert m.accept_bytes(bytes([byte])) == (byte in expected), (prefix, byte)
        if byte in expected:
            m.rollback(1)
