"""--parallel and Extractor.extract_many on the bundled model: every line valid, input order,
failures in place, the same documents succeed and fail as one after another."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from gguf_extract.core.decode.types import SamplingSettings
from gguf_extract.core.defaults import DEFAULT_GPU_PARALLEL
from gguf_extract.core.errors import DocumentError
from gguf_extract.core.extract.extractor import Extraction, Extractor

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 24}, "age": {"type": "integer", "minimum": 0, "maximum": 120}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
PEOPLE = ["Ada Lovelace is 36 years old.", "Alan Turing, 41.", "", "Grace Hopper (85)", "Edsger Dijkstra: 72", "Liskov, 84"]

pytestmark = pytest.mark.model


def run_batch(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    folder = tmp_path / "docs"
    folder.mkdir(exist_ok=True)
    for number, text in enumerate(PEOPLE):
        (folder / f"doc{number}.txt").write_text(text)
    environment = {**os.environ, "EXTRACT_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "gguf_extract", "--schema", str(schema), "--max-tokens", "40", str(folder), *args]
    return subprocess.run(command, capture_output=True, env=environment, timeout=600, check=False)


def test_parallel_batch_is_valid_in_order_with_the_failure_in_place_as_one_after_another(tmp_path: Path) -> None:
    together = run_batch(tmp_path, "--parallel", "3")
    single = run_batch(tmp_path, "--parallel", "1")
    assert together.returncode == single.returncode == 5, together.stderr.decode()
    lines = [json.loads(line) for line in together.stdout.decode().splitlines()]
    assert [Path(line["source"]).name for line in lines] == [f"doc{n}.txt" for n in range(len(PEOPLE))]
    assert lines[2]["error"]["type"] == "DocumentError" and "empty" in lines[2]["error"]["message"]
    for line in lines[:2] + lines[3:]:
        jsonschema.validate(line["data"], SCHEMA)
    alone = [json.loads(line) for line in single.stdout.decode().splitlines()]
    assert [("data" in line) for line in lines] == [("data" in line) for line in alone]
    assert lines == alone  # these short documents decode to the same values either way (docs/batches.md)
    stderr = together.stderr.decode()
    assert f"{len(PEOPLE)} documents: 5 extracted, 1 failed" in stderr and "is empty" in stderr


def test_parallel_with_workers_evidence_and_output_dir(tmp_path: Path) -> None:
    shared = run_batch(tmp_path, "--parallel", "2", "--workers", "2", "--evidence")
    assert shared.returncode == 5, shared.stderr.decode()
    lines = [json.loads(line) for line in shared.stdout.decode().splitlines()]
    assert len(lines) == len(PEOPLE) and all("evidence" in line for n, line in enumerate(lines) if n != 2)
    written = run_batch(tmp_path, "--parallel", "3", "--output-dir", str(tmp_path / "out"))
    assert written.returncode == 5 and written.stdout == b""
    files = sorted(path.name for path in (tmp_path / "out").iterdir())
    assert files == [f"doc{n}.json" for n in range(len(PEOPLE)) if n != 2]


def test_extract_many_yields_extractions_and_errors_in_input_order() -> None:
    extractor = Extractor.open()
    compiled = extractor.compile(SCHEMA)
    settings = SamplingSettings(max_tokens=40)
    results = list(extractor.extract_many(compiled, PEOPLE, settings, parallel=3))
    assert isinstance(results[2], DocumentError)
    for text, result in zip(PEOPLE, results, strict=True):
        if text:
            assert isinstance(result, Extraction) and result.document == text
            jsonschema.validate(result.value, SCHEMA)
            assert result.stats.output_tokens > 0 and result.evidence
    first = results[0]
    assert isinstance(first, Extraction)
    assert extractor.extract(compiled, PEOPLE[0], settings).run() == first.value  # one after another, afterwards


def test_on_a_gpu_by_default_documents_go_eight_at_a_time_each_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the model runs on a GPU, a batch's documents are decoded DEFAULT_GPU_PARALLEL at a
    time unless told, as sequences of one context (core.runtime); this machine has none, so the
    choice is made as if it had."""
    from gguf_extract.core.runtime import session as session_module

    monkeypatch.setattr(session_module, "offloads_to_gpu", lambda n_gpu_layers: True)
    made: list[int] = []
    sequences_class = session_module.SharedSequences

    def sequences(*args: Any) -> Any:
        made.append(args[1])
        return sequences_class(*args)

    monkeypatch.setattr(session_module, "SharedSequences", sequences)
    extractor = Extractor.open()
    compiled = extractor.compile(SCHEMA)
    settings = SamplingSettings(max_tokens=40)
    assert extractor.default_parallel == DEFAULT_GPU_PARALLEL == 8
    documents = PEOPLE + PEOPLE[:3]  # more than 8: fewer would make only as many sequences as documents
    results = list(extractor.extract_many(compiled, documents, settings))
    assert made == [8]
    assert [isinstance(result, Extraction) for result in results] == [bool(text) for text in documents]
    for result in results:
        if isinstance(result, Extraction):
            jsonschema.validate(result.value, SCHEMA)


def test_parallel_chunked_documents_are_valid_and_in_order(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    folder = tmp_path / "long"
    folder.mkdir()
    people = " ".join(f"Person {n} is called Grace Hopper and is {20 + n} years old." for n in range(60))
    (folder / "a.txt").write_text(people)  # about three pieces of a 512-token context
    (folder / "b.txt").write_text("Alan Turing, 41.")
    environment = {**os.environ, "EXTRACT_CACHE_DIR": str(tmp_path / "cache")}
    options = ["--max-tokens", "40", "--ctx", "512", "--chunk", "--stats", str(folder)]
    base = [sys.executable, "-m", "gguf_extract", "-s", str(schema), *options]
    runs = [subprocess.run([*base, "--parallel", n], capture_output=True, env=environment, timeout=600) for n in "21"]
    assert [run.returncode for run in runs] == [0, 0], runs[0].stderr.decode()
    together, single = ([json.loads(line) for line in run.stdout.decode().splitlines()] for run in runs)
    assert [Path(line["source"]).name for line in together] == ["a.txt", "b.txt"]
    assert together[0]["stats"]["pieces"] > 1
    for line in together:
        jsonschema.validate(line["data"], SCHEMA)
    assert [("data" in line) for line in together] == [("data" in line) for line in single]


# The command, with llama.cpp refusing multi-sequence contexts of more than 1,000 cells a
# sequence, as it does when memory runs out; one-sequence contexts are made as usual.
REFUSING_LARGE_SLOTS = """
import runpy
from gguf_extract.core.runtime import session
from gguf_extract.core.errors import ModelError

made = session.SequenceContext

def refusing(model, n_seq, n_ctx, unified=True):
    if n_ctx // n_seq > 1000:
        raise ModelError(f"llama.cpp could not make a context of {n_ctx} tokens for {n_seq} sequences: out of memory")
    return made(model, n_seq, n_ctx, unified)

session.SequenceContext = refusing
runpy.run_module("gguf_extract", run_name="__main__")
"""


def test_a_document_whose_slots_cannot_be_made_fails_alone_and_succeeds_one_after_another(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    folder = tmp_path / "docs"
    folder.mkdir()
    for number, text in enumerate(["Ada Lovelace is 36 years old.", "Alan Turing, 41.", "Grace Hopper (85)"]):
        (folder / f"doc{number}.txt").write_text(text)
    (folder / "doc1-long.txt").write_text(" ".join(f"Item {n} was noted by Edsger Dijkstra, aged 72." for n in range(80)))
    environment = {**os.environ, "EXTRACT_CACHE_DIR": str(tmp_path / "cache")}
    base = [sys.executable, "-c", REFUSING_LARGE_SLOTS, "-s", str(schema), "--max-tokens", "40", str(folder)]
    together, single = (subprocess.run([*base, "--parallel", n], capture_output=True, env=environment, timeout=600) for n in "21")
    assert together.returncode == 5 and single.returncode == 0, together.stderr.decode() + single.stderr.decode()
    lines, alone = ([json.loads(line) for line in run.stdout.decode().splitlines()] for run in (together, single))
    assert [Path(line["source"]).name for line in lines] == ["doc0.txt", "doc1-long.txt", "doc1.txt", "doc2.txt"]
    error = lines[1]["error"]
    assert error["type"] == "SequenceSlotRefused" and "out of memory" in error["message"], error
    assert "--max-tokens" in error["message"] and "--parallel" in error["message"]
    assert "data" in alone[1] and "error" not in alone[1]
    for line in lines[:1] + lines[2:]:
        jsonschema.validate(line["data"], SCHEMA)
    assert "4 documents: 3 extracted, 1 failed" in together.stderr.decode()


def test_a_chunked_document_with_its_pieces_decoded_together_is_valid_with_the_same_fields(tmp_path: Path) -> None:
    from test_chunked import MEMBERS, minutes

    text = minutes(40)
    document, schema = tmp_path / "minutes.txt", tmp_path / "members.json"
    document.write_text(text)
    schema.write_text(json.dumps(MEMBERS))
    environment = {**os.environ, "EXTRACT_CACHE_DIR": str(tmp_path / "cache")}
    base = [sys.executable, "-m", "gguf_extract", "-s", str(schema), str(document), "--ctx", "512", "--max-tokens", "96"]
    command = [*base, "--chunk", "--evidence", "--stats"]
    runs = [subprocess.run([*command, "--parallel", n], capture_output=True, env=environment, timeout=600) for n in "41"]
    assert [run.returncode for run in runs] == [0, 0], runs[0].stderr.decode()
    together, single = (json.loads(run.stdout) for run in runs)
    stats = [json.loads(run.stderr.decode().splitlines()[-1]) for run in runs]
    assert len(Extractor.open().tokenizer.tokenize(text.encode())) >= 2 * 512
    assert stats[0]["pieces"] == stats[1]["pieces"] >= 3
    jsonschema.validate(together["data"], MEMBERS)
    assert together["data"].keys() == single["data"].keys() and together["data"]["members"] and single["data"]["members"]
    fields = [{pointer.split("/")[1] for pointer in record["evidence"]} for record in (together, single)]
    assert fields[0] == fields[1]
