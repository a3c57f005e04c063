"""String formats as regex trees over the decoded characters.

Each format matches only strings that the format checker used for final validation accepts
(Python's `date.fromisoformat` for dates, RFC 3339 for date-times), including month lengths
and leap years, so the automaton never emits a value that validation would reject. Where those
checkers are lenient, the trees hold to the RFC the format cites (an email's local part is a
dot-atom; a host name's last label is not numeric), and tests/test_formats_strict.py checks
every tree against a checker written from that RFC's grammar. Dates and times are exact; host
names, IPv6 addresses, URIs and durations are conservative subsets (see each function). Every
tree is ASCII without quotes or backslashes, so JSON needs no escapes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ...automaton.regex import EMPTY, HEX_DIGIT, Node, Repeat, alt, char_set, chars, lit, optional, seq
from .scalars import DIGIT

D = DIGIT


def _digits(low: str, high: str) -> Node:
    return chars((ord(low), ord(high)))


def _year() -> Node:
    # 0001..9999: Python's date has no year 0.
    return alt(
        seq(_digits("1", "9"), D, D, D),
        seq(lit("0"), _digits("1", "9"), D, D),
        seq(lit("00"), _digits("1", "9"), D),
        seq(lit("000"), _digits("1", "9")),
    )


def _leap_year() -> Node:
    # Divisible by 4 and not by 100, or divisible by 400; year 0000 excluded.
    by_four = alt(seq(char_set("02468"), char_set("48")), seq(char_set("2468"), lit("0")), seq(char_set("13579"), char_set("26")))
    not_century = seq(D, D, by_four)
    four_hundreds = seq(
        alt(seq(char_set("2468"), char_set("048")), seq(char_set("13579"), char_set("26")), seq(lit("0"), char_set("48"))),
        lit("00"),
    )
    return alt(not_century, four_hundreds)


def date_node() -> Node:
    day_31 = alt(seq(lit("0"), _digits("1", "9")), seq(char_set("12"), D), seq(lit("3"), char_set("01")))
    day_30 = alt(seq(lit("0"), _digits("1", "9")), seq(char_set("12"), D), lit("30"))
    day_28 = alt(seq(lit("0"), _digits("1", "9")), seq(lit("1"), D), seq(lit("2"), _digits("0", "8")))
    long_months = alt(*(lit(m) for m in ("01", "03", "05", "07", "08", "10", "12")))
    short_months = alt(*(lit(m) for m in ("04", "06", "09", "11")))
    return alt(
        seq(_year(), lit("-"), long_months, lit("-"), day_31),
        seq(_year(), lit("-"), short_months, lit("-"), day_30),
        seq(_year(), lit("-02-"), day_28),
        seq(_leap_year(), lit("-02-29")),
    )


def time_node() -> Node:
    """RFC 3339 full-time with a numeric offset or Z; leap seconds are not produced."""
    hour = alt(seq(char_set("01"), D), seq(lit("2"), _digits("0", "3")))
    minute = seq(_digits("0", "5"), D)
    fraction = seq(lit("."), Repeat(D, 1, 6))
    offset = alt(lit("Z"), seq(char_set("+-"), hour, lit(":"), minute))
    return seq(hour, lit(":"), minute, lit(":"), minute, Repeat(fraction, 0, 1), offset)


def date_time_node() -> Node:
    return seq(date_node(), lit("T"), time_node())


def uuid_node() -> Node:
    return seq(*(seq(Repeat(HEX_DIGIT, n, n), lit("-")) for n in (8, 4, 4, 4)), Repeat(HEX_DIGIT, 12, 12))


def ipv4_node() -> Node:
    # No leading zeros: Python's ipaddress (used by the validator) rejects them.
    octet = alt(
        seq(lit("25"), _digits("0", "5")), seq(lit("2"), _digits("0", "4"), D), seq(lit("1"), D, D), seq(_digits("1", "9"), D), D
    )
    return seq(octet, lit("."), octet, lit("."), octet, lit("."), octet)


_LETTER = chars((0x41, 0x5A), (0x61, 0x7A))
_LETTER_DIGIT = chars((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A))
_LETTER_DIGIT_HYPHEN = chars((0x2D, 0x2D), (0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A))
_LOCAL_CHAR = chars((0x25, 0x25), (0x2B, 0x2B), (0x2D, 0x2D), (0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))


def _dot_atom(units: int) -> Node:
    """RFC 5321's Dot-string over letters, digits and %+-_: atoms joined by single dots, so no
    leading, trailing or doubled dot. A character, then `units` more characters, each of which
    may follow a dot: at most 1 + 2 * units characters, and every dot-string of up to 1 + units."""
    return seq(_LOCAL_CHAR, Repeat(alt(_LOCAL_CHAR, seq(lit("."), _LOCAL_CHAR)), 0, units))


def _ldh_label(first: Node, max_length: int) -> Node:
    """1..max_length letters, digits and hyphens, starting with `first`, ending with a letter
    or digit (RFC 5321's sub-domain, RFC 1123's label)."""
    return seq(first, optional(seq(Repeat(_LETTER_DIGIT_HYPHEN, 0, max_length - 2), _LETTER_DIGIT)))


def email_node(local_units: int = 31, first_label: int = 63, later_label: int = 30, more_labels: int = 4) -> Node:
    """A conservative subset of RFC 5321 mailboxes: a dot-atom local part (see _dot_atom), `@`,
    then a domain of 2 to 1 + more_labels letter-digit-hyphen labels (none starts or ends with
    a hyphen). The defaults keep the RFC's limits: a local part of at most 63 characters (64
    allowed), a domain of at most 63 + 4 * 31 = 187 (255 allowed), 251 in all (254)."""
    label = _ldh_label(_LETTER_DIGIT, later_label)
    domain = seq(_ldh_label(_LETTER_DIGIT, first_label), Repeat(seq(lit("."), label), 1, more_labels))
    return seq(_dot_atom(local_units), lit("@"), domain)


def compact_email_node() -> Node:
    """At most 31 + 1 + 74 = 106 characters: fits the usual maxLength (254, 320, ...) without a
    length automaton."""
    return email_node(15, 24, 24, 2)


# ---------------------------------------------------------------------------------------------
# Host names, IPv6 addresses, URIs and durations. Every tree below describes a subset of what
# jsonschema's checkers accept for every draft that defines the format: fqdn (hostname), idna
# (idn-hostname), ipaddress (ipv6), rfc3987 (uri, uri-reference) and isoduration plus a
# designator check (duration). Each is a conservative subset a writer would naturally use, with
# bounded repeats so the automata stay small.

_HOSTNAME_FIRST_LABEL = 63
_HOSTNAME_MORE_LABELS = 5
_HOSTNAME_LATER_LABEL = 37  # 63 + 5 * (1 + 37) = 253, the longest name fqdn allows


def _host_label(max_length: int, first: Node = _LETTER_DIGIT) -> Node:
    """A letter-digit-hyphen label of 1..max_length characters that starts with `first`, does
    not end with a hyphen and has no hyphens in both its 3rd and 4th positions (`xn--`-style
    labels, which IDNA reserves for punycode and rejects unless they decode)."""
    ldh, ld = _LETTER_DIGIT_HYPHEN, _LETTER_DIGIT
    # After the first character: 1, 2 or 3 more characters, or 4+ where (3rd, 4th) != (-, -).
    rest = alt(
        ld,
        seq(ldh, ld),
        seq(ldh, ldh, ld),
        seq(ldh, alt(seq(ld, ldh), seq(lit("-"), ld)), Repeat(ldh, 0, max_length - 5), ld),
    )
    return seq(first, optional(rest))


def hostname_node() -> Node:
    """RFC 1123 host names: dot-separated letter-digit-hyphen labels, no trailing dot.

    A first label of up to 63 characters and at most five more of up to 37 each, so a name
    never exceeds 253 characters (255 octets in DNS). The last (highest-level) label starts
    with a letter: RFC 1123 (2.1) has it alphabetic, so that no host name looks like a dotted
    IPv4 address (`192.168.0.1`, which fqdn accepts). Labels with hyphens in both the 3rd and
    4th positions are left out, so that the same names are valid IDNA names as well."""
    first, later = _host_label(_HOSTNAME_FIRST_LABEL), _host_label(_HOSTNAME_LATER_LABEL)
    inner = seq(lit("."), later)
    return alt(
        _host_label(_HOSTNAME_FIRST_LABEL, _LETTER),
        seq(first, Repeat(inner, 0, _HOSTNAME_MORE_LABELS - 1), lit("."), _host_label(_HOSTNAME_LATER_LABEL, _LETTER)),
    )


def idn_hostname_node() -> Node:
    """The ASCII subset of internationalized host names: exactly the `hostname` tree, which
    the idna package accepts (lowercase-folded letters, digits and inner hyphens are PVALID,
    and no label looks like an A-label). Non-ASCII labels are not generated."""
    return hostname_node()


def _hextets(count: int) -> Node:
    """`count` (>= 1) groups of 1-4 hex digits joined by colons."""
    hextet = Repeat(HEX_DIGIT, 1, 4)
    return seq(hextet, Repeat(seq(lit(":"), hextet), count - 1, count - 1))


def _hextets_up_to(count: int) -> Node:
    """0..count groups joined by colons."""
    if count == 0:
        return EMPTY
    hextet = Repeat(HEX_DIGIT, 1, 4)
    return optional(seq(hextet, Repeat(seq(lit(":"), hextet), 0, count - 1)))


def ipv6_node() -> Node:
    """IPv6 addresses in the forms Python's ipaddress (and RFC 4291) accept, without zone ids
    (`fe80::1%eth0`, which jsonschema rejects): eight hextets of 1-4 hex digits; `::` with k
    hextets before it (0 <= k <= 7) and at most 7 - k after it (`::`, `::1`, `2001:db8::1`,
    `1:2:3:4:5:6:7::`); and both forms with a dotted IPv4 tail counting as two hextets
    (`::ffff:192.0.2.1`, `64:ff9b::192.0.2.33`). Hex digits may be either case; the IPv4 part
    is `ipv4` (no leading zeros, which ipaddress rejects). That is every form ipaddress
    accepts except zone ids."""
    options: list[Node] = [_hextets(8)]
    for before in range(8):
        head = _hextets(before) if before else EMPTY
        options.append(seq(head, lit("::"), _hextets_up_to(7 - before)))
    ipv4 = ipv4_node()
    options.append(seq(_hextets(6), lit(":"), ipv4))
    for before in range(6):
        head = _hextets(before) if before else EMPTY
        middle = [seq(_hextets(after), lit(":")) for after in range(1, 6 - before)]
        options.append(seq(head, lit("::"), alt(EMPTY, *middle), ipv4))
    return alt(*options)


# RFC 3986 character classes, as rfc3987 spells them (ASCII only, never a quote or backslash).
_UNRESERVED = ((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A), (0x2D, 0x2E), (0x5F, 0x5F), (0x7E, 0x7E))
_SUB_DELIMS = ((0x21, 0x21), (0x24, 0x24), (0x26, 0x2C), (0x3B, 0x3B), (0x3D, 0x3D))  # ! $ & ' ( ) * + , ; =
_COLON, _AT = (0x3A, 0x3A), (0x40, 0x40)
_URI_SCHEME_MORE = 15
_URI_USERINFO = 32
_URI_PORT_DIGITS = 5
_URI_PATH = 128
_URI_FIRST_SEGMENT = 64
_URI_QUERY = 128
_URI_FRAGMENT = 64


def _pct_encoded() -> Node:
    return seq(lit("%"), HEX_DIGIT, HEX_DIGIT)


def _uri_char(*extra: tuple[int, int]) -> Node:
    """An unreserved or sub-delimiter character, one of `extra`, or a %XX escape."""
    return alt(chars(*_UNRESERVED, *_SUB_DELIMS, *extra), _pct_encoded())


# Paths are flat character runs: ("/" segment)* is the same language as "/" (pchar | "/")*,
# and one bounded repeat compiles far smaller than segments nested in a repeat.
_PCHAR = (_COLON, _AT)
_PATH_CHAR = (_COLON, _AT, (0x2F, 0x2F))
_QUERY_CHAR = (_COLON, _AT, (0x2F, 0x2F), (0x3F, 0x3F))


def _authority() -> Node:
    """[userinfo@]host[:port] with a host name, an IPv4 address or an IPv6 literal in brackets;
    or empty, as in `file:///etc/hosts`."""
    userinfo = seq(Repeat(_uri_char(_COLON), 1, _URI_USERINFO), lit("@"))
    host = alt(hostname_node(), ipv4_node(), seq(lit("["), ipv6_node(), lit("]")))
    port = seq(lit(":"), Repeat(DIGIT, 1, _URI_PORT_DIGITS))
    return alt(seq(optional(userinfo), host, optional(port)), EMPTY)


def _network_path() -> Node:
    """`//authority` then path-abempty: empty or `/` and up to _URI_PATH characters in all."""
    return seq(lit("//"), _authority(), optional(seq(lit("/"), Repeat(_uri_char(*_PATH_CHAR), 0, _URI_PATH - 1))))


def _rootless_path() -> Node:
    """path-rootless: a non-empty first segment, then segments and slashes."""
    return seq(_uri_char(*_PCHAR), Repeat(_uri_char(*_PATH_CHAR), 0, _URI_PATH - 1))


def _query_fragment() -> Node:
    query = seq(lit("?"), Repeat(_uri_char(*_QUERY_CHAR), 0, _URI_QUERY))
    fragment = seq(lit("#"), Repeat(_uri_char(*_QUERY_CHAR), 0, _URI_FRAGMENT))
    return seq(optional(query), optional(fragment))


def _scheme() -> Node:
    return seq(chars((0x41, 0x5A), (0x61, 0x7A)), Repeat(chars((0x2B, 0x2B), *_UNRESERVED[:4]), 0, _URI_SCHEME_MORE))


def uri_node() -> Node:
    """Absolute URIs (RFC 3986): `scheme:` then either `//authority` and an optional absolute
    path (`https://user@example.com:8080/a/b`), or a rootless path (`mailto:a@example.com`,
    `urn:isbn:0451450523`); then an optional `?query` and `#fragment`.

    Subset: the host is a `hostname`, an `ipv4` address, a bracketed `ipv6` literal, or empty (with no userinfo
    or port, as in `file:///etc/hosts`); IPvFuture and percent-encoded or sub-delimiter host
    names are left out, as are path-absolute forms without an authority (`file:/x`) and empty
    paths without one (`about:`). Each part uses the characters RFC 3986 allows unencoded
    there, plus %XX escapes. Lengths are capped so the automaton stays small: scheme 16,
    userinfo 32, port 5 digits, path 128 (slashes included), query 128, fragment 64."""
    return seq(_scheme(), lit(":"), alt(_network_path(), _rootless_path()), _query_fragment())


def uri_reference_node() -> Node:
    """A URI (see `uri`) or a relative reference: `//authority/path`, an absolute path
    (`/a/b`), a relative path whose first segment has no colon (`a/b`, `../x`) or an empty
    path, each followed by an optional `?query` and `#fragment` (so `?page=2`, `#top` and the
    empty string are references too). Same parts and caps as `uri`; a relative path's first
    segment has at most 64 characters."""
    network = _network_path()  # shared by both branches: compiled once per continuation
    rootless = _rootless_path()
    no_scheme = seq(
        Repeat(_uri_char(_AT), 1, _URI_FIRST_SEGMENT),
        optional(seq(lit("/"), Repeat(_uri_char(*_PATH_CHAR), 0, _URI_PATH - 1))),
    )
    relative = alt(network, seq(lit("/"), optional(rootless)), no_scheme, EMPTY)
    return seq(alt(seq(_scheme(), lit(":"), alt(network, rootless)), relative), _query_fragment())


_DURATION_DIGITS = 9


def duration_node() -> Node:
    """RFC 3339 Appendix A durations (the grammar JSON Schema cites), integers only:
    `P` then a date part `nY[nM[nD]]`, `nM[nD]` or `nD`, optionally followed by a time part;
    or `P` and a time part alone (`PT30M`); or weeks alone (`P2W`). The time part is `T` then
    `nH[nM[nS]]`, `nM[nS]` or `nS`. Numbers have 1-9 digits.

    Grammar-wise a subset of what isoduration parses (it also takes fractions, signs, and
    skipped units such as `P1Y3D`), and every form ends with a designator, as jsonschema also
    requires."""
    number = Repeat(DIGIT, 1, _DURATION_DIGITS)

    def unit(letter: str) -> Node:
        return seq(number, lit(letter))

    second = unit("S")
    minute = seq(unit("M"), optional(second))
    hour = seq(unit("H"), optional(minute))
    time = seq(lit("T"), alt(hour, minute, second))
    day = unit("D")
    month = seq(unit("M"), optional(day))
    year = seq(unit("Y"), optional(month))
    date = seq(alt(year, month, day), optional(time))
    return seq(lit("P"), alt(date, time, unit("W")))


def _once(build: Callable[[], Node]) -> Callable[[], Node]:
    """`build`, made once per process: a format's tree never changes, so every compilation
    shares it, and what is measured on its nodes (lengths, shortest matches, floors) is
    measured once instead of in every schema that names the format."""
    return functools.cache(build)


# JSON Pointer (RFC 6901) reference tokens: characters but `/` and `~`, or `~0` and `~1`; kept to
# printable ASCII without quote or backslash (a subset), at most 8 tokens of 32 characters.
_POINTER_CHAR = alt(char_set("".join(chr(c) for c in range(0x20, 0x7F) if chr(c) not in '/~"\\')), lit("~0"), lit("~1"))


def json_pointer_node() -> Node:
    """RFC 6901 JSON Pointers: `/`-prefixed reference tokens (`/a/b~1c/0`), or the empty string."""
    return Repeat(seq(lit("/"), Repeat(_POINTER_CHAR, 0, 32)), 0, 8)


def relative_json_pointer_node() -> Node:
    """Relative JSON Pointers (draft-handrews-relative-json-pointer-01): a non-negative integer
    without leading zeros, then `#` or a JSON Pointer (`0`, `1/a`, `20#`). The integer has at
    most 6 digits and a zero only as its last: jsonschema's checker rejects any digit after a 0."""
    number = alt(lit("0"), seq(Repeat(chars((0x31, 0x39)), 1, 5), optional(lit("0"))))
    return seq(number, alt(lit("#"), json_pointer_node()))


# Characters a regular expression takes as themselves, outside a class and inside one: printable
# ASCII but the metacharacters (and, in a class, what Python warns may become set operations).
_REGEX_LITERAL = char_set("".join(chr(c) for c in range(0x20, 0x7F) if chr(c) not in "\\^$.|?*+()[]{}"))
_CLASS_LITERAL = char_set("".join(chr(c) for c in range(0x20, 0x7F) if chr(c) not in "\\^[]-&~|"))
_REGEX_GROUP_DEPTH = 2


def regex_node() -> Node:
    """Regular expressions both ECMA-262 (without the `u` flag) and Python's `re` compile, as
    JSON Schema's `regex` format names ECMA-262's and jsonschema's checker compiles with `re`:
    a subset of printable ASCII. Branches joined by `|` of literals, escaped metacharacters and
    class escapes (`\\.`, `\\d`), `.`, classes (`[^a-z_-]`: literal characters, class escapes
    and the ranges a-z, a-f, A-Z, A-F and 0-9, a `-` last) and groups (`(...)`, `(?:...)`, at
    most two deep), each with at most one quantifier (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}` with
    single digits n <= m); `^` may open and `$` close the whole. Its text holds backslashes:
    written through a machine (core/schema/build/strings.py), which escapes them for JSON."""
    escaped = seq(lit("\\"), char_set("\\^$.|?*+()[]{}/-dDwWsSnrt"))
    class_escape = seq(lit("\\"), char_set("dDwWsS\\]-[^."))
    ranges = alt(*(lit(text) for text in ("a-z", "a-f", "A-Z", "A-F", "0-9")))
    member = alt(_CLASS_LITERAL, class_escape, ranges)
    klass = seq(lit("["), optional(lit("^")), Repeat(member, 1, None), optional(lit("-")), lit("]"))
    counts = [f"{{{low},{high}}}" for low in range(10) for high in range(low, 10)]
    counts += [f"{{{low}}}" for low in range(10)] + [f"{{{low},}}" for low in range(10)]
    quantifier = alt(char_set("*+?"), *(lit(text) for text in counts))
    atoms: list[Node] = [_REGEX_LITERAL, escaped, lit("."), klass]
    alternation: Node = EMPTY
    for _ in range(_REGEX_GROUP_DEPTH + 1):
        piece = seq(alt(*atoms), optional(quantifier))
        branch = Repeat(piece, 0, None)
        alternation = seq(branch, Repeat(seq(lit("|"), branch), 0, None))
        atoms = [_REGEX_LITERAL, escaped, lit("."), klass, seq(lit("("), optional(lit("?:")), alternation, lit(")"))]
    return seq(optional(lit("^")), alternation, optional(lit("$")))


# Shorter subsets used when a maxLength is below the full tree's longest string, so the length
# bound holds by construction instead of by a (much larger) product automaton.
_BUILDS: dict[Callable[[], Node], Callable[[], Node]] = {}


def _shared(build: Callable[[], Node]) -> Callable[[], Node]:
    """`_once(build)`, one per builder, so formats built by the same function (uri and iri)
    share one tree as well."""
    return _BUILDS.setdefault(build, _once(build))


COMPACT_FORMATS = {"email": _shared(compact_email_node), "idn-email": _shared(compact_email_node)}

FORMATS = {
    name: _shared(build)
    for name, build in {
        "date": date_node,
        "date-time": date_time_node,
        "time": time_node,
        "uuid": uuid_node,
        "ipv4": ipv4_node,
        "email": email_node,
        "hostname": hostname_node,
        "idn-hostname": idn_hostname_node,
        "ipv6": ipv6_node,
        "uri": uri_node,
        "uri-reference": uri_reference_node,
        "duration": duration_node,
        "regex": regex_node,
        # Every URI is an IRI (RFC 3987) and every ASCII mailbox an internationalized one (RFC 6531):
        # their subsets are generated from the ASCII formats'.
        "iri": uri_node,
        "iri-reference": uri_reference_node,
        "idn-email": email_node,
        "json-pointer": json_pointer_node,
        "relative-json-pointer": relative_json_pointer_node,
    }.items()
}
# Formats whose text holds characters JSON escapes (backslashes): built as a machine over
# characters, never written as raw bytes.
ESCAPED_FORMATS = frozenset({"regex"})

# What each inexact format's subset leaves out, for refusals where the subset, not the schema,
# leaves no string (`format: email` with `maxLength: 3`). date, ipv4 and uuid are exact.
SUBSETS = {
    "email": "RFC 5321 local@domain.tld, the local part a dot-atom of letters, digits and %+-_",
    "hostname": "dot-separated ASCII letter-digit-hyphen labels, the last starting with a letter, no trailing dot",
    "idn-hostname": "ASCII host names only: dot-separated letter-digit-hyphen labels, the last starting with a letter",
    "ipv6": "RFC 4291 text forms without zone ids",
    "uri": "scheme, host name, IPv4 address or bracketed IPv6, plain path, query and fragment",
    "uri-reference": "URIs and relative references without unusual characters",
    "duration": "whole-number durations",
    "date-time": "upper-case T and Z, no leap second",
    "time": "upper-case Z, no leap second",
    "iri": "URIs of the uri subset",
    "iri-reference": "URI references of the uri-reference subset",
    "idn-email": "ASCII addresses of the email subset",
    "json-pointer": "printable ASCII tokens without quote or backslash, at most 8 of 32 characters",
    "relative-json-pointer": "a number of at most 6 digits, 0 only last, then # or a pointer of the json-pointer subset",
    "regex": "printable ASCII expressions of literals, escapes, classes, groups two deep and one quantifier per atom",
}
