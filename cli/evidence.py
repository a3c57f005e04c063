"""Evidence on the command line: the `--evidence` envelope, what becomes of doubtful values
(--abstain) and of values the document does not state (--grounded), warnings for them and for a
document the token budget closed, and the `--review` page of a run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gguf_extract import ExtractionRun, FlaggedValue, ReviewDocument, write_review

from . import output

# The most characters of a value quoted in a warning.
_QUOTED = 60


def envelope(source: str, extraction: ExtractionRun) -> dict[str, Any]:
    """`{"source", "data", "evidence"}` for one document."""
    evidence = {pointer: found.as_json() for pointer, found in extraction.evidence.items()}
    return {"source": source, "data": extraction.value, "evidence": evidence}


def report(
    source: str, extraction: ExtractionRun, min_confidence: float | None, flagged: list[FlaggedValue], abstain: bool = False
) -> None:
    """Warn on stderr where the budget closed the document, and about each value `withhold`
    flagged: below `min_confidence` or not stated in the document, and what became of it."""
    if extraction.budget_closed_at is not None:
        output.report_warning(
            f"{source}: the token budget closed the document while writing {extraction.budget_closed_at or '/'}"
            " (later values may be cut short or missing; raise --max-tokens)"
        )
    for found in flagged:
        output.report_warning(f"{source}: {_flagged_line(found, min_confidence, abstain)}")


def _flagged_line(found: FlaggedValue, min_confidence: float | None, abstain: bool) -> str:
    pointer = found.pointer or "/"
    confidence = "no confidence" if found.confidence is None else f"confidence {found.confidence:.3g}"
    if found.reason == "unstated":
        said = f"{pointer} {_quoted(found.value)} is not stated in the document (released from grounding, no span; {confidence})"
        if found.outcome == "null":
            return f"{said}: written as null"
        if found.outcome == "dropped":
            return f"{said}: dropped from its array"
        if found.item:
            return (
                f"{said}: kept, as its array may not lose it (minItems) nor hold null there;"
                ' mark it "x-grounded": false to accept values of the model\'s own'
            )
        return (
            f"{said}: kept, as the schema allows no null there; make the field nullable to have it written as null,"
            ' or mark it "x-grounded": false to accept values of the model\'s own'
        )
    below = f"has {confidence}, below --min-confidence {min_confidence}"
    if found.outcome == "null":
        return f"{pointer} {below}: written as null (--abstain)"
    if found.outcome == "dropped":
        return f"{pointer} {_quoted(found.value)} {below}: dropped from its array (--abstain)"
    if abstain:
        return f"{pointer} {below}: kept, as the schema allows neither null nor its removal there (--abstain)"
    return f"{pointer} {below}"


def _quoted(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _QUOTED else text[: _QUOTED - 3] + "..."


def withhold(
    extraction: ExtractionRun, abstain: bool, min_confidence: float | None, streamed: bool = False
) -> list[FlaggedValue]:
    """Once the extraction has run, the values below --min-confidence and those the document
    does not state (released from grounding, no span), each flagged with what became of it:
    `null` in place of each unstated value, and with --abstain of each value below
    --min-confidence (an array item below it dropped from its array), where the schema allows
    it; nothing changes in a text already `streamed`."""
    return extraction.withhold(min_confidence, abstain=abstain and not streamed, null_unstated=not streamed)


class ReviewPage:
    """The documents of a run, written as one review page at the end (None: not asked for)."""

    def __init__(self, path: Path | None, min_confidence: float | None) -> None:
        self.path = path
        self.min_confidence = min_confidence
        self.documents: list[ReviewDocument] = []

    def add(self, source: str, extraction: ExtractionRun) -> None:
        if self.path is not None and extraction.document is not None:
            self.documents.append(ReviewDocument(source, extraction.document, envelope(source, extraction)))

    def add_failure(self, source: str, record: dict[str, Any]) -> None:
        """A document that failed, shown with its error (`record` as a batch's error line)."""
        if self.path is not None:
            self.documents.append(ReviewDocument(source, "", record))

    def write(self) -> None:
        """The page, whatever became of the documents: one that every document failed says so."""
        if self.path is not None:
            write_review(self.path, self.documents, self.min_confidence)
