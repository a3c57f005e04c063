"""What every extraction offers, whether from one prompt (core.extract.extractor.Extraction) or piece by
piece (core.extract.chunked.ChunkedExtraction): code that only streams, runs and reads results takes an
`ExtractionRun` and works with either.

It says nothing of how the text is made; a chunked run's own parts (`pieces`, `on_piece`) stay on
ChunkedExtraction.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..decode.requests import Request
    from ..decode.types import Logits
    from ..results.abstain import FlaggedValue
    from ..results.evidence import ValueEvidence
    from .extractor import ExtractionStats


class ExtractionRun(Protocol):
    """An extraction from one document: iterate for the JSON text as it is decided, or call
    `run()`; the results are read afterwards (before that, `text` is empty, `value` None)."""

    # Called with (tokens evaluated, tokens to evaluate) while a long prompt is evaluated.
    on_prompt_progress: Callable[[int, int], None] | None

    def __iter__(self) -> Iterator[str]: ...

    def steps(self) -> Generator[bytes | Request, Logits | None, None]:
        """The run, stepped by a scheduler (core.runtime.scheduler): requests to the model and
        the output's bytes; the results are set once it ends."""
        ...

    def run(self) -> Any:
        """Consume the whole run and return the validated value (raises what extracting raises)."""
        ...

    def withhold(
        self, min_confidence: float | None = None, *, abstain: bool = False, null_unstated: bool = True
    ) -> list[FlaggedValue]:
        """Once run: with `null_unstated` (the default), write `null` for each value the
        document does not state (released from grounding, no span); with `abstain`, drop each
        array item below `min_confidence` from its array and write `null` for each value below
        it; each only where the whole document still validates so (core.results.abstain).
        `text`, `value` and `evidence` follow. Returns the unstated values and those below
        `min_confidence` with what became of each (`FlaggedValue`)."""
        ...

    @property
    def prompt(self) -> str:
        """The prompt text the model reads (for a chunked run, its first piece's)."""
        ...

    @property
    def document(self) -> str | None:
        """The document's text as the model saw it, the text spans index (with truncate, the
        head of the document that fit; None for a prompt of the caller's own: no spans then)."""
        ...

    @property
    def text(self) -> str:
        """The JSON text written, once run."""
        ...

    @property
    def value(self) -> Any:
        """The validated value, once run."""
        ...

    @property
    def evidence(self) -> dict[str, ValueEvidence]:
        """Each leaf value's span in the document and confidence, by JSON pointer, once run."""
        ...

    @property
    def stats(self) -> ExtractionStats:
        """The run's figures (`as_dict()` for a JSON object)."""
        ...

    @property
    def budget_closed_at(self) -> str | None:
        """The value being written when the token budget began to rule tokens out; None: it never did."""
        ...
