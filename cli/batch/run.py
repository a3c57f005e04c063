"""`extract` over many documents: one model load, one compile, one result per document.

stdout gets one JSON line per document in input order (`{"source": ..., "data": ...}` or
`{"source": ..., "error": {"type": ..., "message": ...}}`), or nothing with `--output-dir`,
which gets one file per document instead. A failed document never stops the batch; the run
ends with a summary line on stderr and exits non-zero if any document failed. The documents are
extracted in this process (cli.batch.in_process) or spread over `--workers` processes
(cli.batch.workers), each of which runs its share here too (`execute_share`).
"""

from __future__ import annotations

from functools import partial

from gguf_extract import Schema, load_schema, share_conversions

from .. import interrupts, output, preflight
from ..exit_codes import ExitCode, UsageError
from ..request import Request
from ..sources import Source
from . import workers
from .delivery import Tally, deliver_from_worker
from .documents import given_sources, pending, take_shard
from .in_process import extract_here
from .results import check_targets, output_path, prepare_output_dir, result_files


def execute_batch(request: Request, shard: tuple[int, int] | None = None) -> ExitCode:
    options = request.batch
    if request.indent is not None and options.output_dir is None:
        raise UsageError(
            "--indent does not apply to JSON Lines (one document per line)", hint="add --output-dir for indented files"
        )
    schema = load_schema(request.schema)
    given = given_sources(request)
    sources = take_shard(given, *shard) if shard is not None else given
    results = [output_path(options.output_dir, source) for source in sources] if options.output_dir is not None else []
    preflight.check_review_target(request, given, results)
    if options.output_dir is not None:
        check_targets(request, sources, given)
        prepare_output_dir(options.output_dir)
    tally = Tally()
    waiting = pending(request, schema, sources)
    tally.skipped = len(sources) - len(waiting)
    before = result_files(options.output_dir, waiting)
    try:
        _extract_all(request, schema, waiting, tally)
    except KeyboardInterrupt as stop:
        written = len(result_files(options.output_dir, waiting).items() - before.items())
        raise interrupts.BatchInterrupted(stop, _progress_note(request, tally, len(sources), written)) from None
    if not options.quiet:
        output.report_summary(tally.summary(len(sources)))
    return tally.first_failure or ExitCode.OK


def execute_share(request: Request, sources: list[Source]) -> ExitCode:
    """One `--workers` process's share of a batch, `sources` as its parent chose and checked
    them: each document's line on stdout (with `--output-dir`, its file and a line naming it),
    for the parent to pass on and count; no summary, no progress."""
    tally = Tally()
    share_conversions(request.batch.processes)  # the workers together keep to one conversion a core
    try:
        schema = load_schema(request.schema)
        if request.batch.output_dir is not None:
            prepare_output_dir(request.batch.output_dir)
        if sources:
            interrupts.run_interruptibly(lambda: extract_here(request, schema, sources, tally))
    except KeyboardInterrupt as stop:  # Ctrl-C reaches every worker too: its parent alone reports
        raise interrupts.BatchInterrupted(stop, "") from None
    return tally.first_failure or ExitCode.OK


def _extract_all(request: Request, schema: Schema, waiting: list[Source], tally: Tally) -> None:
    if request.batch.workers > 1 and len(waiting) > 1:
        workers.run_workers(request, waiting, partial(deliver_from_worker, request, tally))
    elif waiting:
        interrupts.run_interruptibly(lambda: extract_here(request, schema, waiting, tally))


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
