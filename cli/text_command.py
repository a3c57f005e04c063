"""`extract text FILE...`: print the text the model would read from each document (after
conversion, before the prompt), to see why a value was missed. No model is loaded.

One document's text goes to stdout as it is (with a final newline); several are each headed
by a `==> FILE <==` line, as `head` does. A document that cannot be read gets one error line
on stderr and the others are still printed; the exit code is the first failure's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.document import CONVERTED_FILE_LIMIT
from ..core.errors import DocumentError, DocumentTooLarge, ExtractError
from . import output
from .exit_codes import ExitCode, exit_code_for
from .extraction import read_text


@dataclass(frozen=True)
class TextRequest:
    documents: tuple[str, ...]
    encoding: str = "utf-8"
    document_format: str | None = None


def show_text(request: TextRequest) -> ExitCode:
    output.require_stdout()
    writer = output.JsonWriter()
    first_failure: ExitCode | None = None
    for number, document in enumerate(request.documents):
        try:
            text = _text_of(document, request)
        except ExtractError as error:
            output.report_error(error)
            first_failure = first_failure or exit_code_for(error)
            continue
        if len(request.documents) > 1:
            writer.write(("\n" if number else "") + f"==> {document} <==\n")
        writer.write(text if text.endswith("\n") else text + "\n")
    return first_failure or ExitCode.OK


def _text_of(document: str, request: TextRequest) -> str:
    try:
        where = Path(document) if document != "-" else "-"
        return read_text(where, request.encoding, CONVERTED_FILE_LIMIT, False, request.document_format)
    except DocumentTooLarge:
        raise DocumentError(
            f"document {document} has more than {CONVERTED_FILE_LIMIT} bytes of text, the most shown", hint="split it"
        ) from None
