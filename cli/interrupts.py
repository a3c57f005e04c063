"""Ctrl-C and SIGTERM: both end the run as KeyboardInterrupt in the main thread, promptly even
while llama.cpp computes, without a partial result file; a batch adds what it got done.

Python runs signal handlers only in the main thread, between bytecodes: while that thread is
inside one llama.cpp call (a 512-token prompt batch takes seconds on a small CPU) Ctrl-C waits
for the call to return. So the model work runs in a thread of its own (`run_interruptibly`)
while the main thread only waits, and reacts at once. The work thread cannot be stopped in the
middle of a native call: it is abandoned, and the process ends with os._exit once the message
is out, since an orderly interpreter shutdown would free what that call still uses. Writing a
result and counting it happen under one lock (`committing`), which an interrupt takes for good,
so a result is either complete and counted or not written at all.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TextIO, TypeVar, cast

NOT_COMPLETE = "stdout does not hold a complete document"

T = TypeVar("T")
SIGNAL_CHECK_SECONDS = 0.1
_COMMIT = threading.Lock()
_ABANDONED: list[threading.Event] = []  # set once the abandoned work has ended


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the process is so that files are cleaned up as for Ctrl-C."""


class BatchInterrupted(KeyboardInterrupt):
    """A batch stopped by Ctrl-C or SIGTERM, with what it had done, for the last message."""

    def __init__(self, cause: KeyboardInterrupt, progress: str) -> None:
        super().__init__(progress)
        self.terminated = was_terminated(cause)
        self.progress = progress


def was_terminated(stop: KeyboardInterrupt) -> bool:
    return isinstance(stop, Terminated) or (isinstance(stop, BatchInterrupted) and stop.terminated)


def progress_of(stop: KeyboardInterrupt) -> str:
    """What the output holds after `stop`: a batch says how far it got, a single run that
    stdout has no complete document; empty where nothing is to be said (a --workers child)."""
    return stop.progress if isinstance(stop, BatchInterrupted) else NOT_COMPLETE


def install_handlers() -> None:
    """Ctrl-C raises KeyboardInterrupt and SIGTERM raises Terminated, once: the first signal
    stops the run, and a later one, arriving while it winds down (Ctrl-C reaches --workers
    children as well, and their parent then terminates them), must not break the cleanup by
    raising inside it. A Ctrl-C the process was started ignoring (`cmd &`) stays ignored."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)


def _stop(signum: int, frame: object) -> None:
    for number in (signal.SIGINT, signal.SIGTERM):
        # A handler that does nothing, not SIG_IGN: a signal already received but not yet
        # handled would then raise "OSError: Signal 15 ignored due to race condition".
        signal.signal(number, _ignore)
    raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt


def _ignore(signum: int, frame: object) -> None:
    """Later signals while the run winds down (see install_handlers)."""


def run_interruptibly(action: Callable[[], T]) -> T:
    """`action()`, run in a daemon thread while this (main) thread waits: its result, or its
    exception re-raised here. On Ctrl-C or SIGTERM, KeyboardInterrupt is raised here at once,
    after any result being written is complete; the thread is abandoned (see exit_if_abandoned)."""
    outcome: list[tuple[bool, object]] = []
    done = threading.Event()

    def work() -> None:
        try:
            outcome.append((True, action()))
        except BaseException as error:  # handed to the main thread, which decides
            outcome.append((False, error))
        finally:
            done.set()

    try:
        threading.Thread(target=work, name="extract-model", daemon=True).start()
        # An Event, not Thread.join: on Python 3.11 a join interrupted by Ctrl-C marks the
        # thread stopped while it still runs (the bpo-45274 fix), so it could not be told apart.
        # And a bounded wait, again and again: a signal handled just before the wait blocks
        # does not wake it, and the handler only runs once the wait returns.
        while not done.wait(SIGNAL_CHECK_SECONDS):
            pass
    except KeyboardInterrupt:
        _ABANDONED.append(done)
        _COMMIT.acquire()  # waits for a result being written; none is written after this
        _restore_stderr()
        raise
    finished, value = outcome[0]
    if not finished:
        assert isinstance(value, BaseException)
        raise value
    return cast(T, value)


class _Stderr:
    copy: int | None = None  # descriptor 2 as the process started, kept by keep_stderr
    # The standard streams' objects as the process set them up: llama-cpp-python swaps sys.stdout
    # and sys.stderr for /dev/null files while it loads weights (its suppress_stdout_stderr), and
    # an abandoned load never swaps them back.
    streams: tuple[TextIO, TextIO] | None = None


def keep_stderr() -> None:
    """Keep a copy of descriptor 2, and the standard streams' objects. While weights load,
    core.model points descriptor 2 at /dev/null to silence llama.cpp (and llama-cpp-python sets
    sys.stdout and sys.stderr to /dev/null files), and an abandoned load never points them
    back: the last message needs them."""
    _Stderr.streams = (sys.stdout, sys.stderr)
    with contextlib.suppress(OSError):
        _Stderr.copy = os.dup(2)


def stderr_copy() -> int | None:
    """A new descriptor on stderr as the process started (a copy of the one keep_stderr kept),
    which no code pointing descriptor 2 elsewhere can move; None where none was kept."""
    if _Stderr.copy is None:
        return None
    try:
        return os.dup(_Stderr.copy)
    except OSError:
        return None


def _restore_stderr() -> None:
    if _Stderr.streams is not None:
        sys.stdout, sys.stderr = _Stderr.streams
    if _Stderr.copy is not None:
        with contextlib.suppress(OSError):
            os.dup2(_Stderr.copy, 2)


@contextlib.contextmanager
def committing() -> Iterator[None]:
    """Hold while writing one result and counting it."""
    with _COMMIT:
        yield


def exit_if_abandoned(code: int) -> None:
    """End the process with `code` now if model work was abandoned mid-call (see above)."""
    if not all(done.is_set() for done in _ABANDONED):
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                if stream is not None:
                    stream.flush()
        os._exit(code)
