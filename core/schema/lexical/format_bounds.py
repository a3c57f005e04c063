"""Regular bounds on what each draft's format checker accepts, beyond the subsets generated
(formats.py): a superset of every string a checker may accept, so strings outside it are
surely rejected, and for host names a set every checker surely accepts, wider than the one
generated. They decide whether two string schemas share a value (core/schema/build/strings_overlap.py),
never what is generated.

- ipv4: `ipaddress.IPv4Address` reads ASCII digits and dots only;
- ipv6: `ipaddress.IPv6Address` needs a colon;
- hostname: fqdn's pattern (`[-A-Z\\d]` labels, case-insensitive, `$` before a final newline)
  takes no colon, slash or at sign; it accepts every dot-separated letter-digit-hyphen name of
  labels up to 63 characters that neither start nor end with a hyphen, up to 253 in all
  (numeric ones too, as `1.2.3.4`);
- uri, iri: rfc3987's rules begin with an ASCII scheme and a colon;
- email, idn-email: jsonschema's checker looks for an at sign;
- uuid: `uuid.UUID` drops `urn:`, `uuid:`, braces and hyphens and reads the rest as one
  hexadecimal integer, so no other punctuation passes.
"""

from __future__ import annotations

from ...automaton.regex import Chars, Node, Repeat, alt, char_set, chars, lit, optional, seq
from .char_sets import UNIVERSE, complement, points

_ANY: Node = Repeat(Chars(UNIVERSE), 0, None)
_LETTER_DIGIT = chars((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A))


def _without(excluded: str) -> Node:
    return Repeat(Chars(complement(points(excluded))), 0, None)


def _uri_superset() -> Node:
    scheme = seq(chars((0x41, 0x5A), (0x61, 0x7A)), Repeat(alt(_LETTER_DIGIT, char_set("+.-")), 0, None))
    return seq(scheme, lit(":"), _ANY)


SUPERSETS: dict[str, Node] = {
    "ipv4": Repeat(alt(chars((0x30, 0x39)), lit(".")), 1, None),
    "ipv6": seq(_ANY, lit(":"), _ANY),
    "hostname": _without(":/@"),
    "uri": _uri_superset(),
    "iri": _uri_superset(),
    "email": seq(_ANY, lit("@"), _ANY),
    "idn-email": seq(_ANY, lit("@"), _ANY),
    "uuid": _without("$@/.,;!#%&*()=?[]<>|\\\"'`^~"),
}


def _host_label() -> Node:
    inner = Repeat(alt(_LETTER_DIGIT, lit("-")), 0, 61)
    return seq(_LETTER_DIGIT, optional(seq(inner, _LETTER_DIGIT)))


HOSTNAME_MOST = 253
# Names every checker of `hostname` accepts, when no longer than HOSTNAME_MOST (the caller
# bounds the length: a product with it would be large).
SURELY: dict[str, Node] = {"hostname": seq(Repeat(seq(_host_label(), lit(".")), 0, None), _host_label())}
SURELY_MOST: dict[str, int] = {"hostname": HOSTNAME_MOST}
