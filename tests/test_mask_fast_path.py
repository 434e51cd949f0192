"""The fast classification of a mask-cache entry (a memo of the recognizer's byte steps, the
token trie split into chunks) equals the reference walk (the recognizer on every byte) on every
automaton state. Random grammars over toy vocabularies (hypothesis), llama.cpp's grammars over
the Llama-3 vocabulary. (The shared cache's keys: tests/test_state_keys.py.)"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from assets import llama_cpp_assets, require, vocab_gguf
from mask_documents import documents
from mask_helpers import bpe_vocab, byte_vocab
from strategies import grammars, to_gbnf_text
from vocab_fixtures import bpe_vocab as shared_bpe_vocab

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VOCABS = {"bytes": byte_vocab(), "bpe": bpe_vocab(), "shared_bpe": shared_bpe_vocab()}


def compiled_of(text: str, vocab: gs.Vocab, root: str = "root", **kw: int) -> gs.CompiledGrammar:
    grammar = gs.Grammar.from_gbnf(text, root=root)
    return gs.compile(grammar, vocab, cache=False, precompute=False, **kw)


def wait_for_class_runs(vocab: gs.Vocab) -> None:
    """Waits until a background worker has listed the tokens of every byte class the walks
    asked for (TokenTrie::FindRunsInside; a few ms)."""
    deadline = time.monotonic() + 60
    while vocab._native.trie_class_runs_pending() and time.monotonic() < deadline:
        time.sleep(0.001)
    assert vocab._native.trie_class_runs_pending() == 0


def assert_fast_equals_reference(compiled: gs.CompiledGrammar, states: list[int]) -> None:
    native = compiled._native
    references = {}
    for state in states:
        references[state] = reference = native._classify(state, True, 1)
        assert native._classify(state, False, 1) == reference, state
    # Walks from the states that loop jump over the tokens of their class once the vocabulary
    # lists those (built in the background on first request): both walks equal the reference.
    wait_for_class_runs(compiled.vocab)
    for state in states:
        assert native._classify(state, False, 1) == references[state], state
        assert native._classify(state, False, 3) == references[state], state


@st.composite
def random_compiled(draw: st.DrawFn) -> gs.CompiledGrammar:
    rules, root = draw(grammars(max_rules=5))
    vocab = VOCABS[draw(st.sampled_from(sorted(VOCABS)))]
    return compiled_of(to_gbnf_text(rules, root), vocab, root=root)


@SETTINGS
@given(compiled=random_compiled())
def test_fast_classification_equals_reference_on_every_state(
    compiled: gs.CompiledGrammar,
) -> None:
    assert_fast_equals_reference(compiled, list(range(compiled._native.num_states)))


TABLE = [
    # string bodies, escapes and UTF-8 (inline repetition and a right-recursive rule)
    r'root ::= "\"" ( [^"\\] | "\\" ["\\nu] )* "\"" " "?',
    'root ::= "\\"" tail\ntail ::= "\\"" | [^"\\\\] tail',
    # numbers, identifiers, completions that return to callers many levels up
    'root ::= e\ne ::= t ("+" t)*\nt ::= f ("*" f)*\nf ::= [0-9]+ | [a-z]+ | "(" e ")"',
    # left recursion, ambiguity, nullable rules
    'root ::= x "!"\nx ::= x "a" | "a" | y\ny ::= "" | "ab" y',
    'root ::= (a | b)+\na ::= "ab" | "a"\nb ::= "b" | "ba"',
    # token references next to bytes
    'root ::= "a" <[200]> "b" | "ab"+',
]


@pytest.mark.parametrize("vocab_name", sorted(VOCABS))
@pytest.mark.parametrize("text", TABLE)
def test_fast_classification_table(vocab_name: str, text: str) -> None:
    compiled = compiled_of(text, VOCABS[vocab_name])
    assert_fast_equals_reference(compiled, list(range(compiled._native.num_states)))


@pytest.mark.parametrize("max_state_size", [10, 20, 40])
def test_fast_classification_under_a_small_state_limit(max_state_size: int) -> None:
    """Steps over the limit are left to the per-step walk (dependent), never memoized."""
    text = 'root ::= x x\nx ::= x x | "a" | "aa" | ""'
    compiled = compiled_of(text, VOCABS["bpe"], max_state_size=max_state_size)
    assert_fast_equals_reference(compiled, list(range(compiled._native.num_states)))


@pytest.fixture(scope="module")
def llama3() -> gs.Vocab:
    from gbnf_sampler.llama.vocab import load_vocab_only

    pytest.importorskip("llama_cpp", reason="needs llama-cpp-python for the Llama-3 vocabulary")
    return gs.Vocab.from_llama(load_vocab_only(require(lambda: vocab_gguf("llama-bpe"))))


def test_fast_classification_on_replayed_states_of_real_documents(llama3: gs.Vocab) -> None:
    """The states a replay of each document meets, over a 128k vocabulary."""
    from gbnf_sampler.llama.vocab import load_vocab_only

    llm = load_vocab_only(require(lambda: vocab_gguf("llama-bpe")))
    for name, text, doc in documents(require(llama_cpp_assets) / "grammars"):
        compiled = compiled_of(text, llama3)
        m = gs.Matcher(compiled)
        states: set[int] = set()
        for tid in llm.tokenize(doc.encode(), add_bos=False, special=False)[:40]:
            states.update(m._core.item_states())
            assert m.accept_token(tid), name
        assert_fast_equals_reference(compiled, sorted(states))


@pytest.mark.parametrize(
    ("chunks", "helpers", "rescuers"), [(1, 0, 0), (3, 0, 2), (4, 2, 0), (4, 2, 2), (8, 3, 3)]
)
@pytest.mark.parametrize("text", TABLE[:3])
def test_rescued_chunks_merge_to_the_reference(
    text: str, chunks: int, helpers: int, rescuers: int
) -> None:
    """A waiter classifies again the chunks other threads hold (ClassifyJob::Rescue): whichever
    copy of a chunk is done first is kept, and the merged entry equals the reference."""
    compiled = compiled_of(text, VOCABS["shared_bpe"])
    native = compiled._native
    for state in range(native.num_states):
        reference = native._classify(state, True, 1)
        assert native._classify_job(state, chunks, helpers, rescuers) == reference, state


def test_rescued_chunks_on_a_large_vocabulary(llama3: gs.Vocab) -> None:
    compiled = compiled_of(r'root ::= "\"" ( [^"\\] | "\\" ["\\nu] )* "\"" [0-9]+', llama3)
    native = compiled._native
    for state in range(native.num_states):
        reference = native._classify(state, True, 1)
        for helpers, rescuers in [(0, 1), (1, 1), (2, 3)]:
            assert native._classify_job(state, 4, helpers, rescuers) == reference, state


def test_classify_job_hook_checks_its_arguments() -> None:
    native = compiled_of('root ::= "a"', VOCABS["bpe"])._native
    with pytest.raises(ValueError, match="chunks"):
        native._classify_job(0, 0, 0, 0)
    with pytest.raises(ValueError, match="state out of range"):
        native._classify_job(native.num_states, 1, 0, 0)


# Grammars whose classifications jump subtrees (mask/loop_walk.h): loops inline and through rule
# calls (a new stack node per byte), two loops in a row (whitespace, then an identifier), loops
# that refuse non-ASCII or part of it, a stack that grows per byte (no loop), free text before a
# trigger, completions inside a covered subtree.
LOOP_TABLE = [
    r'root ::= "\"" char* "\"" ":"'
    + "\n"
    + r'char ::= [^"\\] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})',
    'root ::= ("int" | "x") ws id "(" ws id ")"\nws ::= [ \\t\\n]+\nid ::= [a-zA-Z_] [a-zA-Z_0-9]*',
    'root ::= ("//" [^\\n]* "\\n")* "x"',
    'root ::= f ";"\nf ::= "-" f "!" | [0-9]+',
    'root ::= ([^<] | "<" [^t<])* "<t>" "{" [a-z]* "}"',
    'root ::= [^\\u4E00-\\u9FFF]* "."',
    'root ::= [\\u0080-\\U0010FFFF]* "!" | [a-zé]+ "?"',
    'root ::= x* "."\nx ::= "a" | "b" x? | " "',
    'root ::= "(" [a-z ]* ")" [a-z]* | [a-z]+ "(" ")"',
    # bounded repetitions: chains of configurations that count
    r'root ::= "\"" [^"\\]{0,12} "\"" ":"',
    r'root ::= "\"" [^"\\]{0,5} "\""',
    'root ::= [a-z]{2,5} "!" | [0-9]{3}',
    r'root ::= "\"" ( [^"\\] | "\\" ["n] ){0,8} "\""',
    'root ::= [a-zé中]{0,6} ";"',
    'root ::= [a-z]{0,3} [a-z0-9]* "."',
]


@pytest.fixture(scope="module")
def dense() -> gs.Vocab:
    from mask_helpers import dense_vocab

    return dense_vocab()


@pytest.mark.parametrize("text", LOOP_TABLE + TABLE[:3])
def test_fast_classification_with_jumps_equals_reference(dense: gs.Vocab, text: str) -> None:
    compiled = compiled_of(text, dense)
    assert_fast_equals_reference(compiled, list(range(compiled._native.num_states)))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fast_classification_equals_reference_on_a_dense_vocabulary(data: st.DataObject) -> None:
    from mask_helpers import dense_vocab

    rules, root = data.draw(grammars(max_rules=5))
    compiled = compiled_of(to_gbnf_text(rules, root), dense_vocab(), root=root)
    assert_fast_equals_reference(compiled, list(range(compiled._native.num_states)))


def loop_bytes_of(
    text: str, vocab: gs.Vocab, taking: bytes
) -> list[tuple[bytes, bool, int | None]]:
    """The loop bytes (_loop_bytes) of the states reached by the byte-level walk of `taking`."""
    compiled = compiled_of(text, vocab)
    m = gs.Matcher(compiled)
    assert m.accept_bytes(taking)
    return [compiled._native._loop_bytes(s) for s in m._core.item_states()]


def test_loop_bytes_of_a_string_body_through_a_rule_call(dense: gs.Vocab) -> None:
    # `char` is not inlined, so every byte of the body calls it anew: the loop is one of shape.
    found = loop_bytes_of(LOOP_TABLE[0], dense, b'"ab')
    ascii_bytes, non_ascii, budget = max(found, key=lambda f: len(f[0]))
    assert non_ascii and budget is None
    assert set(ascii_bytes) == set(range(128)) - {ord('"'), ord("\\")}


def test_loop_bytes_of_an_identifier(dense: gs.Vocab) -> None:
    found = loop_bytes_of(LOOP_TABLE[1], dense, b"int  ab")
    ascii_bytes, non_ascii, budget = max(found, key=lambda f: len(f[0]))
    assert not non_ascii and budget is None
    letters = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    assert set(ascii_bytes) == set(letters + b"_0123456789")


def test_no_loop_bytes_where_the_stack_grows(dense: gs.Vocab) -> None:
    # Each "-" opens one more "!" to close: the stack grows, no configuration comes back.
    found = loop_bytes_of(LOOP_TABLE[3], dense, b"--")
    assert all(ord("-") not in a for a, _, _ in found)
    digits = loop_bytes_of(LOOP_TABLE[3], dense, b"-1")
    assert any(set(a) == set(b"0123456789") and b is None for a, _, b in digits)


def test_part_of_non_ascii_refused_means_no_non_ascii_loop(dense: gs.Vocab) -> None:
    found = loop_bytes_of(LOOP_TABLE[5], dense, b"a")
    assert any(ord("a") in a for a, _, _ in found)
    assert not any(na for _, na, _ in found)


@pytest.mark.parametrize(("taking", "left"), [(b'"', 5), (b'"ab', 3), (b'"abcd', 1)])
def test_a_bounded_string_is_a_chain_with_the_characters_left(
    dense: gs.Vocab, taking: bytes, left: int
) -> None:
    found = loop_bytes_of(LOOP_TABLE[10], dense, taking)
    chains = [(a, na, b) for a, na, b in found if b is not None]
    assert chains
    ascii_bytes, non_ascii, budget = chains[0]
    assert budget == left and non_ascii
    assert set(ascii_bytes) == set(range(128)) - {ord('"'), ord("\\")}


def test_a_chain_of_mixed_classes_takes_only_the_shared_bytes(dense: gs.Vocab) -> None:
    # [a-z]{0,3} [a-z0-9]*: a letter steps the count (and the loop after it), a digit only the
    # loop, so the chain takes letters; past the count they loop: no budget.
    found = loop_bytes_of(LOOP_TABLE[14], dense, b"")
    assert found == [(b"abcdefghijklmnopqrstuvwxyz", False, None)]


def test_a_chain_into_a_loop_through_a_rule_call_has_no_budget(dense: gs.Vocab) -> None:
    # The first letter steps to `tail`, whose letters loop through a new call each (a new
    # configuration per byte, of one shape): past the first link the chain is a loop.
    found = loop_bytes_of('root ::= [a-z] tail\ntail ::= [a-z] tail | "."', dense, b"")
    assert found == [(b"abcdefghijklmnopqrstuvwxyz", False, None)]


# Long counts: past its first links, a chain's next copies are vouched for by the twins of
# period_twins.cc (LoopFinder::TwinLinks) as far as they agree, so a count position takes the
# tokens of its class by runs as a loop does; near the count's end the twins stop agreeing.
COUNT_TABLE = [
    r'root ::= "\"" [^"\\]{0,60} "\"" ":"',
    r'root ::= "\"" ( [^"\\] | "\\" ["n] ){0,40} "\""',
    'root ::= [a-zé中]{0,50} ";"',
    'root ::= "<" [a-z]{0,60}',
    'root ::= "<" [a-z]{12,60} ">"',
    'root ::= ("x" [0-9]{10}){0,30} "."',
]


def long_runs_vocab() -> gs.Vocab:
    """Single bytes and runs of one character up to 120 bytes (tokens longer than a chain's
    first links), a few with a quote or a letter at the end."""
    tokens = [bytes([i]) for i in range(256)]
    tokens += [b"a" * k for k in range(2, 121)] + ["é".encode() * k for k in range(2, 41)]
    tokens += [b"a" * k + b'"' for k in (5, 30, 59, 61)] + [b"1" * k for k in range(2, 12)]
    tokens += [b"xx", b"x1", b"\\n", b"\xe4\xb8\xad" * 3]
    tokens.append(b"</s>")
    return gs.Vocab(tokens, eos_ids=[len(tokens) - 1])


@pytest.mark.parametrize("vocab_name", ["dense", "long runs"])
@pytest.mark.parametrize("text", COUNT_TABLE)
def test_fast_classification_of_long_counts_equals_reference(
    dense: gs.Vocab, vocab_name: str, text: str
) -> None:
    vocab = dense if vocab_name == "dense" else long_runs_vocab()
    compiled = compiled_of(text, vocab)
    assert_fast_equals_reference(compiled, list(range(compiled._native.num_states)))


def test_a_long_count_is_a_chain_past_its_first_links() -> None:
    found = loop_bytes_of(COUNT_TABLE[0], long_runs_vocab(), b'"')
    chains = [(a, na, b) for a, na, b in found if b is not None]
    assert chains
    ascii_bytes, non_ascii, budget = chains[0]
    # Followed link by link, a chain stops at 28 characters (kMaxChain); through the twins it
    # reaches as far as the longest token (120 bytes), and never past the 60 characters left.
    assert budget is not None and 28 < budget <= 60
    assert non_ascii and set(ascii_bytes) == set(range(128)) - {ord('"'), ord("\\")}
