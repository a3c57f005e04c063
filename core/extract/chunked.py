"""Extraction from a document longer than the context: split it into pieces that fit
(core.documents.split), extract from each with the same compiled schema, merge the values (core.results.combine).

    run = ChunkedExtraction(extractor, compiled, document)   # plans the pieces (tokenizing only)
    run.run()                                                 # extracts piece after piece
    run.value, run.evidence, run.stats                        # the merged value, spans in `document`

Every piece's prompt starts with the same instructions and schema outline, which the model
keeps evaluated from one piece to the next (Extractor.shared_prefix), so a piece costs its
own text and its output only. A piece's extraction is exactly a run on that text alone.

With `parallel` N above 1 the pieces, being independent extractions, are decoded N at a time
as sequences of one context (Extractor.run_parallel, core.runtime); they are merged in document
order as they come, so the result is the one piece after piece gives wherever the model's
numbers for a sequence do not depend on what shares its decodes. As one job of a batch
(`steps`) the pieces go one after another on that job's sequence.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field, fields
from typing import Any

from ..decode.requests import Request, requests_only
from ..decode.types import Logits, SamplingSettings
from ..documents.split import Piece, split_document
from ..index.compiled import CompiledSchema
from ..results.combine import Combiner, annotate, dump, evidence_of
from ..results.evidence import ValueEvidence
from ..schema.read.validation import validator_for_schema
from .extractor import Extraction, ExtractionStats, Extractor, Withholding

# The most bytes of text read for a chunked extraction (an endless input is refused at once).
CHUNKED_TEXT_LIMIT = 64 * 1024 * 1024
# Tokens kept free in each piece's context: the document's tokens at a piece's edges may
# differ from the same text's tokens inside the prompt.
_MARGIN = 16
_FEWEST_PIECE_TOKENS = 64  # a piece smaller than this holds too little to extract from
_OVERLAP_SHARE = 10  # consecutive pieces share up to 1/10 of a piece


@dataclass
class ChunkedStats(ExtractionStats):
    """The pieces' figures added up, with the number of pieces and each one's seconds."""

    pieces: int = 0
    piece_seconds: list[float] = field(default_factory=list)
    additions_left_out: int = 0  # merge additions that would have broken the schema (core.results.combine)

    def as_dict(self) -> dict[str, Any]:
        return {**super().as_dict(), "piece_seconds": [round(s, 3) for s in self.piece_seconds]}


def plan_pieces(
    extractor: Extractor, compiled: CompiledSchema, document: str, settings: SamplingSettings, instructions: str | None
) -> list[Piece]:
    """`document` cut so that each piece's prompt and the token budget fit the context, with
    a small overlap. Raises ContextTooSmall when the instructions and budget leave too little."""
    count = extractor.tokenizer.tokenize
    overhead = extractor.prompt_token_count(compiled, "x", instructions) - len(count(b"x"))
    budget = extractor.budget
    room = budget.room(overhead + _MARGIN, settings.max_tokens)
    if room < _FEWEST_PIECE_TOKENS:
        message = (
            f"the instructions and a budget of {settings.max_tokens} output tokens leave {max(room, 0)} tokens of the"
            f" context of {budget.limit} for each piece of the document; pieces need at least {_FEWEST_PIECE_TOKENS}"
        )
        raise budget.too_small(message, needed=budget.limit - room + _FEWEST_PIECE_TOKENS, shorter_document_helps=False)
    return split_document(document, room, lambda text: len(count(text.encode("utf-8"))), room // _OVERLAP_SHARE)


class ChunkedExtraction(Withholding):
    """A long document's extraction, piece by piece: iterate for the merged JSON text (one
    chunk, once every piece is done) or call run(); afterwards `text`, `value`, `evidence`
    (spans are offsets into the whole document) and `stats`, as for an Extraction."""

    def __init__(
        self,
        extractor: Extractor,
        compiled: CompiledSchema,
        document: str,
        settings: SamplingSettings | None = None,
        instructions: str | None = None,
        parallel: int = 1,
    ) -> None:
        self._extractor = extractor
        self._compiled = compiled
        self._settings = settings or SamplingSettings()
        self._instructions = instructions
        self.document = document
        self.pieces = plan_pieces(extractor, compiled, document, self._settings, instructions)
        self.prompt = extractor.prompt_for(compiled, self.pieces[0].text, instructions).text  # the first piece's
        self.stats = ChunkedStats(pieces=len(self.pieces), compile_seconds=compiled.compile_seconds)
        # Pieces decoded together: no more sequences than pieces (each costs a slot of cells).
        self.parallel = max(1, min(parallel, len(self.pieces)))
        self.text = ""
        self.value: Any = None
        self.evidence: dict[str, ValueEvidence] = {}
        self.budget_closed_at: str | None = None  # "POINTER of piece N of M", for the first piece whose budget closed it
        self.on_piece: Callable[[int, int], None] | None = None  # (pieces done, pieces) after each
        self.on_prompt_progress: Callable[[int, int], None] | None = None  # each piece's, see Extraction

    def __iter__(self) -> Iterator[str]:
        """The merged JSON text, once every piece is done (pieces `parallel` at a time)."""
        self._merge(self._extracted())
        yield self.text

    def steps(self) -> Generator[bytes | Request, Logits | None, None]:
        """This extraction, stepped (core.decode.requests): the pieces one after another on one
        sequence, then the merged text as its only output. A scheduler runs it."""
        done: list[tuple[Extraction, float]] = []
        for piece in self.pieces:
            started = time.perf_counter()
            extraction = self._piece(piece.text)
            yield from requests_only(extraction.steps())  # a piece's own text is not the output
            done.append((extraction, time.perf_counter() - started))
        self._merge(iter(done))
        yield self.text.encode("utf-8")

    def _merge(self, extracted: Iterator[tuple[Extraction, float]]) -> None:
        combiner = Combiner(validator_for_schema(self._compiled.schema))
        for number, (piece, (extraction, seconds)) in enumerate(zip(self.pieces, extracted, strict=True)):
            combiner.add(annotate(extraction.text, extraction.evidence, piece.start))
            self._count(extraction.stats, seconds)
            if self.budget_closed_at is None and extraction.budget_closed_at is not None:
                where = extraction.budget_closed_at or "/"
                self.budget_closed_at = self.stats.budget_closed_at = f"{where} of piece {number + 1} of {len(self.pieces)}"
            if self.on_piece is not None:
                self.on_piece(number + 1, len(self.pieces))
        self.stats.additions_left_out = combiner.additions_left_out
        self.text = dump(combiner.result)
        self.value = self._compiled.validate(self.text)
        self.evidence = evidence_of(combiner.result)

    def _extracted(self) -> Iterator[tuple[Extraction, float]]:
        """Each piece's finished extraction with its seconds, in document order; the first
        piece that fails raises its error (the pieces still in flight are stopped)."""
        jobs = (lambda piece=piece: self._piece_steps(piece.text) for piece in self.pieces)
        runs = self._extractor.run_parallel(jobs, self._compiled, self._instructions, self.parallel)
        with contextlib.closing(runs) as outcomes:
            for outcome in outcomes:
                if outcome.error is not None:
                    raise outcome.error
                assert outcome.value is not None
                yield outcome.value

    def _piece(self, text: str) -> Extraction:
        extraction = self._extractor.extract(self._compiled, text, self._settings, self._instructions)
        if self.parallel == 1:  # pieces decoded together would interleave their prompts' progress
            extraction.on_prompt_progress = self.on_prompt_progress
        return extraction

    def _piece_steps(self, text: str) -> Generator[bytes | Request, Logits | None, tuple[Extraction, float]]:
        started = time.perf_counter()
        extraction = self._piece(text)
        yield from extraction.steps()
        return extraction, time.perf_counter() - started

    def _count(self, piece: ExtractionStats, seconds: float) -> None:
        for item in fields(ExtractionStats):
            value = getattr(piece, item.name)
            if isinstance(value, (int, float)) and item.name != "compile_seconds":
                setattr(self.stats, item.name, getattr(self.stats, item.name) + value)
        self.stats.piece_seconds.append(seconds)

    def run(self) -> Any:
        """Extract from every piece and return the merged, validated value."""
        for _ in self:
            pass
        return self.value
