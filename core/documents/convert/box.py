"""A PDF, DOCX or HTML file converted in a process of its own, held to bounds (core.documents.convert.limits).

    converted = convert_in_box(data, "pdf", "invoice.pdf")   # Converted(text, complete)

The process runs core.documents.convert.child, started afresh through subprocess (fork and exec, nothing
inherited: the parent may hold a loaded model and llama.cpp's threads, which a forked copy
must not touch), isolated so that neither the working directory nor the environment chooses
what it imports (core.processes). It costs a Python start and the converter's import: 60 to 200 ms a document
on a 2-core machine (docs/documents.md has the figures). Every way it can end becomes a value
or a DocumentError naming the document: its text, a refusal the converter gave (damaged file,
no text layer), a bound hit (ConversionStopped: memory, CPU time, wall time, size of text,
nesting), or a crash of native code (ConversionStopped with no bound, which the converter's
memory limit may have caused).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import threading
from dataclasses import asdict
from typing import IO, Any, NamedTuple

from ...errors import ConversionStopped, DocumentError, UndecodableDocument
from ...processes import module_command, usable_cores
from ..decoding import check_encoding
from .limits import MEMORY_LIMIT, ConvertLimits, size_words
from .sniff import CONVERTED_FORMATS

# The converter's program; the request (JSON) is its last argument. Tests put another here.
CHILD_COMMAND = module_command(f"{__package__}.child")
_OUTCOME_LINE = 64 * 1024  # the most bytes of the outcome line read
# Exit statuses of a process that a resource limit ended (POSIX only, as the limits are).
_SIGNALLED_LIMITS = {
    -number: limit for name, limit in (("SIGXCPU", "cpu"), ("SIGXFSZ", "text")) if (number := getattr(signal, name, 0))
}


def conversions_at_once(cores: int, memory_bytes: int, physical_memory: int | None) -> int:
    """How many conversions run at once in one process: one a core, and no more than fit half the
    machine's memory at `memory_bytes` each (each is bound on its own; this bounds their sum), at
    least one. A parallel run converts its documents in its sequences' threads, so without this
    bound 64 sequences would start 64 converters of up to 2 GiB each."""
    fitting = physical_memory // 2 // memory_bytes if physical_memory else cores
    return max(1, min(cores, fitting))


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):  # not POSIX, or the system does not say
        return None


# Conversions wait here for their turn; a conversion's wall-clock bound starts once it has one.
AT_ONCE = conversions_at_once(usable_cores(), MEMORY_LIMIT, _physical_memory())


class _Turns:
    at_once = AT_ONCE
    semaphore = threading.BoundedSemaphore(AT_ONCE)


def share_conversions(processes: int) -> None:
    """This process is one of `processes` on this machine converting at once (a batch's
    workers): from now on it runs at most its share of AT_ONCE conversions at once (at least
    one), so that together they keep to the machine's bound. Call it before converting."""
    _Turns.at_once = max(1, AT_ONCE // max(1, processes))
    _Turns.semaphore = threading.BoundedSemaphore(_Turns.at_once)


def conversions_now() -> int:
    """How many conversions this process runs at once (AT_ONCE, or its share)."""
    return _Turns.at_once


_SPLIT_HINT = "split it into smaller files, or convert it to text with another tool and extract from that"


class Converted(NamedTuple):
    text: str
    complete: bool  # False: the text was cut at the text limit (ConvertLimits.text_bytes)


def convert_in_box(
    data: bytes, kind: str, source: str, encoding: str = "utf-8", limits: ConvertLimits | None = None
) -> Converted:
    """The text of `data`, a `kind` document, converted in a bounded process. Costs a process
    start; blocks until the conversion ends or a bound stops it, and first while
    conversions_now() conversions of this process are under way. Raises DocumentError (or a
    subclass: ConversionStopped, UndecodableDocument) naming `source`."""
    if kind not in CONVERTED_FORMATS:
        raise ValueError(f"convert: {kind!r} is not one of {CONVERTED_FORMATS}")
    if kind == "html":
        check_encoding(encoding)  # an unknown name is the caller's LookupError, here as before
    limits = limits or ConvertLimits()
    request = json.dumps({"kind": kind, "source": source, "encoding": encoding, "limits": asdict(limits), "parent": os.getpid()})
    with _Turns.semaphore, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        status = _run_child(request, data, out, err, limits.wall_seconds)
        out.seek(0)
        err.seek(0)
        return _outcome(status, out, err, kind, source, limits)


def text_limit_error(source: str, kind: str, limits: ConvertLimits) -> ConversionStopped:
    """The error for a document whose text is longer than the conversion gives."""
    return ConversionStopped(
        source,
        f"document {source} converts from {kind.upper()} to more than {size_words(limits.text_bytes)} of text,"
        " the most a conversion gives",
        "split it into smaller files",
        "text",
    )


def _run_child(request: str, data: bytes, out: IO[bytes], err: IO[bytes], wall_seconds: float) -> int | None:
    """The child's exit status (negative: the signal that ended it), or None when it ran past
    `wall_seconds` and was killed. The child never outlives this call."""
    process = subprocess.Popen([*CHILD_COMMAND, request], stdin=subprocess.PIPE, stdout=out, stderr=err)
    killed: list[bool] = []

    def kill() -> None:
        killed.append(True)
        process.kill()

    # A timer kills it at the deadline, so that the wait below blocks: Popen's wait with a
    # timeout polls, sleeping up to 50 ms at a time, which doubled a small document's cost.
    deadline = threading.Timer(wall_seconds, kill)
    deadline.daemon = True  # a run that exits while a conversion is abandoned does not wait for it
    deadline.start()
    try:
        process.communicate(data)
    finally:
        deadline.cancel()
        if process.returncode is None:  # interrupted (Ctrl-C): the child goes too
            process.kill()
            process.wait()
    if killed and process.returncode != 0:  # (one that ended well as the deadline came is kept)
        return None
    return process.returncode


def _outcome(status: int | None, out: IO[bytes], err: IO[bytes], kind: str, source: str, limits: ConvertLimits) -> Converted:
    if status is None:
        raise _stopped("time", kind, source, limits)
    if _SIGNALLED_LIMITS.get(status) == "cpu":
        raise _stopped("cpu", kind, source, limits)
    if _SIGNALLED_LIMITS.get(status) == "text":
        raise text_limit_error(source, kind, limits)
    try:
        outcome: dict[str, Any] = json.loads(out.readline(_OUTCOME_LINE)) if status == 0 else {}
    except ValueError:
        outcome = {}
    if not outcome:
        raise _crashed(status, err, kind, source, limits)
    if "stopped" in outcome:
        raise _stopped(str(outcome["stopped"]), kind, source, limits)
    if "error" in outcome:
        raise _refusal(outcome, kind, source)
    return Converted(out.read(limits.text_bytes + 1).decode("utf-8"), complete=not outcome["cut"])


def _stopped(limit: str, kind: str, source: str, limits: ConvertLimits) -> ConversionStopped:
    what = kind.upper()
    message = {
        "memory": f"document {source} needs more than {size_words(limits.memory_bytes)} of memory to convert from {what},"
        " the most a conversion may use",
        "cpu": f"document {source} takes more than {limits.cpu_seconds} s of CPU time to convert from {what},"
        " the most a conversion may take",
        "time": f"document {source} was not converted from {what} within {limits.wall_seconds:g} s,"
        " the most a conversion may take",
        "depth": f"document {source} nests too deeply to convert from {what} (past Python's recursion limit)",
    }[limit]
    return ConversionStopped(source, message, _SPLIT_HINT, limit)


def _crashed(status: int, err: IO[bytes], kind: str, source: str, limits: ConvertLimits) -> ConversionStopped:
    """The converter's process ended without an outcome: killed by a signal (PDFium aborts when
    memory runs out), or Python failed before it could report."""
    how = f"exit status {status}"
    if status < 0:
        try:
            how = signal.Signals(-status).name
        except ValueError:
            how = f"signal {-status}"
    said = _last_line(err.read(_OUTCOME_LINE))
    return ConversionStopped(
        source,
        f"the {kind.upper()} converter crashed on document {source} ({how}{': ' + said if said else ''}),"
        f" as it does when the file needs more than the {size_words(limits.memory_bytes)} of memory a conversion may use"
        " or cannot be parsed",
        _SPLIT_HINT,
        None,
    )


def _refusal(outcome: dict[str, Any], kind: str, source: str) -> DocumentError:
    """The DocumentError the converter raised, rebuilt from its outcome line."""
    if outcome["error"] == "UndecodableDocument":
        return UndecodableDocument(source, str(outcome["encoding"]), str(outcome["reason"]))
    if outcome["error"] == "ConversionStopped":
        return ConversionStopped(source, str(outcome["message"]), str(outcome["hint"]), outcome["limit"])
    if outcome["error"] == "DocumentError":
        return DocumentError(str(outcome["message"]), hint=str(outcome["hint"]))
    return DocumentError(
        f"document {source} could not be converted from {kind.upper()} ({outcome['message']})",
        hint="check the file: it may be damaged (open and save it again, or export it as PDF)",
    )


def _last_line(said: bytes) -> str:
    lines = [line.strip() for line in said.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""
