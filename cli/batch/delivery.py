"""A batch's documents delivered in input order, each the one way whoever extracted it: its
record's line on stdout (with `--output-dir`, only a `--workers` worker's line, which names the
file for its parent), and its count toward the summary and the exit code."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .. import interrupts, output
from ..exit_codes import ExitCode
from ..records import DocumentRecord
from ..request import Request
from .workers import WORKER_DIED


@dataclass
class Tally:
    done: int = 0
    failed: int = 0
    skipped: int = 0
    tokens: int = 0
    first_failure: ExitCode | None = None
    started: float = field(default_factory=time.perf_counter)

    def summary(self, total: int) -> str:
        seconds = time.perf_counter() - self.started
        rate = self.done / seconds if seconds > 0 else 0.0
        parts = [f"{self.done} extracted", f"{self.failed} failed"] + ([f"{self.skipped} skipped"] if self.skipped else [])
        return f"{total} documents: {', '.join(parts)} in {seconds:.1f} s ({rate:.2f} documents/s)"

    def count(self, code: ExitCode | None) -> None:
        """One more document: extracted (None), or failed with `code`."""
        if code is None:
            self.done += 1
        else:
            self.failed += 1
            self.first_failure = self.first_failure or code


def deliver(request: Request, tally: Tally, document: DocumentRecord) -> None:
    """`document`'s line and its count, together: an interrupt lets both happen or neither
    (cli.interrupts.committing)."""
    with interrupts.committing():
        if request.batch.output_dir is None or request.batch.worker:
            output.JsonWriter().write(output.json_line(document.record))
        tally.count(document.code)


def deliver_from_worker(request: Request, tally: Tally, document: DocumentRecord) -> None:
    """A `--workers` process's `document`, delivered as this process's own; a worker that died
    before it could not warn of it itself (a worker warns of its own failures on stderr)."""
    if document.code is not None and document.record["error"]["type"] == WORKER_DIED:
        output.report_warning(document.record["error"]["message"])
    deliver(request, tally, document)
