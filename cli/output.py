"""Where output goes: JSON bytes to stdout, everything else to stderr."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import sys
from typing import Any, BinaryIO

from rich.console import Console

from gguf_extract import ExtractError, OutputError

from .hints import worded


def _console() -> Console:
    """The stderr console. NO_COLOR (https://no-color.org) turns off every escape, bold and dim
    included: rich's own NO_COLOR support drops only the colours."""
    plain = os.environ.get("NO_COLOR", "") != ""
    return Console(stderr=True, highlight=False, soft_wrap=True, color_system=None if plain else "auto")


stderr = _console()


class ReaderGone(OutputError):
    """stdout is a pipe whose reader has closed it (`extract ... | head -1`): the run ends at once
    and quietly, as `cat` and `jq` do, with exit 141 (128 + SIGPIPE)."""

    def __init__(self) -> None:
        super().__init__("stdout's reader closed the pipe")


class JsonWriter:
    """Writes raw UTF-8 to stdout as it is decided, flushing each chunk."""

    def __init__(self, stream: BinaryIO | None = None) -> None:
        self.stream = stream

    def write(self, text: str) -> None:
        stream = self.stream or _stdout()
        try:
            stream.write(text.encode("utf-8"))
            stream.flush()
        except OSError as error:  # a closed pipe, a full disk
            discard_stdout()
            if error.errno == errno.EPIPE:
                raise ReaderGone from None
            raise OutputError(f"cannot write to stdout: {error.strerror or error}", hint="check where stdout goes") from None


def _stdout() -> BinaryIO:
    if sys.stdout is None:  # the process started with descriptor 1 closed (`>&-`)
        raise OutputError(
            "cannot write to stdout: it is closed",
            hint="redirect stdout to a file or a pipe (an extraction can also write files, with --output-dir)",
        )
    return sys.stdout.buffer


def require_stdout() -> None:
    """Fail now, before any model loads, when the result could not be written."""
    _stdout()


def json_line(record: Any) -> str:
    """`record` as one line of JSON. A file name that is not UTF-8 reaches Python with its
    undecodable bytes as lone surrogates (PEP 383), which UTF-8 cannot encode: they are written
    as \\udcXX escapes, which json.loads and os.fsencode turn back into the same bytes."""
    return escaped_surrogates(json.dumps(record, ensure_ascii=False)) + "\n"


def escaped_surrogates(text: str) -> str:
    """`text` with each lone surrogate written as its JSON escape, `\\udXXX`, so that it can be
    encoded as UTF-8."""
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def discard_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno() if sys.stdout is not None else 1)
        os.close(devnull)


def report_error(error: ExtractError) -> None:
    """The error's line and its hint's, in the command line's words (cli.hints)."""
    message, hint = worded(error)
    stderr.print(f"[bold red]error:[/] {_escape(message)}")
    if hint:
        stderr.print(f"[dim]hint: {_escape(hint)}[/]")


def report_warning(message: str) -> None:
    stderr.print(f"[yellow]warning:[/] {_escape(message)}")


def report_interrupt(how: str, progress: str) -> None:
    stderr.print(f"[yellow]{how}[/]: {_escape(progress)}")


def report_summary(line: str) -> None:
    stderr.print(_escape(line))


def report_stats(stats: dict[str, Any]) -> None:
    sys.stderr.write(json.dumps(stats) + "\n")
    sys.stderr.flush()


def _escape(text: str) -> str:
    return text.replace("[", "\\[")
