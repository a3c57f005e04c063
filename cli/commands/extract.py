"""The `extract` command once its options are parsed: the checks made before any model loads,
then one document streamed to stdout here, or a batch through cli.batch."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gguf_extract import ExtractError, Indenter, Schema, check_readable, load_schema, resolve_model

from .. import evidence, interrupts, output, preflight, progress
from ..batch.run import execute_batch
from ..exit_codes import ExitCode, as_extract_error
from ..extraction_steps import laid_out, open_and_compile, read_for, report_how_it_fits, report_setup, start_extraction
from ..hints import worded
from ..output import ReaderGone
from ..records import error_record
from ..request import Request
from ..sources import Source


def execute(request: Request) -> ExitCode:
    shard = preflight.check_request(request)
    if request.model is not None:  # a name is looked up once, and the file it names is kept from results like a path
        request = replace(request, model=str(resolve_model(request.model)))
    if not request.is_batch or request.batch.output_dir is None:
        output.require_stdout()
    if request.is_batch:
        return execute_batch(request, shard)
    document = request.documents[0]
    preflight.check_review_target(request, [Source(Path(document), "")] if document != "-" else [], [])
    schema = load_schema(request.schema)
    page = evidence.ReviewPage(request.review, request.min_confidence)
    try:
        if document != "-":
            check_readable(Path(document))  # before the model: read once the context's limit is known
        return interrupts.run_interruptibly(lambda: _extract_one(request, schema, page))
    except Exception as error:
        if not isinstance(error, ReaderGone):
            _show_failure(page, document, error)
        raise


def _show_failure(page: evidence.ReviewPage, document: str, error: Exception) -> None:
    """Put the document's error on the review page, which is written all the same (a page that
    cannot be written now is one more warning: the error itself is reported next)."""
    if page.path is None:
        return
    page.add_failure(document, error_record(document, as_extract_error(error)))
    try:
        page.write()
    except ExtractError as unwritten:
        output.report_warning(worded(unwritten).message)


def _extract_one(request: Request, schema: Schema, page: evidence.ReviewPage) -> ExitCode:
    """Stream the document's JSON to stdout (in the model thread: see cli.interrupts)."""
    extractor, compiled = open_and_compile(request, schema)
    text = read_for(request, extractor, request.documents[0])
    extraction = start_extraction(request, extractor, compiled, text)
    report_how_it_fits(request, request.documents[0], extraction)
    if request.verbose:
        report_setup(request, extractor)
        output.stderr.print(extraction.prompt, markup=False)
    writer = output.JsonWriter()
    with progress.shown(extraction, request.batch.quiet):
        if request.evidence or request.abstain or (compiled.grounds_any and compiled.may_withhold):
            # written once the evidence is complete, the doubtful values withheld, and the values
            # the document does not state written as null (where the schema has a place for null)
            extraction.run()
            flagged = evidence.withhold(extraction, request.abstain, request.min_confidence)
            if request.evidence:
                writer.write(output.json_line(evidence.envelope(request.documents[0], extraction)))
            else:
                writer.write(laid_out(request, extraction.text) + "\n")
        else:
            layout = Indenter(request.indent) if request.indent is not None else None
            for chunk in extraction:
                writer.write(layout.feed(chunk) if layout else chunk)
            writer.write((layout.finish() if layout else "") + "\n")
            flagged = evidence.withhold(extraction, False, request.min_confidence, streamed=True)
    evidence.report(request.documents[0], extraction, request.min_confidence, flagged, request.abstain)
    page.add(request.documents[0], extraction)
    page.write()
    if request.stats:
        output.report_stats(extraction.stats.as_dict())
    return ExitCode.OK
