"""What a state of the lazy NFA (core.automaton.nfa) stands for until it is expanded: a piece
of the regex tree, or one of the helpers the byte layer adds for what JSON writes (escapes,
the bytes after a character's first, the hex digits after `\\u`), each expanded only when a walk
reads into it; and the first bytes of characters, kept by character class.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

from .escapes import SHORT_ESCAPES, BytePosition, escape_hex_sequences, must_escape, without_escaped
from .keys import Keys
from .utf8 import utf8_sequences


@dataclass(frozen=True)
class Escaped:
    """The JSON escapes of the characters in [low, high] (see NFA._after_backslash), with the
    fewest and the most bytes one takes, backslash included. A state naming it is at position
    1, after the backslash (the string automaton's state reads that): what follows the
    backslash is built only when a walk reads one (of the escapes every position of a string
    may take, a walk reads few)."""

    low: int
    high: int
    shortest: int
    longest: int

    @cached_property
    def letters(self) -> tuple[int, ...]:
        """The letters of the short escapes (`n` of `\\n`) of the characters in [low, high]."""
        return tuple(SHORT_ESCAPES[character][1] for character in must_escape(self.low, self.high) if character in SHORT_ESCAPES)

    @cached_property
    def hex_sequences(self) -> tuple[tuple[BytePosition, ...], ...]:
        """The byte positions after `\\u` of their `\\u` escapes (see escapes.escape_hex_sequences)."""
        return tuple(escape_hex_sequences(self.low, self.high))


@dataclass(frozen=True)
class Tail:
    """The bytes after the first of a character's UTF-8 encoding, one range each. A state
    naming them with its continuation is expanded only when a walk reads the first byte, and
    tails the same from some byte on share their states from there."""

    ranges: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Hex:
    """What follows `\\u` in the escapes of a set of characters: byte positions, one sequence
    per run of code points, with the fewest and the most bytes a sequence takes. A state naming
    it with its continuation is expanded only when a walk reads a hex digit; the sequences
    after each first position are a `Hex` of their own (a trie built as far as walks go: of the
    escapes a string's every character may take, walks read few past the `u`)."""

    sequences: tuple[tuple[BytePosition, ...], ...]
    shortest: int
    longest: int

    @cached_property
    def branches(self) -> tuple[tuple[BytePosition, tuple[tuple[BytePosition, ...], ...], bool], ...]:
        """Each first position, the sequences after it (those not ending there), and whether
        one ends there: the same for every continuation, so worked out once."""
        rests: dict[BytePosition, list[tuple[BytePosition, ...]]] = {}
        for sequence in self.sequences:
            rests.setdefault(sequence[0], []).append(sequence[1:])
        found = []
        for position, following in rests.items():
            going = tuple(rest for rest in following if rest)
            found.append((position, going, len(going) < len(following)))
        return tuple(found)


Helper = Escaped | Tail | Hex | Keys  # (Keys: core.automaton.keys)


# What a named state stands for until it is expanded: the piece of the tree or helper (the
# index of the node in its NFA's table of them), the state after it, and for a repeat the
# copies still required and those still optional (-1: unbounded) after position 1 (a point
# between copies; 0 is its entry), for a machine its state as position. A tuple of numbers:
# one is kept for every state named, hundreds of thousands for a large schema, and an exact
# tuple of numbers drops out of the cyclic collector's scans (an instance, or a named tuple,
# would be scanned at every full collection).
Pending = tuple[int, int, int, int, int]
NODE, NEXT, COPIES, SPARE, POSITION = range(5)


FirstBytes = tuple[tuple[int, int, tuple[tuple[int, int], ...]], ...]
# Classes of up to this many ranges have their first bytes kept (a schema's pattern may hold
# classes of thousands of ranges, whose layouts would be megabytes each).
_KEPT_RANGES = 32


def first_bytes(ranges: tuple[tuple[int, int], ...]) -> FirstBytes:
    """The characters of `ranges` in UTF-8: each sequence's first byte range and the ranges of
    the bytes after it. Kept for small classes: a character class comes back in state after
    state."""
    return _kept_first_bytes(ranges) if len(ranges) <= _KEPT_RANGES else _first_bytes(ranges)


@lru_cache(maxsize=4096)
def _kept_first_bytes(ranges: tuple[tuple[int, int], ...]) -> FirstBytes:
    return _first_bytes(ranges)


def _first_bytes(ranges: tuple[tuple[int, int], ...]) -> FirstBytes:
    return tuple((sequence[0][0], sequence[0][1], sequence[1:]) for low, high in ranges for sequence in utf8_sequences(low, high))


@lru_cache(maxsize=4096)
def unescaped_first_bytes(low: int, high: int) -> FirstBytes:
    """`first_bytes` of the characters in [low, high] a JSON string holds without an escape."""
    return first_bytes(tuple(without_escaped(low, high)))
