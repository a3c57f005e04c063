"""Evidence envelopes checked against their documents, for the review page (core.review.page).

Input is, per document, its text and the evidence envelope that extraction prints
(`{"source", "data", "evidence": {pointer: {"span", "confidence"}}}`). Checking fails closed: a
span outside the text or a pointer that is not a leaf of the data is refused, never drawn
somewhere plausible. What is checked is the page's input: `CheckedDocument`, each leaf value
joined with its evidence (`Field`). Nothing here reads documents, draws or writes anything.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from ..errors import ReviewError
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


def _error_line(error: object) -> str:
    if isinstance(error, Mapping):
        return f"{error.get('type', 'Error')}: {error.get('message', '')}"
    return str(error)
