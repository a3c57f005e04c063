"""The JSON Schema `pattern` keyword as a regex tree over the decoded string's characters.

A schema's pattern is read by two engines: ECMA-262 (what JSON Schema specifies; here without
the `u` flag) and Python's `re` (what the `jsonschema` validator runs, with `re.search`). The
tree must only produce strings that BOTH accept, so wherever the engines differ the tree keeps
the intersection or the pattern is refused with `UnsupportedPattern`. Producing fewer strings
than the pattern allows is acceptable; producing one either engine rejects is not.

Supported:
  * search semantics: each top-level alternative not starting with `^` may be preceded by any
    characters, and one not ending with `$` may be followed by any; anchors may also sit around
    an unquantified group that forms a whole alternative, e.g. `^(a|b$)`;
  * literals, `.`, `( )`, `(?: )`, `|`, the quantifiers `* + ? {n} {n,} {n,m}` (lazy or not,
    counts up to 1000), a `{` that starts no quantifier as a literal `{`;
  * classes `[...]` and `[^...]` with ranges, a literal `-` at either end, and escapes;
  * escapes `\\t \\n \\r \\f \\v \\0 \\xHH \\uHHHH`, `[\\b]` (backspace), escaped ASCII punctuation,
    and `\\d \\D \\w \\W \\s \\S`, which keep only characters in the class under both engines.

Refused (they differ between the engines, are not regular, or would blow up the automaton):
  lookaround, named groups, inline flags and other `(?` extensions; backreferences; `\\b`/`\\B`
  word boundaries; `\\p{..}`; `\\u{..}`; `\\cX` (Python's `re` rejects it); octal escapes;
  unknown letter escapes; `{,n}` (a quantifier in Python, literal text in ECMA-262); possessive
  or doubled quantifiers; `[]`, `[^]`, `[` inside a class and doubled set operators such as
  `--` (Python warns that their meaning will change); anchors elsewhere; counts above 1000;
  quantified characters outside the Basic Multilingual Plane and such characters in classes.

Why the Basic Multilingual Plane matters: without the `u` flag, ECMA-262 matches UTF-16 code
units, so `.` or `[^a]` match half of an astral character and `^.$` rejects "😀" that Python
accepts. Every character set produced for one pattern position is therefore limited to U+0000..
U+FFFF (never surrogates); only the free prefix/suffix of search semantics ranges over all code
points, since an unanchored match may start and stop at any code unit.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NoReturn

from ...automaton.charnfa import MACHINE_STATE_LIMIT, machine_from_tree
from ...automaton.charnfa import complement as complement_machine
from ...automaton.regex import EMPTY, Chars, Lit, Machine, Node, Repeat, Seq, alt, lit, seq
from .char_sets import ANY_STAR, BMP, CLASS_ESCAPES, DOT, WIDE_DOT, ClassSet, complement, exact, intersect, normalize

__all__ = ["MAX_COUNT", "UnsupportedPattern", "pattern_either", "pattern_tree", "pattern_unmatched"]

MAX_COUNT = 1000  # larger repetition counts would unroll into too many automaton states
MAX_DEPTH = 100  # group nesting; deeper patterns would exhaust the parser's recursion


class UnsupportedPattern(Exception):
    """The pattern uses a construct that cannot be compiled soundly for both regex engines."""


_SIMPLE_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v"}
_BRACED = re.compile(r"\{([0-9]*)(?:(,)([0-9]*))?\}")
_HEX = frozenset(string.hexdigits)


# --- parse results before anchors are resolved ----------------------------------------------


@dataclass(frozen=True)
class _Anchor:
    start: bool  # True for ^, False for $
    pos: int


@dataclass(frozen=True)
class _Group:
    """An unquantified group, kept open so anchors inside it can be resolved at the top level."""

    branches: tuple[tuple[_Term, ...], ...]
    pos: int


_Term = Node | _Anchor | _Group


def _has_anchor(terms: Iterable[_Term]) -> bool:
    for term in terms:
        if isinstance(term, _Anchor):
            return True
        if isinstance(term, _Group) and any(_has_anchor(branch) for branch in term.branches):
            return True
    return False


# --- parser --------------------------------------------------------------------------------


class _Parser:
    """Recursive descent over the pattern text; every refusal names the construct and position."""

    def __init__(self, pattern: str, wide: bool = False) -> None:
        self.text = pattern
        self.pos = 0
        self.depth = 0
        self.wide = wide  # sets of what either engine may match (pattern_unmatched), not what both do

    def fail(self, what: str, pos: int | None = None) -> NoReturn:
        where = self.pos if pos is None else pos
        raise UnsupportedPattern(f"{what} (at position {where} of pattern {self.text!r})")

    def peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.text[index] if index < len(self.text) else ""

    def take(self) -> str:
        char = self.peek()
        self.pos += 1
        return char

    def parse(self) -> tuple[tuple[_Term, ...], ...]:
        branches = self.alternation()
        if self.pos < len(self.text):  # alternation() stops only at ")" or the end
            self.fail("unmatched ')'")
        return branches

    def alternation(self) -> tuple[tuple[_Term, ...], ...]:
        branches = [self.branch()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.branch())
        return tuple(branches)

    def branch(self) -> tuple[_Term, ...]:
        terms: list[_Term] = []
        while self.peek() not in ("", "|", ")"):
            terms.append(self.term())
        return tuple(terms)

    def term(self) -> _Term:
        start = self.pos
        if self.peek() in ("^", "$"):
            anchor = _Anchor(self.take() == "^", start)
            if self.quantifier_ahead():
                self.fail(f"a quantifier after the anchor {self.text[start]} (nothing to repeat)")
            return anchor
        atom = self.atom()
        if not self.quantifier_ahead():
            return atom
        if isinstance(atom, Lit) and ord(self.text[start]) > 0xFFFF:  # a literal astral character
            self.fail("a quantifier after a character outside the BMP (ECMA-262 without the u flag repeats its low surrogate)")
        return self.quantified(self.to_node(atom))

    # --- quantifiers ---

    def quantifier_ahead(self) -> bool:
        return self.peek() in ("*", "+", "?") or (self.peek() == "{" and self.braced() is not None)

    def braced(self) -> tuple[int, int | None, int] | None:
        """The `{n}`, `{n,}` or `{n,m}` quantifier at the position as (low, high, end), or None
        when the `{` is a literal character (both engines agree on that, except for `{,n}`)."""
        match = _BRACED.match(self.text, self.pos)
        if match is None or match.group(0) == "{}":
            return None
        low_text, comma, high_text = match.groups()
        if not low_text:
            self.fail("'{,n}' is a quantifier in Python but literal text in ECMA-262")
        low = self.count(low_text)
        high = (self.count(high_text) if high_text else None) if comma else low
        if high is not None and high < low:
            self.fail(f"quantifier {match.group(0)} has its maximum below its minimum")
        return low, high, match.end()

    def count(self, digits: str) -> int:
        value = int(digits) if len(digits) <= 9 else MAX_COUNT + 1
        if value > MAX_COUNT:
            self.fail(f"repetition count {digits} is above {MAX_COUNT} (the automaton would be too large)")
        return value

    def quantified(self, item: Node) -> Node:
        low, high = self.quantifier()
        if self.peek() == "?":
            self.pos += 1  # lazy: the same language
        if self.quantifier_ahead():
            self.fail("a quantifier right after another (possessive in Python 3.11, an error in ECMA-262)")
        if high == 0:
            return EMPTY
        if low == high == 1:
            return item
        return Repeat(item, low, high)

    def quantifier(self) -> tuple[int, int | None]:
        char = self.take()
        if char == "*":
            return 0, None
        if char == "+":
            return 1, None
        if char == "?":
            return 0, 1
        self.pos -= 1
        bounds = self.braced()
        assert bounds is not None  # quantifier_ahead() checked it
        low, high, self.pos = bounds
        return low, high

    # --- atoms ---

    def atom(self) -> Node | _Group:
        char = self.peek()
        if char == "(":
            return self.group()
        if char == "[":
            return self.char_class()
        if char == "\\":
            return self.escape_atom()
        if char in ("*", "+", "?") or (char == "{" and self.braced() is not None):
            self.fail(f"quantifier {char!r} with nothing to repeat")
        self.pos += 1
        if char == ".":
            return WIDE_DOT if self.wide else DOT
        return Lit(self.literal_char(char).encode("utf-8"))

    def literal_char(self, char: str) -> str:
        if 0xD800 <= ord(char) <= 0xDFFF:
            self.fail(f"lone surrogate U+{ord(char):04X} in the pattern", self.pos - 1)
        return char

    def group(self) -> _Group:
        start = self.pos
        self.pos += 1
        if self.peek() == "?":
            if self.peek(1) != ":":
                self.fail(self.extension_name(), start)
            self.pos += 2
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail(f"groups nested more than {MAX_DEPTH} deep", start)
        branches = self.alternation()
        self.depth -= 1
        if self.take() != ")":
            self.fail("missing ')' for the group", start)
        return _Group(branches, start)

    def extension_name(self) -> str:
        ahead = self.text[self.pos : self.pos + 3]
        names = {
            "?=": "lookahead (?= is not supported",
            "?!": "negative lookahead (?! is not supported",
            "?<=": "lookbehind (?<= is not supported",
            "?<!": "negative lookbehind (?<! is not supported",
            "?<": "named group (?< is not supported",
            "?P": "Python named group (?P is not supported",
            "?#": "comment group (?# is not supported (ECMA-262 has none)",
            "?>": "atomic group (?> is not supported (ECMA-262 has none)",
        }
        for prefix in sorted(names, key=len, reverse=True):
            if ahead.startswith(prefix):
                return names[prefix]
        return f"group extension ({ahead[:2]} (inline flags or similar) is not supported"

    def escape_atom(self) -> Node:
        member = self.escape(in_class=False)
        if isinstance(member, str):
            return Lit(member.encode("utf-8"))
        return Chars(intersect(member.maybe if self.wide else member.sure, BMP))

    # --- escapes ---

    def escape(self, in_class: bool) -> str | ClassSet:
        """The escape at the position (a backslash): one character, or a class escape's sets."""
        start = self.pos
        self.pos += 1
        char = self.take()
        if char == "":
            self.fail("a trailing backslash", start)
        if char in CLASS_ESCAPES:
            return CLASS_ESCAPES[char]
        if char in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[char]
        if char == "b" and in_class:
            return "\b"  # backspace inside a class, in both engines
        if char in ("x", "u"):
            return self.hex_escape(char, start)
        if char == "0" and not self.peek().isdigit():
            return "\0"
        if char in string.punctuation:
            return char
        self.fail(self.escape_refusal(char, in_class), start)

    def hex_escape(self, kind: str, start: int) -> str:
        if kind == "u" and self.peek() == "{":
            self.fail("\\u{...} escapes need the u flag in ECMA-262 and are not supported", start)
        width = 2 if kind == "x" else 4
        digits = self.text[self.pos : self.pos + width]
        if len(digits) < width or not set(digits) <= _HEX:
            self.fail(f"incomplete \\{kind} escape (ECMA-262 then reads a literal {kind!r}, Python fails)", start)
        self.pos += width
        code = int(digits, 16)
        if 0xD800 <= code <= 0xDFFF:
            self.fail(f"surrogate escape \\u{digits} (engines disagree on surrogate pairs)", start)
        return chr(code)

    @staticmethod
    def escape_refusal(char: str, in_class: bool) -> str:
        if char in "bB":
            return f"word boundary \\{char} is not supported" if not in_class else f"\\{char} inside a class is not supported"
        if char.isdigit():
            return f"backreference or octal escape \\{char} is not supported"
        if char == "k":
            return "named backreference \\k is not supported"
        if char in "pP":
            return f"Unicode property escape \\{char} is not supported (it needs the u flag in ECMA-262)"
        if char == "c":
            return "control escape \\c is not supported (Python's re rejects it)"
        if char in string.ascii_letters:
            return f"unknown escape \\{char} is not supported (Python and ECMA-262 read it differently)"
        return f"escape of {char!r} is not supported (only ASCII punctuation may be escaped)"

    # --- character classes ---

    def char_class(self) -> Node:
        start = self.pos
        self.pos += 1
        negated = self.peek() == "^"
        self.pos += int(negated)
        if self.peek() == "]":
            self.fail("'[]' and '[^]' are not supported (empty class in ECMA-262, literal ']' in Python)", start)
        members: list[ClassSet] = []
        while self.peek() != "]":
            members.append(self.class_member(start))
        self.pos += 1
        return self.class_node(members, negated, start)

    def class_node(self, members: list[ClassSet], negated: bool, start: int) -> Node:
        if negated:
            ranges = complement(normalize(r for member in members for r in (member.sure if self.wide else member.maybe)))
        else:
            ranges = normalize(r for member in members for r in (member.maybe if self.wide else member.sure))
        ranges = intersect(ranges, BMP)
        if not ranges:
            self.fail("a character class that matches no character", start)
        if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
            return lit(chr(ranges[0][0]))
        return Chars(ranges)

    def class_member(self, class_start: int) -> ClassSet:
        low = self.class_atom(class_start)
        if self.peek() != "-" or self.peek(1) in ("]", ""):
            return low if isinstance(low, ClassSet) else exact(((ord(low), ord(low)),))
        dash = self.pos
        self.pos += 1
        if self.peek() == "-":
            self.fail("'--' inside a class (Python warns it may become set difference)")
        high = self.class_atom(class_start)
        if isinstance(low, ClassSet) or isinstance(high, ClassSet):
            self.fail("a class escape as a range endpoint is not supported", dash)
        if ord(high) < ord(low):
            self.fail(f"range {low}-{high} is out of order", dash)
        return exact(((ord(low), ord(high)),))

    def class_atom(self, class_start: int) -> str | ClassSet:
        char = self.peek()
        if char == "":
            self.fail("missing ']' for the character class", class_start)
        if char == "\\":
            return self.escape(in_class=True)
        if char == "[":
            self.fail("'[' inside a class is not supported (Python warns about nested sets)")
        if char in "-&~|" and self.peek(1) == char:
            self.fail(f"{char * 2!r} inside a class (Python warns it may become a set operation)")
        if ord(char) > 0xFFFF:
            self.fail("a character outside the BMP in a class (ECMA-262 without the u flag sees two code units)")
        self.pos += 1
        return self.literal_char(char)

    # --- terms to trees ---

    def to_node(self, term: _Term) -> Node:
        if isinstance(term, _Anchor):
            self.fail(f"anchor {'^' if term.start else '$'} inside a group or the middle of the pattern", term.pos)
        if isinstance(term, _Group):
            return alt(*(self.sequence(branch) for branch in term.branches))
        return term

    def sequence(self, terms: Iterable[_Term]) -> Node:
        """The concatenation of terms, with runs of literals merged into one Lit."""
        parts: list[Node] = []
        for term in terms:
            node = self.to_node(term)
            for part in node.parts if isinstance(node, Seq) else (node,):
                if isinstance(part, Lit) and parts and isinstance(parts[-1], Lit):
                    parts[-1] = Lit(parts[-1].data + part.data)
                else:
                    parts.append(part)
        return seq(*parts) if parts else EMPTY


# --- search semantics ------------------------------------------------------------------------


def _search(parser: _Parser, branches: Iterable[tuple[_Term, ...]], start: bool, end: bool) -> Node:
    options = [_search_branch(parser, branch, start, end) for branch in branches]
    if any(option is ANY_STAR for option in options):
        return ANY_STAR  # one alternative already accepts every string
    return alt(*options)


def _search_branch(parser: _Parser, branch: tuple[_Term, ...], start: bool, end: bool) -> Node:
    terms = list(branch)
    while terms and isinstance(terms[0], _Anchor) and terms[0].start:
        terms.pop(0)
        start = True
    while terms and isinstance(terms[-1], _Anchor) and not terms[-1].start:
        terms.pop()
        end = True
    if len(terms) == 1 and isinstance(terms[0], _Group) and _has_anchor(terms):
        # `^(a|b$)`: a group forming the whole alternative is itself a top-level alternation.
        return _search(parser, terms[0].branches, start, end)
    if not end:
        _fewest_at(terms, -1)
    if not start:
        _fewest_at(terms, 0)
    core = parser.sequence(terms)
    if not start and not end and core is EMPTY:
        return ANY_STAR
    # Python's `$` also matches before a newline that ends the string (ECMA-262's only at the end).
    ending = [alt(EMPTY, lit("\n"))] if parser.wide else []
    return seq(*([] if start else [ANY_STAR]), core, *(ending if end else [ANY_STAR]))


def _fewest_at(terms: list[_Term], edge: int) -> None:
    """Repeats at an unanchored edge of a searched pattern cut to their fewest copies (none
    where they may be absent): a text holds a match of `ab{1,255}` exactly where it holds one of
    `ab`, the rest of a longer match lying outside the part searched for. The language is the
    same; the automaton of `[a-z]{1,255}` searched for, or of the names it finds none in, is
    one class, not 255 states."""
    while terms and isinstance(repeat := terms[edge], Repeat):
        if repeat.low == 0:
            terms.pop(edge)
            continue
        if repeat.high != repeat.low or repeat.low == 1:
            terms[edge] = repeat.item if repeat.low == 1 else Repeat(repeat.item, repeat.low, repeat.low)
        return


def pattern_tree(pattern: str) -> Node:
    """The regex tree of every string (sequence of characters, NOT JSON-escaped) that the JSON
    Schema `pattern` keyword accepts, with ECMA-262 *search* semantics (the pattern may match
    anywhere in the string unless anchored with ^ / $).

    Only strings accepted by both ECMA-262 (without the u flag) and Python's `re.search` are
    produced. Raises UnsupportedPattern for constructs that cannot be compiled that way."""
    parser = _Parser(pattern)
    return _search(parser, parser.parse(), start=False, end=False)


def pattern_either(pattern: str) -> Node:
    """The regex tree of the strings of Basic Multilingual Plane characters EITHER engine's search
    may find `pattern` in (a superset): each class as the wider of its two readings, `.` as
    Python's, `$` also before a final newline as Python's. Raises UnsupportedPattern as
    pattern_tree does."""
    parser = _Parser(pattern, wide=True)
    return _search(parser, parser.parse(), start=False, end=False)


def pattern_unmatched(pattern: str, state_limit: int = MACHINE_STATE_LIMIT) -> Machine:
    """Every string of characters from the Basic Multilingual Plane (surrogates excluded) that
    neither engine's search finds `pattern` in: the complement of pattern_either. Astral
    characters are left out: without the `u` flag ECMA-262 reads them as two code units that
    classes and `.` may match one at a time. Raises UnsupportedPattern as pattern_tree does, and
    AutomatonTooLarge past `state_limit`."""
    return complement_machine(machine_from_tree(pattern_either(pattern), state_limit), BMP, state_limit)
