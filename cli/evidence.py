"""Evidence on the command line: the `--evidence` envelope, warnings for low-confidence values
and for a document the token budget closed, and the `--review` page of a run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gguf_extract import ExtractionRun, ReviewDocument, write_review

from . import output


def envelope(source: str, extraction: ExtractionRun) -> dict[str, Any]:
    """`{"source", "data", "evidence"}` for one document."""
    evidence = {pointer: found.as_json() for pointer, found in extraction.evidence.items()}
    return {"source": source, "data": extraction.value, "evidence": evidence}


def report(source: str, extraction: ExtractionRun, min_confidence: float | None, withheld: list[str] | None = None) -> None:
    """Warn on stderr about values below `min_confidence` (saying which `withheld` became null:
    --abstain), and where the budget closed the document."""
    if extraction.budget_closed_at is not None:
        output.report_warning(
            f"{source}: the token budget closed the document while writing {extraction.budget_closed_at or '/'}"
            " (later values may be cut short or missing; raise --max-tokens)"
        )
    if min_confidence is None:
        return
    for pointer, found in extraction.evidence.items():
        if found.confidence is not None and found.confidence < min_confidence:
            written = ": written as null (--abstain)" if withheld and pointer in withheld else ""
            below = f"has confidence {found.confidence:.3g}, below --min-confidence {min_confidence}"
            output.report_warning(f"{source}: {pointer or '/'} {below}{written}")


def withhold(extraction: ExtractionRun, abstain: bool, min_confidence: float | None) -> list[str]:
    """--abstain: `null` in place of the values below --min-confidence where the schema allows
    it (once the extraction has run); the JSON pointers of those values."""
    return extraction.abstain(min_confidence) if abstain and min_confidence is not None else []


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
