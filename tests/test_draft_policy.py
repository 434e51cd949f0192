"""What jump-forward drafts and how much of it it evaluates: guesses from the context
(ContextLookup), step costs learned from timed steps (StepCosts) and the cut (DraftLength)."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gbnf_sampler.llama import lookup
from gbnf_sampler.llama.lookup import MAX_MATCH_BYTES, MIN_MATCH_BYTES, ContextLookup
from gbnf_sampler.llama.speculative import ENDS, GUESSED, INSIDE, Draft, DraftLength
from gbnf_sampler.llama.step_costs import BatchStepCosts, StepCosts


def _reference_continuation(text: bytes, size: int) -> bytes:
    """The longest suffix (MIN..MAX bytes) with an earlier occurrence, its latest one: by trying
    every length and every position."""
    for n in range(min(MAX_MATCH_BYTES, len(text) - 1), MIN_MATCH_BYTES - 1, -1):
        suffix = text[-n:]
        for start in range(len(text) - n - 1, -1, -1):
            if text[start : start + n] == suffix:
                return text[start + n : start + n + size]
    return b""


def test_a_few_shot_example_is_guessed() -> None:
    context = ContextLookup(b'Example: {"id": "A1", "kind": "lamp"}\nNow: ')
    assert context.continuation(b'{"id', 12) == b'": "A1", "ki'
    context.extend(b'{"id": "B7", "k')
    assert context.continuation(b"", 8) == b'ind": "l'


def test_no_guess_without_an_earlier_match() -> None:
    context = ContextLookup(b"abcdefgh")
    assert context.continuation(b"xyz", 10) == b""
    assert context.continuation(b"", 10) == b""  # "efgh" never occurred before itself
    assert ContextLookup().continuation(b"abc", 10) == b""
    assert ContextLookup(b"abcdabcd").continuation(b"", 0) == b""


@pytest.mark.parametrize(
    "context, expected",
    [
        # "xQWERT" (6 bytes) was followed by "a"; the later, shorter "QWERT" by "b".
        (b"xQWERTa yQWERTb xQWERT", b"a"),
        (b"abcdefXbcdefYabcdef", b"X"),
        (b"0123456A123456B0123456", b"A"),
        (b"wxyz1 wxyz2 wxyz", b"2"),  # equal lengths: the most recent occurrence
    ],
)
def test_the_longest_suffix_wins(context: bytes, expected: bytes) -> None:
    assert ContextLookup(context).continuation(b"", 1) == expected


# Texts of a few repeated words with varying separators: long suffixes that recur, shorter
# ones that recur more recently with another continuation.
_WORDY = st.lists(
    st.sampled_from([b"QWERT", b"WERT", b"ab", b"x", b"ERTa", b" "]), max_size=30
).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(_WORDY, _WORDY.map(lambda t: t[:8]), st.integers(1, 20))
def test_continuation_in_wordy_texts(context: bytes, tail: bytes, size: int) -> None:
    got = ContextLookup(context).continuation(tail, size)
    assert got == _reference_continuation(context + tail, size)


def test_a_match_may_run_into_the_tail() -> None:
    # "abab" + "ab": the latest earlier "ababab"-suffix match continues with text that is itself
    # part of the tail (periodic text).
    assert ContextLookup(b"abab").continuation(b"ab", 5) == b"ab"


@settings(max_examples=400, deadline=None)
@given(
    st.binary(max_size=120).map(lambda b: bytes(x % 3 + 97 for x in b)),
    st.binary(max_size=12).map(lambda b: bytes(x % 3 + 97 for x in b)),
    st.integers(0, 40),
)
def test_continuation_equals_the_exhaustive_search(context: bytes, tail: bytes, size: int) -> None:
    got = ContextLookup(context).continuation(tail, size)
    assert got == (_reference_continuation(context + tail, size) if size > 0 else b"")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=30), max_size=20), st.integers(1, 20))
def test_only_the_window_is_searched(pieces: list[bytes], size: int) -> None:
    with mock.patch.object(lookup, "WINDOW_BYTES", 48):
        context = ContextLookup()
        everything = b""
        for piece in pieces:
            piece = bytes(x % 4 + 97 for x in piece)
            context.extend(piece)
            everything += piece
        assert len(context) <= 48 + 48 // 4
        got = context.continuation(b"", size)
    assert got == _reference_continuation(everything[-48:], size)


def _measured(plain: float, tokens: int, rows: int, seconds: float, times: int) -> StepCosts:
    costs = StepCosts()
    for _ in range(times):
        costs.measure(1, 1, plain)
        costs.measure(tokens, rows, seconds)
    return costs


def test_costs_start_at_the_prior() -> None:
    costs = StepCosts()
    assert costs.cost(1, 1) == 1.0
    for rows in range(1, len(StepCosts.PRIOR_ROWS) + 1):
        expected = 1.0 + StepCosts.PRIOR_TOKEN * 6 + StepCosts.PRIOR_ROWS[rows - 1]
        assert costs.cost(7, rows) == pytest.approx(expected)
    assert costs.checked_may_pay()


def test_costs_follow_measured_steps() -> None:
    # Unchecked: 3 tokens in 14 ms where one takes 10 ms: 0.2 each beyond the first.
    costs = _measured(0.010, 3, 1, 0.014, 3)
    assert costs.token == pytest.approx(0.2)
    # Checked: 2 tokens, 2 rows in 33 ms: 1 + 0.2 + row = 3.3, a row costs 2.1.
    for _ in range(3):
        costs.measure(2, 2, 0.033)
    assert costs.row == pytest.approx(2.1)
    assert costs.cost(4, 3) == pytest.approx(1 + 0.2 * 3 + 2.1 * 2)
    assert not costs.checked_may_pay()


def test_one_slow_step_moves_no_cost() -> None:
    costs = _measured(0.010, 2, 2, 0.015, 5)  # a row costs 0.25
    costs.measure(2, 2, 0.150)  # the machine was busy once
    costs.measure(1, 1, 0.100)
    assert costs.row == pytest.approx(0.25)
    assert costs.checked_may_pay()


def test_checked_drafts_are_retried_after_a_while() -> None:
    costs = _measured(0.010, 2, 2, 0.040, 3)  # a row costs 2.75: never pays
    assert not costs.checked_may_pay()
    for _ in range(StepCosts.RETRY_AFTER - 1):
        costs.measure(1, 1, 0.010)
    assert not costs.checked_may_pay()
    costs.measure(3, 1, 0.012)  # unchecked draft tokens do not measure rows
    assert costs.checked_may_pay()
    costs.measure(2, 2, 0.040)
    assert not costs.checked_may_pay()


def _draft(only: list[bool], kinds: list[int] | None = None) -> Draft:
    return Draft(list(range(len(only))), only, kinds or [INSIDE] * len(only))


def test_the_cut_keeps_only_tokens_the_grammar_allows_alone_when_rows_are_expensive() -> None:
    length = DraftLength(prior_kept=99.0, prior_checked=100.0, costs=_measured(0.01, 2, 2, 0.04, 3))
    assert len(length.cut(_draft([True, True, False, True]))) == 2
    assert len(length.cut(_draft([False, True, True]))) == 0


def test_the_cut_takes_long_checked_runs_when_rows_are_cheap() -> None:
    costs = _measured(0.010, 2, 2, 0.0115, 3)  # a token and its row: 0.15 together
    likely = DraftLength(prior_kept=9.5, prior_checked=10.0, costs=costs)
    assert len(likely.cut(_draft([False] * 6))) == 6
    unlikely = DraftLength(prior_kept=1.0, prior_checked=10.0, costs=costs)
    assert len(unlikely.cut(_draft([False] * 6))) == 0


def test_the_cut_retries_one_checked_token_when_due() -> None:
    costs = _measured(0.010, 2, 2, 0.040, 3)
    length = DraftLength(costs=costs)
    for _ in range(StepCosts.RETRY_AFTER):
        costs.measure(1, 1, 0.010)
    assert len(length.cut(_draft([True, False, False]))) == 2
    assert len(length.cut(_draft([True, True]))) == 2


def test_each_kind_is_estimated_on_its_own() -> None:
    costs = _measured(0.010, 2, 2, 0.0115, 3)
    length = DraftLength(prior_kept=9.5, prior_checked=10.0, costs=costs)
    guessed = _draft([False] * 4, [GUESSED] * 4)
    ending = _draft([False] * 4, [ENDS] * 4)
    for _ in range(30):
        length.observe(guessed, 0, False)
        length.observe(ending, 0, True)
    assert len(length.cut(guessed)) == 0
    assert len(length.cut(ending)) == 4


def _batch_costs(
    steps: list[tuple[int, int]], fixed: float, per_token: float, per_row: float
) -> BatchStepCosts:
    costs = BatchStepCosts()
    for tokens, rows in steps:
        costs.measure_batch(tokens, rows, 0, fixed + per_token * tokens + per_row * rows)
    return costs


VARIED = [(t, r) for t in (1, 3, 6, 9) for r in (1, 2, 3)] * 2


def test_batch_costs_are_fitted_per_sequence() -> None:
    costs = _batch_costs(VARIED, 0.004, 0.0005, 0.003)
    costs.sequences = 4  # a plain step per sequence: 0.001 + 0.0005 + 0.003
    assert costs.token == pytest.approx(0.0005 / 0.0045)
    assert costs.row == pytest.approx(0.003 / 0.0045)
    assert costs.cost(3, 2) == pytest.approx(1 + 2 * costs.token + costs.row)
    # Against a plain step of the sequence, a draft token weighs more in a fuller batch (the
    # fixed part of a step is shared by more sequences).
    alone = _batch_costs(VARIED, 0.004, 0.0005, 0.003)
    assert alone.row == pytest.approx(0.003 / 0.0075) and alone.row < costs.row


def test_batch_costs_keep_the_prior_until_the_steps_determine_them() -> None:
    same = [(n, n) for n in (1, 2, 3, 4)] * 8  # rows always equal tokens: no fit
    costs = _batch_costs(same, 0.004, 0.0005, 0.003)
    assert costs.cost(4, 3) == StepCosts().cost(4, 3)
    fitted = _batch_costs(VARIED, 0.004, 0.0005, 0.003)
    row = fitted.row
    for tokens, rows in VARIED:  # times that would fit a negative cost: the fit stays
        fitted.measure_batch(tokens, rows, 0, 0.05 - 0.004 * rows)
    assert fitted.row == row
