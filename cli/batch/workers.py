"""`--workers N`: one batch over N processes on this machine, results still in input order.

Document i goes to worker i mod N, a process running cli.batch.child: on its stdin it gets
the request, serialised (cli.request), then its documents, one JSON line each, and it runs the
ordinary batch loop over them (no summary, no progress), writing one JSON line per document in
its own order (with `--output-dir` it writes the files itself, and its lines only say which file).
A thread per worker reads its lines as they come, so no worker ever blocks on a full pipe
whatever the parent is waiting for; the parent takes document i's line from worker i mod N
and streams it on. A worker that dies (killed, out of memory) leaves its remaining documents
without lines: each gets an error record of type WorkerDied, and the run exits with the
worker's own exit code where it gave a documented one, else 8. The CPU threads are shared out.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import IO, Any

from gguf_extract import module_command

from .. import interrupts, output
from ..exit_codes import ExitCode, exit_code_named
from ..records import DocumentRecord, failure_record
from ..request import Request
from ..sources import Source

WORKER_DIED = "WorkerDied"
WORKER_COMMAND = module_command("gguf_extract.cli.batch.child")  # isolated: see core.processes
# A worker stops within moments of SIGTERM (its model runs in another thread, see cli.interrupts);
# one that has not, all of them together, by this long after it is killed.
STOP_GRACE_S = 30.0


@dataclass
class Worker:
    """A worker process, its documents in order, and the lines read from it so far."""

    number: int
    process: subprocess.Popen[bytes]
    sources: list[Source]
    lines: queue.Queue[bytes | None] = field(default_factory=queue.Queue)
    death: tuple[str, ExitCode] | None = None  # why it stopped early, and the code for that

    def start_reading(self) -> None:
        thread = threading.Thread(target=_read_lines, args=(self.process.stdout, self.lines), daemon=True)
        thread.start()

    def record(self, source: Source) -> DocumentRecord:
        """`source`'s record: the worker's next line, or an error record once it has died."""
        if self.death is None:
            record = _parse(self._next_line())
            if record is not None:
                return DocumentRecord(record, _code_of(record))
            self.death = self._why_stopped()
        reason, code = self.death
        return DocumentRecord(failure_record(source.label, WORKER_DIED, f"{reason} before extracting {source.label}"), code)

    def _next_line(self) -> bytes | None:
        # A bounded wait, again and again, so that Ctrl-C is handled at once (see cli.interrupts).
        while True:
            with contextlib.suppress(queue.Empty):
                return self.lines.get(timeout=interrupts.SIGNAL_CHECK_SECONDS)

    def _why_stopped(self) -> tuple[str, ExitCode]:
        returncode = self.process.wait()
        name = f"worker {self.number} (pid {self.process.pid})"
        if returncode < 0:
            return f"{name} was killed by {_signal_name(-returncode)}", ExitCode.WORKER
        documented = returncode != 0 and returncode in {code.value for code in ExitCode}
        return f"{name} exited with code {returncode}", ExitCode(returncode) if documented else ExitCode.WORKER


def run_workers(request: Request, pending: list[Source], take: Callable[[DocumentRecord], None]) -> None:
    """Extract `pending` in `request.batch.workers` processes, handing each document's record
    to `take` in input order."""
    count = min(request.batch.workers, len(pending))
    cores = os.cpu_count() or 1
    threads = request.threads or max(1, cores // count)
    if count * threads > cores:
        output.report_warning(oversubscribed(count, threads, cores))
    shares = [
        replace(
            request,
            threads=threads,
            batch=replace(request.batch, worker=True, quiet=True, workers=1, processes=count, setup_warnings=first),
        )
        for first in [True] + [False] * (count - 1)  # the first worker alone warns of what setting up leaves out
    ]
    workers = [start_worker(number, WORKER_COMMAND, shares[number].to_json(), pending[number::count]) for number in range(count)]
    try:
        for document in merge(workers):
            take(document)
        for worker in workers:
            worker.process.wait()
    except BaseException:
        _stop(workers)
        raise


def oversubscribed(count: int, threads: int, cores: int) -> str:
    """The warning for workers that ask for more cores than the machine has."""
    fewer = max(1, cores // threads)
    return (
        f"--workers {count} run {threads} llama.cpp thread{'s' if threads != 1 else ''} each, {count * threads} in all,"
        f" on {cores} core{'s' if cores != 1 else ''}: they will wait for each other's cores, and each loads the model;"
        f" use --workers {fewer}{' or fewer' if fewer > 1 else ''} (see docs/batches.md)"
    )


def _stop(workers: list[Worker]) -> None:
    """Terminate the workers and wait until each has exited: a worker may be renaming a finished
    result into place as the signal comes, and what the run wrote is counted only after."""
    for worker in workers:
        with contextlib.suppress(OSError):
            worker.process.terminate()
    deadline = time.monotonic() + STOP_GRACE_S  # one grace period for all, not one each
    for worker in workers:
        try:
            worker.process.wait(timeout=max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            worker.process.kill()
            worker.process.wait()


def start_worker(number: int, command: list[str], request: str, sources: list[Source]) -> Worker:
    """Start `command` with the `request` line then `sources`, a JSON line each, on its stdin,
    and read its stdout."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    listing = request + "\n" + "".join(json.dumps(source.as_json()) + "\n" for source in sources)
    stdin: IO[bytes] | None = process.stdin
    assert stdin is not None
    with contextlib.suppress(OSError):  # a worker that died at once: its documents get WorkerDied records
        stdin.write(listing.encode("utf-8"))
    with contextlib.suppress(OSError):
        stdin.close()
    worker = Worker(number, process, sources)
    worker.start_reading()
    return worker


def merge(workers: list[Worker]) -> Iterator[DocumentRecord]:
    """Every document's record in input order: document i is worker i mod N's next."""
    total = sum(len(worker.sources) for worker in workers)
    for index in range(total):
        worker = workers[index % len(workers)]
        yield worker.record(worker.sources[index // len(workers)])


def _read_lines(stream: IO[bytes] | None, lines: queue.Queue[bytes | None]) -> None:
    """Move a worker's lines into `lines` as they come; None marks the end of its output."""
    try:
        if stream is not None:
            for line in stream:
                lines.put(line)
    finally:
        lines.put(None)


def _parse(line: bytes | None) -> dict[str, Any] | None:
    """A worker's record, or None for the end of its output or a line cut short by its death."""
    if line is None or not line.endswith(b"\n"):
        return None
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) and "source" in record else None


def _code_of(record: dict[str, Any]) -> ExitCode | None:
    """None for a result; for an error reported by its class name, that class's exit code."""
    if "error" not in record:
        return None
    return exit_code_named(str(record["error"].get("type"))) or ExitCode.GENERATION


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
