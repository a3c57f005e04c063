"""The default thread count: the cores free now, so a busy machine does not stall llama.cpp."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest

from gguf_extract.core import model


def readings(*values: int) -> Callable[[], int]:
    sequence: Iterator[int] = iter(values)
    return lambda: next(sequence)


@pytest.fixture(autouse=True)
def four_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3})
    monkeypatch.setattr(model.time, "sleep", lambda _seconds: None)


def test_an_idle_machine_gives_every_core() -> None:
    assert model.free_cores(readings(1, 1, 1, 1)) == 4


def test_each_other_running_task_takes_a_core() -> None:
    assert model.free_cores(readings(3, 3, 3, 3)) == 2


def test_a_task_seen_in_one_reading_only_is_not_counted() -> None:
    assert model.free_cores(readings(1, 4, 2, 1)) == 4


def test_a_full_machine_still_gives_one_thread() -> None:
    assert model.free_cores(readings(9, 9, 9, 9)) == 1


def test_without_a_load_reading_every_core_is_used() -> None:
    def unreadable() -> int:
        raise OSError("no /proc here")

    assert model.free_cores(unreadable) == 4


WAITING = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")


@pytest.mark.parametrize(
    ("given", "seen"),
    [
        ({}, [None, "1000", "0"]),
        ({"OMP_WAIT_POLICY": "PASSIVE"}, ["PASSIVE", None, None]),
        ({"GOMP_SPINCOUNT": "0"}, [None, "0", None]),
        ({"KMP_BLOCKTIME": "200"}, [None, None, "200"]),
    ],
)
def test_openmp_threads_spin_briefly_while_waiting_unless_told_otherwise(given: dict[str, str], seen: list[str | None]) -> None:
    environment = {k: v for k, v in os.environ.items() if k not in WAITING} | given
    script = f"import os; from gguf_extract.core import model; print([os.environ.get(k) for k in {WAITING!r}])"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment, check=True)
    assert result.stdout.strip() == repr(seen)
