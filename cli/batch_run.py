"""`extract` over many documents: one model load, one compile, one result per document.

stdout gets one JSON line per document in input order (`{"source": ..., "data": ...}` or
`{"source": ..., "error": {"type": ..., "message": ...}}`), or nothing with `--output-dir`,
which gets one file per document instead. A failed document never stops the batch; the run
ends with a summary line on stderr and exits non-zero if any document failed.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from ..core import batch
from ..core.compiled import CompiledSchema
from ..core.document import read_document
from ..core.errors import DocumentError, ExtractError, ModelError, OutputError
from ..core.extract import Extractor
from ..core.layout import Indenter
from ..core.schema.sources import load_schema
from . import output
from .exit_codes import ExitCode
from .run import Request, UsageError, open_and_compile, report_truncation, sampling


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


def execute_batch(request: Request) -> ExitCode:
    options = request.batch
    if request.indent is not None and options.output_dir is None:
        raise UsageError(
            "--indent does not apply to JSON Lines (one document per line)", hint="add --output-dir for indented files"
        )
    schema, _ = load_schema(request.schema)
    sources = _worker_sources() if options.worker else _sources(request)
    if options.shard is not None:
        sources = batch.take_shard(sources, *batch.parse_shard(options.shard))
    if options.output_dir is not None:
        batch.check_output_names(options.output_dir, sources)
        batch.prepare_output_dir(options.output_dir)
    tally = Tally()
    pending = [s for s in sources if not _already_done(request, s)]
    tally.skipped = len(sources) - len(pending)
    if options.workers > 1 and len(pending) > 1:
        from .workers import run_workers

        run_workers(request, pending, tally)
    elif pending:
        extractor, compiled = open_and_compile(request, schema)
        with _progress(request, len(pending)) as advance:
            for source in pending:
                _one(request, extractor, compiled, source, tally)
                advance(tally.tokens)
    if not options.worker:
        output.report_summary(tally.summary(len(sources)))
    return tally.first_failure or ExitCode.OK


def _worker_sources() -> list[batch.Source]:
    """A worker's documents: JSON lines {"path": ..., "name": ...} on stdin, from its parent."""
    return [batch.Source(Path(item["path"]), item["name"]) for item in map(json.loads, sys.stdin.read().splitlines()) if item]


def _sources(request: Request) -> list[batch.Source]:
    arguments = list(request.documents)
    if "-" in arguments:
        raise UsageError("- (stdin) cannot be one of several documents", hint="use --files-from - to read paths from stdin")
    if request.batch.files_from is not None:
        arguments += batch.read_path_list(_read_list(request.batch.files_from))
    if not arguments:
        raise UsageError("no documents given", hint="pass files or directories, or --files-from a list of paths")
    sources = batch.expand_inputs(arguments, request.batch.glob)
    if not sources:
        raise DocumentError(
            f"no documents in {', '.join(arguments)} (files matching --glob {request.batch.glob!r}, hidden ones skipped)",
            hint="check the directory and --glob",
        )
    return sources


def _read_list(where: str) -> str:
    if where == "-":
        return sys.stdin.read()
    try:
        return Path(where).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read the path list {where}: {error}") from None


def _already_done(request: Request, source: batch.Source) -> bool:
    directory = request.batch.output_dir
    return request.batch.skip_existing and directory is not None and batch.output_path(directory, source).exists()


def _one(request: Request, extractor: Extractor, compiled: CompiledSchema, source: batch.Source, tally: Tally) -> None:
    try:
        text = read_document(source.path, request.encoding)
        extraction = extractor.extract(compiled, text, sampling(request), request.instructions, request.truncate)
        report_truncation(source.label, extraction)
        value = extraction.run()
    except ModelError:
        raise  # the model itself failed: no later document would fare better
    except ExtractError as error:
        _failed(request, source, error, tally)
        return
    tally.tokens += extraction.stats.output_tokens
    record: dict[str, Any] = {"source": source.label, "data": value}
    if request.stats:
        record["stats"] = extraction.stats.as_dict()
    if request.batch.output_dir is None:
        output.JsonWriter().write(json.dumps(record, ensure_ascii=False) + "\n")
    else:
        try:
            batch.write_atomically(
                batch.output_path(request.batch.output_dir, source), _laid_out(request, extraction.text) + "\n"
            )
        except OSError as error:
            _failed(request, source, OutputError(f"cannot write the result of {source.label}: {error.strerror or error}"), tally)
            return
    tally.done += 1


def _laid_out(request: Request, text: str) -> str:
    if request.indent is None:
        return text
    layout = Indenter(request.indent)
    return layout.feed(text) + layout.finish()


def _failed(request: Request, source: batch.Source, error: ExtractError, tally: Tally) -> None:
    tally.failed += 1
    tally.first_failure = tally.first_failure or output.exit_code_for(error)
    output.report_warning(error.message if source.label in error.message else f"{source.label}: {error.message}")
    if request.batch.output_dir is None:
        record = {"source": source.label, "error": {"type": type(error).__name__, "message": error.message}}
        output.JsonWriter().write(json.dumps(record, ensure_ascii=False) + "\n")


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
