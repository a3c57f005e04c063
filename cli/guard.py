"""The guard every `extract` process runs its command in, whether cli.app parsed it or a
`--workers` parent sent it (cli.batch.child): set up first, the standard streams it may have
started without or cannot write to, and Ctrl-C and SIGTERM; around the command, a library error
turned into one line on stderr and an exit code."""

from __future__ import annotations

import contextlib
import io
import os
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

from gguf_extract import ExtractError

from . import interrupts
from .exit_codes import ExitCode, InternalError, exit_code_for


def prepare() -> None:
    """Before anything else runs: standard streams, a copy of stderr, signal handlers."""
    reserve_standard_streams()
    forgive_stderr()
    interrupts.keep_stderr()
    interrupts.install_handlers()


def guarded(action: Callable[[], int], debug: bool = False) -> int:
    """`action()`'s exit code; for a library error, its line on stderr and its code; for
    Ctrl-C or SIGTERM, what the output holds and 130 or 143 (see cli.interrupts); for stdout's
    reader gone, nothing more and 141; for any other exception (a bug), one line and 70."""
    from . import output  # rich, imported once a command runs: `extract --help` stays quick

    try:
        return int(action())
    except output.ReaderGone:
        return int(ExitCode.READER_GONE)
    except ExtractError as error:
        return report(error, debug)
    except KeyboardInterrupt as stop:
        terminated = interrupts.was_terminated(stop)
        progress = interrupts.progress_of(stop)
        stderr_of_its_own()
        if progress:
            output.report_interrupt("terminated" if terminated else "interrupted", progress)
        code = ExitCode.TERMINATED if terminated else ExitCode.INTERRUPTED
        interrupts.exit_if_abandoned(int(code))
        return int(code)
    except Exception as error:  # the last line of defence: never a traceback unless asked for
        return report(InternalError(error), debug)


def report(error: ExtractError, debug: bool) -> int:
    """`error` on stderr (after its traceback, with --debug), and its exit code."""
    from . import output

    if debug:
        traceback.print_exc()
    output.report_error(error)
    return int(exit_code_for(error))


def reserve_standard_streams() -> None:
    """Open /dev/null on a standard descriptor the process started without (`>&-`, `2>&-`):
    otherwise the next file opened (the model, a cache entry, a result) would take its
    number, and llama.cpp's log silencing, which duplicates descriptor 2, would fail. A closed
    stdout stays None in sys, so writing a result says it is closed; a closed stderr or stdin
    becomes /dev/null."""
    for descriptor in (0, 1, 2):
        try:
            os.fstat(descriptor)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != descriptor:
                os.dup2(null, descriptor)
                os.close(null)
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    if sys.stdin is None:
        sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115


class _Stderr(io.RawIOBase):
    """Descriptor 2 (or `descriptor`), where a write that fails is dropped (stderr on a full
    disk, `2>/dev/full`, a pipe whose reader left): a message nobody can read must not change
    the exit status the run earned, as the OSError would from wherever it was written (rich,
    warnings, a traceback, the interpreter's last flush, which makes a failure there exit 1 or
    120)."""

    def __init__(self, descriptor: int = 2) -> None:
        super().__init__()
        self.descriptor = descriptor

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.descriptor

    def isatty(self) -> bool:
        return os.isatty(self.descriptor)

    def write(self, data: ReadableBuffer) -> int:
        size = memoryview(data).nbytes
        try:
            return os.write(self.descriptor, data)
        except OSError:
            return size


def stderr_of_its_own() -> None:
    """After Ctrl-C or SIGTERM: sys.stderr (as forgive_stderr sets it up) on a descriptor of its
    own, a copy of stderr as the process started. Model work the interrupt abandoned runs on,
    and a load begun just before it still points descriptor 2 at /dev/null to silence llama.cpp
    (core.model), after the interrupt pointed it back: the last message must not go there."""
    descriptor = interrupts.stderr_copy()
    if descriptor is not None:
        old = sys.stderr
        with contextlib.suppress(Exception):
            old.flush()
        writer = io.BufferedWriter(_Stderr(descriptor))
        sys.stderr = io.TextIOWrapper(writer, encoding=old.encoding, errors=old.errors, line_buffering=True)


def forgive_stderr() -> None:
    """sys.stderr as Python sets it up (its encoding and error handler, line-buffered), writing
    through _Stderr. Descriptor 2 stays as it is: llama.cpp and child processes write there."""
    old = sys.stderr
    sys.stderr = io.TextIOWrapper(io.BufferedWriter(_Stderr()), encoding=old.encoding, errors=old.errors, line_buffering=True)
