"""Strict format checkers, written from each format's RFC grammar, for testing the subsets.

jsonschema's format checkers are lenient in places (its `email` only looks for an `@`), so the
format subsets are also held to these: each function transcribes the ABNF of the RFC that JSON
Schema cites for the format (the rule names in comments are the RFC's), plus the RFC's stated
limits (label and address lengths, calendar days). `uri` and `uri-reference` use
rfc3986-validator, a transcription of RFC 3986's appendix A. ABNF string literals are
case-insensitive (RFC 5234 section 2.3), so `t`, `z` and `p` are accepted as the RFCs allow.

Every checker rejects text with a line break: Python's `$` would let one through.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable

import idna
import rfc3987
from rfc3986_validator import validate_rfc3986

from gguf_extract.core.schema.lexical.pattern import UnsupportedPattern, pattern_tree

_DIGIT = "[0-9]"
_HEXDIG = "[0-9A-Fa-f]"


def _whole(pattern: str, flags: int = 0) -> Callable[[str], bool]:
    compiled = re.compile(pattern, flags | re.ASCII)
    return lambda text: compiled.fullmatch(text) is not None


# --- RFC 3339 section 5.6 (with the restrictions of 5.7) ------------------------------------

# full-date = date-fullyear "-" date-month "-" date-mday
_FULL_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})", re.ASCII)
# partial-time = time-hour ":" time-minute ":" time-second [time-secfrac]
# time-offset = "Z" / time-numoffset; time-numoffset = ("+" / "-") time-hour ":" time-minute
_FULL_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?(Z|([+-])([0-9]{2}):([0-9]{2}))", re.ASCII | re.IGNORECASE)


def rfc3339_date(text: str) -> bool:
    """full-date: month 01-12, mday 01-28/29/30/31 by month and (Gregorian) leap year."""
    match = _FULL_DATE.fullmatch(text)
    if match is None:
        return False
    year, month, day = (int(group) for group in match.groups())
    if not 1 <= month <= 12:
        return False
    # calendar.monthrange has no year 0; 0000 is a leap year in the proleptic Gregorian calendar.
    days = 29 if month == 2 and year == 0 else calendar.monthrange(year or 2000, month)[1]
    return 1 <= day <= days


def rfc3339_time(text: str) -> bool:
    """full-time: hour 00-23, minute 00-59, second 00-59, or 60 where the time is a leap
    second (23:59:60 in UTC once the offset is taken off); offset hour 00-23, minute 00-59."""
    match = _FULL_TIME.fullmatch(text)
    if match is None:
        return False
    hour, minute, second = int(match[1]), int(match[2]), int(match[3])
    if hour > 23 or minute > 59 or second > 60:
        return False
    offset = 0
    if match[6] is not None:
        offset_hour, offset_minute = int(match[7]), int(match[8])
        if offset_hour > 23 or offset_minute > 59:
            return False
        offset = (offset_hour * 60 + offset_minute) * (1 if match[6] == "+" else -1)
    if second == 60:
        return (hour * 60 + minute - offset) % (24 * 60) == 23 * 60 + 59
    return True


def rfc3339_date_time(text: str) -> bool:
    """date-time = full-date "T" full-time."""
    date, separator, time = text[:10], text[10:11], text[11:]
    return separator in ("T", "t") and rfc3339_date(date) and rfc3339_time(time)


# --- RFC 3339 appendix A: durations ----------------------------------------------------------

_DUR_SECOND = r"[0-9]+S"
_DUR_MINUTE = rf"[0-9]+M(?:{_DUR_SECOND})?"
_DUR_HOUR = rf"[0-9]+H(?:{_DUR_MINUTE})?"
_DUR_TIME = rf"T(?:{_DUR_HOUR}|{_DUR_MINUTE}|{_DUR_SECOND})"
_DUR_DAY = r"[0-9]+D"
_DUR_WEEK = r"[0-9]+W"
_DUR_MONTH = rf"[0-9]+M(?:{_DUR_DAY})?"
_DUR_YEAR = rf"[0-9]+Y(?:{_DUR_MONTH})?"
_DUR_DATE = rf"(?:{_DUR_DAY}|{_DUR_MONTH}|{_DUR_YEAR})(?:{_DUR_TIME})?"
duration = _whole(rf"P(?:{_DUR_DATE}|{_DUR_TIME}|{_DUR_WEEK})", re.IGNORECASE)


# --- RFC 3986 appendix A: IPv4address and IPv6address (the text forms of RFC 4291 2.2) ------

_DEC_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])"
_IPV4 = rf"{_DEC_OCTET}\.{_DEC_OCTET}\.{_DEC_OCTET}\.{_DEC_OCTET}"
ipv4 = _whole(_IPV4)

_H16 = rf"{_HEXDIG}{{1,4}}"
_LS32 = rf"(?:{_H16}:{_H16}|{_IPV4})"


def _head(most: int) -> str:
    """[ *most( h16 ":" ) h16 ]"""
    return rf"(?:(?:{_H16}:){{0,{most}}}{_H16})?" if most >= 0 else ""


_IPV6 = "|".join(
    [
        rf"(?:{_H16}:){{6}}{_LS32}",
        rf"::(?:{_H16}:){{5}}{_LS32}",
        rf"{_head(0)}::(?:{_H16}:){{4}}{_LS32}",
        rf"{_head(1)}::(?:{_H16}:){{3}}{_LS32}",
        rf"{_head(2)}::(?:{_H16}:){{2}}{_LS32}",
        rf"{_head(3)}::{_H16}:{_LS32}",
        rf"{_head(4)}::{_LS32}",
        rf"{_head(5)}::{_H16}",
        rf"{_head(6)}::",
    ]
)
ipv6 = _whole(rf"(?:{_IPV6})")


# --- RFC 9562 section 4 (RFC 4122 section 3): the UUID string representation -----------------

uuid = _whole(rf"{_HEXDIG}{{8}}-{_HEXDIG}{{4}}-{_HEXDIG}{{4}}-{_HEXDIG}{{4}}-{_HEXDIG}{{12}}")


# --- RFC 1123 section 2.1 (RFC 952 as amended): host names -----------------------------------

_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?", re.ASCII)


def hostname(text: str) -> bool:
    """Dot-separated labels of 1-63 letters, digits and hyphens, neither starting nor ending
    with a hyphen (RFC 1123 allows a leading digit), at most 253 characters in all (255
    octets on the wire); the highest-level label is not all digits (RFC 1123 2.1: a host name
    never has the dotted-decimal form, "at least the highest-level component label will be
    alphabetic"; RFC 3696 section 2). No trailing dot."""
    labels = text.split(".")
    if len(text) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        return False
    return not labels[-1].isdigit()


def idn_hostname(text: str) -> bool:
    """RFC 5890/5891 host names. ASCII labels follow `hostname`, and a label with hyphens in
    its 3rd and 4th positions (an R-LDH label) must be an A-label (`xn--`) that decodes;
    others go through the idna package (IDNA 2008)."""
    if not text.isascii():
        try:
            return hostname(idna.encode(text).decode("ascii"))
        except idna.IDNAError:
            return False
    if not hostname(text):
        return False
    for label in text.split("."):
        if label[2:4] == "--":
            try:
                if not label.lower().startswith("xn--") or not idna.decode(label):
                    return False
            except idna.IDNAError:
                return False
    return True


# --- RFC 5321 section 4.1.2 (Mailbox), with the limits of 4.5.3.1 ----------------------------

# atext (RFC 5322 3.2.3): ALPHA / DIGIT / "!#$%&'*+-/=?^_`{|}~"
_ATEXT = r"[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]"
_DOT_STRING = re.compile(rf"{_ATEXT}+(?:\.{_ATEXT}+)*", re.ASCII)
# Quoted-string = DQUOTE *QcontentSMTP DQUOTE; qtextSMTP = %d32-33 / %d35-91 / %d93-126;
# quoted-pairSMTP = %d92 %d32-126
_QUOTED_STRING = re.compile(r'"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"', re.ASCII)
# sub-domain = Let-dig [Ldh-str]
_SUB_DOMAIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?", re.ASCII)


def _domain(text: str) -> bool:
    """Domain = sub-domain *("." sub-domain), or an address-literal: "[" IPv4 or "IPv6:" IPv6 "]"
    (General-address-literal, for standardized tags no one has registered, is not accepted)."""
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1]
        return (inner[:5].lower() == "ipv6:" and ipv6(inner[5:])) or ipv4(inner)
    labels = text.split(".")
    return len(text) <= 255 and all(_SUB_DOMAIN.fullmatch(label) and len(label) <= 63 for label in labels)


def email(text: str) -> bool:
    """Mailbox = Local-part "@" ( Domain / address-literal ); Local-part = Dot-string /
    Quoted-string, so no leading, trailing or doubled dot outside quotes. Limits: local part
    64 octets, domain 255, the whole path 256 with its angle brackets (so 254 here)."""
    local, at, domain = text.rpartition("@")
    if not at or len(text) > 254 or len(local.encode()) > 64:
        return False
    if not (_DOT_STRING.fullmatch(local) or _QUOTED_STRING.fullmatch(local)):
        return False
    return _domain(domain)


# --- RFC 3986: URI and URI-reference ---------------------------------------------------------


def uri(text: str) -> bool:
    return "\n" not in text and bool(validate_rfc3986(text, rule="URI"))


def uri_reference(text: str) -> bool:
    return "\n" not in text and bool(validate_rfc3986(text, rule="URI_reference"))


# --- ECMA-262 regular expressions, as Python's `re` also compiles them -------------------------


def regex(text: str) -> bool:
    """A pattern both engines compile: Python's `re`, and the project's pattern reader, which
    takes only what ECMA-262 (without the `u` flag) and `re` read alike (and refuses a class
    that matches no character, `[^\\s\\S]`, which both compile)."""
    try:
        re.compile(text)
        pattern_tree(text)
    except re.error:
        return False
    except UnsupportedPattern as error:
        return "matches no character" in str(error)
    return True


# --- RFC 3987: IRI and IRI-reference; RFC 6901: JSON Pointer and its relative form -------------


def iri(text: str) -> bool:
    return "\n" not in text and rfc3987.match(text, rule="IRI") is not None


def iri_reference(text: str) -> bool:
    return "\n" not in text and rfc3987.match(text, rule="IRI_reference") is not None


# json-pointer = *( "/" reference-token ); reference-token = *( unescaped / escaped )
# escaped = "~" ( "0" / "1" ); unescaped = any character but "/" and "~"
json_pointer = _whole(r"(?:/(?:[^/~]|~[01])*)*", re.DOTALL)
# relative-json-pointer = non-negative-integer ( "#" / json-pointer )
relative_json_pointer = _whole(r"(?:0|[1-9][0-9]*)(?:#|(?:/(?:[^/~]|~[01])*)*)", re.DOTALL)


STRICT: dict[str, Callable[[str], bool]] = {
    "date": rfc3339_date,
    "time": rfc3339_time,
    "date-time": rfc3339_date_time,
    "duration": duration,
    "email": email,
    "hostname": hostname,
    "idn-hostname": idn_hostname,
    "ipv4": ipv4,
    "ipv6": ipv6,
    "uri": uri,
    "uri-reference": uri_reference,
    "uuid": uuid,
    "regex": regex,
    "iri": iri,
    "iri-reference": iri_reference,
    "idn-email": email,
    "json-pointer": json_pointer,
    "relative-json-pointer": relative_json_pointer,
}
