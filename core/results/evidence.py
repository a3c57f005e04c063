"""Evidence for each extracted value: where in the document it came from, how sure the model was.

For every leaf value (string, number, boolean, null) at JSON pointer P of the output:
- `span`: [start, end) character offsets (Python str indices) into the document text as read,
  for a string or number whose text occurs in the document (a run of whitespace in the
  document matching one space of the value) starting and ending at word edges, as grounded
  values do (`MIT` is not found in `LIMITED`, nor `20` in `2024`; a number never in a longer
  one the document writes, `1` in `1 000 000`), the occurrence nearest
  the previous value's span; else, for a date (an ISO date, or a date-time's date part) or a
  number the document states in another form (`12 March 1990` for `1990-03-12`, `1,267` for
  `1267`, core.grounding.document_values), the span of that statement nearest the previous value's
  span; otherwise None. A grounded string's span is one of the occurrences grounding followed
  to its close (core.grounding.span_filter, `followed_spans`), the nearest the previous value's
  span of them: the document is not searched again for it. Booleans and null have no span:
  their words say nothing of where they came from.
- `confidence`: the product, over the tokens the model chose that overlap the value's text,
  of the probability the model gave each (its own softmax at temperature 1, before any
  mask), raised to CONFIDENCE_EXPONENT so that it reads as the chance the value is right: a
  value the model would not have written without the mask scores low. Tokens written
  without a choice (forced text, a single allowed token) are not counted; None when the
  value had no choice at all.
- `grounded`: for a string held to a span of the document while it was written
  (core.grounding.span_filter), or a date, number, term or pattern string held to one the
  document states (core.grounding.value_holds).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..decode.decode_state import TokenChoice
from ..grounding.document_values import DocumentValues, Span
from ..grounding.labels import on_lines
from ..grounding.tables import collapse_whitespace, lay_out_whitespace, word_cuts
from ..jsontext import join_pointer

# A value's confidence is the product of its tokens' probabilities raised to this power: the bare
# product understates how often a value is right (each token's probability below 1 lowers it),
# and one exponent corrects that without changing which values rank above which. Fitted by log
# loss on bench/calibset, 70 documents kept apart from the development set, with the bundled
# model (`bench/calibrate.py`): there the expected calibration error fell from 0.220 to 0.067
# (plain) and from 0.250 to 0.079 (grounded); on the development set from 0.257 to 0.088 and
# from 0.296 to 0.103 (docs/grounding.md).
CONFIDENCE_EXPONENT = 0.35

_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?=T|$)")
_WHITESPACE = b" \t\n\r"
# Occurrences at word edges looked at when choosing the nearest one, and occurrences looked
# at in all (most of those of a letter or two lie inside words): bounds on the work per value.
_MOST_OCCURRENCES = 4096
_MOST_LOOKED_AT = 65536


@dataclass(frozen=True)
class Leaf:
    """A leaf value of the output and its text's byte range there (quotes included)."""

    pointer: str
    value: Any
    start: int
    end: int


@dataclass(frozen=True)
class ValueEvidence:
    span: tuple[int, int] | None
    confidence: float | None
    grounded: bool | None = None  # None: not a value written under grounding

    def as_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "span": list(self.span) if self.span is not None else None,
            "confidence": None if self.confidence is None else round(self.confidence, 6),
        }
        if self.grounded is not None:
            found["grounded"] = self.grounded
        return found


@dataclass(frozen=True)
class Item:
    """An array item of the output: the array's pointer, the item's index there, and its
    text's byte range (an object's or array's from its bracket to its closing one)."""

    array: str
    index: int
    start: int
    end: int

    @property
    def pointer(self) -> str:
        return f"{self.array}/{self.index}"


def leaves(output: bytes) -> list[Leaf]:
    """The leaf values of the JSON text `output`, in order, with their byte ranges."""
    found: list[Leaf] = []
    _scan(output, _skip(output, 0), "", found, [])
    return found


def leaves_and_items(output: bytes) -> tuple[list[Leaf], list[Item]]:
    """The leaf values of the JSON text `output` and its array items (at any depth, each
    after the items it holds), in order, with their byte ranges."""
    found: list[Leaf] = []
    items: list[Item] = []
    _scan(output, _skip(output, 0), "", found, items)
    return found, items


def _skip(data: bytes, at: int) -> int:
    while at < len(data) and data[at] in _WHITESPACE:
        at += 1
    return at


def _scan(data: bytes, at: int, pointer: str, found: list[Leaf], items: list[Item]) -> int:
    """Scan the value at `at`, appending its leaves and array items; returns the offset after it."""
    opening = data[at : at + 1]
    if opening == b"{":
        return _scan_members(data, at, pointer, found, items)
    if opening == b"[":
        return _scan_items(data, at, pointer, found, items)
    end = _string_end(data, at) if opening == b'"' else _scalar_end(data, at)
    found.append(Leaf(pointer, json.loads(data[at:end]), at, end))
    return end


def _scan_members(data: bytes, at: int, pointer: str, found: list[Leaf], items: list[Item]) -> int:
    at = _skip(data, at + 1)
    while data[at : at + 1] != b"}":
        key_end = _string_end(data, at)
        key = json.loads(data[at:key_end])
        at = _skip(data, _skip(data, key_end) + 1)  # past the colon
        at = _skip(data, _scan(data, at, join_pointer(pointer, key), found, items))
        if data[at : at + 1] == b",":
            at = _skip(data, at + 1)
    return at + 1


def _scan_items(data: bytes, at: int, pointer: str, found: list[Leaf], items: list[Item]) -> int:
    at = _skip(data, at + 1)
    index = 0
    while data[at : at + 1] != b"]":
        end = _scan(data, at, f"{pointer}/{index}", found, items)
        items.append(Item(pointer, index, at, end))
        at = _skip(data, end)
        index += 1
        if data[at : at + 1] == b",":
            at = _skip(data, at + 1)
    return at + 1


def _string_end(data: bytes, at: int) -> int:
    index = at + 1
    while data[index] != 0x22:
        index += 2 if data[index] == 0x5C else 1
    return index + 1


def _scalar_end(data: bytes, at: int) -> int:
    for word in (b"true", b"false", b"null"):
        if data.startswith(word, at):
            return at + len(word)
    match = _NUMBER.match(data, at)
    if match is None:
        raise ValueError(f"no JSON value at byte {at}")
    return match.end()


def pointer_at(output: bytes, offset: int) -> str:
    """The pointer of the innermost value whose text holds byte `offset` of `output` (the
    value being written there, for an unfinished one: the nearest leaf before it)."""
    best = ""
    for leaf in leaves(output):
        if leaf.start <= offset:
            best = leaf.pointer
    return best


class DocumentSearch:
    """Finds values in a document, a run of whitespace matching one space, where they start and
    end at word edges (a value found only inside longer words is not found: a span there would
    make an invented value look sourced)."""

    def __init__(self, document: str, values: DocumentValues | None = None) -> None:
        """`values`: the document's dates and numbers where grounding read them already."""
        self._collapsed = lay_out_whitespace(document)  # as grounding lays it out: no value spans a gap between columns
        self._cut = word_cuts(self._collapsed)
        # A number is a word of its own where a hyphen joins it to a word (`34-year-old`,
        # `2024-06-14`), but never part of longer digits (`20` of `2024`, `3` of `3.10`).
        self._number_cut = word_cuts(self._collapsed, joiners=".")
        self._piece_cut = word_cuts(self._collapsed, joiners="")
        # _origin[i]: where character i of the collapsed text starts in the document.
        self._origin: list[int] = []
        position = 0
        for match in re.finditer(r"\s+|\S+", document):
            if match.group()[0].isspace():
                self._origin.append(match.start())
            else:
                self._origin.extend(range(match.start(), match.end()))
            position = match.end()
        self._origin.append(position)
        self._document = document
        self._values = values

    def _read(self) -> DocumentValues:
        """The document's dates and numbers: grounding's, where it read them, else read now."""
        if self._values is None:
            self._values = DocumentValues(self._document)
        return self._values

    @functools.cached_property
    def _numbers_read(self) -> tuple[frozenset[Span], list[int], list[int]]:
        """The spans of the numbers the document writes (core.grounding.written_numbers): all
        of them, their starts in order, and the furthest end of those up to each start."""
        spans = sorted({span for spans in self._read().numbers.values() for span in spans})
        reach = list(itertools.accumulate((end for _, end in spans), max))
        return frozenset(spans), [start for start, _ in spans], reach

    def _in_longer_number(self, span: Span) -> bool:
        """Whether `span` is a piece of a longer number the document writes (the `1` of
        `1 000 000`, the `1.234` of `1.234,56`), not one of its numbers itself."""
        whole, starts, reach = self._numbers_read
        before = bisect.bisect_right(starts, span[0]) - 1
        return span not in whole and before >= 0 and reach[before] >= span[1]

    def stated(self, text: str, near: int, number: bool, within: Sequence[Span] = ()) -> tuple[int, int] | None:
        """The span, nearest the document offset `near`, of a statement in another form of the
        date (`number`: the number) whose JSON text is `text` (core.grounding.document_values);
        `within`: of those inside one of these spans."""
        table = self._read().numbers if number else self._read().dates
        spans: list[Span] = _inside(table.get(text, []), within)
        return _nearest(spans, near) if spans else None

    def span(
        self, text: str, near: int, number: bool = False, within: Sequence[Span] = (), pieces: bool = False
    ) -> tuple[int, int] | None:
        """The document span of the occurrence of `text` nearest the document offset `near`;
        for a `number` (its JSON text), one not signed otherwise in the document (`5` of `-5`)
        nor a piece of a longer number it writes (`1` of `1 000 000`); `within`: of those
        inside one of these spans; `pieces`: `.` and `-` join no words (`2019` of `2019-2024`)."""
        needle = collapse_whitespace(text)
        if not needle:
            return None
        starts = self._starts(needle, self._number_cut if number else self._piece_cut if pieces else self._cut)
        if number:
            starts = [start for start in starts if not self._signed_otherwise(start, needle)]
        spans = _inside([(self._origin[start], self._origin[start + len(needle) - 1] + 1) for start in starts], within)
        if number:
            spans = [span for span in spans if not self._in_longer_number(span)]
        return _nearest(spans, near) if spans else None

    def _signed_otherwise(self, start: int, needle: str) -> bool:
        """Whether a sign stands before the number at `start` that its text does not have: a
        `-` or `+` right before it, itself not after a word (`a-5` joins words; ` -5` signs)."""
        if needle[0] in "-+" or start == 0 or self._collapsed[start - 1] not in "-+":
            return False
        return start == 1 or not self._collapsed[start - 2].isalnum()

    def _starts(self, needle: str, cut: npt.NDArray[np.bool_]) -> list[int]:
        starts: list[int] = []
        found, looked_at = self._collapsed.find(needle), 0
        while found >= 0 and len(starts) < _MOST_OCCURRENCES and looked_at < _MOST_LOOKED_AT:
            if not cut[found] and not cut[found + len(needle)]:
                starts.append(found)
            found, looked_at = self._collapsed.find(needle, found + 1), looked_at + 1
        return starts


def gather(
    output: bytes,
    document: str | None,
    choices: Sequence[TokenChoice],
    grounded_bodies: Sequence[tuple[int, int, bool]] = (),
    held_values: Sequence[tuple[int, int, bool]] = (),
    followed: Sequence[Sequence[tuple[int, int]]] = (),
    values: DocumentValues | None = None,
    held_within: Sequence[Sequence[Span]] = (),
) -> dict[str, ValueEvidence]:
    """The evidence of every leaf of `output` (see the module's docstring). `grounded_bodies`:
    the byte ranges of string bodies written under grounding, and whether they stayed grounded;
    `held_values`: the same of the dates (their bodies) and numbers held under grounding;
    `followed`: per grounded body, the document spans of the occurrences grounding followed
    to its close (Grounding.followed_spans), among which its span is chosen (none given: none
    followed, the document is searched); `values`: the document's dates and numbers, where
    grounding read them already (else read when first needed); `held_within`: per held value,
    the document spans of the labeled values it was narrowed to (ValueGrounding.within), where
    its span is looked for."""
    search = DocumentSearch(document, values) if document is not None else None
    sources = {(start, end): spans for (start, end, _), spans in zip(grounded_bodies, followed, strict=False)}
    narrowed = [(start, end, spans) for (start, end, _), spans in zip(held_values, held_within, strict=False) if spans]
    starts = [choice.start for choice in choices]
    found: dict[str, ValueEvidence] = {}
    near = 0
    for leaf in leaves(output):
        within = next((spans for start, end, spans in narrowed if leaf.start <= start and end <= leaf.end), ())
        held = any(leaf.start <= start and end <= leaf.end and grounded for start, end, grounded in held_values)
        span = _followed_span(leaf, sources, near) or _leaf_span(leaf, output, search, near, within, held)
        if span is not None:
            near = span[1]
        confidence = _confidence(leaf, choices, starts)
        found[leaf.pointer] = ValueEvidence(span, confidence, _grounded(leaf, grounded_bodies, held_values))
    return found


def _followed_span(leaf: Leaf, sources: dict[tuple[int, int], Sequence[tuple[int, int]]], near: int) -> tuple[int, int] | None:
    """For a grounded string, the occurrence the decoder followed (of several it may have been,
    the one nearest `near`, as a search would choose): searching the document again for the
    value's text could find another, one it was not copied from."""
    if not isinstance(leaf.value, str):
        return None
    spans = sources.get((leaf.start + 1, leaf.end - 1))
    return _nearest(spans, near) if spans else None


def _inside(spans: list[Span], within: Sequence[Span]) -> list[Span]:
    """Of `spans`, those inside one of `within` (all of them where `within` is empty)."""
    return on_lines(spans, within) if within else spans


def _nearest(spans: Sequence[tuple[int, int]], near: int) -> tuple[int, int]:
    return min(spans, key=lambda span: (abs(span[0] - near), -span[0]))


def _leaf_span(
    leaf: Leaf, output: bytes, search: DocumentSearch | None, near: int, within: Sequence[Span] = (), held: bool = False
) -> tuple[int, int] | None:
    """`within`: the spans of the labeled values a held value was narrowed to, where its span is
    looked for first (written as it is, then stated in another form). `held`: a string held to
    one the document states, which may be a piece of a word joined by `.` or `-` (a pattern's
    `2019` of `2019-2024`), found there where it is found nowhere else."""
    if search is None or isinstance(leaf.value, bool) or leaf.value is None:
        return None
    looks = [within, ()] if within else [()]
    for inside in looks:
        if isinstance(leaf.value, str):
            date = _ISO_DATE.match(leaf.value)
            stated = search.stated(date.group(), near, False, inside) if date else None
            found = search.span(leaf.value, near, within=inside) or stated
            if found is None and held:
                found = search.span(leaf.value, near, within=inside, pieces=True)
        else:
            text = output[leaf.start : leaf.end].decode("ascii")
            found = search.span(text, near, number=True, within=inside) or search.stated(text, near, True, inside)
        if found is not None:
            return found
    return None


def _confidence(leaf: Leaf, choices: Sequence[TokenChoice], starts: list[int]) -> float | None:
    """The product of the chosen tokens' probabilities over those overlapping the leaf, raised
    to CONFIDENCE_EXPONENT."""
    product: float | None = None
    index = max(bisect.bisect_right(starts, leaf.start) - 1, 0)
    for choice in _from(choices, index):
        if choice.start >= leaf.end:
            break
        if choice.end <= leaf.start or choice.probability is None:
            continue
        product = choice.probability if product is None else product * choice.probability
    return None if product is None else product**CONFIDENCE_EXPONENT


def _from(choices: Sequence[TokenChoice], index: int) -> Iterator[TokenChoice]:
    for position in range(index, len(choices)):
        yield choices[position]


def _grounded(leaf: Leaf, bodies: Sequence[tuple[int, int, bool]], values: Sequence[tuple[int, int, bool]]) -> bool | None:
    if isinstance(leaf.value, str):
        return next((grounded for start, end, grounded in (*bodies, *values) if leaf.start < start and end < leaf.end), None)
    if isinstance(leaf.value, int | float) and not isinstance(leaf.value, bool):
        return next((grounded for start, end, grounded in values if leaf.start <= start and end <= leaf.end), None)
    return None
