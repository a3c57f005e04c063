"""Which documents a batch extracts: those the arguments and `--files-from` name (directories
expanded, `-` refused), its `--shard` of them, and with `--skip-existing` those without a
complete result yet."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from gguf_extract import DocumentError, Schema

from .. import output
from ..exit_codes import UsageError
from ..request import Request
from ..sources import Source, expand_inputs, read_path_list
from .results import ResultCheck, output_path


def given_sources(request: Request) -> list[Source]:
    """Every document the command line names, in order (before any --shard)."""
    arguments = list(request.documents)
    if "-" in arguments:
        raise _stdin_in_batch(request)
    if request.batch.files_from is not None:
        arguments += read_path_list(_read_list(request.batch.files_from))
    if not arguments:
        raise UsageError("no documents given", hint=_no_documents_hint())
    sources: list[Source] = []
    for argument in arguments:
        found = expand_inputs([argument], request.batch.glob)
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


def take_shard(sources: list[Source], shard: int, shards: int) -> list[Source]:
    """Every N-th document starting at the I-th: the shards of one input list are disjoint and
    together cover it."""
    return sources[shard::shards]


def pending(request: Request, schema: Schema, sources: list[Source]) -> list[Source]:
    """The documents to extract: with --skip-existing, those without a complete, valid result."""
    directory = request.batch.output_dir
    if not request.batch.skip_existing or directory is None:
        return sources
    check = ResultCheck(schema)
    waiting = []
    for source in sources:
        target = output_path(directory, source)
        if not os.path.lexists(target):
            waiting.append(source)
        elif (fault := check.fault(target)) is not None:
            output.report_warning(f"{target} {fault}: extracting {source.label} again")
            waiting.append(source)
    return waiting
