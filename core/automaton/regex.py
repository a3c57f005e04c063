"""Regular-expression trees: the common language between the schema compiler and the automaton.

A schema compiles to a tree of these nodes rather than to a regex string, so no escaping or
re-parsing happens between the two layers. Nodes may be shared (the tree is a DAG): the NFA
builder compiles a shared node once per continuation, which keeps optional-property objects
linear in size. `to_regex` renders a tree as a conventional regex for display only.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_CODEPOINT = 0x10FFFF


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


@dataclass(frozen=True, eq=False)
class Repeat:
    """`item` repeated between `low` and `high` times; `high=None` means unbounded."""

    item: Node
    low: int
    high: int | None


Node = Lit | Chars | Seq | Alt | Repeat

EMPTY: Node = Seq(())
NOTHING: Node = Alt(())


def lit(text: str) -> Lit:
    return Lit(text.encode("utf-8"))


def seq(*parts: Node) -> Node:
    flat: list[Node] = []
    for part in parts:
        if isinstance(part, Seq):
            flat.extend(part.parts)
        else:
            flat.append(part)
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def alt(*options: Node) -> Node:
    return options[0] if len(options) == 1 else Alt(tuple(options))


def optional(item: Node) -> Node:
    return Repeat(item, 0, 1)


def chars(*ranges: tuple[int, int]) -> Chars:
    return Chars(tuple(ranges))


def char_set(text: str) -> Chars:
    """A set of single characters, e.g. char_set("+-")."""
    return Chars(tuple((ord(c), ord(c)) for c in text))


def complement(ranges: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """Code-point ranges not covered by `ranges`, within 0..MAX_CODEPOINT."""
    result: list[tuple[int, int]] = []
    next_free = 0
    for low, high in sorted(ranges):
        if low > next_free:
            result.append((next_free, low - 1))
        next_free = max(next_free, high + 1)
    if next_free <= MAX_CODEPOINT:
        result.append((next_free, MAX_CODEPOINT))
    return tuple(result)


def to_regex(node: Node) -> str:
    """Render for humans; the automaton never parses this text."""
    if isinstance(node, Lit):
        return "".join(_escape(c) for c in node.data.decode("utf-8", "replace"))
    if isinstance(node, Chars):
        return "[" + "".join(_range_text(lo, hi) for lo, hi in node.ranges) + "]"
    if isinstance(node, Seq):
        return "".join(_group(p) if isinstance(p, Alt) else to_regex(p) for p in node.parts)
    if isinstance(node, Alt):
        return "|".join(to_regex(o) for o in node.options) if node.options else "[]"
    inner = _group(node.item) if not isinstance(node.item, Chars) else to_regex(node.item)
    return inner + _quantifier(node.low, node.high)


def _quantifier(low: int, high: int | None) -> str:
    if (low, high) == (0, 1):
        return "?"
    if (low, high) == (0, None):
        return "*"
    if (low, high) == (1, None):
        return "+"
    if high is None:
        return f"{{{low},}}"
    return f"{{{low}}}" if low == high else f"{{{low},{high}}}"


def _group(node: Node) -> str:
    return "(" + to_regex(node) + ")"


def _escape(c: str) -> str:
    return "\\" + c if c in r"\.^$|?*+()[]{}" else c


def _range_text(low: int, high: int) -> str:
    def show(cp: int) -> str:
        return chr(cp) if 0x20 < cp < 0x7F and chr(cp) not in "\\]^-" else f"\\u{{{cp:X}}}"

    return show(low) if low == high else show(low) + "-" + show(high)
