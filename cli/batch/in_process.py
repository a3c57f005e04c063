"""A batch's documents extracted in this process (the whole batch, or a `--workers` process's
share of it): one model load, one compile, the documents decoded `--parallel` at a time by one
scheduler (core.runtime), each read ahead of its turn, each delivered in input order
(cli.batch.delivery). A failed document never stops the batch, unless the model itself failed."""

from __future__ import annotations

import contextlib
import traceback
from collections import deque
from collections.abc import Callable, Generator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from gguf_extract import (
    CompiledSchema,
    ExtractError,
    ExtractionRun,
    Extractor,
    FlaggedValue,
    JobSteps,
    ModelError,
    OutputError,
    Schema,
    conversions_now,
)

from .. import evidence, interrupts, output, progress
from ..exit_codes import as_extract_error, exit_code_for
from ..extraction_steps import laid_out, open_and_compile, read_for, report_how_it_fits, report_setup, start_extraction
from ..records import DocumentRecord, error_record
from ..request import Request
from ..sources import Source
from .delivery import Tally, deliver
from .results import output_path, write_atomically


def extract_here(request: Request, schema: Schema, pending: list[Source], tally: Tally) -> None:
    """The batch in this process (in the model thread: see cli.interrupts)."""
    extractor, compiled = open_and_compile(request, schema)
    if request.verbose and request.batch.setup_warnings:  # once a batch (one worker says it for all)
        report_setup(request, extractor)
    page = evidence.ReviewPage(request.review, request.min_confidence)
    try:
        with progress.documents_shown(len(pending), request.batch.quiet or request.batch.worker) as advance:
            run = InProcessRun(request, extractor, compiled, tally, page, advance)
            # No more sequences than documents: each sequence's slot is context memory.
            parallel = min(request.batch.parallel or extractor.default_parallel, len(pending))
            if request.chunk and parallel == 1 and (request.batch.parallel or 1) > 1:
                # One document: its pieces are what goes --parallel at a time.
                run.pieces_together(pending)
            else:
                run.together(pending, parallel)
    finally:
        page.write()  # an interrupted batch's page shows the documents done


@dataclass
class Finished:
    """A document's extraction, done, with --abstain applied and, with --output-dir, its result
    file written (as soon as it was done: a slow document before it in the batch holds back only
    the line that counts it)."""

    extraction: ExtractionRun
    flagged: list[FlaggedValue]  # the doubtful and unstated values, and what became of each (--abstain)
    written: Path | None = None  # the result file, with --output-dir
    unwritten: OutputError | None = None  # why the result file could not be written


@dataclass
class InProcessRun:
    """What the documents of a batch in this process share: the model and compiled schema, the
    tally, the review page and the progress display (`advance`, told the output tokens so far)."""

    request: Request
    extractor: Extractor
    compiled: CompiledSchema
    tally: Tally
    page: evidence.ReviewPage
    advance: Callable[[int], None]

    def together(self, pending: list[Source], parallel: int) -> None:
        """The documents decoded `parallel` at a time by one scheduler (core.runtime), admitted
        and delivered in input order; 1 is one after another."""
        extractor = self.extractor
        with contextlib.closing(_read_ahead(self.request, extractor, pending, parallel)) as texts:
            jobs = (partial(self._finished, source, text) for source, text in zip(pending, texts, strict=True))
            # Closed at once if delivering raises (a closed stdout, a failed model): the documents in
            # flight stop and the context is freed then, not whenever the traceback is dropped.
            with contextlib.closing(extractor.run_parallel(jobs, self.compiled, self.request.instructions, parallel)) as outcomes:
                for source, outcome in zip(pending, outcomes, strict=True):
                    if outcome.error is not None:
                        self._failure(source, outcome.error)
                    else:
                        assert outcome.value is not None
                        self._deliver(source, outcome.value)
                    self.advance(self.tally.tokens)

    def pieces_together(self, pending: list[Source]) -> None:
        """--chunk with --parallel and one document: its pieces decoded --parallel at a time
        (ChunkedExtraction runs them through a scheduler of its own)."""
        for source in pending:
            try:
                extraction = self._started(source, read_for(self.request, self.extractor, source.path))
                extraction.run()
                finished = self._finish(source, extraction)
            except Exception as error:
                self._failure(source, error)
            else:
                self._deliver(source, finished)
            self.advance(self.tally.tokens)

    def _finished(self, source: Source, text: Future[str]) -> JobSteps[Finished]:
        """`source` (its text read ahead in `text`) extracted and, with --output-dir, its result file
        written: the steps a scheduler runs (core.runtime); raises what reading or extracting it raises."""
        extraction = self._started(source, text.result())
        yield from extraction.steps()
        return self._finish(source, extraction)

    def _started(self, source: Source, text: str) -> ExtractionRun:
        """The extraction of `source` from its `text`, its truncation reported."""
        extraction = start_extraction(self.request, self.extractor, self.compiled, text)
        report_how_it_fits(self.request, source.label, extraction)
        return extraction

    def _finish(self, source: Source, extraction: ExtractionRun) -> Finished:
        """`extraction`, done: --abstain applied and, with --output-dir, its result file written."""
        request = self.request
        finished = Finished(extraction, evidence.withhold(extraction, request.abstain, request.min_confidence))
        if request.batch.output_dir is not None:
            target = output_path(request.batch.output_dir, source)
            try:
                with interrupts.committing():
                    write_atomically(target, laid_out(request, extraction.text) + "\n")
                finished.written = target
            except OSError as error:
                finished.unwritten = OutputError(f"cannot write the result of {source.label}: {error.strerror or error}")
        return finished

    def _deliver(self, source: Source, finished: Finished) -> None:
        """`source`'s result, in input order: its record (with --output-dir, for a --workers
        worker's parent, naming its file), the evidence and review page, counted."""
        if finished.unwritten is not None:
            self._failed(source, finished.unwritten)
            return
        request, extraction = self.request, finished.extraction
        self.tally.tokens += extraction.stats.output_tokens
        record: dict[str, Any] = {"source": source.label, "data": extraction.value}
        if request.evidence:
            record = evidence.envelope(source.label, extraction)
        evidence.report(source.label, extraction, request.min_confidence, finished.flagged, request.abstain)
        self.page.add(source.label, extraction)
        if request.stats:
            record["stats"] = extraction.stats.as_dict()
        if finished.written is not None:
            record = {"source": source.label, "file": str(finished.written)}  # for a --workers parent, which counts them
        deliver(request, self.tally, DocumentRecord(record, None))

    def _failure(self, source: Source, error: BaseException) -> None:
        """`source` failed with `error`: its record, and the batch goes on, unless the model itself failed."""
        if isinstance(error, ModelError) or not isinstance(error, Exception):
            raise error  # the model itself failed: no later document would fare better
        if not isinstance(error, ExtractError) and self.request.debug:  # a bug met on one document: its record says so
            traceback.print_exception(error)
        self._failed(source, as_extract_error(error))

    def _failed(self, source: Source, error: ExtractError) -> None:
        record = error_record(source.label, error)
        message = record["error"]["message"]
        output.report_warning(message if source.label in message else f"{source.label}: {message}")
        self.page.add_failure(source.label, record)
        deliver(self.request, self.tally, DocumentRecord(record, exit_code_for(error)))


def _read_ahead(
    request: Request, extractor: Extractor, sources: list[Source], parallel: int
) -> Generator[Future[str], None, None]:
    """Each source's text, read (PDF, HTML and DOCX converted in their bounded child processes)
    ahead of its turn by a few threads, no more than conversions run at once: while the
    documents in flight decode, the next ones convert, and each is admitted in input order
    once its text is there, so which documents share a decode never depends on how long a
    conversion took."""
    extractor.document_byte_limit  # noqa: B018 (worked out here, not in the reading threads at once)
    ahead = parallel + conversions_now()
    readers = ThreadPoolExecutor(max_workers=conversions_now(), thread_name_prefix="extract-read")
    queued: deque[Future[str]] = deque()
    waiting = iter(sources)
    try:
        for _ in sources:
            while len(queued) < ahead and (source := next(waiting, None)) is not None:
                queued.append(readers.submit(read_for, request, extractor, source.path))
            yield queued.popleft()
    finally:  # a conversion under way ends within its own bound; nobody waits for it here
        readers.shutdown(wait=False, cancel_futures=True)
