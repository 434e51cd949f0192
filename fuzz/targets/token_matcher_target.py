"""The token-level matcher: a random grammar, a toy vocabulary and a random program of
accept_token / accept_tokens / rollback / fork / reset / fill_mask calls. Invariants checked at
every step (only GrammarError / GrammarTooComplexError may escape):

* fill_mask == the brute-force mask (a fork tries every token) == the trie-walk reference;
* a refused accept leaves the state unchanged; rollback(n) restores the mask seen n accepts ago;
* a fork behaves like its original; fill_masks over several matchers == their own fill_mask.
"""

from __future__ import annotations

import numpy as np
from byte_reader import ByteReader

import gbnf_sampler as gs

EXPECTED = (gs.GrammarError, gs.GrammarTooComplexError)
GRAMMARS = [
    'root ::= "ab" [a-c]* "."',
    'root ::= ("a" | "ab" | "abc")+ "!"?',
    'root ::= x x\nx ::= "a" x "b" | ""',
    'root ::= root "a" | "b"',
    'root ::= [^a] | "a" [\\x00-\\xff]{0,3}',
    'root ::= <[3]> "a"* | !<[4]> "b"',
    'root ::= ("é" | [\\u00e0-\\u00ff])* "a"',
    'root ::= (("a"? "a"?)* "b")*',
]
PIECES = [b"a", b"b", b"c", b"ab", b"abc", b".", b"!", b"\xc3", b"\xa9", b"\xc3\xa9", b"", b"ba"]


def _vocab(r: ByteReader) -> gs.Vocab:
    n = r.int_in(1, 24)
    tokens = [r.choice(PIECES) if r.int_in(0, 3) else r.raw(3) for _ in range(n)]
    eos = [i for i in range(n) if r.int_in(0, 7) == 0]
    special = [i for i in range(n) if r.int_in(0, 7) == 0]
    return gs.Vocab(tokens, eos, special)


def _mask(m: gs.Matcher, vocab_size: int) -> list[int]:
    bitmask = gs.allocate_bitmask(1, vocab_size)
    m.fill_mask(bitmask)
    reference = gs.allocate_bitmask(1, vocab_size)
    m._fill_mask_reference(reference)
    assert np.array_equal(bitmask, reference), "fill_mask != trie-walk reference"
    allowed = [t for t in range(vocab_size) if (bitmask[0, t >> 5] >> (t & 31)) & 1]
    assert allowed == m.allowed_tokens().tolist(), "allowed_tokens != fill_mask"
    return allowed


def _brute_force(m: gs.Matcher, vocab_size: int) -> list[int]:
    out = []
    for t in range(vocab_size):
        try:
            if m.fork().accept_token(t):
                out.append(t)
        except gs.GrammarTooComplexError:
            pass  # the masks refuse a token whose step is over the limit
    return out


class _Program:
    def __init__(self, compiled: gs.CompiledGrammar) -> None:
        self.size = compiled.vocab_size
        self.matcher = gs.Matcher(compiled)
        self.history = [_mask(self.matcher, self.size)]  # masks after each accept

    def check(self) -> list[int]:
        allowed = _mask(self.matcher, self.size)
        assert allowed == _brute_force(self.matcher, self.size), "mask != brute force"
        return allowed

    def accept(self, token: int) -> None:
        before = self.history[-1]
        if self.matcher.accept_token(token):
            assert token in before, f"token {token} accepted but masked out"
            self.history.append(self.check())
        else:
            assert token not in before, f"token {token} allowed but refused"
            assert _mask(self.matcher, self.size) == before, "refused accept changed the state"

    def rollback(self, n: int) -> None:
        n = min(n, self.matcher.rollback_available, len(self.history) - 1)
        self.matcher.rollback(n)
        del self.history[len(self.history) - n :]
        assert _mask(self.matcher, self.size) == self.history[-1], "rollback mask differs"

    def step(self, r: ByteReader) -> None:
        op = r.int_in(0, 9)
        if op <= 4:
            self.accept(r.int_in(0, self.size - 1))
        elif op == 5:
            self.rollback(r.int_in(0, 4))
        elif op == 6:
            fork = self.matcher.fork()
            assert _mask(fork, self.size) == self.history[-1], "fork mask differs"
            if r.flag():
                self.matcher = fork
        elif op == 7:
            self.matcher.reset()
            self.history = [_mask(self.matcher, self.size)]
        elif op == 8:
            others = [self.matcher.fork() for _ in range(r.int_in(1, 3))]
            bitmask = gs.allocate_bitmask(len(others) + 1, self.size)
            gs.fill_masks([self.matcher, *others], bitmask)
            single = gs.allocate_bitmask(1, self.size)
            self.matcher.fill_mask(single)
            assert all(np.array_equal(row, single[0]) for row in bitmask), "fill_masks differs"
        else:
            token = r.int_in(0, self.size - 1)
            twin = self.matcher.fork()
            got = gs.accept_tokens([twin], [token])[0]
            assert got == (token in self.history[-1]), "accept_tokens disagrees with the mask"


def run_one(data: bytes) -> None:
    r = ByteReader(data)
    vocab = _vocab(r)
    text = r.choice(GRAMMARS) if r.int_in(0, 3) else r.text(60)
    try:
        grammar = gs.Grammar.from_gbnf(text)
        compiled = gs.compile(grammar, vocab, max_state_size=5_000, cache=False)
        program = _Program(compiled)
        for _ in range(r.int_in(0, 24)):
            program.step(r)
    except EXPECTED:
        return
