"""Where output goes: JSON bytes to stdout, everything else to stderr."""

from __future__ import annotations

import json
import sys
from typing import Any, BinaryIO

from rich.console import Console

from ..core.errors import DocumentError, ExtractError, GenerationError, ModelError, SchemaError
from .exit_codes import ExitCode

stderr = Console(stderr=True, highlight=False, soft_wrap=True)


class JsonWriter:
    """Writes raw UTF-8 to stdout as it is decided, flushing each chunk."""

    def __init__(self, stream: BinaryIO | None = None) -> None:
        self.stream = stream or sys.stdout.buffer

    def write(self, text: str) -> None:
        self.stream.write(text.encode("utf-8"))
        self.stream.flush()


def exit_code_for(error: ExtractError) -> ExitCode:
    return exit_code_for_kind(type(error))


def exit_code_for_kind(kind: type[ExtractError]) -> ExitCode:
    for family, code in _EXIT_CODES:
        if issubclass(kind, family):
            return code
    return ExitCode.USAGE


_EXIT_CODES: tuple[tuple[type[ExtractError], ExitCode], ...] = (
    (SchemaError, ExitCode.SCHEMA),
    (ModelError, ExitCode.MODEL),
    (DocumentError, ExitCode.DOCUMENT),
    (GenerationError, ExitCode.GENERATION),
)


def report_error(error: ExtractError) -> None:
    stderr.print(f"[bold red]error:[/] {_escape(error.message)}")
    if error.hint:
        stderr.print(f"[dim]hint: {_escape(error.hint)}[/]")


def report_warning(message: str) -> None:
    stderr.print(f"[yellow]warning:[/] {_escape(message)}")


def report_interrupt() -> None:
    stderr.print("[yellow]interrupted[/]: stdout does not hold a complete document")


def report_summary(line: str) -> None:
    stderr.print(_escape(line))


def report_stats(stats: dict[str, Any]) -> None:
    sys.stderr.write(json.dumps(stats) + "\n")
    sys.stderr.flush()


def _escape(text: str) -> str:
    return text.replace("[", "\\[")
