"""Format trees are sound: every string they describe passes jsonschema's format checkers.

Strings are drawn from each tree by a seeded random walk (biased toward the ends of repeat
counts and character ranges) and from the compiled byte automaton; each must be accepted by
every draft's FORMAT_CHECKER that defines the format. Spot checks show that realistic
values are in each tree's language (via a translation of the tree into a Python regex).
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import random
import re
import shutil
import subprocess
from collections.abc import Callable

import jsonschema
import pytest
from jsonschema import FormatChecker

from gguf_extract.core.automaton.dfa import DEAD, LazyDFA
from gguf_extract.core.automaton.nfa import build_nfa
from gguf_extract.core.automaton.regex import Alt, Chars, Lit, Node, Repeat, Seq
from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.index.compiled import compile_automaton
from gguf_extract.core.schema.lexical.formats import ESCAPED_FORMATS, FORMATS

SAMPLES_PER_FORMAT = 2_000
AUTOMATON_SAMPLES_PER_FORMAT = 150

DRAFTS: dict[str, FormatChecker] = {
    "draft4": jsonschema.Draft4Validator.FORMAT_CHECKER,
    "draft6": jsonschema.Draft6Validator.FORMAT_CHECKER,
    "draft7": jsonschema.Draft7Validator.FORMAT_CHECKER,
    "draft2019-09": jsonschema.Draft201909Validator.FORMAT_CHECKER,
    "draft2020-12": jsonschema.Draft202012Validator.FORMAT_CHECKER,
}
_ALL = tuple(DRAFTS)
_FROM_6 = ("draft6", "draft7", "draft2019-09", "draft2020-12")
_FROM_7 = ("draft7", "draft2019-09", "draft2020-12")
_FROM_2019 = ("draft2019-09", "draft2020-12")

# Per format: the drafts whose checker must know it, the module jsonschema needs to check it
# (None: the standard library), and a value that checker rejects (proof the check is live).
CHECKS: dict[str, tuple[tuple[str, ...], str | None, str]] = {
    "date": (_FROM_7, None, "2023-02-29"),
    "time": (_FROM_7, "rfc3339_validator", "25:00:00Z"),
    "date-time": (_ALL, "rfc3339_validator", "2024-13-01T00:00:00Z"),
    "uuid": (_FROM_2019, None, "not-a-uuid"),
    "ipv4": (_ALL, None, "256.1.1.1"),
    "email": (_ALL, None, "no at sign"),
    "hostname": (_ALL, "fqdn", "-bad-.example.com"),
    "idn-hostname": (_FROM_7, "idna", "ab--cd.example.com"),
    "ipv6": (_ALL, None, "1:2:3:4:5:6:7:8:9"),
    "uri": (_ALL, "rfc3987", "not a uri"),
    "uri-reference": (_FROM_6, "rfc3987", "not a uri reference"),
    "duration": (_FROM_2019, "isoduration", "P1"),
    "regex": (_ALL, None, "(unclosed"),
    "iri": (_FROM_7, "rfc3987", "not an iri"),
    "iri-reference": (_FROM_7, "rfc3987", "not an iri reference"),
    "idn-email": (_FROM_7, None, "no at sign"),
    "json-pointer": (_FROM_6, "jsonpointer", "no/leading/slash"),
    "relative-json-pointer": (_FROM_7, "jsonpointer", "01/a"),
}

# Values a writer would naturally produce, each of which must be in the tree's language.
REALISTIC: dict[str, list[str]] = {
    "date": ["2024-02-29", "1999-12-31", "0001-01-01"],
    "time": ["09:30:00Z", "23:59:59.123+02:00", "00:00:00-05:30"],
    "date-time": ["2024-06-14T09:30:00+02:00", "2000-02-29T00:00:00.5Z"],
    "uuid": ["123e4567-e89b-12d3-a456-426614174000", "A987FBC9-4BED-3078-CF07-9141BA07C9F3"],
    "ipv4": ["192.168.0.1", "0.0.0.0", "255.255.255.255", "10.0.42.7"],
    "email": ["john.doe@example.com", "a+tag@mail.example.co.uk", "x_y%z@host-1.org", "j.r.r.tolkien@example.com"],
    "hostname": ["example.com", "api.example.co.uk", "localhost", "my-host-01", "3com.com", "a" * 63 + ".com"],
    "idn-hostname": ["example.com", "www.xn-a.org", "sub.domain.example"],
    "ipv6": [
        "2001:db8::1",
        "::1",
        "::",
        "fe80::1ff:fe23:4567:890a",
        "2001:0db8:85a3:0000:0000:8a2e:0370:7334",
        "1:2:3:4:5:6:7::",
        "::ffff:192.0.2.128",
        "64:ff9b::192.0.2.33",
        "FE80::ABCD",
    ],
    "uri": [
        "https://example.com",
        "https://example.com/",
        "https://example.com/a/b?x=1#f",
        "http://localhost:8080/api/v1/users?id=42&sort=desc",
        "ftp://user:pass@ftp.example.org/pub/file.tar.gz",
        "http://[2001:db8::1]:443/",
        "http://192.168.0.1:8080/status",
        "mailto:john.doe@example.com",
        "urn:isbn:0451450523",
        "urn:uuid:123e4567-e89b-12d3-a456-426614174000",
        "tel:+1-555-0100",
        "https://en.wikipedia.org/wiki/Caf%C3%A9",
        "file:///etc/hosts",
        "git+ssh://git@github.com/owner/repo.git",
    ],
    "uri-reference": [
        "https://example.com/a/b?x=1#f",
        "/a/b",
        "a/b",
        "../up/one.html",
        "?page=2",
        "#section-1",
        "",
        "//cdn.example.com/lib.js",
        "images/logo.png",
        "mailto:someone@example.com",
    ],
    "duration": ["P3D", "PT1H30M", "P1Y2M3DT4H5M6S", "P2W", "PT30S", "P1M", "PT36H", "P1Y", "P0D"],
    "iri": ["https://example.com/a/b?x=1#f", "urn:isbn:0451450523", "mailto:john.doe@example.com"],
    "iri-reference": ["/a/b", "../up/one.html", "#section-1", "", "https://example.com/"],
    "idn-email": ["john.doe@example.com", "a+tag@mail.example.co.uk"],
    "json-pointer": ["", "/a", "/a/b~1c/0", "/", "/~0tilde", "/definitions/item"],
    "relative-json-pointer": ["0", "1/a", "2#", "0/b/c", "10"],
    "regex": ["^[a-z]+$", "\\d{3}-\\d{4}", "(foo|bar)", "^https?://", ".*\\.json$", "^[A-Za-z0-9_-]+$", "", "[^\\s]+"],
}

# Values the checkers reject, which the trees must therefore reject (the translation works).
INVALID: dict[str, list[str]] = {
    "hostname": ["-a.com", "a-.com", "a..b", "a" * 64 + ".com", "a_b.com", ""],
    "ipv6": ["1:2:3:4:5:6:7:8:9", "1::2::3", "12345::", ":1", "1:2:3:4:5:6:7::8", "fe80::1%eth0"],
    "uri": ["not a uri", "example.com", "//example.com", "https://exa mple.com", "http://x.com/%zz"],
    "uri-reference": ["a b", "%", "http://x.com/<", "1a:b/c d"],
    "duration": ["P", "PT", "P1", "1D", "P1DT", "PT1D", "P1W2D"],
    "json-pointer": ["a", "/~2", "/a~"],
    "relative-json-pointer": ["", "01", "-1/a", "#", "1a"],
    "regex": ["(", "[a", "a{2,1}", "*a", "a)", "\\"],
}


def _module_or_skip(name: str | None) -> None:
    if name is not None and importlib.util.find_spec(name) is None:
        pytest.skip(f"{name} is not installed, so jsonschema does not check this format (pip install 'jsonschema[format]')")


def _live_checkers(name: str) -> list[tuple[str, FormatChecker]]:
    """The drafts defining format `name`, after proving each one's check is really active."""
    drafts, module, invalid = CHECKS[name]
    _module_or_skip(module)
    for draft in drafts:
        checker = DRAFTS[draft]
        assert name in checker.checkers, f"{draft}'s format checker does not know {name!r}"
        assert not checker.conforms(invalid, name), f"{draft}'s {name!r} check accepts {invalid!r}: it is not active"
    return [(draft, DRAFTS[draft]) for draft in drafts]


# ---------------------------------------------------------------------------------------------
# Tree utilities: a random sampler and a translation into Python regex syntax.


def _repeat_count(node: Repeat, rng: random.Random) -> int:
    high = node.high if node.high is not None else node.low + 8
    roll = rng.random()
    if roll < 0.3:
        return node.low
    if roll < 0.55:
        return high
    if roll < 0.75:
        return rng.randint(node.low, min(high, node.low + 2))
    return rng.randint(node.low, high)


def _code_point(node: Chars, rng: random.Random) -> int:
    low, high = node.ranges[rng.randrange(len(node.ranges))]
    roll = rng.random()
    if roll < 0.2:
        return low
    if roll < 0.4:
        return high
    return rng.randint(low, high)


def sample(node: Node, rng: random.Random) -> str:
    """A random string of `node`'s language."""
    out: list[str] = []

    def walk(current: Node) -> None:
        if isinstance(current, Lit):
            out.append(current.data.decode("utf-8"))
        elif isinstance(current, Chars):
            out.append(chr(_code_point(current, rng)))
        elif isinstance(current, Seq):
            for part in current.parts:
                walk(part)
        elif isinstance(current, Alt):
            walk(current.options[rng.randrange(len(current.options))])
        elif isinstance(current, Repeat):
            for _ in range(_repeat_count(current, rng)):
                walk(current.item)
        else:
            raise TypeError(f"formats never contain {type(current).__name__}")

    walk(node)
    return "".join(out)


def _class_char(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def to_regex(node: Node) -> str:
    """`node` in Python regex syntax (non-capturing groups only)."""
    if isinstance(node, Lit):
        return re.escape(node.data.decode("utf-8"))
    if isinstance(node, Chars):
        return "[" + "".join(_class_char(a) if a == b else f"{_class_char(a)}-{_class_char(b)}" for a, b in node.ranges) + "]"
    if isinstance(node, Seq):
        return "".join(f"(?:{to_regex(part)})" for part in node.parts)
    if isinstance(node, Alt):
        return "(?:" + "|".join(to_regex(option) for option in node.options) + ")" if node.options else "(?!)"
    if isinstance(node, Repeat):
        high = "" if node.high is None else str(node.high)
        return f"(?:{to_regex(node.item)}){{{node.low},{high}}}"
    raise TypeError(f"formats never contain {type(node).__name__}")


def _matcher(name: str) -> Callable[[str], bool]:
    pattern = re.compile(to_regex(FORMATS[name]()), re.DOTALL)
    return lambda text: pattern.fullmatch(text) is not None


def _leaves(node: Node) -> list[Lit | Chars]:
    found: list[Lit | Chars] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Lit | Chars):
            found.append(current)
        elif isinstance(current, Seq):
            stack.extend(current.parts)
        elif isinstance(current, Alt):
            stack.extend(current.options)
        elif isinstance(current, Repeat):
            stack.append(current.item)
        else:
            raise TypeError(f"formats never contain {type(current).__name__}")
    return found


# ---------------------------------------------------------------------------------------------


def test_every_format_has_checks_and_examples() -> None:
    assert set(CHECKS) == set(FORMATS)
    assert set(REALISTIC) == set(FORMATS)
    assert {"hostname", "ipv6", "uri", "uri-reference", "duration"} <= set(FORMATS)


def test_checker_activity_is_detected() -> None:
    # The guard itself works: a format no draft knows is accepted by every checker.
    for checker in DRAFTS.values():
        assert checker.conforms("anything at all", "no-such-format")
    _live_checkers("uri")


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_formats_are_ascii_without_quote_or_backslash(name: str) -> None:
    # Those that need them (a regex's backslashes) are written through a machine, with escapes.
    escaped = name in ESCAPED_FORMATS
    for leaf in _leaves(FORMATS[name]()):
        if isinstance(leaf, Lit):
            assert leaf.data.isascii() and (escaped or (b'"' not in leaf.data and b"\\" not in leaf.data)), leaf
        else:
            for low, high in leaf.ranges:
                assert 0x20 <= low <= high < 0x7F, leaf
                assert escaped or (not low <= 0x22 <= high and not low <= 0x5C <= high), leaf


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_sampled_strings_pass_every_drafts_checker(name: str) -> None:
    checkers = _live_checkers(name)
    tree = FORMATS[name]()
    in_language = _matcher(name)
    rng = random.Random(f"formats/{name}")
    seen: set[str] = set()
    for _ in range(SAMPLES_PER_FORMAT):
        text = sample(tree, rng)
        assert in_language(text), f"sampler and regex translation disagree on {text!r}"
        if text in seen:
            continue
        seen.add(text)
        for draft, checker in checkers:
            assert checker.conforms(text, name), f"{draft} rejects {name} {text!r}"
    assert len(seen) > SAMPLES_PER_FORMAT // 4, f"only {len(seen)} distinct {name} samples"


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_automaton_samples_pass_every_drafts_checker(name: str) -> None:
    """The compiled byte automaton (not just the tree) emits only valid values."""
    checkers = _live_checkers(name)
    nfa = build_nfa(FORMATS[name]())
    dfa = LazyDFA(nfa)
    rng = random.Random(f"automaton/{name}")
    for _ in range(AUTOMATON_SAMPLES_PER_FORMAT):
        text = sample_accepted(dfa, rng).decode("utf-8")
        for draft, checker in checkers:
            assert checker.conforms(text, name), f"{draft} rejects automaton-sampled {name} {text!r}"
    assert nfa.size < 10_000, f"sampling {name} built {nfa.size} NFA states"


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_realistic_values_are_in_the_language(name: str) -> None:
    in_language = _matcher(name)
    dfa = LazyDFA(build_nfa(FORMATS[name]()))
    for text in REALISTIC[name]:
        assert in_language(text), f"{text!r} should be a {name}"
        state = dfa.walk(dfa.start, text.encode())
        assert state != DEAD and dfa.is_accepting(state), f"the {name} automaton rejects {text!r}"
    checkers = _live_checkers(name)
    for text in REALISTIC[name]:
        for draft, checker in checkers:
            assert checker.conforms(text, name), f"example {text!r} is not a {name} for {draft}"


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_values_are_outside_the_language(name: str) -> None:
    in_language = _matcher(name)
    checkers = _live_checkers(name)
    for text in INVALID[name]:
        assert not in_language(text), f"{text!r} should not be a {name}"
        assert not all(checker.conforms(text, name) for _, checker in checkers), f"{text!r} is valid after all"


@pytest.mark.parametrize(
    ("name", "alphabet", "longest"),
    [
        ("hostname", "a0-.", 7),
        ("idn-hostname", "a0-.", 7),
        ("ipv6", "1f:", 9),
        ("uri", "a1:/?#%@", 6),
        ("uri-reference", "a1:/?#%@.", 5),
        ("duration", "P1TYMWDHS", 6),
    ],
)
def test_every_short_string_in_the_language_passes(name: str, alphabet: str, longest: int) -> None:
    """Exhaustive over short strings of a telling alphabet: the corner cases a sampler may miss."""
    checkers = _live_checkers(name)
    in_language = _matcher(name)
    found = 0
    for length in range(longest + 1):
        for letters in itertools.product(alphabet, repeat=length):
            text = "".join(letters)
            if in_language(text):
                found += 1
                for draft, checker in checkers:
                    assert checker.conforms(text, name), f"{draft} rejects {name} {text!r}"
    assert found > 20


def test_hostname_length_limits_are_reached_but_not_exceeded() -> None:
    in_language = _matcher("hostname")
    longest = ".".join(["a" * 63] + ["b" * 37] * 5)
    assert len(longest) == 253 and in_language(longest)
    assert not in_language(longest + "c")
    assert not in_language(".".join(["a"] * 7))  # at most six labels


def test_idn_hostname_leaves_out_reserved_hyphen_labels() -> None:
    # fqdn accepts `ab--c`, idna does not: neither tree produces it.
    in_language = _matcher("idn-hostname")
    assert not in_language("ab--c.example.com") and not in_language("xn--nxasmq6b.com")
    assert in_language("a--b.example.com") and in_language("ab-c-d.example.com")


@pytest.mark.skipif(shutil.which("node") is None, reason="no node.js to compile ECMA-262 regular expressions with")
def test_regex_samples_compile_as_ecma_262() -> None:
    """The `regex` format's strings compile in ECMA-262 itself (node's RegExp, without the `u`
    flag), beside Python's `re`."""
    dfa = LazyDFA(build_nfa(FORMATS["regex"]()))
    rng = random.Random("regex/ecma")
    texts = sorted({sample_accepted(dfa, rng).decode("utf-8") for _ in range(300)})
    script = "const t=JSON.parse(require('fs').readFileSync(0,'utf8'));"
    script += "console.log(JSON.stringify(t.filter(s=>{try{new RegExp(s);return false}catch(e){return true}})))"
    found = subprocess.run(["node", "-e", script], input=json.dumps(texts), capture_output=True, text=True, check=True)
    assert json.loads(found.stdout) == []
    for text in texts:
        re.compile(text)


def test_a_formats_machine_is_built_once_for_the_schemas_that_search_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # A format beside a pattern is their machines' intersection (a uri's machine takes tens of
    # milliseconds to build): the second such schema starts from the machine the first built.
    import gguf_extract.core.schema.build.strings as strings

    built: list[object] = []
    original = strings.machine_from_tree

    def counted(node: Node) -> object:
        built.append(node)
        return original(node)

    monkeypatch.setattr(strings, "machine_from_tree", counted)
    first = compile_automaton({"type": "string", "format": "uri", "pattern": "^https?://"})
    after_first = len(built)
    second = compile_automaton({"type": "string", "format": "uri", "pattern": "^https://"})
    assert FORMATS["uri"]() not in built[after_first:]
    for automaton, text, valid in ((first, '"http://example.org/a"', True), (second, '"http://example.org/b"', False)):
        assert automaton.dfa.is_accepting(automaton.dfa.walk(automaton.dfa.start, text.encode())) is valid
