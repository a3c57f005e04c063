"""A batch on the bundled model: no more sequences than documents, and with --output-dir each
result written as soon as it is done, not when the batch ends, so a slow document (a conversion
that takes its time) after it holds it back no more than an interrupt loses it. Documents are
admitted in input order (core.runtime), so those after a conversion still under way wait for it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gguf_extract.core.decode.types import SamplingSettings
from gguf_extract.core.extract.extractor import Extractor
from gguf_extract.core.runtime import session as session_module

pytestmark = pytest.mark.model

SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}}, "required": ["name"]}
PEOPLE = ["Name: Ada Lovelace", "Name: Alan Turing", "Name: Grace Hopper"]


def wait_for(condition: Callable[[], bool], seconds: float = 600) -> bool:
    """Whether `condition` comes true: polled until it does, or a bound far above any run."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def test_extract_many_makes_no_more_sequences_than_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[int] = []
    real = session_module.SequenceContext

    def counting(model: object, n_seq: int, n_ctx: int, unified: bool = True) -> object:
        made.append(n_seq)
        return real(model, n_seq, n_ctx, unified)  # type: ignore[arg-type]

    monkeypatch.setattr(session_module, "SequenceContext", counting)
    extractor = Extractor.open()
    compiled = extractor.compile(SCHEMA)
    settings = SamplingSettings(max_tokens=40)
    found = list(extractor.extract_many(compiled, PEOPLE[:2], settings, parallel=64))
    assert len(found) == 2 and made == [2]
    found = list(extractor.extract_many(compiled, iter(PEOPLE), settings, parallel=64))  # a generator: counted ahead
    assert len(found) == 3 and made == [2, 3]


# The command in a parent that converts HTML with a stand-in converter: it waits until the file
# `release` exists (or its parent is gone), then gives the text "Name: Slow Document".
PARENT = """
import os, sys
from gguf_extract.core.documents.convert import box
folder = sys.argv.pop(1)
converter = '''
import json, os, sys, time
parent = os.getppid()
while not os.path.exists(os.path.join({folder!r}, 'release')) and os.getppid() == parent:
    time.sleep(0.05)
sys.stdin.buffer.read()
sys.stdout.write(json.dumps({{'cut': False}}) + chr(10) + 'Name: Slow Document')
'''.format(folder=folder)
box.CHILD_COMMAND = [sys.executable, '-c', converter]
from gguf_extract.cli.app import main
main()
"""


def start_batch(tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path, list[Path]]:
    """`--output-dir` over three text files with a slow HTML page after the first two, one
    document at a time: while the page converts (its text is read ahead, and it is admitted
    after the two before it are done) no other document is decoded, since which documents share
    each decode must not depend on how long a conversion takes; the results the two text files
    before it will have."""
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    (tmp_path / "slow.html").write_text("<html><body><p>Name: Slow Document</p></body></html>")
    documents = []
    for number, text in enumerate(PEOPLE):
        (tmp_path / f"person{number}.txt").write_text(text)
        documents.append(str(tmp_path / f"person{number}.txt"))
    documents.insert(2, str(tmp_path / "slow.html"))
    out = tmp_path / "out"
    command = [sys.executable, "-c", PARENT, str(tmp_path), "--schema", str(tmp_path / "schema.json"), "--max-tokens", "40"]
    command += ["--parallel", "1", "--output-dir", str(out), "--threads", "1", *documents]
    environment = {**os.environ, "EXTRACT_CACHE_DIR": str(tmp_path / "cache")}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment)
    return process, out, [out / f"person{number}.json" for number in range(2)]


def test_with_output_dir_results_are_written_while_a_slow_document_after_them_converts(tmp_path: Path) -> None:
    process, out, results = start_batch(tmp_path)
    try:
        written = wait_for(lambda: all(result.exists() for result in results) or process.poll() is not None)
        assert written and process.poll() is None, "the text files' results waited for the slow page"
        assert not (out / "slow.json").exists() and not (out / "person2.json").exists()  # admitted after it
    finally:
        (tmp_path / "release").touch()
        stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr.decode()
    assert stdout == b""
    assert json.loads((out / "slow.json").read_text()) == {"name": "Slow Document"}
    assert "4 documents: 4 extracted, 0 failed" in stderr.decode()


def test_an_interrupted_batch_keeps_and_counts_the_results_done_while_a_slow_one_converts(tmp_path: Path) -> None:
    process, out, results = start_batch(tmp_path)
    try:
        assert wait_for(lambda: all(result.exists() for result in results) or process.poll() is not None)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=600)
    finally:
        (tmp_path / "release").touch()
        if process.poll() is None:
            process.kill()
            process.wait()
    message = stderr.decode()
    assert process.returncode == 143, message
    assert f"wrote 2 of 4 results to {out}" in message
    assert sorted(path.name for path in out.iterdir()) == ["person0.json", "person1.json"]
