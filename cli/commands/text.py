"""`extract text FILE...`: print the text the model would read from each document (after
conversion, before the prompt), to see why a value was missed. No model is loaded.

One document's text goes to stdout as it is (with a final newline); several are each headed
by a `==> FILE <==` line, as `head` does (so is one found in a directory). A directory stands
for the files in it whose names match `--glob`, as for extraction (recursively, hidden ones
skipped, in a stable order). A document that cannot be read gets one error line on stderr and the others are still printed;
the exit code is the first failure's.
"""

from __future__ import annotations

from pathlib import Path

from gguf_extract import CONVERTED_FILE_LIMIT, DocumentError, DocumentTooLarge, ExtractError

from .. import output
from ..exit_codes import ExitCode, as_extract_error, exit_code_for
from ..extraction_steps import read_text
from ..preflight import check_glob
from ..request import TextRequest
from ..sources import expand_inputs


def show_text(request: TextRequest) -> ExitCode:
    check_glob(request.glob)
    output.require_stdout()
    writer = output.JsonWriter()
    first_failure: ExitCode | None = None
    documents: list[str] = []
    for argument in request.documents:
        try:
            documents.extend(_documents_in(argument, request.glob))
        except ExtractError as error:
            output.report_error(error)
            first_failure = first_failure or exit_code_for(error)
    # Named when more than one is asked for, or when a directory chose it.
    headed = len(documents) > 1 or documents != list(request.documents)
    for number, document in enumerate(documents):
        try:
            text = _text_of(document, request)
        except Exception as error:  # a bug met on one document is reported as its error, and the rest are shown
            failure = as_extract_error(error)
            output.report_error(failure)
            first_failure = first_failure or exit_code_for(failure)
            continue
        if headed:
            writer.write(("\n" if number else "") + f"==> {document} <==\n")
        writer.write(text if text.endswith("\n") else text + "\n")
    return first_failure or ExitCode.OK


def _documents_in(argument: str, pattern: str) -> list[str]:
    """The documents an argument names: itself, or a directory's files matching `pattern`."""
    if argument == "-" or not Path(argument).is_dir():
        return [argument]
    found = [source.label for source in expand_inputs([argument], pattern)]
    if not found:
        raise DocumentError(
            f"no documents in {argument} (files matching --glob {pattern!r}, hidden ones skipped)",
            hint="check the directory and --glob",
        )
    return found


def _text_of(document: str, request: TextRequest) -> str:
    try:
        where = Path(document) if document != "-" else "-"
        return read_text(where, request.encoding, CONVERTED_FILE_LIMIT, False, request.document_format)
    except DocumentTooLarge:
        raise DocumentError(
            f"document {document} has more than {CONVERTED_FILE_LIMIT} bytes of text, the most shown", hint="split it"
        ) from None
