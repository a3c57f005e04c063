"""JSON Schema `pattern` to regex tree: every string the tree produces must be accepted by Python's
`re.search` AND by ECMA-262 (checked with node when it is installed); realistic strings stay
producible; constructs where the engines differ are refused with a message naming them."""

from __future__ import annotations

import functools
import json
import random
import re
import shutil
import subprocess
import unicodedata
import warnings
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_extract.core.automaton.regex import Alt, Chars, Lit, Node, Repeat, Seq
from gguf_extract.core.schema.lexical.char_sets import ANY_STAR, BMP, CLASS_ESCAPES, ECMA_SPACE, complement, intersect, normalize
from gguf_extract.core.schema.lexical.pattern import UnsupportedPattern, pattern_tree

Ranges = tuple[tuple[int, int], ...]
NODE = shutil.which("node")

# --- helpers over trees ------------------------------------------------------------------------


def pick_code_point(ranges: Ranges, rng: random.Random) -> int:
    """Range ends and non-ASCII characters are where engines disagree, so favour them."""
    non_ascii = intersect(ranges, ((0x80, 0x10FFFF),))
    pool = non_ascii if non_ascii and rng.random() < 0.3 else ranges
    low, high = rng.choice(pool)
    roll = rng.random()
    if roll < 0.2:
        return low
    if roll < 0.4:
        return high
    return rng.randint(low, high)


def sample(node: Node, rng: random.Random) -> str:
    """One random string of the tree's language."""
    if isinstance(node, Lit):
        return node.data.decode("utf-8")
    if isinstance(node, Chars):
        return chr(pick_code_point(node.ranges, rng))
    if isinstance(node, Seq):
        return "".join(sample(part, rng) for part in node.parts)
    if isinstance(node, Alt):
        return sample(rng.choice(node.options), rng)
    if isinstance(node, Repeat):
        high = node.low + 4 if node.high is None else node.high
        return "".join(sample(node.item, rng) for _ in range(rng.randint(node.low, high)))
    raise TypeError(f"unexpected node {node!r}")


def to_python_regex(node: Node) -> str:
    """The tree as an equivalent Python regex, for membership checks with re.fullmatch."""
    if isinstance(node, Lit):
        return re.escape(node.data.decode("utf-8"))
    if isinstance(node, Chars):
        body = "".join(f"\\U{low:08x}-\\U{high:08x}" for low, high in node.ranges)
        return f"[{body}]" if body else "(?!)"
    if isinstance(node, Seq):
        return "".join(f"(?:{to_python_regex(part)})" for part in node.parts)
    if isinstance(node, Alt):
        return "(?:" + "|".join(to_python_regex(option) for option in node.options) + ")"
    if isinstance(node, Repeat):
        high = "" if node.high is None else str(node.high)
        return f"(?:{to_python_regex(node.item)}){{{node.low},{high}}}"
    raise TypeError(f"unexpected node {node!r}")


def in_language(node: Node, text: str) -> bool:
    return re.fullmatch(to_python_regex(node), text) is not None


def walk(node: Node) -> Iterator[Node]:
    yield node
    children: tuple[Node, ...] = ()
    if isinstance(node, Seq):
        children = node.parts
    elif isinstance(node, Alt):
        children = node.options
    elif isinstance(node, Repeat):
        children = (node.item,)
    for child in children:
        yield from walk(child)


def python_accepts(pattern: str, text: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a FutureWarning would mean the pattern's meaning may change
        return re.search(pattern, text) is not None


def draw(pattern: str, count: int, seed: int = 0) -> list[str]:
    tree = pattern_tree(pattern)
    rng = random.Random(f"{seed}:{pattern}")
    return [sample(tree, rng) for _ in range(count)]


def ranges_of(text: str) -> Ranges:
    """The code points of a string whose characters are in ascending order, as ranges."""
    out: list[tuple[int, int]] = []
    for code in map(ord, text):
        if out and out[-1][1] + 1 == code:
            out[-1] = (out[-1][0], code)
        else:
            out.append((code, code))
    return tuple(out)


def subset(a: Ranges, b: Ranges) -> bool:
    return intersect(normalize(a), normalize(b)) == normalize(a)


# --- node.js as the ECMA-262 engine -----------------------------------------------------------

NODE_BATCH = """
const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const bad = [];
for (const [pattern, strings] of cases) {
  const re = new RegExp(pattern);
  for (const s of strings) if (!re.test(s)) bad.push([pattern, s]);
}
console.log(JSON.stringify(bad));
"""

NODE_CLASSES = """
const out = {};
for (const [name, src] of Object.entries({d: '\\\\d', D: '\\\\D', w: '\\\\w', W: '\\\\W', s: '\\\\s', S: '\\\\S', dot: '.'})) {
  const re = new RegExp('^' + src + '$');
  const hits = [];
  for (let c = 0; c < 0x10000; c++) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    if (re.test(String.fromCharCode(c))) hits.push(c);
  }
  out[name] = hits;
}
console.log(JSON.stringify(out));
"""


def run_node(script: str, stdin: str = "") -> object:
    assert NODE is not None
    done = subprocess.run([NODE, "-e", script], input=stdin, capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)


def node_rejections(cases: list[tuple[str, list[str]]]) -> object:
    """Strings that node's RegExp (ECMA-262, no flags) rejects, as [pattern, string] pairs."""
    return run_node(NODE_BATCH, json.dumps(cases))  # ASCII JSON: astral characters travel as surrogate pairs


# --- patterns with strings that must be producible and strings that must not be -------------

# pattern -> (members, non-members). Non-members are strings at least one engine rejects (or that
# the intersection deliberately leaves out, like astral characters at a single pattern position).
PATTERNS: dict[str, tuple[list[str], list[str]]] = {
    "^[a-z0-9-]+$": (["abc", "a-1", "-"], ["A", ""]),
    "^\\d{3}-\\d{4}$": (["555-1234"], ["555-12345", "\u0665\u0665\u0665-1234"]),
    "[0-9a-fA-F]+": (["deadBEEF", "x0", "zz9zz"], ["xyz"]),
    "^(\\+|00)[1-9][0-9 \\-\\(\\)\\.]{7,32}$": (["+1 (555) 123-4567", "0044 20 7946 0958"], ["+0 123 4567"]),
    "^https?://": (["http://x", "https://example.com/a b"], ["ftp://x"]),
    "^[A-Z]{2}$": (["US", "DE"], ["USA", "us"]),
    "^\\S+@\\S+\\.\\S+$": (["a@b.c", "jörg@example.org"], ["a b@c.d", "a\ufeff@b.c"]),
    "^[^\\s]+$": (["abc", "é"], ["a b", "", "a\x1cb"]),
    "^(?:[01]\\d|2[0-3]):[0-5]\\d$": (["00:00", "23:59", "19:30"], ["24:00", "9:30"]),
    "\\w+": (["a", "--x--"], ["---", "é"]),
    "^\\w+$": (["abc_123"], ["é", "a b"]),
    "^[\\w.-]+$": (["a.b-c_d"], ["a b"]),
    "^.{1,10}$": (["a", "0123456789", "é", "\u2027"], ["😀", "\r", "\u2028", "01234567890"]),
    "a|^b|c$": (["a", "xax", "bxx", "xxc"], ["xb", "cx"]),
    "": (["", "anything", "😀"], []),
    "^$": ([""], ["a"]),
    "x{2,}": (["xx", "axxxb"], ["x"]),
    "[{]": (["{"], ["}"]),
    "a{": (["a{", "ba{c"], ["a"]),
    "^[^,]*$": (["", "abc", "é😀"[:1]], ["a,b"]),
    "\\D+": (["a", "x1"], ["123", "\u0663"]),
    "\\W": ([" ", "a-b"], ["abc", "é"]),
    "\\s\\S": ([" a", "\ta"], ["\x1ca", "\ufeffa", "a"]),
    "[\\s\\S]": (["a", "\n"], [""]),
    "[^\\d]": (["a"], ["5", "\u0663"]),
    "[^\\w\\s]": (["-", "a!"], ["é", "abc", "a b"]),
    "\\.": (["."], ["a"]),
    "\\u00e9+": (["é", "éé"], ["e"]),
    "\\x41": (["A"], ["a"]),
    "[\\b]": (["\b"], ["b"]),
    "\\t\\n\\r\\f\\v\\0": (["\t\n\r\f\v\0"], ["tnrfv0"]),
    "^[a-zA-Z0-9_.-]*$": (["", "a.b_c-9"], ["a/b"]),
    "^(([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\\-]*[a-zA-Z0-9])\\.)*([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9\\-]*[A-Za-z0-9])$": (
        ["example.com", "a", "a-b.c"],
        ["-a", "a..b"],
    ),
    "^#([0-9a-fA-F]{3}){1,2}$": (["#fff", "#A0B1C2"], ["#ffff", "fff"]),
    "^\\d+(\\.\\d+)?$": (["1", "3.14"], ["1.", ".5"]),
    "^v?(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)$": (["1.2.3", "v0.10.0"], ["01.2.3", "1.2"]),
    "^[a-z]([-a-z0-9]*[a-z0-9])?$": (["a", "my-app1"], ["my-app-", "1a"]),
    "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$": (["a.b-c.d"], ["a.-b"]),
    "^[A-Za-z_][A-Za-z0-9_]*$": (["_x1", "Name"], ["1x"]),
    "^[0-9]{4}-[0-9]{2}-[0-9]{2}$": (["2024-02-29"], ["2024-2-29"]),
    "^\\d{5}(-\\d{4})?$": (["12345", "12345-6789"], ["1234"]),
    "^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$": (["john.doe+x@mail.example.org"], ["a@b.c"]),
    "^(\\([0-9]{3}\\))?[0-9]{3}-[0-9]{4}$": (["(555)123-4567", "123-4567"], ["(555 123-4567"]),
    "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$": (["123e4567-e89b-12d3-a456-426614174000"], ["123"]),
    "^(GET|POST|PUT|DELETE)$": (["GET", "DELETE"], ["get", "GETS"]),
    "^[^/]+$": (["abc"], ["a/b"]),
    "\\$\\{[a-z]+\\}": (["${abc}", "x ${y} z"], ["${}"]),
    "^[-+]?[0-9]*\\.?[0-9]+([eE][-+]?[0-9]+)?$": (["1e5", "-.5", "42"], ["1e", "."]),
    "^(\\d+(\\.\\d+)?)(ms|s|m|h)$": (["10ms", "1.5h"], ["10d"]),
    "^[a-z]{2}(-[A-Z]{2})?$": (["en", "en-US"], ["en-us"]),
    "^x-": (["x-foo"], ["y-foo"]),
    "^(\\*|[0-9]+)$": (["*", "42"], ["**"]),
    "^[^<>]*$": (["a b"], ["<a>"]),
    "[^\\x00-\\x1F\\x7F]+": (["abc"], ["\x01\x7f"]),
    "\\u0041{2,3}": (["AA", "xAAAx"], ["A"]),
    "(?:)": ([""], []),
    "^()$": ([""], ["a"]),
    "^a{0}b$": (["b"], ["ab"]),
    "^a{1,1}$": (["a"], ["aa"]),
    "^(a|b$)": (["ax", "b"], ["bx", "xa"]),
    "(^a|b$)": (["ax", "xb"], ["xa", "bx"]),
    "^((^a))$": (["a"], ["aa"]),
    "]": (["]"], ["["]),
    "}": (["}"], ["{"]),
    "{}": (["{}"], ["{"]),
    "a{1,2": (["a{1,2"], ["a"]),
    "^x*?y+?z??$": (["xyz", "y"], ["xz"]),
    "^😀$": (["😀"], ["😀😀"]),
    "[\\]\\-\\\\]": (["]", "-", "\\"], ["a"]),
    "^[a-]$": (["-", "a"], ["b"]),
    "^[^-a]$": (["b"], ["-", "a"]),
    "^[\\s\\S]{2}$": (["ab", "\n\t"], ["a"]),
    "[^\\S]": ([" "], ["\x1c", "\ufeff", "a"]),
    "^\\s$": ([" ", "\u3000"], ["\ufeff", "\x85", "\x1f"]),
    "\\u2028": (["\u2028"], ["\u2029"]),
    "^\\d\\D\\w\\W\\s\\S.$": (["1a_ \t!x"], []),
}


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_every_drawn_string_matches_python(pattern: str) -> None:
    for text in draw(pattern, 200):
        assert python_accepts(pattern, text), (pattern, text)


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_spot_check_completeness(pattern: str) -> None:
    members, non_members = PATTERNS[pattern]
    tree = pattern_tree(pattern)
    for text in members:
        assert in_language(tree, text), (pattern, text)
        assert python_accepts(pattern, text), (pattern, text)  # the expectations themselves are right
    for text in non_members:
        assert not in_language(tree, text), (pattern, text)


def test_membership_checker_agrees_with_sampler() -> None:
    for pattern in list(PATTERNS)[:20]:
        tree = pattern_tree(pattern)
        assert all(in_language(tree, text) for text in draw(pattern, 20, seed=1))


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_single_positions_stay_in_the_bmp_and_off_surrogates(pattern: str) -> None:
    # Only the free prefix/suffix of search semantics may produce astral characters.
    assert isinstance(ANY_STAR, Repeat)
    for node in walk(pattern_tree(pattern)):
        if isinstance(node, Chars):
            assert intersect(node.ranges, ((0xD800, 0xDFFF),)) == ()
            assert node is ANY_STAR.item or subset(node.ranges, BMP), (pattern, node.ranges)


# --- random patterns ------------------------------------------------------------------------

ATOMS = ["a", "b", "xy", "\\d", "\\D", "\\w", "\\W", "\\s", "\\S", ".", "[a-c]", "[^a-c]", "[\\d_]", "[^\\s\\d]"]
ATOMS += ["[\\w-]", "[^\\W]", "\\.", "\\-", "{", "}", "]", "\\u00e9", "\\x7f", "[\\b]", "\\0", "é", "😀", "-", "\\t"]
ATOMS += ["[^\\n]", "\\$", "\\^", "[$^]", "[^\\x00-\\x7f]", "\u3000", "\\u2028"]
QUANTIFIERS = ["", "", "", "*", "+", "?", "{2}", "{1,3}", "{0,}", "*?", "{2,}?", "??"]
# Groups get bounded quantifiers only: nested unbounded ones backtrack exponentially in both engines.
GROUP_QUANTIFIERS = ["", "", "?", "{2}", "{0,2}", "??"]


def random_pattern(rng: random.Random, depth: int = 2) -> str:
    """A random pattern over ATOMS and QUANTIFIERS, with groups, alternation and anchors."""

    def term(level: int) -> str:
        if level > 0 and rng.random() < 0.3:
            inner = "|".join(body(level - 1) for _ in range(rng.randint(1, 3)))
            return rng.choice(["(", "(?:"]) + inner + ")" + rng.choice(GROUP_QUANTIFIERS)
        return rng.choice(ATOMS) + rng.choice(QUANTIFIERS)

    def body(level: int) -> str:
        return "".join(term(level) for _ in range(rng.randint(1, 3)))

    branches = [rng.choice(["", "^"]) + body(depth) + rng.choice(["", "$"]) for _ in range(rng.randint(1, 2))]
    return "|".join(branches)


def supported(pattern: str) -> bool:
    try:
        pattern_tree(pattern)
    except UnsupportedPattern:
        return False
    return True


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), sample_seed=st.integers(0, 2**16))
def test_random_patterns_are_sound_for_python(seed: int, sample_seed: int) -> None:
    pattern = random_pattern(random.Random(seed))
    if not supported(pattern):
        return
    for text in draw(pattern, 15, seed=sample_seed):
        assert python_accepts(pattern, text), (pattern, text)


# Characters where the engines' classes disagree, plus arbitrary ones.
TRICKY = "09aZ_ \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u0660\u0663\u00e9\u2028\u3000\ufeff\U0001f600-,."
tricky_text = st.text(st.one_of(st.sampled_from(TRICKY), st.characters(exclude_categories=["Cs"])), max_size=8)


@pytest.mark.parametrize("pattern", ["^[^\\s]+$", "\\s\\S", "[^\\d]", "^\\w+$", "^.$", "[^\\w\\s]", "^\\D\\W$", "^[\\s\\S]+$"])
@settings(max_examples=200, deadline=None)
@given(text=tricky_text)
def test_any_member_string_matches_python(pattern: str, text: str) -> None:
    if in_language(pattern_tree(pattern), text):
        assert python_accepts(pattern, text)


def test_random_patterns_are_mostly_supported() -> None:
    rng = random.Random(7)
    patterns = [random_pattern(rng) for _ in range(300)]
    assert sum(map(supported, patterns)) > 200  # only quantified astral characters are refused


# --- ECMA-262 via node -------------------------------------------------------------------------

needs_node = pytest.mark.skipif(NODE is None, reason="node.js is not installed")


@needs_node
def test_every_drawn_string_matches_ecma() -> None:
    rng = random.Random(11)
    generated = [p for p in (random_pattern(rng) for _ in range(150)) if supported(p)]
    cases = [(pattern, draw(pattern, 100, seed=2)) for pattern in [*PATTERNS, *generated]]
    assert node_rejections(cases) == []


@needs_node
def test_spot_check_members_match_ecma() -> None:
    assert node_rejections([(pattern, members) for pattern, (members, _) in PATTERNS.items()]) == []


@needs_node
def test_class_escapes_bracket_ecma_in_node() -> None:
    found = run_node(NODE_CLASSES)
    assert isinstance(found, dict)
    for name, codes in found.items():
        ecma = ranges_of("".join(map(chr, codes)))
        if name == "dot":
            dot = pattern_tree("^.$")
            assert isinstance(dot, Chars)
            assert subset(dot.ranges, ecma)
            continue
        sets = CLASS_ESCAPES[name]
        assert subset(intersect(sets.sure, BMP), ecma), name
        assert subset(ecma, sets.maybe), name


# --- the class escape sets against both engines' definitions ---------------------------------


@functools.cache
def all_chars() -> str:
    """Every code point except surrogates, in order."""
    return "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)


@functools.cache
def ecma_sets() -> dict[str, Ranges]:
    """ECMA-262 (no u flag): \\d is [0-9], \\w [A-Za-z0-9_], \\s WhiteSpace and LineTerminator."""
    zs = [(c, c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Zs"]
    space = normalize([*zs, (0x09, 0x0D), (0xFEFF, 0xFEFF), (0x2028, 0x2029)])
    digit = ((0x30, 0x39),)
    word = normalize([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
    sets = {"d": digit, "w": word, "s": space}
    return {**sets, **{key.upper(): complement(value) for key, value in sets.items()}}


@pytest.mark.parametrize("letter", "dDwWsS")
def test_class_escape_sets_bracket_python(letter: str) -> None:
    unmatched = re.sub(f"\\{letter}", "", all_chars())
    python = complement(ranges_of(unmatched))
    sets = CLASS_ESCAPES[letter]
    assert subset(sets.sure, python)
    assert subset(python, sets.maybe)


@pytest.mark.parametrize("letter", "dDwWsS")
def test_class_escape_sets_bracket_ecma(letter: str) -> None:
    ecma = ecma_sets()[letter]
    sets = CLASS_ESCAPES[letter]
    assert subset(sets.sure, ecma)
    assert subset(ecma, sets.maybe)


def test_ecma_space_matches_the_specification() -> None:
    assert ecma_sets()["s"] == ECMA_SPACE


def test_python_digits_beyond_ascii_start_at_u0660() -> None:
    non_ascii_nd = [c for c in range(0x80, 0x110000) if unicodedata.category(chr(c)) == "Nd"]
    assert non_ascii_nd[0] == 0x660
    assert re.match(r"\d", "\u0660") and not re.match(r"\d", "\u065f")


def test_python_space_is_exactly_the_union_minus_ecma_extras() -> None:
    python_space = ranges_of("".join(re.findall(r"\s", all_chars())))
    assert python_space == normalize([*CLASS_ESCAPES["s"].sure, (0x1C, 0x1F), (0x85, 0x85)])


# --- tree shape ------------------------------------------------------------------------------


def test_literal_runs_become_one_lit() -> None:
    tree = pattern_tree("^abc(?:de)f$")
    assert isinstance(tree, Lit) and tree.data == b"abcdef"


def test_class_ranges_are_merged() -> None:
    tree = pattern_tree("^[a-cb-ex]$")
    assert isinstance(tree, Chars) and tree.ranges == ((0x61, 0x65), (0x78, 0x78))


def test_single_character_class_is_a_literal() -> None:
    tree = pattern_tree("^[a]$")
    assert isinstance(tree, Lit) and tree.data == b"a"


def test_unanchored_empty_alternative_accepts_everything() -> None:
    assert pattern_tree("") is ANY_STAR
    assert pattern_tree("abc|") is ANY_STAR
    assert pattern_tree("^") is ANY_STAR


def test_anchors_keep_prefix_and_suffix_off() -> None:
    tree = pattern_tree("^a+$")
    assert isinstance(tree, Repeat) and tree.low == 1 and tree.high is None


def test_negated_class_excludes_surrogates_and_astral() -> None:
    tree = pattern_tree("^[^a]$")
    assert isinstance(tree, Chars)
    assert tree.ranges == ((0, 0x60), (0x62, 0xD7FF), (0xE000, 0xFFFF))


# --- refusals -------------------------------------------------------------------------------

REFUSALS = [
    ("(?=a)", "lookahead (?= is not supported"),
    ("(?!a)", "negative lookahead (?!"),
    ("(?<=a)b", "lookbehind (?<="),
    ("(?<!a)b", "negative lookbehind (?<!"),
    ("(?<n>a)", "named group (?<"),
    ("(?P<n>a)", "Python named group"),
    ("(?i)a", "inline flags"),
    ("(?#c)a", "comment group"),
    ("(?>a)", "atomic group"),
    ("(a)\\1", "backreference"),
    ("\\k<n>", "named backreference"),
    ("\\bword", "word boundary \\b"),
    ("a\\B", "word boundary \\B"),
    ("\\p{L}", "Unicode property escape"),
    ("\\P{L}", "Unicode property escape"),
    ("\\u{1F600}", "\\u{...}"),
    ("\\cJ", "control escape \\c"),
    ("\\a", "unknown escape \\a"),
    ("\\e", "unknown escape \\e"),
    ("\\z", "unknown escape \\z"),
    ("\\A", "unknown escape \\A"),
    ("\\Z", "unknown escape \\Z"),
    ("\\G", "unknown escape \\G"),
    ("\\N{BULLET}", "unknown escape \\N"),
    ("\\01", "octal escape"),
    ("[\\1]", "octal escape"),
    ("*a", "nothing to repeat"),
    ("a|+", "nothing to repeat"),
    ("(?)", "group extension"),
    ("{2}", "nothing to repeat"),
    ("a{,3}", "'{,n}'"),
    ("a{,}", "'{,n}'"),
    ("a{3,2}", "maximum below its minimum"),
    ("a{1001}", "above 1000"),
    ("a{0,5000}", "above 1000"),
    ("a{99999999999999999999}", "above 1000"),
    ("a**", "after another"),
    ("a*+", "after another"),
    ("a{2}{3}", "after another"),
    ("a??+", "after another"),
    ("[]", "'[]'"),
    ("[^]", "'[]'"),
    ("[]a]", "'[]'"),
    ("[[a]", "'[' inside a class"),
    ("[a-z&&b]", "'&&' inside a class"),
    ("[a--]", "'--' inside a class"),
    ("[a||b]", "'||' inside a class"),
    ("[\\d-z]", "range endpoint"),
    ("[a-\\w]", "range endpoint"),
    ("[z-a]", "out of order"),
    ("[\\B]", "\\B inside a class"),
    ("[abc", "missing ']'"),
    ("(ab", "missing ')'"),
    ("ab)", "unmatched ')'"),
    ("a^b", "anchor ^"),
    ("a$b", "anchor $"),
    ("(^a)b", "anchor ^"),
    ("(^a)*", "anchor ^"),
    ("^*", "after the anchor ^"),
    ("$+", "after the anchor $"),
    ("\\", "trailing backslash"),
    ("\\x4", "incomplete \\x"),
    ("\\u12", "incomplete \\u"),
    ("\\ud83d\\ude00", "surrogate escape"),
    ("😀+", "outside the BMP"),
    ("[😀]", "outside the BMP"),
    ("\ud800", "lone surrogate"),
    ("[^\\s\\S]", "matches no character"),
    ("\\é", "escape of 'é'"),
    ("(" * 101 + ")" * 101, "nested more than 100"),
]


@pytest.mark.parametrize(("pattern", "fragment"), REFUSALS)
def test_refusals_name_the_construct(pattern: str, fragment: str) -> None:
    with pytest.raises(UnsupportedPattern) as caught:
        pattern_tree(pattern)
    assert fragment in str(caught.value)
    assert "at position" in str(caught.value)


@pytest.mark.parametrize(
    ("pattern", "fewest"),
    [("[a-z]{1,255}", "[a-z]"), ("x[0-9]+", "x[0-9]"), ("^ab*", "^a"), ("a{2,5}b?c{0,3}", "a{2}"), (".*a.*", "a"), ("a*", "")],
)
def test_repeats_at_an_unanchored_edge_are_searched_for_as_their_fewest_copies(pattern: str, fewest: str) -> None:
    # A text holds a match of `[a-z]{1,255}` exactly where it holds one of `[a-z]`: the tree is
    # the shorter search's (one class, not 255 positions), and the language is the same.
    tree = pattern_tree(pattern)
    assert to_python_regex(tree) == to_python_regex(pattern_tree(fewest))
    assert not any(isinstance(node, Repeat) and node.high not in (None, node.low) for node in walk(tree))
    rng = random.Random(7)
    drawn = ("".join(rng.choice("abcx09-") for _ in range(rng.randint(0, 8))) for _ in range(300))
    texts = ["", "a", "x1", "ab", "aab", "-", "A" * 300, "aacc", "xx9", *drawn]
    for text in texts:
        assert in_language(tree, text) == python_accepts(pattern, text), text
