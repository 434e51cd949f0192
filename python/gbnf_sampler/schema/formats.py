"""The ``format`` keyword: every format ``jsonschema`` asserts, as a grammar.

Regular formats are full-match regexes in our ECMA dialect (:data:`FORMATS`); ``regex``,
``hostname`` and ``idn-hostname`` are context-free grammars (:mod:`.format_grammars`). Each is
one of (see :data:`KINDS` and docs/notes/schema-exact.md for the table):

* ``exact``: the strings jsonschema's checker accepts (date, date-time, time, ipv4, ipv6,
  json-pointer; date-time and time take ``t``/``z`` in either case, no leap second, as
  ``rfc3339-validator``).
* ``standard``: the strings the format's standard defines (RFC 3986 URIs, RFC 3987 IRIs,
  RFC 6570 templates, RFC 5321/6531 mailboxes, RFC 4122 UUIDs, RFC 3339 durations, CSS colors),
  intersected with what jsonschema's checker accepts where the checker is stricter (IRIs with
  BMP characters and its nine IPv6 forms, template prefixes of 1-3 digits, relative pointers
  without a digit after a zero). The checker accepts more in places (a trailing newline after a
  URI, any string with an ``@`` as an email, Unicode digits...): those are never generated.
* ``subset``: a sound part of the format: ``hostname``/``idn-hostname`` count the 253-character
  limit in steps of 2 (a name within a character or two of the limit per label may be refused),
  ``idn-hostname`` takes ASCII labels only, ``regex`` the syntax ECMA-262 (with the ``u`` flag)
  and Python's ``re`` both accept, minus constructs whose validity depends on context
  (backreferences, named groups, lookbehind, ``{m,n}`` with m > 9 and n of the same length).

A format name that jsonschema does not assert is an annotation (any string), as in jsonschema.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import uuid
import warnings
from collections.abc import Callable

from ..regex import automata, parser
from .format_grammars import REGEX_FLAT

_YEAR = r"(?:[1-9]\d{3}|0[1-9]\d{2}|00[1-9]\d|000[1-9])"
_LEAP_YEAR = r"(?:\d{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_MONTH_DAY = (
    r"(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])"
    r"|(?:0[13-9]|1[0-2])-(?:29|30)"
    r"|(?:0[13578]|1[02])-31)"
)
_DATE = rf"(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"
_TIME = r"(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)"
_DUR_TIME = r"T(?:\d+H(?:\d+M(?:\d+S)?)?|\d+M(?:\d+S)?|\d+S)"
_DUR_DATE = r"(?:\d+Y(?:\d+M(?:\d+D)?)?|\d+M(?:\d+D)?|\d+D)"
_DURATION = rf"P(?:{_DUR_DATE}(?:{_DUR_TIME})?|{_DUR_TIME}|\d+W)"
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4 = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
_H16 = r"[0-9A-Fa-f]{1,4}"
_LS32 = rf"(?:{_H16}:{_H16}|{_IPV4})"
_IPV6 = (
    "(?:"
    + "|".join(
        [
            rf"(?:{_H16}:){{6}}{_LS32}",
            rf"::(?:{_H16}:){{5}}{_LS32}",
            rf"(?:{_H16})?::(?:{_H16}:){{4}}{_LS32}",
            rf"(?:(?:{_H16}:){{0,1}}{_H16})?::(?:{_H16}:){{3}}{_LS32}",
            rf"(?:(?:{_H16}:){{0,2}}{_H16})?::(?:{_H16}:){{2}}{_LS32}",
            rf"(?:(?:{_H16}:){{0,3}}{_H16})?::{_H16}:{_LS32}",
            rf"(?:(?:{_H16}:){{0,4}}{_H16})?::{_LS32}",
            rf"(?:(?:{_H16}:){{0,5}}{_H16})?::{_H16}",
            rf"(?:(?:{_H16}:){{0,6}}{_H16})?::",
        ]
    )
    + ")"
)
_HEX = "[0-9A-Fa-f]"

# --- RFC 3986 (URI) and RFC 3987 (IRI) ------------------------------------------------------------
_PCT = rf"%{_HEX}{{2}}"
_SUB_DELIMS = r"!$&'()*+,;="
_UNRESERVED = r"A-Za-z0-9\-._~"


def _rfc3986(unreserved: str, private: str, ip_literal_v6: str | None) -> dict[str, str]:
    """URI (or, with Unicode ``unreserved``/``private`` sets, IRI) and relative references;
    without IP literal hosts (``[...]``) when ``ip_literal_v6`` is None."""
    u = unreserved
    pchar = rf"(?:[{u}{_SUB_DELIMS}:@]|{_PCT})"
    userinfo = rf"(?:[{u}{_SUB_DELIMS}:]|{_PCT})*"
    future = rf"v{_HEX}+\.[{_UNRESERVED}{_SUB_DELIMS}:]+"
    reg_name = rf"(?:[{u}{_SUB_DELIMS}]|{_PCT})*"
    host = (
        reg_name if ip_literal_v6 is None else rf"(?:\[(?:{ip_literal_v6}|{future})\]|{reg_name})"
    )
    authority = rf"(?:{userinfo}@)?{host}(?::\d*)?"
    abempty = rf"(?:/{pchar}*)*"
    absolute = rf"/(?:{pchar}+{abempty})?"
    rootless = rf"{pchar}+{abempty}"
    noscheme = rf"(?:[{u}{_SUB_DELIMS}@]|{_PCT})+{abempty}"
    query = rf"(?:\?(?:{pchar}|[{private}/?])*)?"
    fragment = rf"(?:#(?:{pchar}|[/?])*)?"
    scheme = r"[A-Za-z][A-Za-z0-9+.\-]*"
    absolute_uri = rf"{scheme}:(?://{authority}{abempty}|{absolute}|{rootless}|){query}{fragment}"
    relative = rf"(?://{authority}{abempty}|{absolute}|{noscheme}|){query}{fragment}"
    return {"absolute": absolute_uri, "reference": rf"(?:{absolute_uri}|{relative})"}


_URI = _rfc3986(_UNRESERVED, "", _IPV6)
# rfc3987-syntax (jsonschema's IRI checker) takes BMP characters only and these IPv6 forms.
_BMP_UCSCHAR = r"\u00A0-\uD7FF\uF900-\uFDCF\uFDF0-\uFFEF"
_IRI_IPV6 = "|".join(
    [
        rf"(?:{_H16}:){{6}}{_LS32}",
        rf"::(?:{_H16}:){{5}}{_LS32}",
        *(rf"(?:{_H16}:){{{k}}}{_H16}::(?:{_H16}:){{{4 - k}}}{_LS32}" for k in range(5)),
        rf"(?:{_H16}:){{5}}{_H16}::{_H16}",
        rf"(?:{_H16}:){{6}}{_H16}::",
    ]
)
_IRI = _rfc3986(_UNRESERVED + _BMP_UCSCHAR, r"\uE000-\uF8FF", _IRI_IPV6)

# --- RFC 6570 (URI Template), intersected with the ``uri-template`` checker ----------------------
_UCSCHAR = (
    r"\u00A0-\uD7FF\uF900-\uFDCF\uFDF0-\uFFEF\u{10000}-\u{1FFFD}\u{20000}-\u{2FFFD}"
    r"\u{30000}-\u{3FFFD}\u{40000}-\u{4FFFD}\u{50000}-\u{5FFFD}\u{60000}-\u{6FFFD}"
    r"\u{70000}-\u{7FFFD}\u{80000}-\u{8FFFD}\u{90000}-\u{9FFFD}\u{A0000}-\u{AFFFD}"
    r"\u{B0000}-\u{BFFFD}\u{C0000}-\u{CFFFD}\u{D0000}-\u{DFFFD}\u{E1000}-\u{EFFFD}"
)
_IPRIVATE = r"\uE000-\uF8FF\u{F0000}-\u{FFFFD}\u{100000}-\u{10FFFD}"
_TEMPLATE_LITERAL = (
    rf"(?:[!#$&(-;=?-\[\]_a-z~{_UCSCHAR}{_IPRIVATE}]|{_PCT})"  # RFC 6570 section 2.1
)
_VARCHAR = rf"(?:[A-Za-z0-9_]|{_PCT})"
_VARSPEC = rf"[A-Za-z0-9_](?:\.?{_VARCHAR})*(?::[1-9]\d{{0,2}}|\*)?"
_TEMPLATE = rf"(?:{_TEMPLATE_LITERAL}|\{{[+#./;?&]?{_VARSPEC}(?:,{_VARSPEC})*\}})*"

# --- mailboxes (RFC 5321 section 4.1.2; RFC 6531 for idn-email) ------------------------------
_ATEXT = r"A-Za-z0-9!#$%&'*+/=?^_`{|}~\-"
_QUOTED = r'"(?:[ !#-\[\]-~]|\\[ -~])*"'
_LDH_DOMAIN = (
    r"[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*"
)
_ADDRESS_LITERAL = rf"\[(?:{_IPV4}|IPv6:{_IPV6})\]"
_LOCAL = rf"(?:[{_ATEXT}]+(?:\.[{_ATEXT}]+)*|{_QUOTED})"
_EMAIL = rf"{_LOCAL}@(?:{_LDH_DOMAIN}|{_ADDRESS_LITERAL})"
_U8 = r"\u0080-\uD7FF\uE000-\u{10FFFF}"
_U_LABEL = rf"[A-Za-z0-9{_U8}](?:[A-Za-z0-9\-{_U8}]*[A-Za-z0-9{_U8}])?"
_IDN_LOCAL = rf"(?:[{_ATEXT}{_U8}]+(?:\.[{_ATEXT}{_U8}]+)*|\"(?:[ !#-\[\]-~{_U8}]|\\[ -~])*\")"
_IDN_EMAIL = rf"{_IDN_LOCAL}@(?:{_U_LABEL}(?:\.{_U_LABEL})*|{_ADDRESS_LITERAL})"

# --- CSS colors (jsonschema's draft-3 checker: webcolors' CSS3 names or #rgb / #rrggbb) ----------
_COLOR_NAMES_TEXT = """
aliceblue antiquewhite aqua aquamarine azure beige bisque black blanchedalmond blue
blueviolet brown burlywood cadetblue chartreuse chocolate coral cornflowerblue cornsilk
crimson cyan darkblue darkcyan darkgoldenrod darkgray darkgreen darkgrey darkkhaki
darkmagenta darkolivegreen darkorange darkorchid darkred darksalmon darkseagreen
darkslateblue darkslategray darkslategrey darkturquoise darkviolet deeppink deepskyblue
dimgray dimgrey dodgerblue firebrick floralwhite forestgreen fuchsia gainsboro ghostwhite
gold goldenrod gray green greenyellow grey honeydew hotpink indianred indigo ivory khaki
lavender lavenderblush lawngreen lemonchiffon lightblue lightcoral lightcyan
lightgoldenrodyellow lightgray lightgreen lightgrey lightpink lightsalmon lightseagreen
lightskyblue lightslategray lightslategrey lightsteelblue lightyellow lime limegreen linen
magenta maroon mediumaquamarine mediumblue mediumorchid mediumpurple mediumseagreen
mediumslateblue mediumspringgreen mediumturquoise mediumvioletred midnightblue mintcream
mistyrose moccasin navajowhite navy oldlace olive olivedrab orange orangered orchid
palegoldenrod palegreen paleturquoise palevioletred papayawhip peachpuff peru pink plum
powderblue purple red rosybrown royalblue saddlebrown salmon sandybrown seagreen seashell
sienna silver skyblue slateblue slategray slategrey snow springgreen steelblue tan teal
thistle tomato turquoise violet wheat white whitesmoke yellow yellowgreen
"""
CSS3_COLOR_NAMES = tuple(_COLOR_NAMES_TEXT.split())


def _any_case(word: str) -> str:
    return "".join(f"[{c}{c.upper()}]" if c.isalpha() else re.escape(c) for c in word)


_COLOR = rf"#(?:{_HEX}{{3}}|{_HEX}{{6}})|" + "|".join(_any_case(n) for n in CSS3_COLOR_NAMES)

FORMATS: dict[str, str] = {
    "date": _DATE,
    "time": _TIME,
    "date-time": rf"{_DATE}[Tt]{_TIME}",
    "duration": _DURATION,
    "email": _EMAIL,
    "idn-email": _IDN_EMAIL,
    "ipv4": _IPV4,
    "ip-address": _IPV4,
    "ipv6": _IPV6,
    "uuid": rf"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}",
    "uri": _URI["absolute"],
    "uri-reference": _URI["reference"],
    "iri": _IRI["absolute"],
    "iri-reference": _IRI["reference"],
    "uri-template": _TEMPLATE,
    "json-pointer": r"(?:/(?:[^~/]|~[01])*)*",
    "relative-json-pointer": r"(?:0|[1-9]+0?)(?:#|(?:/(?:[^~/]|~[01])*)*)",
    "color": _COLOR,
}
# Where a format meets a length, a pattern or another format, its automaton is multiplied by
# theirs: these variants without IP-address literals (``http://[::1]/``, ``a@[1.2.3.4]``), whose
# automata are a tenth of the size, stand in there (a sound part of the format).
_URI_COMPACT = _rfc3986(_UNRESERVED, "", None)
_IRI_COMPACT = _rfc3986(_UNRESERVED + _BMP_UCSCHAR, r"\uE000-\uF8FF", None)
COMPACT: dict[str, str] = {
    "email": rf"{_LOCAL}@{_LDH_DOMAIN}",
    "idn-email": rf"{_IDN_LOCAL}@{_U_LABEL}(?:\.{_U_LABEL})*",
    "uri": _URI_COMPACT["absolute"],
    "uri-reference": _URI_COMPACT["reference"],
    "iri": _IRI_COMPACT["absolute"],
    "iri-reference": _IRI_COMPACT["reference"],
}

# Formats written as context-free grammars (see format_grammars).
GRAMMAR_FORMATS = frozenset({"regex", "hostname", "host-name", "idn-hostname"})
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?"
_LABEL61 = r"[A-Za-z0-9](?:[A-Za-z0-9\-]{0,59}[A-Za-z0-9])?"
_IDN_LABEL = (
    r"[A-Za-z0-9](?:[A-Za-z0-9\-]{0,2}[A-Za-z0-9]"
    r"|[A-Za-z0-9\-](?:[A-Za-z0-9][A-Za-z0-9\-]|-[A-Za-z0-9])[A-Za-z0-9\-]{0,58}[A-Za-z0-9])?"
)
_IDN_LABEL61 = _IDN_LABEL.replace("{0,58}", "{0,56}")
# Where a grammar format meets a pattern or a length, an automaton is needed: these regular
# parts of the host names (at most four labels, so at most 253 characters) and of the regex
# syntax (groups one level deep) stand in for them.
REGULAR_SUBSETS = {
    name: rf"{lab}(?:\.{lab}(?:\.{lab}(?:\.{last})?)?)?\.?"
    for name, lab, last in (
        ("hostname", _LABEL, _LABEL61),
        ("host-name", _LABEL, _LABEL61),
        ("idn-hostname", _IDN_LABEL, _IDN_LABEL61),
    )
} | {"regex": REGEX_FLAT}

EXACT = frozenset({"date", "date-time", "time", "ipv4", "ip-address", "ipv6", "json-pointer"})
# The exact formats that jsonschema's checker asserts whatever the draft (draft 4 does not
# assert ``date``, draft 3 not ``ipv4``...). Only these may prove a value invalid: ``oneOf``
# branches told apart by a format, or a format negated (the converter does not read
# ``$schema``; a format asserted in only some drafts would let a value that draft's checker
# accepts count as rejected).
EVERY_DRAFT = frozenset({"date-time", "ipv6"})
SUBSET = frozenset({"regex", "hostname", "host-name", "idn-hostname"})
KINDS: dict[str, str] = {
    name: "exact" if name in EXACT else "subset" if name in SUBSET else "standard"
    for name in (*FORMATS, *GRAMMAR_FORMATS)
}

# The format names jsonschema's format checkers assert (every draft, with the
# ``format-nongpl`` extra). Any other name is an annotation: every string satisfies it.
ASSERTED = frozenset(KINDS)


@functools.lru_cache(maxsize=64)
def _format_dfa(name: str) -> automata.Dfa:
    return automata.from_regex(parser.anchor(parser.parse(FORMATS[name]), search=False))


def format_never_ends(name: str) -> bool:
    """Every prefix of a string of the regular format ``name`` can grow in infinitely many ways
    (``automata.never_ends``); False for the context-free formats (``GRAMMAR_FORMATS``)."""
    if name not in FORMATS:
        return False
    try:
        return automata.never_ends(_format_dfa(name))
    except automata.TooLarge:
        return False


def format_dfa(name: str) -> automata.Dfa | None:
    """The automaton of the regular format ``name`` (None: not a regular format, or too large)."""
    if name not in FORMATS:
        return None
    try:
        return _format_dfa(name)
    except automata.TooLarge:
        return None


_HOST_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\Z")


def _hostname_ok(value: str, idn: bool) -> bool | None:
    """RFC 1123 host names (ASCII); None for non-ASCII (an IDN: not decided here)."""
    if not value.isascii():
        return None
    labels = value[:-1].split(".") if value.endswith(".") else value.split(".")
    if len(value.rstrip(".")) > 253 or not all(_HOST_LABEL.match(x) for x in labels):
        return False
    return not (idn and any(x[2:4] == "--" for x in labels))


def _regex_ok(value: str) -> bool | None:
    """Valid to Python's ``re`` and to our ECMA-262 parser: True; to neither: False."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(value)
        python = True
    except (re.error, OverflowError, RecursionError):
        python = False
    try:
        parser.parse(value)
        ecma = True
    except parser.RegexSyntaxError:
        ecma = False
    return python if python == ecma else None


def _uuid_ok(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return all(len(value) > i and value[i] == "-" for i in (8, 13, 18, 23))


def _ip_ok(value: str, version: int) -> bool:
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return False
    return address.version == version and not getattr(address, "scope_id", None)


def _relative_pointer_ok(value: str) -> bool:
    digits = re.match(r"[0-9]+", value)
    if digits is None or re.search(r"0[0-9]", digits.group()):
        return False
    rest = value[digits.end() :]
    return rest == "#" or rest == "" or re.fullmatch(r"(?:/(?:[^~/]|~[01])*)*", rest) is not None


def _color_ok(value: str) -> bool:
    lowered = value.lower()
    return lowered in CSS3_COLOR_NAMES or re.match(_HEX_COLOR, lowered) is not None


_HEX_COLOR = r"^#([a-f0-9]{3}|[a-f0-9]{6})$"
# Checks that decide exactly what jsonschema's checker decides, where the standard library can
# (``$`` in the checkers' own regexes also matches before a final newline).
_TRUTH: dict[str, Callable[[str], bool]] = {
    "email": lambda v: "@" in v,
    "idn-email": lambda v: "@" in v,
    "uuid": _uuid_ok,
    "ipv4": lambda v: _ip_ok(v, 4),
    "ip-address": lambda v: _ip_ok(v, 4),
    "ipv6": lambda v: _ip_ok(v, 6),
    "relative-json-pointer": _relative_pointer_ok,
    "color": _color_ok,
}


def format_verdict(name: str, value: str) -> bool | None:
    """Whether ``value`` is a valid ``name``, as jsonschema's checker reads it (None: cannot
    tell here)."""
    if not value.isascii() and name in _TRUTH and name not in ("email", "idn-email"):
        return None  # Unicode digits and case folding: the checkers' quirks, not decided here
    if name in _TRUTH:
        return _TRUTH[name](value)
    if name in FORMATS:
        if _format_dfa(name).matches(value):
            return True
        if name in EXACT or (name in ("uri", "uri-reference") and _plain_uri(value)):
            return False
        return None
    if name in ("hostname", "host-name", "idn-hostname"):
        if "\n" in value:
            return None
        verdict = _hostname_ok(value, name == "idn-hostname")
        return verdict if verdict is not False or name != "idn-hostname" else None
    if name == "regex":
        return _regex_ok(value)
    return None if name in ASSERTED else True


def _plain_uri(value: str) -> bool:
    """No IP literal and no final newline: where rfc3986-validator reads RFC 3986 as we do."""
    return "[" not in value and not value.endswith("\n")


__all__ = [
    "ASSERTED",
    "COMPACT",
    "EVERY_DRAFT",
    "EXACT",
    "FORMATS",
    "GRAMMAR_FORMATS",
    "KINDS",
    "REGULAR_SUBSETS",
    "format_verdict",
]
