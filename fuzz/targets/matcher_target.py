"""The byte-level matcher, driven like fuzz/matcher_fuzzer.cc (same input layout, so the
libFuzzer corpus replays through the Python API): byte 0 = grammar length L, bytes [1, 1+L) =
GBNF text, the rest = a program of accepts, rollbacks, forks, resets and forced-bytes checks.
Only GrammarError / GrammarTooComplexError may escape; a refused accept must leave the state as
it was, forced bytes must be accepted, and a complete sentence must accept EOS."""

from __future__ import annotations

import gbnf_sampler as gs

EXPECTED = (gs.GrammarError, gs.GrammarTooComplexError)


def _snapshot(m: gs.Matcher) -> tuple[bool, bool, int, int]:
    return (m.can_terminate(), m.is_terminated(), m.state_size, m.rollback_available)


def _run(matcher: gs.Matcher, program: bytes) -> None:
    other = matcher.fork()
    pc = 0
    while pc < len(program):
        op = program[pc]
        pc += 1
        kind = op % 8
        if kind <= 3:
            n = min(1 + (op >> 3) % 8, len(program) - pc)
            before = _snapshot(matcher)
            if not matcher.accept_bytes(program[pc : pc + n]):
                assert _snapshot(matcher) == before, "a refused accept changed the state"
            pc += n
        elif kind == 4:
            matcher.rollback(min(op >> 3, matcher.rollback_available))
        elif kind == 5:
            matcher, other = other, matcher
            other = matcher.fork()
        elif kind == 6:
            matcher.reset()
        else:
            forced = matcher.forced_bytes()
            assert not forced or matcher.fork().accept_bytes(forced), "forced bytes refused"
            assert not matcher.can_terminate() or matcher.fork().accept_eos(), "EOS refused"


def run_one(data: bytes) -> None:
    if not data:
        return
    length = min(data[0], len(data) - 1)
    try:
        grammar = gs.Grammar.from_gbnf(data[1 : 1 + length])
        matcher = gs.Matcher(grammar, max_state_size=20_000, max_history_bytes=4096)
        _run(matcher, data[1 + length :])
    except EXPECTED:
        return
