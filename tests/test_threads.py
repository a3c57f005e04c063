"""The default thread count is one a core, whatever the machine's load (so one command writes the
same output on a busy machine as on an idle one); the load only chooses how the threads wait."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gguf_extract.core import model, processes


def readings(*values: int) -> Callable[[], int]:
    sequence: Iterator[int] = iter(values)
    return lambda: next(sequence)


@pytest.fixture(autouse=True)
def four_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3})
    monkeypatch.setattr(processes.time, "sleep", lambda _seconds: None)


def test_the_thread_count_is_a_core_each_however_busy_the_machine_is(monkeypatch: pytest.MonkeyPatch) -> None:
    assert model.threads_for(None) == 4
    monkeypatch.setattr(processes, "_running_tasks", readings(9, 9, 9, 9))  # the load is not read for the count
    assert model.threads_for(None) == 4
    assert model.threads_for(3) == 3


def test_an_idle_machine_has_no_core_taken() -> None:
    assert processes.cores_taken(readings(1, 1, 1, 1)) == 0


def test_each_other_running_task_takes_a_core() -> None:
    assert processes.cores_taken(readings(3, 3, 3, 3)) == 2


def test_a_task_seen_in_one_reading_only_is_not_counted() -> None:
    assert processes.cores_taken(readings(1, 4, 2, 1)) == 0


def test_a_full_machine_leaves_this_process_one_core() -> None:
    assert processes.cores_taken(readings(9, 9, 9, 9)) == 3


def test_without_a_load_reading_no_core_is_taken() -> None:
    def unreadable() -> int:
        raise OSError("no /proc here")

    assert processes.cores_taken(unreadable) == 0


SPIN_BRIEFLY = {"GOMP_SPINCOUNT": "1000", "KMP_BLOCKTIME": "0"}
SLEEP_AT_ONCE = {"OMP_WAIT_POLICY": "PASSIVE"}


def test_threads_spin_briefly_on_an_idle_machine_and_sleep_at_once_on_a_busy_one() -> None:
    assert processes.wait_policy({}, taken=lambda: 0) == SPIN_BRIEFLY
    assert processes.wait_policy({}, taken=lambda: 1) == SLEEP_AT_ONCE
    for said in ({"OMP_WAIT_POLICY": "ACTIVE"}, {"GOMP_SPINCOUNT": "0"}, {"KMP_BLOCKTIME": "200"}):
        assert processes.wait_policy(said, taken=lambda: 0) == {} and processes.wait_policy(said, taken=lambda: 1) == {}


WAITING = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")


@pytest.mark.parametrize(
    ("given", "seen"),
    [
        ({"OMP_WAIT_POLICY": "PASSIVE"}, [["PASSIVE", None, None]]),
        ({"GOMP_SPINCOUNT": "0"}, [[None, "0", None]]),
        ({"KMP_BLOCKTIME": "200"}, [[None, None, "200"]]),
        ({}, [[None, "1000", "0"], ["PASSIVE", None, None]]),  # which one follows the load as the library loads
    ],
)
def test_the_wait_policy_is_set_before_llama_cpp_loads_unless_told(given: dict[str, str], seen: list[list[str | None]]) -> None:
    environment = {k: v for k, v in os.environ.items() if k not in WAITING} | given
    script = f"import os; from gguf_extract.core import model; print([os.environ.get(k) for k in {WAITING!r}])"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment, check=True)
    assert result.stdout.strip() in [repr(option) for option in seen]


@pytest.mark.model
def test_verbose_and_stats_show_the_thread_count() -> None:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    command = [sys.executable, "-m", "gguf_extract", "-s", "person", os.path.join(root, "samples", "person.txt")]
    command += ["--threads", "1", "--max-tokens", "60", "--stats", "--verbose"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert "threads: 1\n" in result.stderr
    assert '"threads": 1' in result.stderr.splitlines()[-1]


@pytest.mark.model
def test_verbose_in_a_batch_shows_the_setup_once(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / f"{name}.txt").write_text(f"Name: {name}\n")
    command = [sys.executable, "-m", "gguf_extract", "-s", "person", str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    result = subprocess.run([*command, "--threads", "1", "--max-tokens", "60", "-v"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("threads: 1\n") == 1 and result.stderr.count("model: ") == 1
