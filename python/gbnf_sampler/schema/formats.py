"""The ``format`` keyword: each supported format as a full-match regex (our ECMA dialect).

Exact: date (days per month and leap years, years 0001-9999), time and date-time (RFC 3339,
``T``/``Z`` in either case, no leap second, as Python's ``rfc3339-validator``), duration (the
RFC 3339 appendix A grammar), ipv4 (no leading zeros), ipv6 (every ``::`` compression, optional
embedded IPv4, no zone id), uuid (8-4-4-4-12 hex digits, either case), json-pointer.
Approximate but sound with respect to the RFCs' character sets: email (dot-atom local part, a
hostname domain), hostname (RFC 1123 labels of 1-63 characters; the 253-character total is not
checked), uri and uri-reference (RFC 3986 characters and percent-escapes, a scheme for ``uri``;
authority and path structure are not checked).
"""

from __future__ import annotations

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
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = rf"{_LABEL}(?:\.{_LABEL})*"
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_EMAIL = rf"{_ATOM}(?:\.{_ATOM})*@{_HOSTNAME}"
_URI_CHAR = r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})"
_URI = rf"[A-Za-z][A-Za-z0-9+.\-]*:{_URI_CHAR}*"
_URI_REFERENCE = rf"{_URI_CHAR}*"
_HEX = "[0-9A-Fa-f]"

FORMATS: dict[str, str] = {
    "date": _DATE,
    "time": _TIME,
    "date-time": rf"{_DATE}[Tt]{_TIME}",
    "duration": _DURATION,
    "email": _EMAIL,
    "hostname": _HOSTNAME,
    "ipv4": _IPV4,
    "ipv6": _IPV6,
    "uuid": rf"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}",
    "uri": _URI,
    "uri-reference": _URI_REFERENCE,
    "json-pointer": r"(?:/(?:[^~/]|~[01])*)*",
}
