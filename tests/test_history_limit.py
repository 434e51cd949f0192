"""The rollback history is bounded in memory (max_history_bytes) as well as in accept calls
(max_rollback): on a grammar with large parser states the oldest snapshots are dropped, the
available rollback depth shrinks, and rolling back further is a clear error."""

from __future__ import annotations

import pytest

import gbnf_sampler as gs
from vocab_fixtures import byte_vocab

N = 800
# After k of the n optional x's the parser holds about n - k items: ~6 KB per snapshot here.
WIDE = gs.Grammar.from_gbnf("root ::= " + "x? " * N + '\nx ::= "x"')
STEPS = 60


def fed(m: gs.Matcher, steps: int) -> gs.Matcher:
    for _ in range(steps):
        assert m.accept_bytes(b"x")
    return m


def test_default_keeps_every_accept_within_max_rollback() -> None:
    m = fed(gs.Matcher(WIDE), STEPS)
    assert m.state_size > 700  # the premise: large states
    assert m.rollback_available == STEPS


def test_memory_cap_drops_the_oldest_snapshots() -> None:
    cap = 64 << 10
    m = fed(gs.Matcher(WIDE, max_history_bytes=cap), STEPS)
    depth = m.rollback_available
    # Each snapshot holds > 700 items of 8 bytes: far fewer than STEPS fit in 64 KiB.
    assert 0 < depth <= cap // (700 * 8) < STEPS
    m.rollback(depth)  # back to the oldest kept state
    assert m.state_size == fed(gs.Matcher(WIDE), STEPS - depth).state_size
    assert m.rollback_available == 0
    with pytest.raises(ValueError, match="max_history_bytes"):
        m.rollback(1)


def test_rollback_beyond_the_kept_history_is_refused_and_harmless() -> None:
    m = fed(gs.Matcher(WIDE, max_history_bytes=32 << 10), STEPS)
    depth = m.rollback_available
    before = m.state_size
    with pytest.raises(ValueError, match=f"exceeds the history kept \\({depth} accept calls"):
        m.rollback(depth + 1)
    assert m.state_size == before and m.rollback_available == depth
    assert m.accept_bytes(b"x")


def test_zero_cap_keeps_no_history_but_matches() -> None:
    m = fed(gs.Matcher(WIDE, max_history_bytes=0), 10)
    assert m.rollback_available == 0
    assert not m.accept_bytes(b"y")  # a refused accept still leaves the state as it was
    assert m.accept_bytes(b"x" * (N - 10)) and m.can_terminate()


def test_small_states_keep_full_depth_under_a_small_cap() -> None:
    m = gs.Matcher(gs.Grammar.from_gbnf('root ::= "x"*'), max_history_bytes=64 << 10)
    fed(m, 300)
    assert m.rollback_available == gs.matcher.DEFAULT_MAX_ROLLBACK


def test_fork_keeps_the_history_and_its_accounting() -> None:
    m = fed(gs.Matcher(WIDE, max_history_bytes=64 << 10), STEPS)
    fork = m.fork()
    assert fork.rollback_available == m.rollback_available
    fed(fork, 10)
    assert 0 < fork.rollback_available <= m.rollback_available + 10
    fork.rollback(fork.rollback_available)


def test_token_matchers_take_the_cap_from_compile() -> None:
    compiled = gs.compile(WIDE, byte_vocab(), max_history_bytes=64 << 10, cache=False)
    m = gs.Matcher(compiled)
    for _ in range(STEPS):
        assert m.accept_token(ord("x"))
    assert 0 < m.rollback_available < STEPS
    uncapped = gs.Matcher(gs.compile(WIDE, byte_vocab(), cache=False))
    for _ in range(STEPS):
        assert uncapped.accept_token(ord("x"))
    assert uncapped.rollback_available == STEPS
