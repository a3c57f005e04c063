"""A document too long for the context, split into pieces that each fit.

The document is cut into sentences and lines (and, where one is longer than a piece, into
words, and a run of text without spaces into runs of characters). A piece takes as many of
those as fit, then ends at the strongest boundary in its second half: a paragraph's end (a
blank line) before a line's end, a line's before a sentence's, a sentence's before a word's.
Each piece after the first starts with the last sentences or lines of the one before it, up
to a small overlap, so that a value cut by a boundary is whole in one of them. Pieces are
slices of the document, and each knows its offset: a position in a piece is that position
in the whole document less the offset.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

# Where text may be cut, strongest first: the group that matched says which.
_BOUNDARY = re.compile(r"(\n[ \t\r\f\v]*\n\s*)|(\n)|((?<=[.!?:;])[ \t]+)")
_PARAGRAPH, _LINE, _SENTENCE, _WORD, _NONE = 4, 3, 2, 1, 0
_WORD_END = re.compile(r"\s+")


@dataclass(frozen=True)
class Piece:
    """document[start:end]."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class _Unit:
    start: int
    end: int
    tokens: int
    boundary: int  # how strong the boundary at its end is (_PARAGRAPH ... _NONE)


def split_document(document: str, room: int, count_tokens: Callable[[str], int], overlap: int) -> list[Piece]:
    """`document` cut into pieces of at most `room` tokens each (as `count_tokens` counts a
    text's tokens), consecutive pieces sharing up to `overlap` tokens of whole sentences or lines.

    Pieces are packed by the sum of their units' tokens, then each is counted whole and
    given back units until it fits: joined text may tokenize into more tokens than its
    parts. `room` must be at least 1."""
    units = list(_units(document, room, count_tokens))
    pieces: list[Piece] = []
    first, new = 0, 0  # the piece's first unit, and its first unit not in the piece before
    while new < len(units):
        last = _piece_end(units, first, new, room)
        while count_tokens(document[units[first].start : units[last].end]) > room:
            if last > new:
                last -= 1
            else:
                first += 1  # less overlap: every unit alone fits
        start, end = units[first].start, units[last].end
        pieces.append(Piece(start, end, document[start:end]))
        new = last + 1
        if new < len(units):
            first = _overlapping_start(units, first, last, room, overlap)
    return pieces


def _piece_end(units: list[_Unit], first: int, new: int, room: int) -> int:
    """The last unit of the piece starting at units[first] (and holding units[new]): of the
    units that fit in `room`, the one ending at the strongest boundary once half the room is
    used (the latest of equals)."""
    fits, total = [first], units[first].tokens
    while fits[-1] + 1 < len(units) and total + units[fits[-1] + 1].tokens <= room:
        total += units[fits[-1] + 1].tokens
        fits.append(fits[-1] + 1)
    if fits[-1] + 1 == len(units):
        return fits[-1]  # the rest of the document fits
    used, candidates = 0, []
    for index in fits:
        used += units[index].tokens
        if used * 2 >= total and index >= new:
            candidates.append(index)
    return max(candidates, key=lambda index: (units[index].boundary, index))


def _overlapping_start(units: list[_Unit], first: int, last: int, room: int, overlap: int) -> int:
    """The first unit of the piece after units[first..last]: the unit after `last`, preceded
    by as many of the piece's last units as fit in `overlap` (with that next unit, in `room`)."""
    start, carried = last + 1, 0
    following = units[last + 1].tokens
    while start - 1 > first and carried + units[start - 1].tokens <= min(overlap, room - following):
        start -= 1
        carried += units[start].tokens
    return start


def _units(text: str, room: int, count: Callable[[str], int]) -> Iterator[_Unit]:
    """`text` as consecutive sentences and lines, each cut into words (and runs of
    characters) where it is longer than `room` tokens."""
    at = 0
    for match in _BOUNDARY.finditer(text):
        if match.end() > at:
            yield from _fitted(text, at, match.end(), _PARAGRAPH - (match.lastindex or 1) + 1, room, count)
            at = match.end()
    if at < len(text):
        yield from _fitted(text, at, len(text), _PARAGRAPH, room, count)


def _fitted(text: str, start: int, end: int, boundary: int, room: int, count: Callable[[str], int]) -> Iterator[_Unit]:
    tokens = count(text[start:end])
    if tokens <= room:
        yield _Unit(start, end, tokens, boundary)
        return
    cuts = [match.end() for match in _WORD_END.finditer(text, start, end) if start < match.end() < end] + [end]
    at = start
    for cut in cuts:
        word = count(text[at:cut])
        if word <= room:
            yield _Unit(at, cut, word, boundary if cut == end else _WORD)
        else:
            yield from _runs(text, at, cut, room, count, boundary if cut == end else _WORD)
        at = cut


def _runs(text: str, start: int, end: int, room: int, count: Callable[[str], int], boundary: int) -> Iterator[_Unit]:
    """text[start:end], which has no boundary to cut at, in runs of at most `room` tokens:
    each the longest that fits (at least one character). Each run is sought near the length of
    the one before (at first, a character a token), stepping by lengths that double until it is
    bracketed, then bisecting the bracket: a run of L characters costs O(L log L) characters
    counted, never the rest of the text (bisecting all of it made planning quadratic)."""
    guess = room
    while start < end:
        low, high = _bracket(text, start, end, guess, lambda run: count(run) <= room)
        while low < high:
            middle = (low + high + 1) // 2
            if count(text[start:middle]) <= room:
                low = middle
            else:
                high = middle - 1
        yield _Unit(start, low, count(text[start:low]), boundary if low == end else _NONE)
        guess, start = low - start, low


def _bracket(text: str, start: int, end: int, guess: int, fits_text: Callable[[str], bool]) -> tuple[int, int]:
    """(low, high): the run from `start` may end at `low` (text[start:low] fits, or is one
    character) and ends at `high` at the latest (text[start:high + 1] does not fit, or `high` is
    `end`). Found from `guess` characters, stepping up or down by a 64th of it, then twice that, ..."""

    def fits(stop: int) -> bool:
        return fits_text(text[start:stop])

    probe, step = min(start + guess, end), max(1, guess // 64)
    if fits(probe):
        while probe < end:
            following = min(probe + step, end)
            if not fits(following):
                return probe, following - 1
            probe, step = following, step * 2
        return end, end
    while probe - step > start + 1:
        if fits(probe - step):
            return probe - step, probe - 1
        probe, step = probe - step, step * 2
    return start + 1, probe - 1
