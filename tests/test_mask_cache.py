"""The mask cache around the classification: the shared (level-2) cache across states and
grammars, background precompute, cache files (round trip, and corrupt, truncated or foreign
files ignored with a warning), statistics and the memory budget. Masks stay exact throughout:
they are compared with brute force (fork the matcher, try every token)."""

from __future__ import annotations

import gc
import struct
import time
from pathlib import Path

import pytest

import gbnf_sampler as gs
from gbnf_sampler.compiled import MaskCacheWarning
from mask_helpers import assert_masks_exact, bpe_vocab, normal_tokens, tokenize
from vocab_fixtures import bpe_vocab as shared_bpe_vocab

JSON_TEXT = b'{"name": "Ada", "tags": ["x", "caf\xc3\xa9"], "n": -12.5}'
SCHEMA_A = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
SCHEMA_B = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
    "required": ["city", "zip"],
}


@pytest.fixture
def vocab() -> gs.Vocab:
    """A fresh vocabulary object: the shared cache is per Vocab object, so each test starts
    from an empty level 2."""
    return bpe_vocab()


def replay(compiled: gs.CompiledGrammar, text: bytes, exact: bool = True) -> None:
    ids = tokenize(text, normal_tokens(compiled.vocab), lambda fits: fits[-1])
    m = gs.Matcher(compiled)
    for tid in ids:
        if exact:
            assert tid in assert_masks_exact(m, compiled.vocab_size)
        else:
            m.allowed_tokens()
        assert m.accept_token(tid)
    assert m.can_terminate()


def wait_for_precompute(
    compiled: gs.CompiledGrammar, timeout: float = 120.0
) -> gs.compiled.CacheStats:
    deadline = time.monotonic() + timeout
    while compiled.stats().precompute_running:
        assert time.monotonic() < deadline, "background precompute did not finish"
        time.sleep(0.01)
    return compiled.stats()


# --- shared cache ---------------------------------------------------------------------------------


def test_a_second_schema_reuses_string_states_of_the_first(vocab: gs.Vocab) -> None:
    first = gs.compile(gs.Grammar.from_json_schema(SCHEMA_A), vocab, precompute=False)
    replay(first, b'{"name": "Ada Lovelace"}', exact=False)
    assert first.stats().classified > 0
    second = gs.compile(gs.Grammar.from_json_schema(SCHEMA_B), vocab, precompute=False)
    replay(second, b'{"city": "London", "zip": "W1"}')  # exact at every step
    stats = second.stats()
    assert stats.shared > 0, stats
    assert stats.shared_bytes > 0
    assert gs.compiled.shared_cache_stats().hits >= stats.shared


def test_shared_cache_is_per_vocabulary_object(vocab: gs.Vocab) -> None:
    grammar = gs.Grammar.from_json_schema(SCHEMA_A)
    replay(gs.compile(grammar, vocab, cache=False, precompute=False), b'{"name": "x"}', False)
    other = gs.compile(grammar, bpe_vocab(), cache=False, precompute=False)
    replay(other, b'{"name": "x"}')
    assert other.stats().shared == 0


def test_states_of_one_grammar_share_isomorphic_tails(vocab: gs.Vocab) -> None:
    compiled = gs.compile(
        gs.Grammar.from_gbnf('root ::= "a" [0-9]+ "." | "b" [0-9]+ "."'), vocab, precompute=False
    )
    replay(compiled, b"a12.")
    replay(compiled, b"b34.")
    assert compiled.stats().shared >= 1


def test_disabled_shared_cache_shares_nothing(vocab: gs.Vocab) -> None:
    gs.compiled.set_cache_limit_bytes(0)
    try:
        first = gs.compile(gs.Grammar.from_json_schema(SCHEMA_A), vocab, precompute=False)
        replay(first, b'{"name": "Ada"}', exact=False)
        second = gs.compile(gs.Grammar.from_json_schema(SCHEMA_B), vocab, precompute=False)
        replay(second, b'{"city": "x", "zip": "y"}')
        assert second.stats().shared == 0
        assert gs.compiled.shared_cache_stats().entries == 0
    finally:
        gs.compiled.set_cache_limit_bytes(gs.limits.DEFAULT_CACHE_LIMIT_BYTES)


# --- background precompute ------------------------------------------------------------------------


def test_background_precompute_fills_reachable_states_and_stays_exact(vocab: gs.Vocab) -> None:
    compiled = gs.compile(gs.Grammar.json(), vocab, cache=False)
    stats = wait_for_precompute(compiled)
    assert stats.background > 0
    assert stats.filled >= stats.background
    before = stats.filled
    replay(compiled, JSON_TEXT)
    assert compiled.stats().filled - before < before  # most states were ready


def test_precompute_off_classifies_only_on_demand(vocab: gs.Vocab) -> None:
    compiled = gs.compile(gs.Grammar.json(), vocab, cache=False, precompute=False)
    time.sleep(0.05)
    assert compiled.stats().filled == 0
    assert not compiled.stats().precompute_running


def test_dropping_grammars_while_background_work_runs() -> None:
    vocab = shared_bpe_vocab()
    for i in range(20):
        compiled = gs.compile(gs.Grammar.json(), vocab, cache=False)
        if i % 2:
            gs.Matcher(compiled).allowed_tokens()
        del compiled
        gc.collect()
    compiled = gs.compile(gs.Grammar.json(), vocab, cache=False)
    replay(compiled, JSON_TEXT)  # the pool still works, and masks are exact


def test_background_stops_at_the_memory_budget(vocab: gs.Vocab) -> None:
    gs.compiled.set_cache_limit_bytes(1)
    try:
        compiled = gs.compile(gs.Grammar.json(), vocab, cache=False)
        stats = wait_for_precompute(compiled)
        assert stats.background <= 1
        replay(compiled, JSON_TEXT)  # filled on demand, past the budget
    finally:
        gs.compiled.set_cache_limit_bytes(gs.limits.DEFAULT_CACHE_LIMIT_BYTES)


# --- statistics -----------------------------------------------------------------------------------


def test_stats_count_entries_and_bytes(vocab: gs.Vocab) -> None:
    compiled = gs.compile(gs.Grammar.json(), vocab, cache=False, precompute=False)
    replay(compiled, JSON_TEXT, exact=False)
    s = compiled.stats()
    assert s.states == compiled._native.num_states
    assert s.filled == compiled.cached_states == s.classified + s.shared + s.loaded
    assert s.background == 0 and s.loaded == 0 and s.mapped_bytes == 0
    assert s.bytes == compiled.cache_bytes > 0
    assert 0 < s.filled <= s.states


# --- rules built on first reach ------------------------------------------------------------------

# Forty recursive (so never inlined) rules, each reached through its own key.
MANY_RULES = (
    "root ::= "
    + " | ".join(f'"k{i}=" v{i}' for i in range(40))
    + "\n"
    + "\n".join(f'v{i} ::= "{i}" [a-z]{{0,30}} ";" v{i} | "."' for i in range(40))
)


def test_rules_are_built_when_first_reached(vocab: gs.Vocab) -> None:
    compiled = gs.compile(gs.Grammar.from_gbnf(MANY_RULES), vocab, cache=False, precompute=False)
    at_compile = compiled.stats().states
    replay(compiled, b"k7=7abc;7;.")
    after_replay = compiled.stats().states
    whole = compiled._native.num_states  # builds every rule
    assert at_compile < after_replay < whole / 4
    assert compiled.stats().states == whole
    replay(compiled, b"k31=31xyz;.")  # exact with every rule built too


def test_cache_file_states_do_not_depend_on_build_order(vocab: gs.Vocab, tmp_path: Path) -> None:
    # The saving grammar builds every rule at compile (the file name needs the whole automaton),
    # last key's rule first; the loading one has built rule v0 first, so their state ids differ.
    saving = gs.compile(
        gs.Grammar.from_gbnf(MANY_RULES), vocab, cache=False, precompute=False, cache_dir=tmp_path
    )
    replay(saving, b"k0=0ab;0;.", exact=False)
    saving.save_cache()
    grammar = gs.Grammar.from_gbnf(MANY_RULES)
    assert gs.Matcher(grammar).accept_bytes(b"k0=0")
    loading = gs.compile(grammar, vocab, cache=False, precompute=False, cache_dir=tmp_path)
    assert loading.stats().loaded > 0
    replay(loading, b"k0=0ab;0;.")  # exact, from the loaded entries
    assert loading.stats().classified == 0


# --- cache files ----------------------------------------------------------------------------------


def compile_with_files(vocab: gs.Vocab, directory: Path) -> gs.CompiledGrammar:
    return gs.compile(gs.Grammar.json(), vocab, cache=False, precompute=False, cache_dir=directory)


def saved_file(vocab: gs.Vocab, directory: Path) -> Path:
    compiled = compile_with_files(vocab, directory)
    replay(compiled, JSON_TEXT, exact=False)
    path = compiled.save_cache()
    assert path == compiled.cache_file and path.parent == directory and path.exists()
    return path


def test_cache_file_round_trip(vocab: gs.Vocab, tmp_path: Path) -> None:
    saved_file(vocab, tmp_path)
    gs.compiled.clear_cache()
    loaded = compile_with_files(vocab, tmp_path)
    s = loaded.stats()
    assert s.loaded > 0 and s.loaded == s.filled and s.classified == 0
    assert s.mapped_bytes > 0
    replay(loaded, JSON_TEXT, exact=False)
    assert loaded.stats().classified == 0  # every state the replay meets was in the file
    replay(loaded, JSON_TEXT)  # exact, from the mapped entries


def test_no_file_is_written_or_read_without_cache_dir(vocab: gs.Vocab, tmp_path: Path) -> None:
    compiled = gs.compile(gs.Grammar.json(), vocab, cache=False, precompute=False)
    assert compiled.cache_file is None
    with pytest.raises(ValueError, match="cache_dir"):
        compiled.save_cache()
    assert list(tmp_path.iterdir()) == []


def test_cache_dir_must_be_a_path(vocab: gs.Vocab) -> None:
    with pytest.raises(TypeError, match="cache_dir"):
        gs.compile(gs.Grammar.json(), vocab, cache_dir=3)  # type: ignore[arg-type]


def test_unwritable_cache_file_is_an_os_error(vocab: gs.Vocab, tmp_path: Path) -> None:
    compiled = gs.compile(gs.Grammar.json(), vocab, cache=False, precompute=False)
    with pytest.raises(OSError, match="cannot write"):
        compiled.save_cache(tmp_path / "missing" / "x.gsmask")


def _checksum(data: bytes) -> int:
    """The file format's checksum (mask_file.cc: two 64-bit hashes over 8-byte words)."""
    m = (1 << 64) - 1
    a, b = 0xCBF29CE484222325, 0x6A09E667F3BCC909

    def add(v: int) -> None:
        nonlocal a, b
        a = ((a ^ v) * 0x100000001B3) & m
        a ^= a >> 29
        b = (b + v * 0x9E3779B97F4A7C15) & m
        b = ((((b << 31) | (b >> 33)) & m) * 0xC2B2AE3D27D4EB4F) & m

    add(len(data))
    for i in range(0, len(data), 8):
        add(int.from_bytes(data[i : i + 8].ljust(8, b"\0"), "little"))
    second = b ^ (b >> 27)
    return (a ^ (second * 0x9E3779B97F4A7C15)) & m


def _reseal(data: bytearray) -> None:
    """Recomputes both checksums, so that only the record checks can refuse the file."""
    struct.pack_into("<Q", data, 80, _checksum(bytes(data[128:])))
    struct.pack_into("<Q", data, 88, _checksum(bytes(data[:88])))


def _first_list(data: bytearray) -> tuple[int, int]:
    """(byte offset in the file, words) of the first stored list with at least one member."""
    entries = struct.unpack_from("<I", data, 64)[0]
    for k in range(entries):
        _, forms, acc_n, dep_n, acc_off, acc_w, dep_w, dep_off = struct.unpack_from(
            "<IIIIQIIQ", data, 128 + 40 * k
        )
        if not forms & 1 and acc_n:
            return 128 + acc_off, acc_w
        if not forms & 2 and dep_n:
            return 128 + dep_off, dep_w
    raise AssertionError("no list in the file")


def _flip_payload(d: bytearray) -> None:
    d[len(d) - 5] ^= 0x40


def _truncate(d: bytearray) -> None:
    del d[len(d) // 2 :]


def _bad_magic(d: bytearray) -> None:
    d[0:2] = b"XX"


def _future_version(d: bytearray) -> None:
    struct.pack_into("<I", d, 8, 99)


def _member_out_of_range(d: bytearray) -> None:
    at, _ = _first_list(d)
    struct.pack_into("<I", d, at, 0xFFFFFF)
    _reseal(d)


def _unsorted_list(d: bytearray) -> None:
    at, words = _first_list(d)
    if words < 2:
        struct.pack_into("<I", d, at - 4, 1 << 31)  # the word before: padding or another set
    else:
        first, second = struct.unpack_from("<II", d, at)
        struct.pack_into("<II", d, at, second, first)
    _reseal(d)


def _state_out_of_range(d: bytearray) -> None:
    struct.pack_into("<I", d, 128, 1 << 30)
    _reseal(d)


CORRUPTIONS = {
    "flipped payload byte": (_flip_payload, "checksum"),
    "truncated": (_truncate, "truncated"),
    "bad magic": (_bad_magic, "not a gbnf-sampler"),
    "future version": (_future_version, "format version 99"),
    "member out of range, resealed": (_member_out_of_range, "out of range"),
    "unsorted list, resealed": (_unsorted_list, "corrupt"),
    "state out of range, resealed": (_state_out_of_range, "state"),
}


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_corrupt_cache_file_is_ignored_with_a_warning(
    vocab: gs.Vocab, tmp_path: Path, name: str
) -> None:
    path = saved_file(vocab, tmp_path)
    data = bytearray(path.read_bytes())
    corrupt, reason = CORRUPTIONS[name]
    corrupt(data)
    path.write_bytes(bytes(data))
    gs.compiled.clear_cache()
    with pytest.warns(MaskCacheWarning, match=reason):
        compiled = compile_with_files(vocab, tmp_path)
    assert compiled.stats().loaded == 0
    replay(compiled, JSON_TEXT)  # classified afresh, exact


def test_file_of_another_grammar_or_vocabulary_is_ignored(vocab: gs.Vocab, tmp_path: Path) -> None:
    path = saved_file(vocab, tmp_path)
    other = gs.compile(
        gs.Grammar.from_json_schema(SCHEMA_A),
        vocab,
        cache=False,
        precompute=False,
        cache_dir=tmp_path,
    )
    assert other.cache_file is not None and other.cache_file != path
    other.cache_file.write_bytes(path.read_bytes())  # a foreign file under this grammar's name
    with pytest.warns(MaskCacheWarning, match="another grammar"):
        gs.compile(
            gs.Grammar.from_json_schema(SCHEMA_A),
            vocab,
            cache=False,
            precompute=False,
            cache_dir=tmp_path,
        )
    foreign_vocab = shared_bpe_vocab()
    mine = compile_with_files(foreign_vocab, tmp_path)
    assert mine.cache_file is not None and mine.cache_file != path
    mine.cache_file.write_bytes(path.read_bytes())
    with pytest.warns(MaskCacheWarning, match="another vocabulary"):
        loaded = compile_with_files(foreign_vocab, tmp_path)
    assert loaded.stats().loaded == 0


def test_precompute_on_the_calling_thread_runs_the_plan(vocab: gs.Vocab) -> None:
    compiled = gs.compile(gs.Grammar.json(), vocab, cache=False, precompute=False)
    assert compiled.stats().filled == 0
    assert compiled.precompute(0) in (True, False)  # at least one state, then the deadline
    assert compiled.stats().filled >= 1
    assert compiled.precompute(60) is True
    stats = compiled.stats()
    assert not stats.precompute_running and stats.classified == stats.background
    replay(compiled, JSON_TEXT)  # exact masks
    after = compiled.stats()
    # The plan leaves out states without byte or call edges (an empty entry, free to fill): the
    # replay's own fills add only those.
    assert after.bytes == stats.bytes and after.background == stats.background
    assert compiled.precompute(60) is True  # the plan is over: at once


@pytest.mark.parametrize(
    ("value", "error"), [(-0.1, ValueError), (1e9, ValueError), ("1", TypeError)]
)
def test_precompute_timeout_is_checked(vocab: gs.Vocab, value: object, error: type) -> None:
    compiled = gs.compile(gs.Grammar.json(), vocab, cache=False, precompute=False)
    with pytest.raises(error, match="precompute: timeout"):
        compiled.precompute(value)  # type: ignore[arg-type]


def _byte_vocab() -> gs.Vocab:
    return gs.Vocab([bytes([i]) for i in range(256)] + [b"<eos>"], eos_ids=[256])


def _first_met(compiled: gs.CompiledGrammar, alphabet: bytes, depth: int) -> dict[int, int]:
    """For each automaton state, the fewest bytes after which a live item sits there: every
    prefix of the language up to ``depth`` bytes over ``alphabet``, tried one byte at a time."""
    first: dict[int, int] = {}
    frontier = [gs.Matcher(compiled)]
    for d in range(depth + 1):
        grown = []
        for m in frontier:
            for state in m._core.item_states():
                first.setdefault(state, d)
            for b in alphabet if d < depth else b"":
                f = m.fork()
                if f.accept_token(b):
                    grown.append(f)
        frontier = grown
    return first


PLAN_GRAMMARS = [
    # nested rules (not inlined: obj recurses), so resume points follow calls
    (
        'root ::= obj\nobj ::= "{" (pair ("," pair)*)? "}"\npair ::= "k" ":" val\n'
        'val ::= "1" | obj | "[" val "]"\n',
        b"{},k:1[]",
        9,
    ),
    # a long first rule: its states come before the second rule's, which come later in an output
    (
        'root ::= a "," b\na ::= "xyz" [0-9]* "!" | "q" a\nb ::= "uv" [0-9]+ | "w" b\n',
        b"xyz0!,uvwq",
        9,
    ),
]


@pytest.mark.parametrize(("gbnf", "alphabet", "depth"), PLAN_GRAMMARS)
def test_precompute_plan_follows_the_output_from_its_start(
    gbnf: str, alphabet: bytes, depth: int
) -> None:
    """The plan lists states by the fewest bytes an output needs before the matcher meets
    them, which the recognizer's own item sets give by trying every short prefix."""
    compiled = gs.compile(gs.Grammar.from_gbnf(gbnf), _byte_vocab(), cache=False, precompute=False)
    plan = compiled._native._precompute_plan()
    distances = [d for _, d in plan]
    assert distances == sorted(distances) and len({s for s, _ in plan}) == len(plan)
    first = _first_met(compiled, alphabet, depth)
    reached = [(s, d) for s, d in plan if d <= depth]
    assert len(reached) >= 8
    for state, distance in reached:
        assert first.get(state) == distance, (state, distance)
