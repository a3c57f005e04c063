"""Zeros at the end of a number's fraction: evaluated, but written only once a digit follows.

Numbers are written in a shortest form (core.schema.lexical): `559.4`, never `559.40`. A
small model copying `559.40` from a document wants to write the zero, and a mask that then
forbids ending the number makes it write another digit instead (`559.40001`, valid and
wrong). So the decoder lets the model write such zeros (a `.` and zeros after the integer
digits, or zeros after fraction digits) and holds them back: they are evaluated, so the model
sees what it wrote, and are written out when a nonzero digit follows (`1.05`). When the
number ends instead they are dropped, which leaves its value as it was: `559.40` then `,`
gives `559.4,`; `10.00` then `}` gives `10}`; `1.0e5` gives `1e5`.

A minus sign is held the same way while what follows it is zeros (`-`, `-0`, `-0.0`): the
shortest form has no `-0`, so a model writing `-0.0` would be made to write `-0.0X`. It is
written once a nonzero digit follows (`-0.05`, `-5`); when the number ends instead, `0` is
written in its place, the same value, wherever the automaton allows `0` there (where it does
not, as under `exclusiveMaximum: 0`, the sign is not held: the number must be negative). A
sign alone never ends a number.

Zeros are held only where all of these hold, asked of the schema's automaton through Guides:
the automaton needs a digit after them (it may not end there, and allows nothing else), and
could have ended the number before them (it allows a token there that does not continue the
number's digits, or the end of the document). And only outside JSON strings, where `0` and
`.` are nothing but parts of numbers: a string's pattern may give zeros a meaning.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from .guide import Allowed, Guide
from .vocab import IdArray, TokenTable

# What may be held: a point and zeros, or zeros (added to what is held already).
_HOLDABLE = re.compile(rb"\.0*|0+")
# A sign held, with zeros after it: `0` is written in its place if the number ends there.
_SIGNED_ZERO = re.compile(rb"-(?:0(?:\.0*)?)?")
_ZEROS = re.compile(rb"0+")
_DIGITS = b"0123456789"


@dataclass(frozen=True)
class Held:
    """Bytes evaluated but not written: zeros (or a point and zeros) of a number's fraction."""

    text: bytes
    before: Guide  # past the written text and `replacement`: where the number could end
    choices: int  # how many of the latest recorded choices are the held tokens'
    replacement: bytes = b""  # written in place of `text` where the number ends: `0` for a held sign

    @property
    def may_end(self) -> bool:
        """Whether the number may end with this held: not with a sign alone."""
        return self.text != b"-"


def holdable(text: bytes) -> bool:
    """`text` is a point and zeros, or zeros: what a number's value does not need at its end."""
    return _HOLDABLE.fullmatch(text) is not None


class ZeroHolder:
    """Decides what is held, and the choices while it is, for one generation: knows which
    tokens start with a digit, or with a digit or a point (from the token table's prefix
    lookups: a few array writes), and whether the output so far is inside a string."""

    def __init__(self, table: TokenTable, size: int, rewrites: bool = True) -> None:
        """`rewrites`: the caller writes held text only once it is kept, and a held sign's `0`
        in its place (the decoder). llama-cpp-python's own loop writes every token it samples:
        there no sign is held, and a number never ends on a bare point (`10.` is not JSON)."""
        self._rewrites = rewrites
        self._digit_first = self._starting(table, size, _DIGITS)
        self._continuing = self._starting(table, size, _DIGITS + b".")
        zeros = [int(t) for t in table.with_prefix(b"0") if _ZEROS.fullmatch(table.vocab.pieces[int(t)])]
        self._zeros: IdArray = np.asarray(zeros, dtype=np.int32)
        self._zero = next((t for t in zeros if table.vocab.pieces[t] == b"0"), -1)  # -1: no such token
        self._strings = JsonStrings()

    @property
    def in_string(self) -> bool:
        return self._strings.inside

    def feed(self, written: bytes) -> None:
        """Take in bytes just written to the output."""
        self._strings.feed(written)

    def hold(self, held: Held | None, added: bytes, after: Guide, before: Callable[[], Guide | None]) -> Held | None:
        """What is held once a token adding the bytes `added` is taken (`after` is past it;
        `before()`, called only if needed, is past the written text, None where unknown):
        `held` and the new bytes if they are zeros the automaton needs a digit after and the
        number could have ended before, or a sign and zeros (with `0` to write in their place,
        where the decoder rewrites); None where nothing is (the string check is the caller's: a
        guess ahead of the output asks before it is known)."""
        text = (held.text if held is not None else b"") + added
        choices = (held.choices if held is not None else 0) + 1
        if held is not None and held.replacement:
            return replace(held, text=text, choices=choices) if self._signed_zero(text, after) else None
        if held is None and self._rewrites and self._signed_zero(text, after):
            start = before()
            zero = self._past_zero(start) if start is not None else None
            return Held(text, zero, choices, b"0") if zero is not None else None
        if not holdable(text) or not self._needs_digit(after):
            return None
        start = held.before if held is not None else before()
        if start is None or not self._may_end_number(start):
            return None
        return Held(text, start, choices)

    def candidates(self, held: Held, after: Guide, budget: int | None) -> Allowed:
        """The choices while `held` is held (`after` is past it), with a budget (tokens left,
        this one included) as Guide.allowed has it: the tokens allowed after the held text;
        those allowed before it that end the number (the held text is then dropped); and the
        tokens of zeros the automaton does not allow after it (at the limit of fraction
        digits, say): such zeros could only pad, so one chosen ends the number as well
        (`overflows`)."""
        following = after.allowed(budget)
        ends = held.may_end and (self._rewrites or not held.text.endswith(b"."))
        ending = self.ending(held.before, budget) if ends else Allowed(self._zeros[:0], False, False)
        # Zeros the automaton refuses, not those the budget does: a zero the budget rules out
        # would be evaluated and held, and could leave no room to close the number.
        refused = np.setdiff1d(self._zeros, after.allowed().ids)
        overflow = refused if len(ending.ids) or ending.may_end else self._zeros[:0]
        ids = np.concatenate([following.ids, ending.ids, overflow]).astype(np.int32)
        cut = following.budget_cut or ending.budget_cut
        return Allowed(ids, may_end=following.may_end or ending.may_end, budget_cut=cut)

    def ending(self, guide: Guide, budget: int | None) -> Allowed:
        """The tokens allowed at `guide` that end a number there (none continuing its digits),
        and whether the document may end; `budget` as in Guide.allowed."""
        allowed = guide.allowed(budget)
        ends = allowed.ids[~self._continuing[allowed.ids]]
        cut = allowed.budget_cut and int((~self._continuing[guide.allowed().ids]).sum()) > len(ends)
        return Allowed(ends, may_end=allowed.may_end, budget_cut=cut)

    def overflows(self, after: Guide, token: int) -> bool:
        """`token` is zeros the automaton does not allow after the held text (`after` is past it)."""
        return token in self._zeros and not after.copy().try_advance(token)

    @staticmethod
    def _starting(table: TokenTable, size: int, firsts: bytes) -> npt.NDArray[np.bool_]:
        marks = np.zeros(size, dtype=bool)
        for first in firsts:
            marks[table.with_prefix(bytes([first]))] = True
        return marks

    def _signed_zero(self, text: bytes, after: Guide) -> bool:
        """`text` is a sign and zeros (`-`, `-0`, `-0.00`) the automaton needs more of the
        number after (`after` is past it)."""
        return _SIGNED_ZERO.fullmatch(text) is not None and self._only(after, self._continuing)

    def _past_zero(self, guide: Guide) -> Guide | None:
        """A guide past `0` written at `guide`, where the number may end; None where the
        automaton does not allow that."""
        zero = guide.copy()
        if self._zero < 0 or not zero.try_advance(self._zero) or not self._may_end_number(zero):
            return None
        return zero

    def _needs_digit(self, guide: Guide) -> bool:
        """The text so far may not end here, and only tokens starting with a digit may follow."""
        return self._only(guide, self._digit_first)

    @staticmethod
    def _only(guide: Guide, marked: npt.NDArray[np.bool_]) -> bool:
        """The text so far may not end at `guide`, and only `marked` tokens may follow."""
        allowed = guide.allowed()
        return not allowed.may_end and len(allowed.ids) > 0 and bool(marked[allowed.ids].all())

    def _may_end_number(self, guide: Guide) -> bool:
        """A token that does not continue the number's digits may follow here (or the end)."""
        allowed = guide.allowed()
        return allowed.may_end or bool((~self._continuing[allowed.ids]).any())


class JsonStrings:
    """Whether the JSON text written so far is inside a string (fed every byte written)."""

    def __init__(self) -> None:
        self.inside = False
        self._escaped = False

    def feed(self, data: bytes) -> None:
        if not self.inside and b'"' not in data:
            return
        for byte in data:
            if not self.inside:
                self.inside = byte == 0x22
            elif self._escaped:
                self._escaped = False
            elif byte == 0x5C:
                self._escaped = True
            else:
                self.inside = byte != 0x22
