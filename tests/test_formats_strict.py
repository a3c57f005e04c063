"""Format subsets hold to their RFC grammars, not only to jsonschema's (sometimes lenient) checkers.

Property tests: hypothesis walks each format's compiled byte automaton (every step a drawn
choice among the allowed bytes, so failures shrink to short strings) and each format's tree,
and every string must pass the strict checker of tests/strict_formats.py, written from the
RFC's ABNF. Spot checks prove each strict checker is live: it rejects what the RFC rejects.
"""

from __future__ import annotations

import random
from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strict_formats import STRICT
from test_formats import REALISTIC, sample

from gguf_extract.core.automaton.dfa import DEAD, LazyDFA
from gguf_extract.core.automaton.nfa import build_nfa
from gguf_extract.core.schema.lexical.formats import COMPACT_FORMATS, FORMATS

EXAMPLES = 300
SOFT_LIMIT = 300  # bytes drawn freely; then the walk heads for the nearest accepting state

# Per format, strings the RFC grammar rejects: each strict checker must reject them (it is
# live), and so must the format's automaton (these are the leniencies of jsonschema's checkers
# the subsets must not share).
RFC_INVALID: dict[str, list[str]] = {
    "date": ["2023-02-29", "1900-02-29", "2024-04-31", "2024-13-01", "2024-00-10", "2024-1-01", "24-01-01"],
    "time": ["24:00:00Z", "12:60:00Z", "12:00:61Z", "12:00:60Z", "12:00:00", "12:00:00+2:00", "12:00:00.Z"],
    "date-time": ["2024-02-30T00:00:00Z", "2024-01-01 00:00:00Z", "2024-01-01T00:00:00+24:00", "2024-01-01T23:59:60+01:00"],
    "duration": ["P", "PT", "P1", "P1DT", "PT1D", "P1W2D", "P1Y3D", "P1.5D", "-P1D", "P1H"],
    "email": [
        ".a@example.com",
        "a.@example.com",
        "a..b@example.com",
        "a@b@example.com",
        "a@example-.com",
        "a@-example.com",
        "a@example..com",
        "a b@example.com",
        "a@",
        "@example.com",
        "x" * 65 + "@example.com",
        "a@" + ".".join(["b" * 63] * 4) + ".com",
    ],
    "hostname": ["-a.com", "a-.com", "a..b", "a" * 64 + ".com", "a_b.com", "", "example.com.", "192.168.0.1", "1.2.3", "123"],
    "idn-hostname": ["ab--cd.example.com", "xn--zz.com", "a-.com", "192.168.0.1"],
    "ipv4": ["256.1.1.1", "01.2.3.4", "1.2.3", "1.2.3.4.5", "1.2.3.04"],
    "ipv6": ["1:2:3:4:5:6:7:8:9", "1::2::3", "12345::", ":1", "1:2:3:4:5:6:7::8", "fe80::1%eth0", "1:2:3:4:5:6:7", "::01.2.3.4"],
    "uri": ["not a uri", "example.com", "//example.com", "https://exa mple.com", "http://x.com/%zz", "1http://a.com", "a:b\n"],
    "uri-reference": ["a b", "%", "http://x.com/<", "1a:b/c d", "a#b#c"],
    "uuid": ["123e4567-e89b-12d3-a456-42661417400", "123e4567e89b12d3a456426614174000", "g23e4567-e89b-12d3-a456-426614174000"],
    "iri": ["not an iri", "example.com", "//example.com", "https://exa mple.com", "http://x.com/%zz"],
    "iri-reference": ["a b", "%", "http://x.com/<", "a#b#c"],
    "idn-email": [".a@example.com", "a..b@example.com", "a@b@example.com", "a@"],
    "json-pointer": ["a", "/~2", "/a~", "a/b"],
    "relative-json-pointer": ["", "01", "-1/a", "#", "1a", "0##"],
    "regex": ["(", "[a", "a{2,1}", "*a", "a)", "\\", "(?<n>a)", "a{,2}", "(?=a)"],
}

# Strings the RFC grammar accepts, including forms the subsets never generate: the checkers
# are no stricter than the RFCs (`time` leap seconds, lower-case `t`, quoted local parts ...).
RFC_VALID: dict[str, list[str]] = {
    "date": ["2024-02-29", "2000-02-29", "0000-02-29", "9999-12-31"],
    "time": ["23:59:60Z", "00:59:60+01:00", "12:00:00.123456789z", "12:00:00-00:00"],
    "date-time": ["1990-12-31T23:59:60Z", "1990-12-31t15:59:60-08:00", "2024-06-14T09:30:00+02:00"],
    "duration": ["P3D", "PT1H30M", "P1Y2M3DT4H5M6S", "P2W", "PT36H", "P0D", "P1M", "PT1M"],
    "email": ["john.doe@example.com", "a+tag@mail.example.co.uk", '"a b"@example.com', "a@[192.0.2.1]", "x@[IPv6:2001:db8::1]"],
    "hostname": ["example.com", "localhost", "3com.com", "a" * 63 + ".com", "my-host-01", "1-2"],
    "idn-hostname": ["example.com", "xn--nxasmq6b.com", "bücher.example"],
    "ipv4": ["0.0.0.0", "255.255.255.255", "192.168.0.1"],
    "ipv6": ["::", "::1", "1:2:3:4:5:6:7::", "::ffff:192.0.2.1", "2001:0db8:85a3:0000:0000:8a2e:0370:7334"],
    "uri": ["https://example.com", "about:", "file:/x", "urn:isbn:0451450523", "http://[v1.x]/"],
    "uri-reference": ["", "#top", "?page=2", "../a", "//host"],
    "uuid": ["00000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"],
    "iri": ["https://example.com", "urn:isbn:0451450523", "http://b\u00fccher.example/\u00e9"],
    "iri-reference": ["", "#top", "../a", "//host/caf\u00e9"],
    "idn-email": ["john.doe@example.com", "a+tag@mail.example.co.uk"],
    "json-pointer": ["", "/", "/a~0b~1c", "/caf\u00e9/0"],
    "relative-json-pointer": ["0", "0#", "12/a", "3"],
    "regex": ["", "^a$", "[a-z]+", "(foo|bar)*", "\\d{2,}", "caf\u00e9"],
}


@cache
def _dfa(name: str, compact: bool = False) -> LazyDFA:
    tree = COMPACT_FORMATS[name]() if compact else FORMATS[name]()
    return LazyDFA(build_nfa(tree))


@st.composite
def accepted_text(draw: st.DrawFn, dfa: LazyDFA) -> str:
    """A string `dfa` accepts, each byte a drawn choice (stopping where accepting is one)."""
    state, out = dfa.start, bytearray()
    while True:
        row = dfa.row(state)
        allowed = np.flatnonzero(row)
        allowed = allowed[dfa.distance_array[row[allowed]] >= 0]
        if dfa.is_accepting(state) and (len(allowed) == 0 or len(out) >= SOFT_LIMIT or not draw(st.booleans())):
            return out.decode("utf-8")
        if len(out) >= SOFT_LIMIT:
            byte = int(allowed[int(np.argmin(dfa.distance_array[row[allowed]]))])
        else:
            byte = int(allowed[draw(st.integers(0, len(allowed) - 1))])
        out.append(byte)
        state = int(row[byte])


def _in_automaton(name: str, text: str) -> bool:
    dfa = _dfa(name)
    state = dfa.walk(dfa.start, text.encode())
    return state != DEAD and dfa.is_accepting(state)


def test_every_format_has_a_strict_checker() -> None:
    assert set(STRICT) == set(FORMATS) == set(RFC_INVALID) == set(RFC_VALID)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_strict_checker_is_live(name: str) -> None:
    checker = STRICT[name]
    for text in RFC_VALID[name]:
        assert checker(text), f"the strict {name} checker rejects {text!r}, which the RFC allows"
    for text in RFC_INVALID[name]:
        assert not checker(text), f"the strict {name} checker accepts {text!r}"


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_automaton_rejects_what_the_rfc_rejects(name: str) -> None:
    for text in RFC_INVALID[name]:
        assert not _in_automaton(name, text), f"format {name} generates {text!r}"


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_realistic_values_pass_the_strict_checker(name: str) -> None:
    for text in REALISTIC[name]:
        assert STRICT[name](text), f"example {name} {text!r} breaks its RFC"


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_automaton_strings_hold_to_the_rfc(name: str) -> None:
    dfa = _dfa(name)

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(accepted_text(dfa))
    def check(text: str) -> None:
        assert STRICT[name](text), f"format {name} generates {text!r}, which its RFC rejects"

    check()


@pytest.mark.parametrize("name", sorted(COMPACT_FORMATS))
def test_compact_automaton_strings_hold_to_the_rfc(name: str) -> None:
    dfa = _dfa(name, compact=True)

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(accepted_text(dfa))
    def check(text: str) -> None:
        assert STRICT[name](text), f"compact format {name} generates {text!r}, which its RFC rejects"

    check()


@pytest.mark.parametrize("name", sorted(FORMATS))
@settings(max_examples=EXAMPLES, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_tree_samples_hold_to_the_rfc(name: str, seed: int) -> None:
    """The tree sampler favours the ends of every repeat and range: longest labels, most
    labels, largest digits, which a byte walk rarely reaches."""
    text = sample(FORMATS[name](), random.Random(seed))
    assert STRICT[name](text), f"format {name} generates {text!r}, which its RFC rejects"
