"""The program each `--workers` process runs (`python -m gguf_extract.cli.batch.child`, started
isolated by cli.batch.workers: see core.processes).

Its parent (cli.batch.workers) writes on its stdin one line, the request serialised (cli.request),
then its share of the documents, one JSON line each (cli.sources.Source). It extracts them as a
batch does in one process and writes one JSON line per document on stdout, which the parent
merges in input order; errors and interrupts end it with the codes the command documents.
"""

from __future__ import annotations

import json
import sys

from .. import guard, interrupts
from ..exit_codes import ExitCode, UsageError
from ..request import Request
from ..sources import Source
from .run import execute_share


def read_share(lines: list[str]) -> tuple[Request, list[Source]]:
    """The request and documents a parent sent, from the lines of this process's stdin."""
    try:
        request = Request.from_json(lines[0])
        return request, [Source.from_json(json.loads(line)) for line in lines[1:] if line.strip()]
    except (IndexError, KeyError, TypeError, ValueError):  # pydantic's ValidationError is a ValueError
        raise UsageError(
            "stdin does not hold a request and documents as `extract --workers` sends them",
            hint="run `extract --workers N` rather than this program",
        ) from None


def _run_share() -> int:
    try:
        request, sources = read_share(sys.stdin.read().splitlines())
    except KeyboardInterrupt as stop:  # Ctrl-C reaches every worker too: its parent alone reports
        raise interrupts.BatchInterrupted(stop, "") from None
    return execute_share(request, sources)


def main() -> None:
    guard.prepare()
    try:
        code = guard.guarded(_run_share)
    except KeyboardInterrupt as stop:  # in the instant before the guard; the parent alone reports
        code = int(ExitCode.TERMINATED if interrupts.was_terminated(stop) else ExitCode.INTERRUPTED)
    sys.exit(code)


if __name__ == "__main__":
    main()
