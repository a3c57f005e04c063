"""What grounding recorded of one output, handed over once the output is written: each string
body written under grounding, each date and number held to one the document states, and the
document's dates and numbers as grounding read them. A value's evidence (core.results.evidence)
is drawn from it; `Grounding.record` makes one (core.grounding.follower).
"""

from __future__ import annotations

from dataclasses import dataclass

from .document_values import DocumentValues, Span


@dataclass(frozen=True)
class WrittenUnderGrounding:
    """A part of the output written under grounding: its byte range there, and whether it stayed
    grounded to its end."""

    start: int
    end: int
    grounded: bool


@dataclass(frozen=True)
class GroundedBody(WrittenUnderGrounding):
    """A string body written under grounding, with the document spans (character offsets) of the
    occurrences it may have been copied from: those grounding followed while it was written
    (none where it was released, or is empty)."""

    followed: tuple[Span, ...] = ()


@dataclass(frozen=True)
class HeldValue(WrittenUnderGrounding):
    """A date (its body) or number held to one the document states, with the document spans of
    the labeled values it was narrowed to (none where its label narrowed nothing), where its
    span is looked for first."""

    within: tuple[Span, ...] = ()


@dataclass(frozen=True)
class GroundingRecord:
    """What grounding recorded of one output (see the module's docstring); empty: an output
    written without grounding. `found`: the document's dates and numbers, where grounding read
    them (else read when first needed)."""

    bodies: tuple[GroundedBody, ...] = ()
    values: tuple[HeldValue, ...] = ()
    found: DocumentValues | None = None
