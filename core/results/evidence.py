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
  to its close (core.grounding.follower, `followed_spans`), the nearest the previous value's
  span of them: the document is not searched again for it. Booleans and null have no span:
  their words say nothing of where they came from.
- `confidence`: the product, over the tokens the model chose that overlap the value's text,
  of the probability the model gave each (its own softmax at temperature 1, before any
  mask), raised to CONFIDENCE_EXPONENT so that it reads as the chance the value is right: a
  value the model would not have written without the mask scores low. Tokens written
  without a choice (forced text, a single allowed token) are not counted; None when the
  value had no choice at all.
- `grounded`: for a string held to a span of the document while it was written
  (core.grounding.follower), or a date, number, term or pattern string held to one the
  document states (core.grounding.value_holds).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..decode.state import TokenChoice
from ..grounding.document_search import DocumentSearch, nearest
from ..grounding.document_values import Span
from ..grounding.record import GroundingRecord, WrittenUnderGrounding
from ..json_reader import Leaf, read_leaves

# A value's confidence is the product of its tokens' probabilities raised to this power: the bare
# product understates how often a value is right (each token's probability below 1 lowers it),
# and one exponent corrects that without changing which values rank above which. Fitted by log
# loss on bench/calibset, 70 documents kept apart from the development set, with the bundled
# model (`bench/calibrate.py`): there the expected calibration error fell from 0.220 to 0.067
# (plain) and from 0.250 to 0.079 (grounded); on the development set from 0.257 to 0.088 and
# from 0.296 to 0.103 (docs/grounding.md).
CONFIDENCE_EXPONENT = 0.35

_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?=T|$)")


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


def gather(
    output: bytes, document: str | None, choices: Sequence[TokenChoice], record: GroundingRecord | None = None
) -> dict[str, ValueEvidence]:
    """The evidence of every leaf of `output` (see the module's docstring), with spans in
    `document` (None: no spans), confidences from the `choices` the model made, and what
    grounding recorded of the output (`Grounding.record`; None: written without grounding): a
    grounded string's span is chosen among the occurrences grounding followed to its close
    (none followed: the document is searched), a held value's looked for first among the
    labeled values it was narrowed to."""
    record = record if record is not None else GroundingRecord()
    search = DocumentSearch(document, record.found) if document is not None else None
    sources = {(body.start, body.end): body.followed for body in record.bodies}
    narrowed = [value for value in record.values if value.within]
    starts = [choice.start for choice in choices]
    found: dict[str, ValueEvidence] = {}
    near = 0
    for leaf in read_leaves(output).leaves:
        within = next((value.within for value in narrowed if leaf.start <= value.start and value.end <= leaf.end), ())
        held = any(leaf.start <= value.start and value.end <= leaf.end and value.grounded for value in record.values)
        span = _followed_span(leaf, sources, near) or _leaf_span(leaf, output, search, near, within, held)
        if span is not None:
            near = span[1]
        confidence = _confidence(leaf, choices, starts)
        found[leaf.pointer] = ValueEvidence(span, confidence, _grounded(leaf, record))
    return found


def _followed_span(leaf: Leaf, sources: dict[tuple[int, int], tuple[Span, ...]], near: int) -> Span | None:
    """For a grounded string, the occurrence the decoder followed (of several it may have been,
    the one nearest `near`, as a search would choose): searching the document again for the
    value's text could find another, one it was not copied from."""
    if not isinstance(leaf.value, str):
        return None
    spans = sources.get((leaf.start + 1, leaf.end - 1))
    return nearest(spans, near) if spans else None


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


def _grounded(leaf: Leaf, record: GroundingRecord) -> bool | None:
    """Whether the leaf stayed grounded: a string by the body or held value inside its quotes,
    a number by the held value it is; None where grounding held neither."""
    if isinstance(leaf.value, str):
        inside: tuple[WrittenUnderGrounding, ...] = (*record.bodies, *record.values)
        return next((part.grounded for part in inside if leaf.start < part.start and part.end < leaf.end), None)
    if isinstance(leaf.value, int | float) and not isinstance(leaf.value, bool):
        return next((value.grounded for value in record.values if leaf.start <= value.start and value.end <= leaf.end), None)
    return None
