"""The token trie (sorted order, lcp, subtree ends) and its walk, against brute-force models."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from vocab_fixtures import bpe_tokens, bpe_vocab, byte_vocab


@dataclass
class Model:
    """The brute-force trie: every definition from vocab.h, computed the slow way."""

    ids: list[int]
    toks: list[bytes]
    lcp: list[int]
    subtree_end: list[int]
    excluded: list[int]


def common_prefix(a: bytes, b: bytes) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def model(tokens: list[bytes], eos: list[int], special: list[int]) -> Model:
    out = set(eos) | set(special) | {i for i, t in enumerate(tokens) if not t}
    pairs = sorted((t, i) for i, t in enumerate(tokens) if i not in out)
    toks = [t for t, _ in pairs]
    lcp = [common_prefix(toks[p - 1], toks[p]) if p else 0 for p in range(len(toks))]
    ends = []
    for p, t in enumerate(toks):
        q = p + 1
        while q < len(toks) and toks[q].startswith(t):
            q += 1
        ends.append(q)
    return Model([i for _, i in pairs], toks, lcp, ends, sorted(out))


def check_trie(tokens: list[bytes], eos: list[int], special: list[int]) -> Model:
    v = gs.Vocab(tokens, eos, special)
    m = model(tokens, eos, special)
    n = v._native
    assert n.trie_sorted_ids() == m.ids
    assert n.trie_lcp() == m.lcp
    assert n.trie_subtree_end() == m.subtree_end
    assert n.trie_excluded_ids() == m.excluded
    for p, t in enumerate(m.toks):
        for depth in range(len(t) + 1):
            q = p + 1
            while q < len(m.toks) and m.toks[q][:depth] == t[:depth]:
                q += 1
            assert n.trie_next_diverging(p, depth) == q, (p, depth)
    return m


# Few distinct bytes, including 0x00 and 0xFF, so tokens share prefixes and repeat.
token = st.binary(max_size=5).map(lambda b: bytes(c % 4 for c in b).replace(b"\x03", b"\xff"))
vocabularies = st.lists(token, min_size=1, max_size=40).flatmap(
    lambda toks: st.tuples(
        st.just(toks),
        st.lists(st.integers(0, len(toks) - 1), max_size=3),
        st.lists(st.integers(0, len(toks) - 1), max_size=3),
    )
)


@settings(max_examples=300, deadline=None)
@given(vocabularies)
def test_trie_matches_brute_force(vocab: tuple[list[bytes], list[int], list[int]]) -> None:
    check_trie(*vocab)


@settings(max_examples=300, deadline=None)
@given(vocabularies, st.lists(token, max_size=4))
def test_walk_matches_brute_force(
    vocab: tuple[list[bytes], list[int], list[int]], texts: list[bytes]
) -> None:
    tokens, eos, special = vocab
    m = model(tokens, eos, special)
    v = gs.Vocab(tokens, eos, special)
    accepted, visited = v._native.trie_walk_prefix_filter(texts)
    expected = [
        i for i, t in zip(m.ids, m.toks, strict=True) if any(x.startswith(t) for x in texts)
    ]
    assert accepted == expected
    assert visited <= len(m.ids)


def test_header_example() -> None:
    m = check_trie([b"a", b"ab", b"abc", b"abd", b"b", b"ab"], [], [])
    assert m.ids == [0, 1, 5, 2, 3, 4]
    assert m.lcp == [0, 1, 2, 2, 2, 0]
    assert m.subtree_end == [5, 5, 5, 4, 5, 6]
    v = gs.Vocab([b"a", b"ab", b"abc", b"abd", b"b", b"ab"], [])
    assert v._native.trie_walk_prefix_filter([b"abd"]) == ([0, 1, 5, 3], 6)
    # Refusing "a" skips the four tokens that start with it: 2 positions visited.
    assert v._native.trie_walk_prefix_filter([b"b"]) == ([4], 2)
    assert v._native.trie_walk_prefix_filter([]) == ([], 2)
    # Nothing extends "a": Skip() jumps over its subtree (positions 1-4).
    assert v._native.trie_walk_prefix_filter([b"a"]) == ([0], 2)


def test_skip_still_visits_duplicates() -> None:
    v = gs.Vocab([b"x", b"xy", b"x", b"xz", b"y"], [])
    # positions: x(0) x(2) xy(1) xz(3) y(4); Skip() after x visits the duplicate, then jumps to y.
    assert v._native.trie_walk_prefix_filter([b"x"]) == ([0, 2], 3)


def test_fixture_tries() -> None:
    bpe = bpe_vocab()
    m = check_trie(bpe_tokens(), bpe.eos_ids, bpe.special_ids)
    assert len(m.ids) == bpe.size - 5 - 1  # minus the control tokens and the empty token
    b = byte_vocab()
    assert b._native.trie_sorted_ids() == list(range(256))
    assert b._native.trie_excluded_ids() == [256]
    assert b._native.trie_subtree_end() == list(range(1, 257))


def test_walk_on_bpe_vocab() -> None:
    v = bpe_vocab()
    accepted, visited = v._native.trie_walk_prefix_filter([b'{"name": true}'])
    got = sorted(v.token_bytes(i) for i in accepted)
    assert got == [b"{", b"{", b'{"']  # the single-byte token, its duplicate, and '{"'
    assert visited < v.size


def test_large_random_vocab_skips() -> None:
    import random

    rng = random.Random(7)
    tokens = [bytes(rng.choice(b"abc") for _ in range(rng.randint(1, 6))) for _ in range(3000)]
    v = gs.Vocab(tokens, [])
    accepted, visited = v._native.trie_walk_prefix_filter([b"abcabc"])
    assert sorted(accepted) == sorted(i for i, t in enumerate(tokens) if b"abcabc".startswith(t))
    assert visited < 300  # the walk skips refused subtrees instead of visiting 3000 tokens


def test_trie_built_once_under_threads() -> None:
    from concurrent.futures import ThreadPoolExecutor

    tokens = [bytes([a, b]) for a in range(40) for b in range(40)] + [b"x"]
    v = gs.Vocab(tokens, [])
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: v._native.trie_sorted_ids(), range(32)))
    assert all(r == results[0] for r in results)
    assert len(results[0]) == len(tokens)
