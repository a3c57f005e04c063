"""The steps of an extraction that one document (cli.commands.extract) and a batch (cli.batch)
share: open the model and compile the schema (with the warnings those give), the sampling
settings, a document's text read within the context's limit, its extraction started (whole or
in pieces), what it says of how the document fit, and its result laid out."""

from __future__ import annotations

import sys
from pathlib import Path

from gguf_extract import (
    CHUNKED_TEXT_LIMIT,
    ChunkedExtraction,
    CompiledSchema,
    ContextTooSmall,
    DocumentError,
    DocumentTooLarge,
    ExtractionRun,
    Extractor,
    Indenter,
    ModelOptions,
    SamplingSettings,
    Schema,
    UndecodableDocument,
    read_document,
    read_stream,
)

from . import output
from .request import Request


def open_and_compile(request: Request, schema: Schema) -> tuple[Extractor, CompiledSchema]:
    options = ModelOptions(request.ctx, request.threads, request.n_gpu_layers, request.use_cache)
    # The name was looked up in cli.commands.extract.execute: a Path is opened as the file it is.
    extractor = Extractor.open(None if request.model is None else Path(request.model), options)
    compiled = extractor.compile(
        schema, recursion_depth=request.recursion_depth, lenient=request.lenient, grounded=request.grounded
    )
    if request.batch.setup_warnings:
        _warn_of_setup(request, extractor, compiled)
    return extractor, compiled


def _warn_of_setup(request: Request, extractor: Extractor, compiled: CompiledSchema) -> None:
    """What loading the model and compiling the schema leave out or change, on stderr."""
    if extractor.cache_refusal:
        output.report_warning(f"not using the cache: {extractor.cache_refusal} (make it private to you, or pass --no-cache)")
    if extractor.context_capped:
        limit = extractor.context_limit
        output.report_warning(f"--ctx {request.ctx} is more than the model's context of {limit} tokens: using {limit}")
    for refusal in compiled.relaxed:
        output.report_warning(f"--lenient: ignoring {refusal.message.removeprefix('unsupported ')}")
    for warning in compiled.warnings:
        output.report_warning(warning)


def report_setup(request: Request, extractor: Extractor) -> None:
    """--verbose: the model file, its threads and the sampling settings, on stderr."""
    output.stderr.print(f"model: {extractor.model_path}", markup=False)
    output.stderr.print(f"threads: {extractor.threads}", markup=False)
    output.stderr.print(f"settings: {sampling(request)}", markup=False)


def sampling(request: Request) -> SamplingSettings:
    return SamplingSettings(
        request.max_tokens, request.temperature, request.top_p, request.seed, stop_repeats=not request.allow_repeats
    )


def read_for(request: Request, extractor: Extractor, document: str | Path) -> str:
    """The document's text, read no further than its extraction can use: what the context
    holds, or with --chunk what pieces are made of (CHUNKED_TEXT_LIMIT)."""
    if not request.chunk:
        limit = extractor.document_byte_limit
        return read_text(document, request.encoding, limit, request.truncate, request.document_format)
    try:
        return read_text(document, request.encoding, CHUNKED_TEXT_LIMIT, False, request.document_format)
    except DocumentTooLarge:
        raise DocumentError(
            f"document {document} has more than {CHUNKED_TEXT_LIMIT} bytes of text, the most read with --chunk",
            hint="split it into smaller files",
        ) from None


def start_extraction(request: Request, extractor: Extractor, compiled: CompiledSchema, text: str) -> ExtractionRun:
    """The extraction from `text`: piece by piece with --chunk (--parallel of them at a time),
    else in one prompt. Where neither --chunk, --no-chunk nor --truncate is given, a document
    the context cannot hold (but read whole: it has no more bytes than the context holds
    tokens, times the longest token's bytes) is extracted piece by piece too: a long document
    just works, and one past that bound is still refused at once, unread."""
    if request.chunk:
        return _chunked(request, extractor, compiled, text)
    try:
        return extractor.extract(compiled, text, sampling(request), request.instructions, request.truncate)
    except ContextTooSmall as error:
        if request.chunk is not None or request.truncate or not error.shorter_document_helps:
            raise
        return _chunked(request, extractor, compiled, text)


def _chunked(request: Request, extractor: Extractor, compiled: CompiledSchema, text: str) -> ChunkedExtraction:
    return ChunkedExtraction(extractor, compiled, text, sampling(request), request.instructions, request.batch.parallel or 1)


def report_how_it_fits(request: Request, source: str, extraction: ExtractionRun) -> None:
    """How much of the document --truncate left out, and a document split into pieces though
    --chunk was not given."""
    dropped = extraction.stats.document_tokens_dropped
    if dropped:
        output.report_warning(f"{source}: --truncate left out the last {dropped} tokens of the document to fit the context")
    if request.chunk is None and isinstance(extraction, ChunkedExtraction):
        output.report_warning(
            f"{source}: the document is longer than the context holds: extracted in {len(extraction.pieces)} pieces and merged"
            " (--chunk); pass --truncate to use its head only, or --no-chunk to refuse it"
        )


def read_text(
    document: str | Path,
    encoding: str,
    max_bytes: int | None,
    truncate: bool,
    kind: str | None = None,
) -> str:
    """The document's text (converted from `kind`, or the format its content tells); `-` is
    stdin. At most `max_bytes` of text are kept (a longer
    document cannot fit the context): more is an error, or with `truncate` the head is kept."""
    try:
        return _read_document_or_head(document, encoding, max_bytes, truncate, kind)
    except UnicodeError as error:  # idna and punycode fail with UnicodeError, not UnicodeDecodeError
        raise UndecodableDocument(str(document), encoding, str(error)) from None


def _read_document_or_head(
    document: str | Path, encoding: str, max_bytes: int | None, truncate: bool, kind: str | None
) -> str:
    """The text of `document` (`-`: stdin), its head that fits `max_bytes` with `truncate`."""
    if document == "-":
        return read_stream(sys.stdin.buffer, "<stdin>", encoding, max_bytes, kind, truncate)
    return read_document(Path(document), encoding, max_bytes, kind, truncate)


def laid_out(request: Request, text: str) -> str:
    """`text` as --indent lays it out (as it is without)."""
    if request.indent is None:
        return text
    layout = Indenter(request.indent)
    return layout.feed(text) + layout.finish()
