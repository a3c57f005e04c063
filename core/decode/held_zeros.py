"""Zeros at the end of a number's fraction: evaluated at once, written only once a digit follows.

The automaton accepts every form of a number (`559.40` as well as `559.4`): a sampler that
picks a zero may always end the number after it. Writing numbers short is this decoder's
preference, kept here rather than in the automaton. A model copying `559.40` writes its zero;
the decoder evaluates it, so the model sees what it wrote, and holds it back from the output:
it is written when a nonzero digit follows (`559.405`), and dropped when the number ends
instead, which leaves the value as the model wrote it: `559.40` then `,` gives `559.4,`;
`10.00` then `}` gives `10}`; `1.0e5` gives `1e5`.

Zeros are dropped only where the automaton takes the token that follows them right after the
written text (a Guide kept there), so the output is always a text the automaton accepts; where
it does not (`enum: [1e15]` is written `1000000000000000.0` only), they are written after all.
What is held: a point and zeros right after a number's integer digits, or zeros after written
digits of its fraction (`.5`, not a bare point: its first zero is written), from chosen tokens
that hold nothing else, never inside a string (where a pattern may give zeros a meaning).
Where the automaton forces text after them (the end of a number at the digit limit, the `0` of
`12.` in an integer), that text is chosen token by token, so the zeros may still go.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass

from ..index.guide import Guide

_POINT_AND_ZEROS = re.compile(rb"\.0*")
_ZEROS = re.compile(rb"0+")
_DIGITS = frozenset(b"0123456789")


@dataclass(frozen=True)
class Held:
    """Bytes evaluated but not written: zeros (or a point and zeros) ending a number's fraction."""

    text: bytes
    before: Guide  # past the written text, before the held one: where the number could end
    choices: int  # how many of the latest recorded choices are the held tokens'


class ZeroHolder:
    """Follows one generation's output (`feed` every byte written) and decides what is held;
    a follower of the decoding (core.decode.state)."""

    def __init__(self) -> None:
        self._numbers = JsonNumbers()

    @property
    def in_string(self) -> bool:
        return self._numbers.in_string

    def feed(self, written: bytes) -> None:
        """Take in bytes just written to the output."""
        self._numbers.feed(written)

    def snapshot(self) -> JsonNumbers:
        return copy.copy(self._numbers)

    def restore(self, snapshot: JsonNumbers) -> None:
        self._numbers = copy.copy(snapshot)

    def hold(self, held: Held | None, added: bytes, before: Guide) -> Held | None:
        """What is held once a chosen token adding the bytes `added` is taken (`before` is past
        the written text): `held` and the new bytes, when they are zeros; a new Held when the
        output ends in a number's integer digits and they are a point and zeros, or in its
        fraction and they are zeros; else None (the caller checks that
        no text is forced after the token)."""
        if held is not None:
            return Held(held.text + added, held.before, held.choices + 1) if _ZEROS.fullmatch(added) else None
        part = self._numbers.part
        if (part == INTEGER and _POINT_AND_ZEROS.fullmatch(added)) or (part == FRACTION and _ZEROS.fullmatch(added)):
            return Held(added, before, 1)
        return None

    @staticmethod
    def droppable(held: Held, token: int | None, piece: bytes = b"") -> bool:
        """Whether the held text may be dropped before `token` (its bytes `piece`; None: the
        end of the generation): the token ends the number or starts its exponent, and the
        automaton takes it right after the written text. Costs one step of a guide."""
        if token is None:
            return held.before.is_accepting()
        return bool(piece) and piece[0] not in _DIGITS and held.before.copy().try_advance(token)


# Where the output stands in a number: the part its last byte belongs to (POINT: the point
# itself, after which a zero is a digit the number needs, not one to hold).
OUTSIDE, INTEGER, POINT, FRACTION, EXPONENT = range(5)


class JsonNumbers:
    """Whether the JSON text written so far is inside a string, and which part of a number
    its last byte belongs to (fed every byte written)."""

    def __init__(self) -> None:
        self.in_string = False
        self._escaped = False
        self.part = OUTSIDE

    def feed(self, data: bytes) -> None:
        for byte in data:
            if self.in_string:
                self._string_byte(byte)
            else:
                self.part = self._next_part(byte)
                self.in_string = byte == 0x22

    def _string_byte(self, byte: int) -> None:
        if self._escaped:
            self._escaped = False
        elif byte == 0x5C:
            self._escaped = True
        else:
            self.in_string = byte != 0x22

    def _next_part(self, byte: int) -> int:
        part = self.part
        if byte in _DIGITS:
            return {POINT: FRACTION, FRACTION: FRACTION, EXPONENT: EXPONENT}.get(part, INTEGER)
        if byte == 0x2E and part == INTEGER:
            return POINT
        if byte in b"eE" and part in (INTEGER, FRACTION):
            return EXPONENT
        if byte in b"+-" and part == EXPONENT:
            return EXPONENT
        return INTEGER if byte == 0x2D else OUTSIDE  # a minus sign starts a number
