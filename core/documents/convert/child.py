"""The converter's own process: `python -m gguf_extract.core.documents.convert.child REQUEST`, started by
core.documents.convert.box for one document.

REQUEST (JSON) names the format, the document, the encoding and the bounds. The process holds
itself to the bounds first (resource limits: address space, CPU time, size of what it writes,
no core file), then reads the document's bytes from stdin, converts them here, and writes on
stdout one JSON line (the outcome) followed, on success, by the text in UTF-8. A bound hit in
Python (MemoryError, RecursionError) is reported on that line; one hit in native code ends the
process by a signal, which the box reads from its exit status.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any, BinaryIO

from ...errors import ConversionStopped, DocumentError, UndecodableDocument

_PR_SET_PDEATHSIG = 1  # prctl(2): the signal this process gets when its parent ends


def main() -> None:
    request = json.loads(sys.argv[1])
    die_with_parent(int(request["parent"]))
    limit_resources(request["limits"])
    try:
        data = sys.stdin.buffer.read()
        text_bytes = int(request["limits"]["text_bytes"])
        outcome = convert_reporting(data, request["kind"], request["source"], request["encoding"], text_bytes)
    except MemoryError:  # reading the document, or importing the converter
        outcome = {"stopped": "memory"}, b""
    write_outcome(sys.stdout.buffer, *outcome)


def die_with_parent(parent: int) -> None:
    """On Linux, end this process when its parent does: a parent ended by SIGTERM (or killed)
    abandons its conversion, which would otherwise run on until its CPU limit."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it ended before the request above was made
        os._exit(1)


def limit_resources(limits: dict[str, Any]) -> None:
    """Hold this process to `limits`, where the system can (POSIX; Windows has no resource module)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows: only the box's wall-clock limit applies
        return
    cpu = int(limits["cpu_seconds"])
    written = int(limits["text_bytes"]) + 64 * 1024  # the text and its outcome line
    for kind, soft, hard in (
        (resource.RLIMIT_AS, limits["memory_bytes"], limits["memory_bytes"]),
        (resource.RLIMIT_CPU, cpu, cpu + 5),  # SIGXCPU at the limit, SIGKILL 5 s later if it is caught
        (resource.RLIMIT_FSIZE, written, written),
        (resource.RLIMIT_CORE, 0, 0),  # a crash leaves no core file
    ):
        with contextlib.suppress(ValueError, OSError):  # a system that does not enforce it (macOS, RLIMIT_AS)
            resource.setrlimit(kind, (int(soft), int(hard)))


def convert_reporting(data: bytes, kind: str, source: str, encoding: str, text_bytes: int) -> tuple[dict[str, Any], bytes]:
    """The outcome line and the text (cut to `text_bytes`) of converting `data`."""
    try:
        from .dispatch import convert_here

        text = convert_here(data, kind, source, encoding).encode("utf-8")
    except MemoryError:
        return {"stopped": "memory"}, b""
    except RecursionError:
        return {"stopped": "depth"}, b""
    except UndecodableDocument as error:
        return {"error": "UndecodableDocument", "encoding": error.encoding, "reason": error.reason}, b""
    except ConversionStopped as error:  # a bound checked before converting (a DOCX's XML sizes)
        return {"error": "ConversionStopped", "message": error.message, "hint": error.hint, "limit": error.limit}, b""
    except DocumentError as error:
        return {"error": "DocumentError", "message": error.message, "hint": error.hint}, b""
    except Exception as error:  # a converter's bug or an unexpected file: reported, never a traceback
        return {"error": "failed", "message": f"{type(error).__name__}: {error}"}, b""
    if len(text) <= text_bytes:
        return {"cut": False}, text
    end = text_bytes
    while end and text[end] & 0xC0 == 0x80:  # not inside a UTF-8 character
        end -= 1
    return {"cut": True}, text[:end]


# The most characters of one message in the outcome: a message may quote the document, and the
# line must stay within what the parent reads of it (core.documents.convert.box), escapes included.
_MESSAGE_CHARACTERS = 2000


def write_outcome(stream: BinaryIO, outcome: dict[str, Any], text: bytes) -> None:
    short = {key: value[:_MESSAGE_CHARACTERS] if isinstance(value, str) else value for key, value in outcome.items()}
    stream.write(json.dumps(short).encode("utf-8") + b"\n")
    stream.write(text)
    stream.flush()


if __name__ == "__main__":
    main()
