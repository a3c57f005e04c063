"""`--workers`: a worker that dies never hangs the parent, its documents get WorkerDied records,
and the exit code says so (8); with --output-dir the summary counts what this run wrote."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gguf_extract.cli.batch import workers
from gguf_extract.cli.batch.workers import WORKER_DIED, merge, start_worker
from gguf_extract.cli.exit_codes import ExitCode
from gguf_extract.cli.records import DocumentRecord
from gguf_extract.cli.sources import Source

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 24}, "age": {"type": "integer", "minimum": 0, "maximum": 120}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
# A stand-in worker: one record per document listed on stdin (after the request's line), each ~200 bytes.
ECHO = """
import json, sys
assert sys.stdin.readline() == "request\\n"
for line in sys.stdin:
    item = json.loads(line)
    print(json.dumps({"source": item["label"], "data": {"text": "x" * 200}}), flush=True)
"""
DIE = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
EXIT_4 = "import sys; sys.stdin.read(); sys.exit(4)"


def sources(count: int, start: int = 0) -> list[Source]:
    return [Source(Path(f"d{i}.txt"), f"d{i}") for i in range(start, start + count)]


def merged(*scripts: str, per_worker: int) -> list[DocumentRecord]:
    """Outcomes of stand-in workers, run in a thread so that a hang fails the test instead of
    stopping the suite."""
    workers = [
        start_worker(n, [sys.executable, "-c", script], "request", sources(per_worker, n * per_worker))
        for n, script in enumerate(scripts)
    ]
    found: list[DocumentRecord] = []
    thread = threading.Thread(target=lambda: found.extend(merge(workers)), daemon=True)
    thread.start()
    thread.join(timeout=300)
    assert not thread.is_alive(), "the parent hangs"
    return found


def test_a_dead_worker_never_blocks_a_survivor_with_more_than_a_pipe_of_output() -> None:
    # 1,000 records of ~230 bytes: far more than the 64 KB a pipe holds while nobody reads it
    outcomes = merged(ECHO, DIE, per_worker=1000)
    assert len(outcomes) == 2000
    survivor, dead = outcomes[0::2], outcomes[1::2]
    assert all(o.code is None and o.record["data"]["text"] == "x" * 200 for o in survivor)
    assert [o.record["source"] for o in survivor] == [f"d{i}.txt" for i in range(1000)]
    assert all(o.code == ExitCode.WORKER for o in dead)
    assert [o.record["source"] for o in dead] == [f"d{i}.txt" for i in range(1000, 2000)]
    error = dead[0].record["error"]
    assert error["type"] == WORKER_DIED and "was killed by SIGKILL before extracting d1000.txt" in error["message"]


def test_a_worker_that_exits_with_a_documented_code_passes_it_on() -> None:
    outcomes = merged(ECHO, EXIT_4, per_worker=3)
    assert [o.code for o in outcomes] == [None, ExitCode.MODEL] * 3
    assert "exited with code 4" in outcomes[1].record["error"]["message"]


# -- on the bundled model ---------------------------------------------------------------------


def _command(tmp_path: Path, *args: str) -> tuple[list[str], dict[str, str]]:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    environment = {**os.environ, "EXTRACT_CACHE_DIR": str(tmp_path / "cache")}
    return [sys.executable, "-m", "gguf_extract", "--schema", str(schema), "--max-tokens", "40", *args], environment


def _children(pid: int) -> list[int]:
    tasks = Path(f"/proc/{pid}/task")
    return [int(child) for task in tasks.iterdir() for child in (task / "children").read_text().split()]


def _holder(pids: list[int], path: Path) -> int | None:
    """The process among `pids` that has `path` open, if one has yet."""
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if os.readlink(fd) == str(path):
                    return pid
            except OSError:
                continue
    return None


@pytest.mark.model
def test_a_killed_worker_gives_error_records_and_exit_8(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "d0.txt").write_text("Ada Lovelace is 36 years old.")
    os.mkfifo(docs / "d1.txt")  # worker 1 blocks reading it: killed there, d1 and d3 have no result
    (docs / "d2.txt").write_text("Alan Turing is 41 years old.")
    (docs / "d3.txt").write_text("Grace Hopper is 85 years old.")
    paths = [str(docs / f"d{i}.txt") for i in range(4)]  # named one by one: a directory listing skips a FIFO
    command, environment = _command(tmp_path, *paths, "--workers", "2")
    process = subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while True:  # opening the FIFO for writing without blocking succeeds once a reader is opening it
        try:
            writer = os.open(docs / "d1.txt", os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:
            assert process.poll() is None, process.communicate()
            time.sleep(0.02)
    holder = None
    while holder is None:  # the reader's open returns now; it then waits for data that never comes
        holder = _holder(_children(process.pid), docs / "d1.txt")
        time.sleep(0.02)
    os.kill(holder, signal.SIGKILL)
    os.close(writer)
    out, err = process.communicate(timeout=600)
    assert process.returncode == 8, err.decode()
    assert b"Traceback" not in err
    lines = [json.loads(line) for line in out.decode().splitlines()]
    assert [line["source"] for line in lines] == paths
    assert [("data" in line) for line in lines] == [True, False, True, False]
    assert {lines[1]["error"]["type"], lines[3]["error"]["type"]} == {WORKER_DIED}
    assert "killed by SIGKILL" in lines[3]["error"]["message"]
    assert "4 documents: 2 extracted, 2 failed" in err.decode()


@pytest.mark.model
def test_output_dir_counts_what_this_run_wrote(tmp_path: Path) -> None:
    docs, out = tmp_path / "docs", tmp_path / "out"
    docs.mkdir()
    out.mkdir()
    (docs / "d0.txt").write_text("Ada Lovelace is 36 years old.")
    (docs / "d1.txt").write_text("  \n")  # fails: empty
    (docs / "d2.txt").write_text("Alan Turing is 41 years old.")
    (out / "d1.json").write_text('{"name": "from an earlier run", "age": 1}\n')
    command, environment = _command(tmp_path, str(docs), "--workers", "2", "--output-dir", str(out), "--overwrite")
    result = subprocess.run(command, env=environment, capture_output=True, timeout=600, check=False)
    assert result.returncode == 5, result.stderr.decode()
    assert result.stdout == b""
    assert "3 documents: 2 extracted, 1 failed" in result.stderr.decode()


@pytest.mark.model
def test_ctrl_c_at_a_terminal_stops_the_workers_with_one_message(tmp_path: Path) -> None:
    """Ctrl-C reaches the whole process group: every worker and the parent, which then
    terminates the workers; the run ends with one line saying what was written."""
    docs, out = tmp_path / "docs", tmp_path / "out"
    docs.mkdir()
    for index in range(8):
        (docs / f"d{index}.txt").write_text(f"Name: Person {index}\nAge: {20 + index}\n")
    command, environment = _command(tmp_path, str(docs), "--workers", "2", "--output-dir", str(out))
    process = subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    while not (out.exists() and any(out.glob("*.json"))):
        assert process.poll() is None, process.communicate()
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGINT)  # as a terminal does
    _, err = process.communicate(timeout=300)
    assert process.returncode == 130, err.decode()
    names = sorted(p.name for p in out.iterdir())
    assert err.decode().splitlines() == [
        f"interrupted: wrote {len(names)} of 8 results to {out} (every file there is complete);"
        " to extract the rest, rerun with --skip-existing"
    ]


@pytest.mark.parametrize("ignoring", [0, 1, 3])
def test_stopping_waits_for_every_worker_and_kills_those_ignoring_sigterm(ignoring: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each worker is gone once the stop returns (so the files it wrote can be counted): those
    that take SIGTERM by it, those that ignore it killed once the one grace period is over."""
    monkeypatch.setattr(workers, "STOP_GRACE_S", 0.2)
    ready = "print('ready', flush=True); sys.stdin.read(); signal.pause()"
    stubborn = f"import signal, sys; signal.signal(signal.SIGTERM, signal.SIG_IGN); {ready}"
    willing = f"import signal, sys; {ready}"
    started = [
        workers.start_worker(number, [sys.executable, "-c", stubborn if number < ignoring else willing], "{}", [])
        for number in range(3)
    ]
    for worker in started:
        assert worker.lines.get().strip() == b"ready"  # its handler is set
    workers._stop(started)
    codes = [worker.process.returncode for worker in started]
    assert codes == [-signal.SIGKILL] * ignoring + [-signal.SIGTERM] * (3 - ignoring)


def test_each_worker_is_told_how_many_processes_convert_beside_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from gguf_extract.cli.request import Request

    requests: list[Request] = []

    def start(number: int, command: list[str], request: str, sources: list[Source]) -> workers.Worker:
        requests.append(Request.from_json(request))
        return start_worker(number, [sys.executable, "-c", ECHO], "request", sources)  # the stand-in reads its line

    monkeypatch.setattr(workers, "start_worker", start)
    options = {"max_tokens": 40, "temperature": 0.0, "top_p": 1.0, "seed": None, "n_gpu_layers": 0, "threads": 1}
    options |= {"ctx": None, "instructions": None, "lenient": False, "recursion_depth": 3, "stats": False, "verbose": False}
    base = Request.from_json(json.dumps({"documents": [], "schema": "person", "model": None, **options, "batch": {"workers": 3}}))
    workers.run_workers(base, sources(6), lambda outcome: None)
    assert [request.batch.processes for request in requests] == [3, 3, 3]
    assert all(request.batch.worker and request.batch.workers == 1 for request in requests)
