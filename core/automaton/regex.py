"""Regular-expression trees: the common language between the schema compiler and the automaton.

A schema compiles to a tree of these nodes rather than to a regex string, so no escaping or
re-parsing happens between the two layers. Nodes may be shared (the tree is a DAG): the NFA
builder compiles a shared node once per continuation, which keeps optional-property objects
linear in size.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ..jsontext import UNESCAPED_RANGES
from .escapes import FIRST_WIDE_ESCAPED, hex_escape_sequences


@dataclass(frozen=True, eq=False)
class Lit:
    """A literal byte string (already UTF-8 encoded)."""

    data: bytes


@dataclass(frozen=True, eq=False)
class Chars:
    """One Unicode code point from a set of inclusive ranges (surrogates are never produced)."""

    ranges: tuple[tuple[int, int], ...]


@dataclass(frozen=True, eq=False)
class Seq:
    parts: tuple[Node, ...]


@dataclass(frozen=True, eq=False)
class Alt:
    options: tuple[Node, ...]


@dataclass(frozen=True)
class TextLabel:
    """Marks the body of a plain JSON string value (no format, pattern, enum or const): the
    JSON pointer of its schema, and the schema's `x-grounded` annotation (None: unset). The
    automaton ignores it; grounding (core.grounding) reads it to know which strings may be
    held to spans of the document."""

    pointer: str
    grounded: bool | None = None


@dataclass(frozen=True)
class ValueLabel:
    """Marks where a date (`format: date`, `date-time`), a term (an e-mail address, URI, host
    name, IP address or UUID format), a number or a pattern string (a string with a `pattern`,
    or a format held no other way, as `time`) value begins: the JSON pointer of its schema,
    which kind it is, and the schema's `x-grounded` annotation (None: unset). The automaton
    ignores it; grounding (core.grounding.value_holds) reads it to hold the value to one the
    document states."""

    pointer: str
    kind: str  # "date", "date-time", "term", "pattern", "integer" or "number"
    grounded: bool | None = None


@dataclass(frozen=True, eq=False)
class Mark(Lit):
    """An empty literal carrying a ValueLabel: what reads trees treats it as the empty text it
    matches; the NFA state naming it tells grounding a labelled value begins there."""

    label: ValueLabel


def mark(label: ValueLabel) -> Mark:
    return Mark(b"", label)


@dataclass(frozen=True, eq=False)
class Repeat:
    """`item` repeated between `low` and `high` times; `high=None` means unbounded."""

    item: Node
    low: int
    high: int | None


@dataclass(frozen=True, eq=False)
class Text(Repeat):
    """The body of a JSON string of free text: between `low` and `high` characters (None: any
    number), each written unescaped or as an escape, as JSON allows; the closing quote
    follows. `label` marks a plain string value's body (see TextLabel).

    It is the repeat of one JSON string character (`item`, STRING_CHAR), so it matches
    exactly what that repeat matches and whatever reads a repeat reads it right; the
    automaton recognises it by its type to take shortcuts over text (NFA.text_run)."""

    item: Node = field(init=False)
    label: TextLabel | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "item", STRING_CHAR)


@dataclass(frozen=True, eq=False)
class Machine:
    """The characters of a JSON string body, as an explicit automaton over code points.

    `edges[state]` holds (low, high, target) code point ranges; the byte layer writes each
    character the way JSON requires (escapes for quote, backslash and control characters).
    Built by `charnfa` when constraints must be intersected."""

    edges: tuple[tuple[tuple[int, int, int], ...], ...]
    start: int
    accepts: frozenset[int]


@dataclass(frozen=True, eq=False)
class Counted:
    """The strings of `machine` with `low` to `high` characters (None: no most), read without
    the product automaton of the two: a state names a position of the machine and the
    characters read so far (staying at `low` past it where nothing bounds them above). A
    pattern's machine of a few dozen states under maxLength 300 makes a product of thousands,
    built and measured whole at compile time; here only the states a walk reaches are named,
    and core.automaton.measure tells what each still needs. `machine`'s rows hold no
    surrogate (charnfa.counted)."""

    machine: Machine
    low: int
    high: int | None


@dataclass(frozen=True, eq=False)
class Either:
    """`generated` in the automaton the generator writes from, `accepted` (which matches every
    text `generated` does, and more: members in any order, undeclared properties) in the one
    that checks what a sampler wrote (the public Guide); see NFA. One or the other, never
    both, so the accepting automaton holds no second copy of what both match."""

    generated: Node
    accepted: Node


@dataclass(frozen=True, eq=False)
class AnyOrder:
    """The members of an object (or the distinct values of an array) in any order: each at
    most once, every required one, `", "` between those present, and any number of
    `undeclared` members among them (None: none). Only ever an Either's `accepted`. The NFA tracks
    which members were written in a state's position, built lazily, so n members cost only
    the orders a text takes, never n! or 2**n up front."""

    members: tuple[Node, ...]
    required: frozenset[int]  # indices into members
    # Makes the undeclared member on first use (only the accepting automaton reads it, and a
    # name matching none of the declared ones takes an automaton of its own); None: none.
    make_undeclared: Callable[[], Node] | None = None
    # Each member's name and how many of the member's parts its literal takes (the quoted name,
    # one literal but where characters from U+007F up are read in two forms), where the members
    # are an object's and the undeclared member takes any other name with any value: the key is
    # then read as one (core.automaton.keys). None: not.
    names: tuple[tuple[str, int], ...] | None = None

    @functools.cached_property
    def undeclared(self) -> Node | None:
        return None if self.make_undeclared is None else self.make_undeclared()

    @functools.cached_property
    def separator(self) -> Lit:
        """`", "`, written before each member but the first: one node, kept, so the NFA names one
        state for it after a member, whichever members may come next."""
        return lit(", ")

    @functools.cached_property
    def written_first(self) -> tuple[Node, ...]:
        """Each member, then the undeclared one, written first (kept: every state between
        members reads it)."""
        return self.members + ((self.undeclared,) if self.undeclared is not None else ())


Node = Lit | Chars | Seq | Alt | Repeat | Machine | Counted | Either | AnyOrder

EMPTY: Node = Seq(())


@functools.lru_cache(maxsize=8192)
def lit(text: str) -> Lit:
    """The literal `text`, one node per text (kept: keys, separators and listed values come back
    in schema after schema, and a shared node is built into the automaton and measured once)."""
    return Lit(text.encode("utf-8"))


def seq(*parts: Node) -> Node:
    flat: list[Node] = []
    for part in parts:
        if isinstance(part, Seq):
            flat.extend(part.parts)
        else:
            flat.append(part)
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def leading_literal(node: Seq) -> Lit | None:
    """The sequence's first part where it is a literal of some bytes (no label: a Mark is
    empty), else None."""
    first = node.parts[0] if node.parts else None
    return first if isinstance(first, Lit) and first.data else None


def alt(*options: Node) -> Node:
    return options[0] if len(options) == 1 else Alt(tuple(options))


def optional(item: Node) -> Node:
    return Repeat(item, 0, 1)


def chars(*ranges: tuple[int, int]) -> Chars:
    return Chars(tuple(ranges))


def char_set(text: str) -> Chars:
    """A set of single characters, e.g. char_set("+-")."""
    return Chars(tuple((ord(c), ord(c)) for c in text))


def children(node: Node, accepted: bool = False) -> tuple[Node, ...]:
    """The nodes directly inside `node` that its text is made of: a sequence's parts, an
    alternation's options, a repeat's item; an Either's generated side, and its accepted side
    too where `accepted` (the automaton accepting every text reads it). A machine's states and
    an AnyOrder's members (read in any order, by its own rules) are none."""
    if isinstance(node, Seq):
        return node.parts
    if isinstance(node, Alt):
        return node.options
    if isinstance(node, Repeat):  # a Text too: its item is its character
        return (node.item,)
    if isinstance(node, Either):
        return (node.generated, node.accepted) if accepted else (node.generated,)
    return ()


def generated_nodes(tree: Node) -> Iterator[Node]:
    """Every node of `tree` the generator may write, each once (a DAG: a shared node is met
    once), in document order: not into an Either's accepted side, which is never generated."""
    seen: set[int] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if not isinstance(node, Text):  # its characters hold no node of interest
            stack.extend(reversed(children(node)))


def text_nodes(tree: Node) -> list[Text]:
    """The Text nodes of `tree` the generator may write, in document order."""
    return [node for node in generated_nodes(tree) if isinstance(node, Text)]


def length_range(node: Node) -> tuple[int, int | None]:
    """(fewest, most) characters `node` matches; most is None when unbounded. Machines are
    not measured (0, None). Kept on the node (a node never changes): a format's tree, shared by
    every compilation in the process, is measured once."""
    kept = node.__dict__
    found: tuple[int, int | None] | None = kept.get(_LENGTH_RANGE)
    if found is None:
        found = kept[_LENGTH_RANGE] = _length_range(node)
    return found


_LENGTH_RANGE = "_length_range"  # where a node keeps it (frozen dataclasses: written to __dict__ directly)


def _length_range(node: Node) -> tuple[int, int | None]:
    if isinstance(node, Lit):
        count = len(node.data.decode("utf-8"))
        return count, count
    if isinstance(node, Chars):
        return 1, 1
    if isinstance(node, Seq):
        parts = [length_range(part) for part in node.parts]
        highs = [high for _, high in parts]
        return sum(low for low, _ in parts), None if None in highs else sum(h for h in highs if h is not None)
    if isinstance(node, Alt):
        options = [length_range(option) for option in node.options]
        highs = [high for _, high in options]
        return min((low for low, _ in options), default=0), None if None in highs else max(
            (h for h in highs if h is not None), default=0
        )
    if isinstance(node, Text):  # characters, not the bytes that escape them
        return node.low, node.high
    if isinstance(node, Counted):  # bounds, not measured (as a machine is not)
        return node.low, node.high
    if isinstance(node, Repeat):
        low, high = length_range(node.item)
        return low * node.low, None if high is None or node.high is None else high * node.high
    return 0, None


# The characters of JSON strings, as the byte layer writes them. Every character a JSON string
# holds without an escape: all but controls, quote and backslash.
_UNESCAPED_CHAR = Chars(UNESCAPED_RANGES)
HEX_DIGIT = chars((0x30, 0x39), (0x41, 0x46), (0x61, 0x66))


@functools.lru_cache(maxsize=1024)
def unicode_escape(low: int, high: int) -> Node:
    """`\\u` escapes (either case) of every character in [low, high]: four hex digits, or a
    surrogate pair beyond U+FFFF, so that every escape is exactly one character (as
    jsonschema's maxLength counts it); lone surrogates are no character and are left out."""
    options = [seq(*(Chars(position) for position in sequence)) for sequence in hex_escape_sequences(low, high)]
    return seq(lit("\\u"), alt(*options))


# Any character, written as itself, with its short escape, or as a `\\u` escape. Length-bounded
# strings repeat it once per position; the NFA is lazy, so only the escapes a token reaches
# are ever built.
STRING_CHAR: Node = alt(
    _UNESCAPED_CHAR,
    seq(lit("\\"), char_set('"\\/bfnrt')),
    unicode_escape(0, 0x10FFFF),
)


def json_literal(text: str) -> Node:
    """The JSON text `text` (a listed value, a property name), with each character from
    U+007F up (found only inside its strings) also accepted as the `\\u` escape a serializer
    with ASCII output writes for it; all-ASCII text stays one literal."""
    if all(ord(character) < FIRST_WIDE_ESCAPED for character in text):
        return lit(text)
    parts: list[Node] = []
    plain_start = 0
    for index, character in enumerate(text):
        if ord(character) >= FIRST_WIDE_ESCAPED:
            if plain_start < index:
                parts.append(lit(text[plain_start:index]))
            parts.append(alt(lit(character), unicode_escape(ord(character), ord(character))))
            plain_start = index + 1
    if plain_start < len(text):
        parts.append(lit(text[plain_start:]))
    return seq(*parts)
