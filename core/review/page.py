"""The review page: one self-contained HTML file showing where each extracted value came from.

Input is, per document, its text and the evidence envelope that extraction prints
(`{"source", "data", "evidence": {pointer: {"span", "confidence"}}}`); output is a page with
every span highlighted in the text, a table of fields, and low-confidence values marked. This
module checks the envelopes (fail closed: a span outside the text or a pointer that is not a
leaf of the data is refused, never drawn somewhere plausible) and writes the page atomically;
`review_html` draws it. Nothing here reads documents or runs a model.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import OutputError, ReviewError
from ..files import write_atomically
from ..jsontext import json_leaves as walk_leaves

JsonLeaf = str | int | float | bool | None


@dataclass(frozen=True)
class ReviewDocument:
    """One document of a run: `source` as given, its `text` as read (the string spans index
    into), and its envelope as the command line's evidence output prints it (or a batch's error record,
    `{"source", "error": {"type", "message"}}`, which the page shows as a failed document)."""

    source: str
    text: str
    envelope: Mapping[str, object]


@dataclass(frozen=True)
class Field:
    """One leaf value of the data, joined with its evidence."""

    pointer: str
    value: JsonLeaf
    span: tuple[int, int] | None
    confidence: float | None
    grounded: bool | None
    low: bool  # confidence below the run's min_confidence


@dataclass(frozen=True)
class CheckedDocument:
    """A document whose evidence has been checked against its text and data."""

    source: str
    text: str
    fields: tuple[Field, ...]
    error: str | None  # a failed document's "type: message"; it then has no fields


def render_review(documents: Sequence[ReviewDocument], min_confidence: float | None = None) -> str:
    """The review page for `documents`, as one HTML string (no network, no external files).

    Values whose confidence is below `min_confidence` are marked low. Cost: linear in the total
    text and number of fields. Raises ReviewError for a malformed envelope or a bad threshold."""
    from .review_html import render_page  # drawing is only needed here; keep imports light

    _check_threshold(min_confidence)
    checked = [check_document(document, min_confidence) for document in documents]
    return render_page(checked, min_confidence)


def write_review(path: Path, documents: Sequence[ReviewDocument], min_confidence: float | None = None) -> None:
    """Render the page and write it to `path` through a temporary file in the same folder,
    fsync and a rename, so `path` is either its old self or the complete page. The file gets
    the mode any new file would (0666 less the umask). Raises ReviewError before writing
    anything, OutputError when the file cannot be written."""
    page = render_review(documents, min_confidence)
    try:
        write_atomically(path, page)
    except OSError as error:
        raise OutputError(
            f"cannot write the review page {path}: {error.strerror or error}",
            hint="choose a writable folder for the review page",
        ) from None


def check_document(document: ReviewDocument, min_confidence: float | None) -> CheckedDocument:
    """Join the envelope's evidence to the data's leaves, checking every span and confidence."""
    envelope = document.envelope
    if "error" in envelope and "data" not in envelope:
        return CheckedDocument(document.source, document.text, (), _error_line(envelope["error"]))
    evidence = envelope.get("evidence")
    if "data" not in envelope or not isinstance(evidence, Mapping):
        raise ReviewError(
            f"the envelope of {document.source} has no 'data' and 'evidence' object",
            hint="pass the lines that extraction prints with evidence turned on",
        )
    leaves = dict(json_leaves(envelope["data"]))
    for pointer in evidence:
        if pointer not in leaves:
            raise ReviewError(
                f"evidence of {document.source} names {pointer!r}, which is not a leaf value of its data",
                hint="the evidence and the data must come from the same envelope",
            )
    fields = tuple(_field(document, pointer, value, evidence.get(pointer), min_confidence) for pointer, value in leaves.items())
    return CheckedDocument(document.source, document.text, fields, None)


def json_leaves(value: object, pointer: str = "") -> Iterator[tuple[str, JsonLeaf]]:
    """Every leaf (string, number, boolean, null) of a JSON value with its RFC 6901 pointer,
    in document order; ReviewError at the first that is none of these."""
    for where, leaf in walk_leaves(value, pointer):
        if leaf is not None and not isinstance(leaf, str | int | float | bool):
            raise ReviewError(f"the data at {where or '/'} is a {type(leaf).__name__}, not a JSON value")
        yield where, leaf


def _field(document: ReviewDocument, pointer: str, value: JsonLeaf, entry: object, min_confidence: float | None) -> Field:
    where = f"evidence of {document.source} at {pointer or '/'}"
    if not isinstance(entry, Mapping):
        raise ReviewError(
            f"{where}: missing, or not an object with 'span' and 'confidence'",
            hint="every leaf value needs an evidence entry",
        )
    span = _span(entry.get("span"), len(document.text), where)
    confidence = _confidence(entry.get("confidence"), where)
    grounded = entry.get("grounded")
    if grounded is not None and not isinstance(grounded, bool):
        raise ReviewError(f"{where}: 'grounded' is {grounded!r}, not true or false")
    low = confidence is not None and min_confidence is not None and confidence < min_confidence
    return Field(pointer, value, span, confidence, grounded, low)


def _span(raw: object, length: int, where: str) -> tuple[int, int] | None:
    if raw is None:
        return None
    if (
        not isinstance(raw, list | tuple)
        or len(raw) != 2
        or not all(isinstance(bound, int) and not isinstance(bound, bool) for bound in raw)
    ):
        raise ReviewError(f"{where}: span {raw!r} is not [start, end] or null")
    start, end = raw
    if not 0 <= start <= end <= length:
        raise ReviewError(
            f"{where}: span [{start}, {end}] is outside the text of {length} characters",
            hint="spans count characters of the text as read (after decoding), not bytes",
        )
    return start, end


def _confidence(raw: object, where: str) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0.0 <= raw <= 1.0:
        raise ReviewError(f"{where}: confidence {raw!r} is not a number in [0, 1] or null")
    return float(raw)


def _check_threshold(min_confidence: float | None) -> None:
    if min_confidence is not None and (math.isnan(min_confidence) or not 0.0 <= min_confidence <= 1.0):
        raise ReviewError(f"min_confidence {min_confidence} is outside [0, 1]", hint="give a probability such as 0.5")


def _error_line(error: object) -> str:
    if isinstance(error, Mapping):
        return f"{error.get('type', 'Error')}: {error.get('message', '')}"
    return str(error)
