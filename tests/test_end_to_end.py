"""The real command on the bundled model: valid, deterministic, coalesced, streamed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
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
    # Threads named: by default they follow the cores free when the model loads, and another
    # program's load between the two runs would change the arithmetic, not the code.
    paths = (str(ROOT / "schemas" / f"{name}.json"), str(ROOT / "samples" / f"{name}.txt"))
    args = ("--schema", paths[0], paths[1], "--stats", "--threads", "1")
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


def test_text_is_given_out_before_the_document_is_decided() -> None:
    """Streaming as an observable order of events, not a timing: the first chunk reaches the
    caller while the rest is still undecided (the value is set only once the last is out)."""
    from gguf_extract import Extractor

    extractor = Extractor.open()
    run = extractor.extract(extractor.compile(schema_of("invoice")), (ROOT / "samples" / "invoice.txt").read_text())
    stream = iter(run)
    first = next(stream)
    assert first.startswith("{") and run.value is None and run.text == ""
    rest = list(stream)
    assert len(rest) > 3 and json.loads(first + "".join(rest)) == run.value


def test_the_command_writes_each_chunk_as_it_comes(tmp_path: Path) -> None:
    """The command flushes stdout after every chunk: seen as one write call per chunk in a
    trace of the process's system calls, where strace is installed."""
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace is not installed")
    trace = tmp_path / "trace"
    args = ["--schema", str(ROOT / "schemas" / "person.json"), str(ROOT / "samples" / "person.txt")]
    result = subprocess.run(
        [strace, "-f", "-e", "trace=write", "-e", "signal=none", "-o", str(trace), sys.executable, "-m", "gguf_extract", *args],
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    writes = [line for line in trace.read_text().splitlines() if "write(1," in line]
    assert len(writes) > 3 and writes[0].split("write(1, ", 1)[1].startswith('"{')


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


def test_document_too_long_for_the_context_is_split_refused_or_truncated(tmp_path: Path) -> None:
    """By default a document the context cannot hold is extracted piece by piece, with a
    warning naming the other ways; --no-chunk refuses it, naming them too; --truncate keeps
    its head."""
    document = tmp_path / "long.txt"
    document.write_text("Ada Lovelace is 36. " + "Nothing else to say here. " * 400)
    args = ("--schema", str(ROOT / "schemas" / "person.json"), str(document), "--ctx", "512", "--max-tokens", "100")
    split = run_extract(*args, "--stats")
    assert split.returncode == 0, split.stderr.decode()
    jsonschema.validate(json.loads(split.stdout), schema_of("person"), format_checker=jsonschema.FormatChecker())
    lines = split.stderr.decode().splitlines()
    pieces = json.loads(lines[-1])["pieces"]
    warning = next(line for line in lines if "pieces and merged" in line)
    assert pieces > 1 and f"extracted in {pieces} pieces and merged (--chunk)" in warning
    assert "--truncate" in warning and "--no-chunk" in warning
    refused = run_extract(*args, "--no-chunk")
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


# A pattern and a format under length bounds long enough that each is read by counting the
# characters written (core.automaton.regex.Counted), not as a product built at compile time.
COUNTED_SCHEMA = {
    "type": "object",
    "properties": {
        "summary": {"type": "string", "pattern": "^(?:\\S+\\s+){0,29}\\S+$", "maxLength": 300},
        "email": {"type": "string", "format": "email", "maxLength": 100},
    },
    "required": ["summary", "email"],
}
COUNTED_DOCUMENT = b"Order AB12345 was shipped on Monday to the warehouse in Leeds. Write to jane.doe@example.com.\n"


def test_strings_whose_length_bound_is_counted_come_out_valid_within_any_budget(tmp_path: Path) -> None:
    """The bundled model writes such strings through the command, with room to spare and with
    a budget just above the shortest document, and the document validates; a budget below the
    shortest is refused. (That each counted state's distance is exact is held to the product
    in tests/test_charnfa_products.py.)"""
    from gguf_extract.core.automaton.regex import Counted, children
    from gguf_extract.core.index.compiled import compile_automaton

    nodes, stack = [], [compile_automaton(COUNTED_SCHEMA).dfa.tree]
    while stack:
        nodes.append(stack.pop())
        stack.extend(children(nodes[-1], accepted=True))
    assert sum(isinstance(node, Counted) for node in nodes) == 2
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(COUNTED_SCHEMA))
    for budget in ("400", "36"):  # the shortest document is 34 bytes
        result = run_extract("--schema", str(path), "-", "--threads", "1", "--max-tokens", budget, stdin=COUNTED_DOCUMENT)
        assert result.returncode == 0, result.stderr.decode()
        jsonschema.validate(json.loads(result.stdout), COUNTED_SCHEMA, format_checker=jsonschema.FormatChecker())
    result = run_extract("--schema", str(path), "-", "--max-tokens", "5", stdin=COUNTED_DOCUMENT)
    assert result.returncode == 6 and result.stdout == b""
