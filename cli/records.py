"""A document's record, as a batch writes it on its own line (and the `--review` page shows a
failed document): `{"source", "data"}` and what options add, or `{"source", "error": {"type",
"message"}}`; and the record with the exit code it counts for, as a batch passes it on, whether
this process extracted the document or a `--workers` process did."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gguf_extract import ExtractError

from .exit_codes import ExitCode
from .hints import worded


def error_record(source: str, error: ExtractError) -> dict[str, Any]:
    """`error` as `source`'s record: its class and its message in the command line's words (cli.hints)."""
    return failure_record(source, type(error).__name__, worded(error).message)


def failure_record(source: str, kind: str, message: str) -> dict[str, Any]:
    """The record of a document that failed with an error of class `kind` saying `message`."""
    return {"source": source, "error": {"type": kind, "message": message}}


@dataclass(frozen=True)
class DocumentRecord:
    """One document's record, and what it counts for in the exit code."""

    record: dict[str, Any]
    code: ExitCode | None  # None: extracted
