"""Ctrl-C and SIGTERM take effect at once, even while llama.cpp is inside one long native call
(Python runs signal handlers only in the main thread and only between bytecodes, so the model
work runs in a thread of its own while the main thread waits and reacts)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PERSON_SCHEMA = ROOT / "schemas" / "person.json"

# A native call that never returns by itself: a second pthread_mutex_lock of a held mutex,
# which (unlike a read or a sleep) no signal ends. ctypes releases the GIL around it, as it
# does around llama_decode.
NATIVE_CALL_INTERRUPTED = """
import ctypes, os, signal, sys, threading
from gguf_extract.cli import interrupts

libc = ctypes.CDLL(None)
mutex = ctypes.create_string_buffer(64)  # all zero: PTHREAD_MUTEX_INITIALIZER on glibc
libc.pthread_mutex_lock(mutex)
inside = threading.Event()

def native_call():
    inside.set()
    libc.pthread_mutex_lock(mutex)
    return "returned"

def send_signal():
    inside.wait()
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))

threading.Thread(target=send_signal, daemon=True).start()
interrupts.install_handlers()
try:
    print(interrupts.run_interruptibly(native_call))
except KeyboardInterrupt as stop:
    print("terminated" if interrupts.was_terminated(stop) else "interrupted", flush=True)
    interrupts.exit_if_abandoned(130)
print("exited normally")
"""


@pytest.mark.parametrize(("signum", "word"), [("SIGINT", "interrupted"), ("SIGTERM", "terminated")])
def test_a_signal_during_a_native_call_that_never_returns_takes_effect(signum: str, word: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", NATIVE_CALL_INTERRUPTED, signum], capture_output=True, timeout=300, check=False
    )
    assert (result.returncode, result.stdout.decode()) == (130, f"{word}\n"), result.stderr.decode()


@pytest.mark.model
@pytest.mark.parametrize(("signum", "code", "word"), [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_signal_while_the_model_loads_or_reads_the_prompt(tmp_path: Path, signum: int, code: int, word: str) -> None:
    """--verbose prints the prompt just before the weights load and the prompt is evaluated;
    the message still reaches stderr (which the model load points at /dev/null meanwhile)."""
    document = tmp_path / "long.txt"
    document.write_text("Ada Lovelace, mathematician, born 1815 in London. " * 150)
    command = [sys.executable, "-m", "gguf_extract", "--schema", str(PERSON_SCHEMA), str(document), "--verbose"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stderr is not None
    for line in process.stderr:
        if line.startswith(b"<|im_start|>assistant"):  # the prompt's last line: evaluation is next
            break
    process.send_signal(signum)
    out, err = process.communicate(timeout=300)
    assert process.returncode == code, err.decode()
    assert out == b""
    assert f"{word}: stdout does not hold a complete document" in err.decode() and b"Traceback" not in err


@pytest.mark.model
def test_no_result_file_is_cut_by_an_interrupt(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for index in range(4):
        (docs / f"d{index}.txt").write_text(f"Name: Person {index}\nAge: {20 + index}\n")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "gguf_extract", "--schema", str(PERSON_SCHEMA), str(docs), "--output-dir", str(out)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while not (out.exists() and any(out.glob("*.json"))):
        assert process.poll() is None, process.communicate()
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 130, err.decode()
    names = sorted(p.name for p in out.iterdir())
    assert all(not name.startswith(".") for name in names)  # no temporary file left
    assert f"interrupted: wrote {len(names)} of 4 results to {out}" in err.decode()
    for name in names:
        json.loads((out / name).read_text())


LAST_WORDS_PAST_A_SILENCED_STDERR = """
import os, sys
from gguf_extract.cli import guard

guard.prepare()


def action():
    # As a model load the interrupt abandoned leaves it: descriptor 2 pointed at /dev/null.
    silent = os.open(os.devnull, os.O_WRONLY)
    os.dup2(silent, 2)
    raise KeyboardInterrupt


sys.exit(guard.guarded(action))
"""


def test_the_last_message_reaches_stderr_though_abandoned_work_silenced_it() -> None:
    """Model work an interrupt abandons runs on, and a load begun just before it points
    descriptor 2 at /dev/null (llama.cpp's logs): the message still reaches stderr."""
    command = [sys.executable, "-c", LAST_WORDS_PAST_A_SILENCED_STDERR]
    result = subprocess.run(command, capture_output=True, timeout=300, check=False)
    assert result.returncode == 130
    assert result.stdout == b""
    assert b"interrupted: stdout does not hold a complete document" in result.stderr
