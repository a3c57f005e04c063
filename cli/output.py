"""Where output goes: JSON bytes to stdout, everything else to stderr."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any, BinaryIO

from rich.console import Console

from ..core.errors import DocumentError, ExtractError, GenerationError, ModelError, OutputError, SchemaError
from .exit_codes import ExitCode

stderr = Console(stderr=True, highlight=False, soft_wrap=True)


class JsonWriter:
    """Writes raw UTF-8 to stdout as it is decided, flushing each chunk."""

    def __init__(self, stream: BinaryIO | None = None) -> None:
        self.stream = stream or sys.stdout.buffer

    def write(self, text: str) -> None:
        try:
            self.stream.write(text.encode("utf-8"))
            self.stream.flush()
        except OSError as error:  # a closed pipe, a full disk
            _discard_stdout()
            raise OutputError(f"cannot write to stdout: {error.strerror or error}", hint="check where stdout goes") from None


def _discard_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


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
    (OutputError, ExitCode.OUTPUT),
)


def report_error(error: ExtractError) -> None:
    stderr.print(f"[bold red]error:[/] {_escape(error.message)}")
    if error.hint:
        stderr.print(f"[dim]hint: {_escape(error.hint)}[/]")


def report_warning(message: str) -> None:
    stderr.print(f"[yellow]warning:[/] {_escape(message)}")


def report_interrupt(how: str = "interrupted") -> None:
    stderr.print(f"[yellow]{how}[/]: stdout does not hold a complete document")


def report_summary(line: str) -> None:
    stderr.print(_escape(line))


def report_stats(stats: dict[str, Any]) -> None:
    sys.stderr.write(json.dumps(stats) + "\n")
    sys.stderr.flush()


def _escape(text: str) -> str:
    return text.replace("[", "\\[")
