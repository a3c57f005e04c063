"""The real command on the bundled model: valid, deterministic, coalesced, streamed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ["person", "invoice", "event"]

pytestmark = pytest.mark.model


def run_extract(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gguf_extract", *args], input=stdin, capture_output=True, timeout=300, check=False
    )


def schema_of(name: str) -> dict[str, object]:
    return json.loads((ROOT / "schemas" / f"{name}.json").read_text())  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_extracts_valid_deterministic_json(name: str) -> None:
    args = ("--schema", str(ROOT / "schemas" / f"{name}.json"), str(ROOT / "samples" / f"{name}.txt"), "--stats")
    first, second = run_extract(*args), run_extract(*args)
    assert first.returncode == 0, first.stderr.decode()
    assert first.stdout.endswith(b"\n") and first.stdout.count(b"\n") == 1
    value = json.loads(first.stdout)
    jsonschema.validate(value, schema_of(name), format_checker=jsonschema.FormatChecker())
    assert second.stdout == first.stdout
    stats = json.loads(first.stderr.decode().strip().splitlines()[-1])
    assert stats["forced_tokens"] > 0
    assert stats["sampled_tokens"] + stats["forced_tokens"] == stats["output_tokens"]
    assert stats["model_calls"] < stats["output_tokens"]
    for key in ("prompt_tokens", "compile_seconds", "prompt_seconds", "generate_seconds"):
        assert stats[key] > 0


def test_document_from_stdin() -> None:
    doc = (ROOT / "samples" / "person.txt").read_bytes()
    result = run_extract("--schema", str(ROOT / "schemas" / "person.json"), "-", stdin=doc)
    assert result.returncode == 0, result.stderr.decode()
    assert json.loads(result.stdout)["name"]


def test_stdout_receives_bytes_before_generation_ends() -> None:
    args = [
        sys.executable,
        "-m",
        "gguf_extract",
        "--schema",
        str(ROOT / "schemas" / "invoice.json"),
        str(ROOT / "samples" / "invoice.txt"),
    ]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None
    arrivals: list[tuple[float, bytes]] = []
    while chunk := os.read(process.stdout.fileno(), 65536):
        arrivals.append((time.perf_counter(), chunk))
    process.wait(timeout=300)
    assert process.returncode == 0
    assert len(arrivals) > 3
    assert arrivals[0][1].startswith(b"{")
    assert arrivals[-1][0] - arrivals[0][0] > 0.2  # the first bytes came well before the last


def test_tiny_budget_closes_the_document_or_refuses() -> None:
    schema = ROOT / "schemas" / "person.json"
    result = run_extract("--schema", str(schema), str(ROOT / "samples" / "person.txt"), "--max-tokens", "5")
    assert result.returncode == 6 and result.stdout == b""
    assert b"--max-tokens" in result.stderr
    result = run_extract("--schema", str(schema), str(ROOT / "samples" / "person.txt"), "--max-tokens", "60")
    assert result.returncode == 0, result.stderr.decode()
    jsonschema.validate(json.loads(result.stdout), schema_of("person"))


def test_cache_miss_hit_and_no_cache_give_the_same_document(tmp_path: Path) -> None:
    args = ("--schema", str(ROOT / "schemas" / "person.json"), str(ROOT / "samples" / "person.txt"))
    environment = {**os.environ, "EXTRACT_CACHE_DIR": str(tmp_path / "cache")}

    def run(*extra: str) -> bytes:
        result = subprocess.run(
            [sys.executable, "-m", "gguf_extract", *args, *extra], capture_output=True, env=environment, timeout=300, check=False
        )
        assert result.returncode == 0, result.stderr.decode()
        return result.stdout

    uncached = run("--no-cache")
    assert not (tmp_path / "cache").exists()
    miss, hit = run(), run()
    assert len(list((tmp_path / "cache" / "vocabulary").glob("*.bin"))) == 1
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["vocabulary"]  # nothing of the schema is stored
    assert uncached == miss == hit


def test_document_too_long_for_the_context_is_refused_or_truncated(tmp_path: Path) -> None:
    document = tmp_path / "long.txt"
    document.write_text("Ada Lovelace is 36. " + "Nothing else to say here. " * 400)
    args = ("--schema", str(ROOT / "schemas" / "person.json"), str(document), "--ctx", "512", "--max-tokens", "100")
    refused = run_extract(*args)
    assert (refused.returncode, refused.stdout) == (5, b"")
    message = refused.stderr.decode()
    assert "the document has 2" in message and "more than the context of 512" in message and "--truncate" in message
    truncated = run_extract(*args, "--truncate")
    assert truncated.returncode == 0, truncated.stderr.decode()
    jsonschema.validate(json.loads(truncated.stdout), schema_of("person"), format_checker=jsonschema.FormatChecker())
    assert "--truncate left out the last" in truncated.stderr.decode()


def test_indent_lays_out_the_same_document(tmp_path: Path) -> None:
    args = ("--schema", str(ROOT / "schemas" / "event.json"), str(ROOT / "samples" / "event.txt"))
    compact, pretty = run_extract(*args), run_extract(*args, "--indent", "2")
    assert compact.returncode == pretty.returncode == 0, pretty.stderr.decode()
    value = json.loads(compact.stdout)
    assert pretty.stdout.decode() == json.dumps(value, ensure_ascii=False, indent=2) + "\n"
