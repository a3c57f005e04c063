"""`--workers N`: one batch over N processes on this machine, results still in input order.

Document i goes to worker i mod N, which gets its list on stdin and runs the ordinary batch
loop (`--worker`: no summary, no progress). Each worker writes one JSON line per document in
its own order, so the parent rebuilds the global order by reading worker i mod N's next line
for document i, and streams it on. With `--output-dir` the workers write the files themselves.
The CPU threads are shared out between the workers.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from typing import IO, TYPE_CHECKING

from ..core import batch, errors
from . import output
from .exit_codes import ExitCode
from .run import Request

if TYPE_CHECKING:
    from .batch_run import Tally


def run_workers(request: Request, pending: list[batch.Source], tally: Tally) -> None:
    """Extract `pending` in `request.batch.workers` processes, counting into `tally`."""
    count = min(request.batch.workers, len(pending))
    threads = request.threads or max(1, (os.cpu_count() or 1) // count)
    processes = [_start(request, pending[k::count], threads) for k in range(count)]
    try:
        if request.batch.output_dir is None:
            _merge_lines(processes, len(pending), tally)
        for process in processes:
            process.wait()
        if request.batch.output_dir is not None:
            _count_files(request, pending, tally)
    except BaseException:
        for process in processes:
            with contextlib.suppress(OSError):
                process.terminate()
        raise
    failed = next((ExitCode(p.returncode) for p in processes if p.returncode not in (0, None)), None)
    if failed is not None and tally.first_failure is None:
        tally.first_failure = failed


def _start(request: Request, sources: list[batch.Source], threads: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "gguf_extract", *_child_arguments(request, threads)]
    capture = subprocess.PIPE if request.batch.output_dir is None else subprocess.DEVNULL
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=capture)
    listing = "".join(json.dumps({"path": str(s.path), "name": s.name}) + "\n" for s in sources)
    stdin: IO[bytes] | None = process.stdin
    assert stdin is not None
    stdin.write(listing.encode("utf-8"))
    stdin.close()
    return process


def _child_arguments(request: Request, threads: int) -> list[str]:
    arguments = ["--schema", request.schema, "--worker", "--quiet", "--threads", str(threads)]
    arguments += [
        "--max-tokens",
        str(request.max_tokens),
        "--temperature",
        str(request.temperature),
        "--top-p",
        str(request.top_p),
    ]
    arguments += ["--n-gpu-layers", str(request.n_gpu_layers), "--recursion-depth", str(request.recursion_depth)]
    arguments += ["--encoding", request.encoding]
    optional = {
        "--model": request.model,
        "--seed": request.seed,
        "--ctx": request.ctx,
        "--instructions": request.instructions,
        "--indent": request.indent,
        "--output-dir": request.batch.output_dir,
    }
    for flag, value in optional.items():
        if value is not None:
            arguments += [flag, str(value)]
    switches = {
        "--lenient": request.lenient,
        "--stats": request.stats,
        "--no-cache": not request.use_cache,
        "--truncate": request.truncate,
    }
    return arguments + [flag for flag, on in switches.items() if on]


def _merge_lines(processes: list[subprocess.Popen[bytes]], total: int, tally: Tally) -> None:
    writer = output.JsonWriter()
    for index in range(total):
        stream = processes[index % len(processes)].stdout
        line = stream.readline() if stream is not None else b""
        if not line:
            break  # that worker stopped early; its exit code says why
        record = json.loads(line)
        if "error" in record:
            tally.failed += 1
            tally.first_failure = tally.first_failure or _exit_code_of(record["error"]["type"])
        else:
            tally.done += 1
        writer.write(line.decode("utf-8"))


def _exit_code_of(error_type: str) -> ExitCode:
    """The exit code for an error a worker reported by its class name."""
    kind = getattr(errors, error_type, None)
    if isinstance(kind, type) and issubclass(kind, errors.ExtractError):
        return output.exit_code_for_kind(kind)
    return ExitCode.GENERATION


def _count_files(request: Request, pending: list[batch.Source], tally: Tally) -> None:
    directory = request.batch.output_dir
    assert directory is not None
    written = sum(batch.output_path(directory, source).exists() for source in pending)
    tally.done += written
    tally.failed += len(pending) - written
