"""Every format jsonschema asserts, checked against jsonschema's own checker in both directions.

* Sound: strings drawn from the format's grammar pass the checker (and the grammar accepts them).
* Complete: valid strings from generators that do not share our regexes (hypothesis'
  ``emails``/``domains``/``ip_addresses``/``uuids``, hypothesis-jsonschema's format strategies,
  strings drawn from the checker's own regex for URIs, hand-written RFC 6570 and regex syntax
  generators) are accepted whenever the checker accepts them (a format's documented "standard"
  reading may refuse what only a checker quirk accepts, such as a trailing newline).
* Exact: for the ``exact`` formats, mutated strings are accepted exactly when the checker
  accepts them; for the others, accepted only if the checker accepts them.
"""

from __future__ import annotations

import functools
import json
import re
import string
import warnings
from typing import Any

import jsonschema
import pytest
import rfc3986_validator
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import provisional as prov
from hypothesis import strategies as st
from hypothesis_jsonschema._from_schema import STRING_FORMATS

import gbnf_sampler as gs
from gbnf_sampler.regex import parser
from gbnf_sampler.schema import SchemaWarning, schema_to_gbnf
from gbnf_sampler.schema.formats import ASSERTED, EXACT, KINDS
from strategies import sentences

CHECKERS = {
    **jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers,
    **{k: v for k, v in jsonschema.Draft3Validator.FORMAT_CHECKER.checkers.items() if k != "time"},
}
CHECKERS["time"] = jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers["time"]
SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
    derandomize=True,  # the same examples on every run: CI is never red by the draw
)


def check(fmt: str, value: str) -> bool:
    func, raises = CHECKERS[fmt]
    try:
        with warnings.catch_warnings():
            # Python's `re` warns about some valid patterns ("Possible nested set" for `[[`);
            # a warning of the reference checker is not a verdict on the value.
            warnings.simplefilter("ignore", FutureWarning)
            return bool(func(value))
    except raises:
        return False


@functools.lru_cache(maxsize=64)
def grammar(fmt: str) -> gs.Grammar:
    return gs.Grammar.from_json_schema({"type": "string", "format": fmt})


def accepts(fmt: str, value: str) -> bool:
    m = gs.Matcher(grammar(fmt))
    data = json.dumps(value).encode()
    return bool(m.accept_bytes(data)) and bool(m.can_terminate())


def test_every_asserted_format_is_compiled() -> None:
    """No asserted format may fall through to "any string" silently."""
    jsonschema_names = set(jsonschema.FormatChecker().checkers)
    for draft in (jsonschema.Draft3Validator, jsonschema.Draft4Validator):
        jsonschema_names |= set(draft.FORMAT_CHECKER.checkers)
    assert jsonschema_names <= ASSERTED
    for fmt in sorted(ASSERTED):
        text = schema_to_gbnf({"type": "string", "format": fmt})
        assert not accepts(fmt, "[\u0000 not a value of any format"), fmt
        assert text


def test_unknown_format_is_an_annotation() -> None:
    text = schema_to_gbnf({"type": "string", "format": "my-own-format"})
    assert gs.Grammar.from_gbnf(text)


# --- soundness: strings from the grammar pass the checker -----------------------------------------


@pytest.mark.parametrize("fmt", sorted(KINDS))
@SETTINGS
@given(data=st.data())
def test_grammar_strings_pass_the_checker(fmt: str, data: st.DataObject) -> None:
    g = grammar(fmt)
    text = data.draw(sentences(g.rules, g.root)).decode("utf-8")
    value = json.loads(text)
    assert check(fmt, value), (fmt, value)


# --- completeness: valid strings from independent generators are accepted ------------------------


def _uri_strategy(rule: str) -> st.SearchStrategy[str]:
    compiled = rfc3986_validator.URI_RE_COMP if rule == "URI" else rfc3986_validator.URI_REF_RE_COMP
    return st.from_regex(compiled).filter(lambda s: not s.endswith("\n"))


_SCALARS = st.characters(exclude_categories=("Cs",))  # JSON strings hold no lone surrogates
_UCS = st.characters(min_codepoint=0xA0, max_codepoint=0xD7FF)


@st.composite
def _iris(draw: Any, reference: bool) -> str:
    uri = draw(_uri_strategy("URI_reference" if reference else "URI"))
    if "#" in uri or "?" in uri or "//" in uri:
        return uri
    return uri + "/" + draw(st.text(_UCS, min_size=1, max_size=5))


@st.composite
def _templates(draw: Any) -> str:
    name = st.from_regex(r"[A-Za-z0-9_](\.?([A-Za-z0-9_]|%[0-9A-F]{2})){0,4}", fullmatch=True)
    varspec = st.tuples(name, st.sampled_from(["", "*", ":1", ":30", ":999"])).map("".join)
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            parts.append(draw(st.text("abc/:?=&.-_~%20é", max_size=6)).replace("%", "%25"))
        else:
            op = draw(st.sampled_from(["", "+", "#", ".", "/", ";", "?", "&"]))
            names = draw(st.lists(varspec, min_size=1, max_size=3))
            parts.append("{" + op + ",".join(names) + "}")
    return "".join(parts)


@st.composite
def _regexes(draw: Any, depth: int = 0) -> str:
    atoms = [
        st.sampled_from([*"ab.-/#", r"\d", r"\w", r"\.", r"\/", r"\u00e9", "[a-z]", "[^0-9_]"]),
        st.sampled_from(["[\\-x]", "[A-Z0-9]", "[\\]\\[]", "[\\b]", "(?:x|y)", "()"]),
    ]
    if depth < 2:
        atoms.append(st.builds(lambda p: f"({p})", _regexes(depth + 1)))
    atom = st.one_of(*atoms)
    quant = st.sampled_from(["", "*", "+", "?", "{2}", "{1,}", "{0,3}", "{2,15}", "*?", "+?"])
    items = draw(st.lists(st.tuples(atom, quant).map("".join), max_size=4))
    extra = draw(st.sampled_from(["", "^", "$", r"\b", "(?=a)", "(?!b)"]))
    body = "".join(items) + extra
    return body if draw(st.booleans()) else body + "|" + draw(st.sampled_from(["", "c", "d+"]))


@st.composite
def _durations(draw: Any) -> str:
    n = st.integers(0, 999).map(str)
    if draw(st.booleans()):
        return "P" + draw(n) + "W"
    date = draw(st.sampled_from(["", "Y", "YM", "YMD", "M", "MD", "D"]))
    time = draw(st.sampled_from(["", "H", "HM", "HMS", "M", "MS", "S"]))
    assume(date or time)
    out = "P" + "".join(draw(n) + d for d in date)
    return out + ("T" + "".join(draw(n) + t for t in time) if time else "")


def _any_case(word: str) -> st.SearchStrategy[str]:
    flips = st.lists(st.booleans(), min_size=len(word), max_size=len(word))
    return flips.map(lambda f: "".join(c.upper() if u else c for c, u in zip(word, f, strict=True)))


VALID: dict[str, st.SearchStrategy[str]] = {
    "date": STRING_FORMATS["date"],
    "time": STRING_FORMATS["time"],
    "date-time": STRING_FORMATS["date-time"],
    "duration": _durations(),
    "email": st.emails(),
    "idn-email": st.emails(),
    "hostname": prov.domains(),
    "host-name": prov.domains(),
    "idn-hostname": prov.domains().filter(lambda d: "--" not in d),
    "ipv4": st.ip_addresses(v=4).map(str),
    "ip-address": st.ip_addresses(v=4).map(str),
    "ipv6": st.one_of(
        st.ip_addresses(v=6).map(str), st.ip_addresses(v=6).map(lambda a: a.exploded)
    ),
    "uuid": st.uuids().map(str) | st.uuids().map(lambda u: str(u).upper()),
    "uri": _uri_strategy("URI") | prov.urls(),
    "uri-reference": _uri_strategy("URI_reference"),
    "iri": _iris(False) | prov.urls(),
    "iri-reference": _iris(True),
    "uri-template": _templates(),
    "json-pointer": STRING_FORMATS["json-pointer"](_SCALARS),
    "relative-json-pointer": STRING_FORMATS["relative-json-pointer"](_SCALARS),
    "regex": st.one_of(_regexes(), STRING_FORMATS["regex"]),
    "color": st.one_of(
        st.from_regex(r"#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})", fullmatch=True),
        st.sampled_from(["red", "lightgoldenrodyellow", "navy", "grey"]).flatmap(_any_case),
    ),
}


# The escapes the regex format's grammar compiles (schema/format_grammars.py).
_GRAMMAR_ESCAPES = set("dDwWsSnrtfvbxu/-") | set(r"\^$.*+?()[]{}|")


def _standard(fmt: str, value: str) -> bool:
    """Whether a checker-valid ``value`` is in the format's standard reading (what the grammar
    promises to accept): for regexes, ECMA-262 syntax with the ``u`` flag (not Python's
    possessive quantifiers or inline flags, no ``{`` or ``}`` outside a quantifier, no ``]``
    outside a class: Python reads those as literals, the ``u`` flag refuses them)."""
    if fmt == "regex":
        try:
            parser.parse(value)
        except parser.RegexSyntaxError:
            return False
        plain = re.sub(r"\\.", "", value)
        braces = re.sub(r"\{\d+(,\d*)?\}", "", plain)
        lone_bracket = "]" in re.sub(r"\[\^?[^\]]*\]", "", plain)
        if any(e[1] not in _GRAMMAR_ESCAPES for e in re.findall(r"\\.", value)):
            return False  # \0, \c, \p{..}, backreferences: outside the sound part compiled
        return not (
            re.search(r"[*+?}]\+|\(\?[a-zA-Z]", value) or re.search(r"[{}]", braces) or lone_bracket
        )
    return True


@pytest.mark.parametrize("fmt", sorted(VALID))
@SETTINGS
@given(data=st.data())
def test_valid_strings_are_accepted(fmt: str, data: st.DataObject) -> None:
    value = data.draw(VALID[fmt])
    assume(check(fmt, value) and _standard(fmt, value))
    assert accepts(fmt, value), (fmt, value)


def test_every_format_has_a_generator() -> None:
    assert set(VALID) == set(KINDS)


# --- exactness on near misses -------------------------------------------------------------------

_NOISE = st.sampled_from([*string.printable[:-5], "é", "\u00a0", "\ue000", "😀", "٣"])


@st.composite
def _near_misses(draw: Any, fmt: str) -> str:
    value = draw(VALID[fmt])
    for _ in range(draw(st.integers(1, 2))):
        i = draw(st.integers(0, len(value)))
        op = draw(st.sampled_from(["insert", "delete", "replace"]))
        if op == "insert" or not value:
            value = value[:i] + draw(_NOISE) + value[i:]
        elif op == "delete":
            value = value[:i] + value[i + 1 :]
        else:
            value = value[:i] + draw(_NOISE) + value[i + 1 :]
    return value


@pytest.mark.parametrize("fmt", sorted(VALID))
@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
    derandomize=True,
)
@given(data=st.data())
def test_near_misses(fmt: str, data: st.DataObject) -> None:
    value = data.draw(_near_misses(fmt))
    ours, theirs = accepts(fmt, value), check(fmt, value)
    if ours:
        assert theirs, (fmt, value)  # sound, whatever the kind
    elif fmt in EXACT and not value.endswith("\n"):
        assert not theirs, (fmt, value)


@pytest.mark.parametrize(
    ("fmt", "bad"),
    [
        ("uri-reference", "://"),
        ("uri", "a:["),
        ("uri", "http://a b"),
        ("regex", "*"),
        ("regex", "(a"),
        ("regex", "a{2,1}"),
        ("iri", "http://[::1]/"),
        ("iri-reference", "http://x/\U0001f600"),
        ("uri-template", "{a"),
        ("uri-template", "{=a}"),
        ("relative-json-pointer", "100"),
        ("relative-json-pointer", "/a"),
        ("json-pointer", "a"),
        ("hostname", "a" * 64),
        ("hostname", ".".join(["a" * 63] * 4)),
        ("idn-hostname", "ab--c.com"),
        ("email", "plain"),
        ("color", "#12"),
        ("duration", "P1DT"),
    ],
)
def test_issue_examples_are_rejected(fmt: str, bad: str) -> None:
    assert not check(fmt, bad)
    assert not accepts(fmt, bad)


def accepts_text(text: str, value: str) -> bool:
    m = gs.Matcher(gs.Grammar.from_gbnf(text))
    return bool(m.accept_bytes(json.dumps(value).encode())) and bool(m.can_terminate())


def test_context_free_format_with_other_constraints() -> None:
    # Host names meet patterns and lengths through a regular part (four labels at most).
    text = schema_to_gbnf({"type": "string", "format": "hostname", "maxLength": 10})
    assert accepts_text(text, "a.b.c.d") and not accepts_text(text, "a.b.c.d.e")
    assert not accepts_text(text, "abcdef.ghij")
    # Regex syntax meets a short length bound through its regular part, exactly.
    text = schema_to_gbnf({"type": "string", "format": "regex", "maxLength": 10})
    for value in ("a*", "[a-z]{2}", "abcdefghij", "(?:x|y)+"):
        assert accepts_text(text, value), value
    for value in ("*", "(a", "abcdefghijk", "a{2,1}"):
        assert not accepts_text(text, value), value
    # A longer bound needs more than MAX_DFA_STATES states: reported, never silently dropped.
    schema = {"type": "string", "format": "regex", "maxLength": 40}
    with pytest.raises(gs.SchemaError) as err:
        schema_to_gbnf(schema)
    assert err.value.path == "/maxLength"
    with pytest.warns(SchemaWarning):
        text = schema_to_gbnf(schema, strict=False)
    assert gs.Grammar.from_gbnf(text)
