"""Values found in the document: where the text of an extracted value occurs, a run of whitespace
matching one space, starting and ending at word edges (`MIT` is not found in `LIMITED`, nor
`20` in `2024`; a number never in a longer one the document writes, `1` in `1 000 000`), and
where the document states a date or number in another form (`12 March 1990` for
`1990-03-12`, `1,267` for `1267`, core.grounding.document_values). Of several occurrences, the
one nearest a given offset. Each value's evidence (core.results.evidence) finds its span here.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .document_values import DocumentValues, Span
from .labels import on_lines
from .tables import collapse_whitespace, lay_out_whitespace, word_cuts

# Occurrences at word edges looked at when choosing the nearest one, and occurrences looked
# at in all (most of those of a letter or two lie inside words): bounds on the work per value.
_MOST_OCCURRENCES = 4096
_MOST_LOOKED_AT = 65536


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
        return nearest(spans, near) if spans else None

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
        return nearest(spans, near) if spans else None

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


def _inside(spans: list[Span], within: Sequence[Span]) -> list[Span]:
    """Of `spans`, those inside one of `within` (all of them where `within` is empty)."""
    return on_lines(spans, within) if within else spans


def nearest(spans: Sequence[tuple[int, int]], near: int) -> tuple[int, int]:
    """Of `spans`, the one starting nearest the offset `near` (of two as near, the later)."""
    return min(spans, key=lambda span: (abs(span[0] - near), -span[0]))
