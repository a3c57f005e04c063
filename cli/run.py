"""What one `extract` invocation does, kept apart from option parsing."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..core.check import SchemaReport, check_schema_support
from ..core.compiled import CompiledSchema
from ..core.decode import SamplingSettings
from ..core.document import check_readable, read_document, read_stream
from ..core.errors import UndecodableDocument
from ..core.extract import Extraction, Extractor, ModelOptions
from ..core.layout import Indenter
from ..core.schema.load import Schema
from ..core.schema.sources import load_schema
from . import evidence, interrupts, output, preflight
from .exit_codes import ExitCode


@dataclass(frozen=True)
class BatchOptions:
    files_from: str | None = None
    glob: str = "*"
    output_dir: Path | None = None
    skip_existing: bool = False
    shard: str | None = None
    quiet: bool = False
    workers: int = 1
    worker: bool = False  # run by a parent with --workers: documents from stdin, no summary
    overwrite: bool = False


@dataclass(frozen=True)
class Request:
    documents: tuple[str, ...]
    schema: str
    model: Path | None
    max_tokens: int
    temperature: float
    top_p: float
    seed: int | None
    n_gpu_layers: int
    threads: int | None
    ctx: int | None
    instructions: str | None
    lenient: bool
    recursion_depth: int
    stats: bool
    verbose: bool
    use_cache: bool = True
    truncate: bool = False
    indent: int | None = None
    encoding: str = "utf-8"
    batch: BatchOptions = BatchOptions()
    grounded: bool = False
    evidence: bool = False
    min_confidence: float | None = None
    review: Path | None = None
    document_format: str | None = None  # a name from core.convert.FORMATS; None: told from each document

    @property
    def is_batch(self) -> bool:
        """More than one document, a directory, a list of paths or an output directory: JSON
        Lines (or files) out, one result per document, failures reported and skipped."""
        batch = self.batch
        single = len(self.documents) == 1 and not Path(self.documents[0]).is_dir()
        return not single or batch.files_from is not None or batch.output_dir is not None or batch.worker


Action = Callable[[Request], ExitCode]


def execute(request: Request) -> ExitCode:
    shard = preflight.check_request(request)
    if not request.is_batch or request.batch.output_dir is None:
        output.require_stdout()
    if request.is_batch:
        from .batch_run import execute_batch

        return execute_batch(request, shard)
    schema, _ = load_schema(request.schema)
    if request.documents[0] != "-":
        check_readable(Path(request.documents[0]))  # before the model: read once the context's limit is known
    return interrupts.run_interruptibly(lambda: _extract_one(request, schema))


def _extract_one(request: Request, schema: Schema) -> ExitCode:
    """Stream the document's JSON to stdout (in the model thread: see cli.interrupts)."""
    extractor, compiled = open_and_compile(request, schema)
    document = request.documents[0]
    text = read_text(document, request.encoding, extractor.document_byte_limit, request.truncate, request.document_format)
    settings = sampling(request)
    extraction = extractor.extract(compiled, text, settings, request.instructions, request.truncate)
    report_truncation(request.documents[0], extraction)
    if request.verbose:
        output.stderr.print(f"model: {extractor.model_path}", markup=False)
        output.stderr.print(f"settings: {settings}", markup=False)
        output.stderr.print(extraction.prompt, markup=False)
    writer = output.JsonWriter()
    if request.evidence:
        extraction.run()  # the envelope is written once the evidence is complete
        writer.write(output.json_line(evidence.envelope(request.documents[0], extraction)))
    else:
        layout = Indenter(request.indent) if request.indent is not None else None
        for chunk in extraction:
            writer.write(layout.feed(chunk) if layout else chunk)
        writer.write((layout.finish() if layout else "") + "\n")
    evidence.report(request.documents[0], extraction, request.min_confidence)
    page = evidence.ReviewPage(request.review, request.min_confidence)
    page.add(request.documents[0], extraction)
    page.write()
    if request.stats:
        output.report_stats(extraction.stats.as_dict())
    return ExitCode.OK


def report_truncation(source: str, extraction: Extraction) -> None:
    dropped = extraction.stats.document_tokens_dropped
    if dropped:
        output.report_warning(f"{source}: --truncate left out the last {dropped} tokens of the document to fit the context")


def open_and_compile(request: Request, schema: Schema) -> tuple[Extractor, CompiledSchema]:
    options = ModelOptions(request.ctx, request.threads, request.n_gpu_layers, request.use_cache)
    extractor = Extractor.open(request.model, options)
    if extractor.cache_refusal:
        output.report_warning(f"not using the cache: {extractor.cache_refusal} (make it private to you, or pass --no-cache)")
    if extractor.context_capped:
        limit = extractor.context_limit
        output.report_warning(f"--ctx {request.ctx} is more than the model's context of {limit} tokens: using {limit}")
    compiled = extractor.compile(schema, request.recursion_depth, request.lenient, request.grounded)
    for refusal in compiled.relaxed:
        output.report_warning(f"--lenient: ignoring {refusal.message.removeprefix('unsupported ')}")
    return extractor, compiled


def sampling(request: Request) -> SamplingSettings:
    return SamplingSettings(request.max_tokens, request.temperature, request.top_p, request.seed)


def read_text(document: str | Path, encoding: str, max_bytes: int | None, truncate: bool, kind: str | None = None) -> str:
    """The document's text (converted from `kind`, or the format its content tells); `-` is
    stdin. At most `max_bytes` of text are kept (a longer document cannot fit the context):
    more is an error, or with `truncate` the head is kept."""
    try:
        return read_document_or_head(document, encoding, max_bytes, truncate, kind)
    except UnicodeError as error:  # idna and punycode fail with UnicodeError, not UnicodeDecodeError
        raise UndecodableDocument(str(document), encoding, str(error)) from None


def read_document_or_head(
    document: str | Path, encoding: str, max_bytes: int | None, truncate: bool, kind: str | None = None
) -> str:
    """The text of `document` (`-`: stdin), its head that fits `max_bytes` with `truncate`."""
    if document == "-":
        return read_stream(sys.stdin.buffer, "<stdin>", encoding, max_bytes, kind, truncate)
    return read_document(Path(document), encoding, max_bytes, kind, truncate)


@dataclass(frozen=True)
class CheckRequest:
    schema: str
    recursion_depth: int
    as_json: bool


def check(request: CheckRequest) -> ExitCode:
    schema, label = load_schema(request.schema)
    report = check_schema_support(schema, request.recursion_depth)
    if request.as_json:
        output.JsonWriter().write(json.dumps({"schema": label, **report.as_dict()}, ensure_ascii=False) + "\n")
    else:
        output.JsonWriter().write(render_report(label, report))
    return ExitCode.OK if report.supported else ExitCode.SCHEMA


def render_report(label: str, report: SchemaReport) -> str:
    verdict = "supported: every keyword is enforced exactly" if report.supported else f"refused: {len(report.refused)} keyword(s)"
    lines = [f"schema: {label} ({report.draft})", f"result: {verdict}"]
    lines.append("enforced: " + (", ".join(f"{k} x{n}" for k, n in report.enforced.items()) or "nothing"))
    lines += [f"refused: {r.pointer or '/'}: {r.message}" for r in report.refused]
    lines += [f"ignored (no meaning in {report.draft}): {pointer}" for pointer in report.ignored]
    if report.groundable or report.never_grounded:
        lines.append("grounded with --grounded: " + (", ".join(report.groundable) or "none"))
    if report.never_grounded:
        lines.append("never grounded (x-grounded: false): " + ", ".join(report.never_grounded))
    lines.append(
        f"automaton (built as far as the example reached): {report.nfa_states} NFA states,"
        f" {report.dfa_states_explored} DFA states,"
        f" shortest document {report.shortest_document_bytes} bytes, compiled in {report.seconds:.3f} s"
    )
    lines.append(f"example: {report.example}")
    return "\n".join(lines) + "\n"
