"""``--dialect llama.cpp``: every construct stock llama.cpp rejects or reads otherwise is reported,
and every rewrite the doctor suggests is accepted by llama.cpp's own grammar parser (the one
built into llama-cpp-python, called through ``llama_sampler_init_grammar``, which returns NULL
when the grammar does not parse or fails its load-time checks; ``LlamaGrammar.from_string`` in
0.3.x only stores the text) and keeps the language (sample sentences of each side are accepted
by the other, and the repetition counts at the edges are checked one by one)."""

from __future__ import annotations

import ctypes
import importlib.util
from typing import Any

import pytest

import gbnf_sampler as gs
from assets import llama_cpp_grammars, require, vocab_gguf
from gbnf_sampler.doctor import diagnose
from gbnf_sampler.doctor.dialect import to_llama_cpp
from gbnf_sampler.doctor.findings import Finding
from gbnf_sampler.doctor.sample import Sampler

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None,
    reason="needs llama-cpp-python (pip install 'gbnf-sampler[llama]')",
)

REJECTED, READ_OTHERWISE, HANGS = "rejected", "read otherwise", "hangs"

# name: (grammar, what llama.cpp does with it, (line, column) of the finding, message words)
CONSTRUCTS: dict[str, tuple[str, str, tuple[int, int], str]] = {
    "underscore": ('root ::= a_b\na_b ::= "x"\n', REJECTED, (2, 1), '"a_b" stops'),
    "bom": ('\ufeffroot ::= "a"\n', REJECTED, (1, 1), "byte-order mark"),
    "lower-bound": ('root ::= "a"{,3}\n', REJECTED, (1, 13), "{,n}"),
    "continuation": ('root ::= "a" # one\n  | "b"\n', REJECTED, (2, 3), 'starts with "|"'),
    "negated-empty-class": ('root ::= [^] "x"\n', READ_OTHERWISE, (1, 10), "[^]"),
    "count-over": ('root ::= "a"{2001}\n', REJECTED, (1, 10), "count above 2000"),
    "count-min-over": ('root ::= ("a" | "b"){2500,}\n', REJECTED, (1, 10), "count above"),
    "upper-over": ('root ::= "a"{0,5000}\n', READ_OTHERWISE, (1, 10), "as no bound"),
    "range-over": ('root ::= ("a" | "b"){3000,7000}\n', REJECTED, (1, 10), "count above"),
    "group-expansion": ('root ::= ("a"{0,100}){30}\n', REJECTED, (1, 10), "3030 rules"),
    "stacked-expansion": ('root ::= "a"{45}{45}\n', REJECTED, (1, 10), "2025 rules"),
    "left-recursion": ('root ::= root "a" | "b"\n', REJECTED, (1, 1), "left-recursive"),
    "indirect-left": ('root ::= x "a" | "b"\nx ::= root "c"\n', REJECTED, (1, 1), "left-rec"),
    "empty-loop-group": ('root ::= ("a" | "")*\n', REJECTED, (1, 10), "can be empty"),
    "empty-loop-rule": ('root ::= ws*\nws ::= | " "\n', REJECTED, (1, 10), "can be empty"),
    "empty-loop-optional": ('root ::= "a"?*\n', REJECTED, (1, 10), "can be empty"),
    "hidden-left": (
        'root ::= e\ne ::= n e "x" | "y"\nn ::= m\nm ::= | "z"\n',
        HANGS,
        (2, 1),
        "loops forever",
    ),
}


@pytest.fixture(scope="module")
def llama() -> Any:
    import llama_cpp

    from gbnf_sampler.llama.vocab import load_vocab_only

    llm = load_vocab_only(require(lambda: vocab_gguf("llama-bpe")))
    return llama_cpp, llm, llama_cpp.llama_model_get_vocab(llm.model)


def llama_accepts(llama: Any, text: str) -> bool:
    """Whether llama.cpp parses ``text`` and passes its load-time checks."""
    lc, _, vocab = llama
    sampler = lc.llama_sampler_init_grammar(vocab, text.encode("utf-8"), b"root")
    if sampler:
        lc.llama_sampler_free(sampler)
    return bool(sampler)


def llama_allows(llama: Any, text: str, prefix: list[int], token: int) -> bool:
    """Whether llama.cpp's grammar sampler allows ``token`` after accepting ``prefix``."""
    lc, _, vocab = llama
    sampler = lc.llama_sampler_init_grammar(vocab, text.encode("utf-8"), b"root")
    assert sampler
    try:
        for t in prefix:
            lc.llama_sampler_accept(sampler, t)
        data = (lc.llama_token_data * 1)()
        data[0].id, data[0].logit, data[0].p = token, 0.0, 0.0
        array = lc.llama_token_data_array(
            data=ctypes.cast(data, ctypes.POINTER(lc.llama_token_data)),
            size=1,
            selected=-1,
            sorted=False,
        )
        lc.llama_sampler_apply(sampler, ctypes.byref(array))
        return bool(data[0].logit > -1e30)
    finally:
        lc.llama_sampler_free(sampler)


def dialect_findings(text: str) -> list[Finding]:
    return [f for f in diagnose(text, dialect="llama.cpp").findings if f.code == "llama_cpp"]


def same_language(a: str, b: str, root_b: str = "root") -> None:
    """Sample sentences of each grammar are complete sentences of the other."""
    ga, gb = gs.Grammar.from_gbnf(a), gs.Grammar.from_gbnf(b, root=root_b)
    for source, target, root in ((ga, gb, "root"), (gb, ga, root_b)):
        sampler = Sampler(source.rules, seed=1)
        for length in (0, 3, 12, 40, 120):
            sentence = sampler.sentence(root if source is gb else "root", length)
            assert sentence is not None
            m = gs.Matcher(target)
            data = sentence.encode("utf-8")
            assert m.accept_bytes(data) and m.can_terminate(), (sentence[:80], a, b)


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_construct_is_reported(name: str) -> None:
    text, _, position, words = CONSTRUCTS[name]
    found = dialect_findings(text)
    assert found, name
    assert (found[0].line, found[0].column) == position, found[0].rendered
    assert any(words in f.message for f in found), [f.message for f in found]
    # Our own parser accepts every one of them.
    gs.Grammar.from_gbnf(text)


# A grammar that hangs llama.cpp (its stacks grow without end while loading) is never handed to
# it: the suite runs on shared machines.
@pytest.mark.parametrize("name", sorted(n for n, c in CONSTRUCTS.items() if c[1] != HANGS))
def test_llama_cpp_verdict_on_the_original(llama: Any, name: str) -> None:
    text, verdict, _, _ = CONSTRUCTS[name]
    assert llama_accepts(llama, text) == (verdict == READ_OTHERWISE)


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_each_suggested_rewrite_is_accepted_and_keeps_the_language(llama: Any, name: str) -> None:
    text = CONSTRUCTS[name][0]
    for finding in dialect_findings(text):
        fixed = finding.apply(text)
        assert finding.edits, finding.rendered
        assert llama_accepts(llama, fixed), (finding.rendered, fixed)
        same_language(text, fixed)


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_whole_rewrite_is_accepted_and_keeps_the_language(llama: Any, name: str) -> None:
    text = CONSTRUCTS[name][0]
    rewritten = to_llama_cpp(text)
    assert llama_accepts(llama, rewritten), rewritten
    assert not dialect_findings(rewritten)
    same_language(text, rewritten)


def test_counts_at_the_edges_survive_the_rewrites() -> None:
    cases = {
        'root ::= "a"{0,5000}\n': (range(0, 5001), [5001]),
        'root ::= "a"{2001}\n': ([2001], [2000, 2002]),
        'root ::= "a"{2500,}\n': ([2500, 2501, 4000], [2499]),
        'root ::= "a"{3000,7000}\n': ([3000, 3999, 4000, 6999, 7000], [2999, 7001]),
    }
    for text, (good, bad) in cases.items():
        rewritten = to_llama_cpp(text)
        grammar = gs.Grammar.from_gbnf(rewritten)
        for n in good:
            m = gs.Matcher(grammar)
            assert m.accept_bytes(b"a" * n) and m.can_terminate(), (text, n)
        for n in bad:
            m = gs.Matcher(grammar)
            assert not (m.accept_bytes(b"a" * n) and m.can_terminate()), (text, n)


def test_read_otherwise_is_really_read_otherwise(llama: Any) -> None:
    _, llm, _ = llama
    [x] = llm.tokenize(b"x", add_bos=False, special=False)
    [a] = llm.tokenize(b"a", add_bos=False, special=False)
    eos = llm.token_eos()
    # "[^]" is the empty string to llama.cpp: "x" alone is a sentence there, not here.
    assert llama_allows(llama, 'root ::= [^] "x"\n', [x], eos)
    m = gs.Matcher(gs.Grammar.from_gbnf('root ::= [^] "x"\n'))
    assert m.accept_bytes(b"x") and not m.can_terminate()
    # {0,2001} has no upper bound to llama.cpp: a 2002nd "a" is still allowed there.
    assert llama_allows(llama, 'root ::= "a"{0,2001}\n', [a] * 2001, a)
    assert not gs.Matcher(gs.Grammar.from_gbnf('root ::= "a"{0,2001}\n')).accept_bytes(b"a" * 2002)


def test_exactly_at_the_limit_is_reported_with_the_version_note() -> None:
    [finding] = dialect_findings('root ::= "a"{2000}\n')
    assert "exactly at the limit" in finding.message


def test_rename_counts_every_occurrence() -> None:
    [three] = dialect_findings('root ::= a_b a_b\na_b ::= "x"\n')
    assert three.fix == 'rename it to "a-b" (all 3 occurrences)'
    assert [e[2] for e in three.edits] == ["a-b"] * 3
    [one] = dialect_findings('root ::= "x"\nun_used ::= "y"\n')
    assert one.fix == 'rename it to "un-used" (its one occurrence)'


def test_nul_is_reported_without_a_rewrite() -> None:
    [finding] = dialect_findings('root ::= "a\\x00"\n')
    assert "NUL" in finding.message and not finding.edits


def test_shipped_grammars_rewrite_to_themselves(llama: Any) -> None:
    for name, path in require(llama_cpp_grammars).items():
        text = path.read_text(encoding="utf-8")
        rewritten = to_llama_cpp(text)
        assert llama_accepts(llama, rewritten), name
        same_language(text, rewritten)
