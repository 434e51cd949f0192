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


# --- runs of the tokens inside one byte class (TokenTrie::RunsInside) ------------------------

UNSEEN = 2**32 - 1  # min_lcp of a run of one position

# ASCII letters and a quote, whole and cut multi-byte characters, stray continuation and
# invalid bytes, ASCII inside a character.
class_token = st.lists(
    st.sampled_from(
        [
            b"a",
            b"b",
            b'"',
            b" ",
            b"\xc3\xa9",
            b"\xc3",
            b"\xa9",
            b"\xe2\x80\x94",
            b"\xe2\x80",
            b"\xff",
            b"\xed\xa0\x80",
        ]
    ),
    min_size=1,
    max_size=4,
).map(b"".join)


def in_class(token: bytes, ascii: bytes, non_ascii: bool) -> bool:
    """Every ASCII byte in the class and between characters, the rest (when non_ascii) a prefix
    of valid UTF-8: the definition, the slow way."""
    for cut in range(len(token), max(-1, len(token) - 4), -1):
        try:
            text = token[:cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
        tail = token[cut:]
        # the rest must be the start of one character (a lead byte and its continuations)
        if tail and not (0xC2 <= tail[0] <= 0xF4 and all(0x80 <= b <= 0xBF for b in tail[1:])):
            continue
        if tail and not tail_may_continue(tail):
            continue
        return all(ord(c) in ascii if ord(c) < 0x80 else non_ascii for c in text) and (
            not tail or non_ascii
        )
    return False


def tail_may_continue(tail: bytes) -> bool:
    """Whether some continuation makes the cut character valid (shortest form, no surrogates)."""
    for last in range(0x80, 0xC0):
        for more in (b"", bytes([0x80]), bytes([0x80, 0x80])):
            try:
                (tail + bytes([last]) + more).decode("utf-8")
                return True
            except UnicodeDecodeError:
                pass
    return False


def characters(token: bytes) -> int:
    return min(255, sum(1 for b in token if b & 0xC0 != 0x80))


def expected_runs(m: Model, ascii: bytes, non_ascii: bool) -> tuple[list, list, list]:
    runs: list[tuple[int, int]] = []
    mins: list[int] = []
    chars: list[int] = []
    for p, t in enumerate(m.toks):
        if not in_class(t, ascii, non_ascii):
            continue
        if runs and runs[-1][1] == p:
            runs[-1] = (runs[-1][0], p + 1)
            mins[-1] = min(mins[-1], m.lcp[p])
            chars[-1] = max(chars[-1], characters(t))
        else:
            runs.append((p, p + 1))
            mins.append(UNSEEN)
            chars.append(characters(t))
    return runs, mins, chars


@settings(max_examples=300, deadline=None)
@given(
    st.lists(class_token, min_size=1, max_size=40),
    st.sets(st.sampled_from(b'ab" ')),
    st.booleans(),
)
def test_runs_inside_a_class_match_brute_force(
    tokens: list[bytes], ascii: set[int], non_ascii: bool
) -> None:
    m = model(tokens, [], [])
    v = gs.Vocab(tokens, [])
    found = v._native.trie_runs_inside(bytes(sorted(ascii)), non_ascii)
    assert found == expected_runs(m, bytes(sorted(ascii)), non_ascii)


def test_runs_inside_hand_cases() -> None:
    tokens = [b"a", b"ab", b'a"', b"abb", b"b", b"\xc3", b"\xc3\xa9", b"\xc3a", b"\xe2\x80"]
    v = gs.Vocab(tokens, [])
    order = [tokens[i] for i in v._native.trie_sorted_ids()]
    assert order == [b"a", b'a"', b"ab", b"abb", b"b", b"\xc3", b"\xc3a", b"\xc3\xa9", b"\xe2\x80"]
    # ASCII only: a, then ab, abb, b after the quote's token (lcps 2 and 0 after the first)
    assert v._native.trie_runs_inside(b"ab", False) == ([(0, 1), (2, 5)], [UNSEEN, 0], [1, 3])
    # with multi-byte characters: a cut character counts, ASCII inside one does not
    assert v._native.trie_runs_inside(b"ab", True) == (
        [(0, 1), (2, 6), (7, 9)],
        [UNSEEN, 0, 0],
        [1, 3, 1],
    )
    assert v._native.trie_runs_inside(b"", True) == ([(5, 6), (7, 9)], [UNSEEN, 0], [1, 1])


def test_runs_inside_count_characters_up_to_255() -> None:
    v = gs.Vocab([b"a" * 300, b"a", "é".encode() * 3], [])
    assert v._native.trie_runs_inside(b"a", True) == ([(0, 3)], [0], [255])


def json_string_class(del_too: bool) -> bytes:
    return bytes(b for b in range(0x20, 0x80 if del_too else 0x7F) if b not in b'"\\')


def test_runs_inside_keeps_a_bounded_number_of_classes() -> None:
    v = gs.Vocab([b"a", b"b", b"ab", b'"a"'], [])
    letters = b"abcdefghijklmnopqrstuvwxyz"
    # Two are taken with the trie: the string bodies of JSON, with and without DEL.
    free = gs.limits.MAX_CLASS_RUNS - 2
    kept = [v._native.trie_runs_inside(letters[: i + 1], False) for i in range(free)]
    assert all(k is not None for k in kept)
    assert v._native.trie_runs_inside(b"xyz", False) is None  # one class too many
    assert v._native.trie_runs_inside(b"a", False) == kept[0]  # the kept ones still answer
    for del_too in (False, True):
        assert v._native.trie_runs_inside(json_string_class(del_too), True) == (
            [(1, 4)],
            [0],
            [2],
        )
