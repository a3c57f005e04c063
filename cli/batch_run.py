"""`extract` over many documents: one model load, one compile, one result per document.

stdout gets one JSON line per document in input order (`{"source": ..., "data": ...}` or
`{"source": ..., "error": {"type": ..., "message": ...}}`), or nothing with `--output-dir`,
which gets one file per document instead. A failed document never stops the batch; the run
ends with a summary line on stderr and exits non-zero if any document failed.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from gguf_extract import (
    CompiledSchema,
    DocumentError,
    ExtractError,
    ExtractionRun,
    Extractor,
    FlaggedValue,
    JobSteps,
    ModelError,
    OutputError,
    Schema,
    conversions_now,
    load_schema,
    share_conversions,
)

from . import batch, evidence, interrupts, output, preflight, workers
from .exit_codes import ExitCode, InternalError, UsageError, exit_code_for
from .extraction_steps import laid_out, open_and_compile, read_for, report_how_it_fits, report_setup, start_extraction
from .hints import worded
from .request import Request


@dataclass
class Tally:
    done: int = 0
    failed: int = 0
    skipped: int = 0
    tokens: int = 0
    first_failure: ExitCode | None = None
    started: float = field(default_factory=time.perf_counter)

    def summary(self, total: int) -> str:
        seconds = time.perf_counter() - self.started
        rate = self.done / seconds if seconds > 0 else 0.0
        parts = [f"{self.done} extracted", f"{self.failed} failed"] + ([f"{self.skipped} skipped"] if self.skipped else [])
        return f"{total} documents: {', '.join(parts)} in {seconds:.1f} s ({rate:.2f} documents/s)"

    def fail(self, code: ExitCode) -> None:
        self.failed += 1
        self.first_failure = self.first_failure or code


def execute_batch(request: Request, shard: tuple[int, int] | None = None) -> ExitCode:
    options = request.batch
    if request.indent is not None and options.output_dir is None:
        raise UsageError(
            "--indent does not apply to JSON Lines (one document per line)", hint="add --output-dir for indented files"
        )
    schema = load_schema(request.schema)
    given = _sources(request)
    sources = batch.take_shard(given, *shard) if shard is not None else given
    results = [batch.output_path(options.output_dir, source) for source in sources] if options.output_dir is not None else []
    preflight.check_review_target(request, given, results)
    if options.output_dir is not None:
        preflight.check_targets(request, sources, given)
        batch.prepare_output_dir(options.output_dir)
    tally = Tally()
    pending = _pending(request, schema, sources)
    tally.skipped = len(sources) - len(pending)
    before = _result_files(request, pending)
    try:
        _extract_all(request, schema, pending, tally)
    except KeyboardInterrupt as stop:
        written = len(_result_files(request, pending).items() - before.items())
        raise interrupts.BatchInterrupted(stop, _progress_note(request, tally, len(sources), written)) from None
    if not options.quiet:
        output.report_summary(tally.summary(len(sources)))
    return tally.first_failure or ExitCode.OK


def execute_share(request: Request, sources: list[batch.Source]) -> ExitCode:
    """One `--workers` process's share of a batch, `sources` as its parent chose and checked
    them: each document's line on stdout (with `--output-dir`, its file and a line naming it),
    for the parent to pass on and count; no summary, no progress."""
    tally = Tally()
    share_conversions(request.batch.processes)  # the workers together keep to one conversion a core
    try:
        schema = load_schema(request.schema)
        if request.batch.output_dir is not None:
            batch.prepare_output_dir(request.batch.output_dir)
        if sources:
            interrupts.run_interruptibly(lambda: _extract_here(request, schema, sources, tally))
    except KeyboardInterrupt as stop:  # Ctrl-C reaches every worker too: its parent alone reports
        raise interrupts.BatchInterrupted(stop, "") from None
    return tally.first_failure or ExitCode.OK


def _extract_all(request: Request, schema: Schema, pending: list[batch.Source], tally: Tally) -> None:
    if request.batch.workers > 1 and len(pending) > 1:
        workers.run_workers(request, pending, lambda outcome: _count(request, outcome, tally))
    elif pending:
        interrupts.run_interruptibly(lambda: _extract_here(request, schema, pending, tally))


def _count(request: Request, outcome: workers.Outcome, tally: Tally) -> None:
    """Count a worker's `outcome` and pass it on: its line to stdout, or a warning where the
    worker could not give one itself."""
    if outcome.code is None:
        tally.done += 1
    else:
        tally.fail(outcome.code)
        if outcome.record["error"]["type"] == workers.WORKER_DIED:
            output.report_warning(outcome.record["error"]["message"])
    if request.batch.output_dir is None:
        output.JsonWriter().write(output.json_line(outcome.record))


def _extract_here(request: Request, schema: Schema, pending: list[batch.Source], tally: Tally) -> None:
    """The batch in this process (in the model thread: see cli.interrupts)."""
    extractor, compiled = open_and_compile(request, schema)
    if request.verbose and request.batch.setup_warnings:  # once a batch (one worker says it for all)
        report_setup(request, extractor)
    page = evidence.ReviewPage(request.review, request.min_confidence)
    try:
        with _progress(request, len(pending)) as advance:
            # No more sequences than documents: each sequence's slot is context memory.
            parallel = min(request.batch.parallel or extractor.default_parallel, len(pending))
            if request.chunk and parallel == 1 and (request.batch.parallel or 1) > 1:
                # One document: its pieces are what goes --parallel at a time.
                _extract_pieces_together(request, extractor, compiled, pending, tally, page, advance)
            else:
                _extract_together(request, extractor, compiled, pending, tally, page, advance, parallel)
    finally:
        page.write()  # an interrupted batch's page shows the documents done


def _result_files(request: Request, sources: list[batch.Source]) -> dict[Path, batch.FileIdentity]:
    """The result files of `sources` that exist now, by identity: each write replaces the file,
    so comparing two of these tells exactly which results a run wrote (with any worker)."""
    directory = request.batch.output_dir
    if directory is None:
        return {}
    found = ((target, batch.file_identity(target)) for target in (batch.output_path(directory, s) for s in sources))
    return {target: identity for target, identity in found if identity is not None}


def _progress_note(request: Request, tally: Tally, total: int, written: int) -> str:
    """What an interrupted batch leaves behind, and how to go on from there."""
    directory = request.batch.output_dir
    if directory is None:
        return f"stdout holds the lines of the first {tally.done + tally.failed} of {total} documents"
    resume = "rerun with --skip-existing"
    if request.batch.skip_existing:
        resume = "rerun the same command"
    elif request.batch.overwrite:
        resume = "rerun with --skip-existing in place of --overwrite"
    earlier = f", {tally.skipped} were there already" if tally.skipped else ""
    return (
        f"wrote {written} of {total} results to {directory}{earlier} (every file there is complete);"
        f" to extract the rest, {resume}"
    )


def _sources(request: Request) -> list[batch.Source]:
    arguments = list(request.documents)
    if "-" in arguments:
        raise _stdin_in_batch(request)
    if request.batch.files_from is not None:
        arguments += batch.read_path_list(_read_list(request.batch.files_from))
    if not arguments:
        raise UsageError("no documents given", hint=_no_documents_hint())
    sources: list[batch.Source] = []
    for argument in arguments:
        found = batch.expand_inputs([argument], request.batch.glob)
        if not found and len(arguments) > 1:  # alone, it is the error below
            output.report_warning(
                f"directory {argument} holds no documents (no files matching --glob {request.batch.glob!r},"
                " hidden ones skipped): nothing is extracted from it"
            )
        sources += found
    if not sources:
        raise DocumentError(
            f"no documents in {', '.join(arguments)} (files matching --glob {request.batch.glob!r}, hidden ones skipped)",
            hint="check the directory and --glob",
        )
    return sources


def _stdin_in_batch(request: Request) -> UsageError:
    """Why `-` cannot be read in this batch: beside other documents, or alone with --output-dir,
    where each result is named after its document's file."""
    if request.documents == ("-",) and request.batch.files_from is None:
        return UsageError(
            "- (stdin) cannot go to --output-dir: each result there is named after its document's file",
            hint="redirect stdout instead (extract -s SCHEMA - > out/doc.json), or save the document to a file and pass its path",
        )
    return UsageError("- (stdin) cannot be one of several documents", hint="use --files-from - to read paths from stdin")


def _no_documents_hint() -> str:
    if sys.stdin is not None and not sys.stdin.isatty():  # something is piped in: it was meant as the document
        return "pass - to read the document from stdin (cat doc.txt | extract -s s.json -), or files, directories or --files-from"
    return "pass files or directories, - for stdin, or --files-from a list of paths"


def _read_list(where: str) -> str:
    """The path list. Undecodable bytes are kept as surrogate escapes, as Python does for
    command-line arguments, so a file name that is not UTF-8 still names its file."""
    try:
        data = sys.stdin.buffer.read() if where == "-" else Path(where).read_bytes()
    except OSError as error:
        raise UsageError(f"cannot read the path list {where}: {error.strerror or error}") from None
    return data.decode("utf-8", "surrogateescape")


def _pending(request: Request, schema: Schema, sources: list[batch.Source]) -> list[batch.Source]:
    """The documents to extract: with --skip-existing, those without a complete, valid result."""
    directory = request.batch.output_dir
    if not request.batch.skip_existing or directory is None:
        return sources
    check = batch.ResultCheck(schema)
    pending = []
    for source in sources:
        target = batch.output_path(directory, source)
        if not os.path.lexists(target):
            pending.append(source)
        elif (fault := check.fault(target)) is not None:
            output.report_warning(f"{target} {fault}: extracting {source.label} again")
            pending.append(source)
    return pending


@dataclass
class Finished:
    """A document's extraction, done, with --abstain applied and, with --output-dir, its result
    file written (as soon as it was done: a slow document before it in the batch holds back only
    the line that counts it)."""

    extraction: ExtractionRun
    flagged: list[FlaggedValue]  # the doubtful and unstated values, and what became of each (--abstain)
    written: Path | None = None  # the result file, with --output-dir
    unwritten: OutputError | None = None  # why the result file could not be written


def _finished(
    request: Request, extractor: Extractor, compiled: CompiledSchema, source: batch.Source, text: Future[str]
) -> JobSteps[Finished]:
    """`source` (its text read ahead in `text`) extracted and, with --output-dir, its result file
    written: the steps a scheduler runs (core.runtime); raises what reading or extracting it raises."""
    extraction = _started(request, extractor, compiled, source, text.result())
    yield from extraction.steps()
    return _finish(request, source, extraction)


def _started(
    request: Request, extractor: Extractor, compiled: CompiledSchema, source: batch.Source, text: str
) -> ExtractionRun:
    """The extraction of `source` from its `text`, its truncation reported."""
    extraction = start_extraction(request, extractor, compiled, text)
    report_how_it_fits(request, source.label, extraction)
    return extraction


def _finish(request: Request, source: batch.Source, extraction: ExtractionRun) -> Finished:
    """`extraction`, done: --abstain applied and, with --output-dir, its result file written."""
    finished = Finished(extraction, evidence.withhold(extraction, request.abstain, request.min_confidence))
    if request.batch.output_dir is not None:
        target = batch.output_path(request.batch.output_dir, source)
        try:
            with interrupts.committing():
                batch.write_atomically(target, laid_out(request, extraction.text) + "\n")
            finished.written = target
        except OSError as error:
            finished.unwritten = OutputError(f"cannot write the result of {source.label}: {error.strerror or error}")
    return finished


def _extract_together(
    request: Request,
    extractor: Extractor,
    compiled: CompiledSchema,
    pending: list[batch.Source],
    tally: Tally,
    page: evidence.ReviewPage,
    advance: Callable[[int], None],
    parallel: int,
) -> None:
    """The documents decoded `parallel` at a time by one scheduler (core.runtime), admitted
    and delivered in input order; 1 is one after another."""
    with contextlib.closing(_read_ahead(request, extractor, pending, parallel)) as texts:
        jobs = (
            partial(_finished, request, extractor, compiled, source, text) for source, text in zip(pending, texts, strict=True)
        )
        # Closed at once if delivering raises (a closed stdout, a failed model): the documents in
        # flight stop and the context is freed then, not whenever the traceback is dropped.
        with contextlib.closing(extractor.run_parallel(jobs, compiled, request.instructions, parallel)) as outcomes:
            for source, outcome in zip(pending, outcomes, strict=True):
                if outcome.error is not None:
                    _failure(request, source, outcome.error, tally, page)
                else:
                    assert outcome.value is not None
                    _deliver(request, source, outcome.value, tally, page)
                advance(tally.tokens)


def _extract_pieces_together(
    request: Request,
    extractor: Extractor,
    compiled: CompiledSchema,
    pending: list[batch.Source],
    tally: Tally,
    page: evidence.ReviewPage,
    advance: Callable[[int], None],
) -> None:
    """--chunk with --parallel and one document: its pieces decoded --parallel at a time
    (ChunkedExtraction runs them through a scheduler of its own)."""
    for source in pending:
        try:
            extraction = _started(request, extractor, compiled, source, read_for(request, extractor, source.path))
            extraction.run()
            finished = _finish(request, source, extraction)
        except Exception as error:
            _failure(request, source, error, tally, page)
        else:
            _deliver(request, source, finished, tally, page)
        advance(tally.tokens)


def _read_ahead(
    request: Request, extractor: Extractor, sources: list[batch.Source], parallel: int
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


def _failure(request: Request, source: batch.Source, error: BaseException, tally: Tally, page: evidence.ReviewPage) -> None:
    """`source` failed with `error`: its record, and the batch goes on, unless the model itself failed."""
    if isinstance(error, ModelError) or not isinstance(error, Exception):
        raise error  # the model itself failed: no later document would fare better
    if not isinstance(error, ExtractError):  # a bug met on one document: its record says so
        if request.debug:
            traceback.print_exception(error)
        error = InternalError(error)
    _failed(request, source, error, tally, page)


def _deliver(request: Request, source: batch.Source, finished: Finished, tally: Tally, page: evidence.ReviewPage) -> None:
    """`source`'s result, in input order: its line on stdout (with --output-dir, only a --workers
    worker's line naming its file), the evidence and review page, counted."""
    if finished.unwritten is not None:
        _failed(request, source, finished.unwritten, tally, page)
        return
    extraction = finished.extraction
    tally.tokens += extraction.stats.output_tokens
    record: dict[str, Any] = {"source": source.label, "data": extraction.value}
    if request.evidence:
        record = evidence.envelope(source.label, extraction)
    evidence.report(source.label, extraction, request.min_confidence, finished.flagged, request.abstain)
    page.add(source.label, extraction)
    if request.stats:
        record["stats"] = extraction.stats.as_dict()
    if finished.written is not None:
        record = {"source": source.label, "file": str(finished.written)}  # for a --workers parent, which counts them
    with interrupts.committing():
        if request.batch.output_dir is None or request.batch.worker:
            output.JsonWriter().write(output.json_line(record))
        tally.done += 1


def _failed(request: Request, source: batch.Source, error: ExtractError, tally: Tally, page: evidence.ReviewPage) -> None:
    message = worded(error).message
    output.report_warning(message if source.label in message else f"{source.label}: {message}")
    record = {"source": source.label, "error": {"type": type(error).__name__, "message": message}}
    page.add_failure(source.label, record)
    with interrupts.committing():
        if request.batch.output_dir is None or request.batch.worker:
            output.JsonWriter().write(output.json_line(record))
        tally.fail(exit_code_for(error))


@contextmanager
def _progress(request: Request, total: int) -> Iterator[Any]:
    """Documents done, tokens per second and time left on stderr, only while it is a terminal."""
    if request.batch.quiet or request.batch.worker or not output.stderr.is_terminal:
        yield lambda tokens: None
        return
    columns = (
        TextColumn("extracting"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeRemainingColumn(),
    )
    started = time.perf_counter()
    with Progress(*columns, console=output.stderr, transient=True) as progress:
        task = progress.add_task("documents", total=total, rate="")

        def advance(tokens: int) -> None:
            elapsed = time.perf_counter() - started
            progress.update(task, advance=1, rate=f"{tokens / elapsed:.0f} tokens/s" if elapsed > 0 else "")

        yield advance
