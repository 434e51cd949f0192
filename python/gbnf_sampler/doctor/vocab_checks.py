"""Checks against a tokenizer vocabulary: ``unspellable`` (text no sequence of ordinary tokens
can write) and ``no_start`` (no token can begin the output).

Ordinary tokens are the ones a model samples as text: not special (control) tokens, which the
matcher only allows where the grammar names them (``<[id]>``, ``<text>``), not end-of-sequence,
not empty. A literal is *spellable* when it occurs inside some concatenation of ordinary
tokens: tokens may start before it and end after it, so the test is a walk over its token
boundaries (a boundary at its start or inside a token that ends in a prefix of it, then whole
tokens, then a token that starts with what is left). Runs of adjacent literals in a sequence are
tested as one text (a path). A literal that fails can never be generated wherever it is used;
passing is necessary, not sufficient (the neighbours must fit too). Classes of at most
:data:`MAX_CLASS_CHECK` code points are reported when none of their characters is spellable.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, Iterator

from .. import syntax
from ..compiled import compile as compile_grammar
from ..explain import describe_bytes
from ..grammar import Grammar
from ..limits import DOCTOR_MAX_CLASS_CHECK as MAX_CLASS_CHECK
from ..matcher import Matcher
from ..vocab import Vocab
from .facts import Facts
from .findings import Finding
from .locate import Locator
from .tree import to_gbnf, walk

_UTF8_BYTES = [b for b in range(256) if b not in (0xC0, 0xC1) and b < 0xF5]


class Spelling:
    """The ordinary tokens of a vocabulary, indexed for substring-spellability questions."""

    def __init__(self, vocab: Vocab) -> None:
        excluded = set(vocab.special_ids) | set(vocab.eos_ids)
        tokens = [t for i, t in enumerate(vocab.tokens()) if t and i not in excluded]
        self.tokens = set(tokens)
        self.sorted = sorted(self.tokens)
        self.reversed = sorted(t[::-1] for t in self.tokens)
        self.longest = max((len(t) for t in self.tokens), default=0)
        # A token for every byte valid UTF-8 can hold (text never needs C0, C1, F5-FF).
        self.all_bytes = all(bytes([b]) in self.tokens for b in _UTF8_BYTES)
        self.vocab = vocab

    def _has_prefix(self, table: list[bytes], prefix: bytes) -> bool:
        i = bisect_left(table, prefix)
        return i < len(table) and table[i].startswith(prefix)

    def first_failure(self, text: bytes) -> int | None:
        """None when ``text`` is spellable, else the offset of the first byte no walk passed."""
        if self.all_bytes or not text:
            return None
        n = len(text)
        boundary = [False] * (n + 1)
        boundary[0] = True
        for i in range(1, n + 1):  # a token that started earlier and ends at i
            if self._has_prefix(self.reversed, text[:i][::-1]):
                boundary[i] = True
        furthest = 0
        for j in range(n):
            if not boundary[j]:
                continue
            furthest = max(furthest, j)
            if self._has_prefix(self.sorted, text[j:]):
                return None  # a token covers the rest and goes on past the end
            for k in range(1, min(self.longest, n - j) + 1):
                if text[j : j + k] in self.tokens:
                    boundary[j + k] = True
                    furthest = max(furthest, j + k)
        if boundary[n] or any(text in t for t in self.sorted):
            return None  # the end was reached, or a single token holds the whole text
        return furthest

    def special_with_text(self, text: bytes) -> list[int]:
        return [i for i in self.vocab.find_by_text(text) if self.vocab.is_special(i)]


def _runs(node: syntax.Node) -> Iterator[list[syntax.Literal]]:
    """Each run of adjacent non-empty literals in a sequence, and each other literal alone."""
    in_runs: set[int] = set()
    for n in walk(node):
        if isinstance(n, syntax.Sequence):
            run: list[syntax.Literal] = []
            for item in (*n.items, None):
                if isinstance(item, syntax.Literal) and item.codepoints:
                    run.append(item)
                    continue
                if run:
                    in_runs.update(id(r) for r in run)
                    yield run
                run = []
        elif isinstance(n, syntax.Literal) and id(n) not in in_runs and n.codepoints:
            yield [n]


def _encode(codepoints: tuple[int, ...]) -> bytes:
    return "".join(map(chr, codepoints)).encode("utf-8", "surrogatepass")


def _run_failure(
    spelling: Spelling, run: list[syntax.Literal]
) -> tuple[syntax.Node, bytes, int] | None:
    """The literal of the run that cannot be written (each alone first, then the whole run as
    one path), with its text and the failing offset."""
    for literal in run:
        data = _encode(literal.codepoints)
        failure = spelling.first_failure(data)
        if failure is not None:
            return literal, data, failure
    if len(run) > 1:
        data = _encode(tuple(c for r in run for c in r.codepoints))
        failure = spelling.first_failure(data)
        if failure is not None:
            return run[0], data, failure
    return None


def check_unspellable(facts: Facts, loc: Locator, spelling: Spelling) -> list[Finding]:
    if spelling.all_bytes:
        return []
    out = []
    for rule in (r for r in facts.rules if r in facts.reachable):
        for run in _runs(facts.rules[rule]):
            failed = _run_failure(spelling, run)
            if failed is not None:
                out.append(_literal_finding(loc, spelling, rule, *failed))
        for node in walk(facts.rules[rule]):
            if isinstance(node, syntax.CharClass) and not node.negated:
                finding = _class_finding(loc, spelling, rule, node)
                if finding is not None:
                    out.append(finding)
    return out


def _literal_finding(
    loc: Locator, spelling: Spelling, rule: str, node: syntax.Node, data: bytes, failure: int
) -> Finding:
    text = data.decode("utf-8", "replace")
    shown = to_gbnf(syntax.Literal(tuple(map(ord, text))))
    specials = spelling.special_with_text(data)
    if specials:
        message = (
            f'{shown} in rule "{rule}" is the text of special token {specials[0]}, and no '
            "sequence of ordinary tokens can write it: the matcher never samples special tokens "
            "for literal text, so this part of the grammar can never be generated"
        )
        named = f" (or {text})" if text.startswith("<") and text.endswith(">") else ""
        fix = f"write the token reference <[{specials[0]}]>{named} instead of the literal"
    else:
        bad = data[failure : failure + 1]
        message = (
            f"no sequence of ordinary tokens of this vocabulary can write {shown} (in rule "
            f'"{rule}"; the walk stops at byte {failure}, 0x{bad.hex()}): this part of the '
            "grammar can never be generated"
        )
        fix = "replace it with text the vocabulary can write, or remove it"
    return loc.finding("unspellable", message, fix, rule, node)


def _class_finding(
    loc: Locator, spelling: Spelling, rule: str, node: syntax.CharClass
) -> Finding | None:
    size = sum(hi - lo + 1 for lo, hi in node.ranges)
    if size > MAX_CLASS_CHECK:
        return None
    chars = [cp for lo, hi in node.ranges for cp in range(lo, hi + 1)]
    if any(spelling.first_failure(_encode((cp,))) is None for cp in chars):
        return None
    message = (
        f'no character of this class (in rule "{rule}") can be written by ordinary tokens of '
        "this vocabulary: this part of the grammar can never be generated"
    )
    return loc.finding("unspellable", message, "use characters the vocabulary has", rule, node)


def check_no_start(grammar: Grammar, facts: Facts, loc: Locator, vocab: Vocab) -> list[Finding]:
    matcher = Matcher(compile_grammar(grammar, vocab))
    allowed = matcher.allowed_tokens()
    eos = set(vocab.eos_ids)
    if any(int(t) not in eos for t in allowed):
        return []
    only_eos = len(allowed) > 0
    first = describe_bytes(Matcher(grammar).explain(b"").expected) or "nothing"
    allows = "only end-of-sequence (the output can only be empty)" if only_eos else "nothing"
    message = (
        f"no token of this vocabulary can begin the output: the first mask allows {allows}; "
        f"the grammar's first byte is one of: {first}"
    )
    fix = (
        "make the start of the grammar text the vocabulary can write (special-token text must be "
        "a token reference <...>, not a literal)"
    )
    return [loc.finding("no_start", message, fix, facts.root)]


def check_vocab(
    grammar: Grammar, facts: Facts, loc: Locator, vocab: Vocab, skip: Collection[str]
) -> list[Finding]:
    out = []
    if "unspellable" not in skip:
        out += check_unspellable(facts, loc, Spelling(vocab))
    if "no_start" not in skip:
        out += check_no_start(grammar, facts, loc, vocab)
    return out


__all__ = ["MAX_CLASS_CHECK", "Spelling", "check_no_start", "check_unspellable", "check_vocab"]
