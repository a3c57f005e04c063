"""`--grounded`, `--evidence`, `--min-confidence` and `--review` through the command, with the
bundled model: stdout, stderr and the exit code checked apart."""

from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PERSON_SCHEMA = ROOT / "schemas" / "person.json"
PERSON_DOC = ROOT / "samples" / "person.txt"

pytestmark = pytest.mark.model


def run_extract(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gguf_extract", *args], capture_output=True, text=True, timeout=300, check=False
    )


def test_evidence_envelope_for_one_document_with_grounded_strings(tmp_path: Path) -> None:
    page = tmp_path / "review.html"
    options = ["--grounded", "--evidence", "--min-confidence", "0.9", "--review", str(page)]
    result = run_extract("--schema", str(PERSON_SCHEMA), str(PERSON_DOC), *options)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    envelope = json.loads(lines[0])
    assert set(envelope) == {"source", "data", "evidence"}
    document = PERSON_DOC.read_text()
    data, evidence = envelope["data"], envelope["evidence"]
    assert set(evidence) == {f"/{name}" for name in data}
    for name, value in data.items():
        found = evidence[f"/{name}"]
        assert found["confidence"] is None or 0.0 <= found["confidence"] <= 1.0
        if found["span"] is not None and name != "birth_date":  # a date's span is its statement (below)
            start, end = found["span"]
            assert " ".join(document[start:end].split()) == " ".join(str(value).split())
        if isinstance(value, str) and name != "birth_date":  # every plain string of the schema is grounded
            assert found["grounded"] is True and found["span"] is not None
    low = [pointer for pointer, found in evidence.items() if found["confidence"] is not None and found["confidence"] < 0.9]
    assert low, "some value of the small model is below 0.9"
    for pointer in low:
        assert f"{pointer} has confidence" in result.stderr
    assert _text_of(page.read_text()).count("Maria") >= 1


def test_a_control_character_never_joins_words_into_a_grounded_value(tmp_path: Path) -> None:
    """The words on either side of a control character stay apart: a grounded value is text
    `extract text` shows (whitespace runs as one space), and has a span."""
    document, schema = tmp_path / "maria.txt", tmp_path / "name.json"
    document.write_bytes(b"Name: Maria\x01Gonzales\n")
    schema.write_text(json.dumps({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}))
    shown = run_extract("text", str(document))
    assert (shown.returncode, shown.stderr) == (0, "")
    result = run_extract("--schema", str(schema), str(document), "--grounded", "--evidence")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    envelope = json.loads(result.stdout)
    name, found = envelope["data"]["name"], envelope["evidence"]["/name"]
    assert "MariaGonzales" not in name
    if found["grounded"]:
        assert " ".join(name.split()) in " ".join(shown.stdout.split())
        assert found["span"] is not None
        start, end = found["span"]
        assert " ".join(document.read_text()[start:end].split()) == name


def test_evidence_lines_in_a_batch(tmp_path: Path) -> None:
    result = run_extract("--schema", str(PERSON_SCHEMA), str(PERSON_DOC), str(PERSON_DOC), "--evidence", "--quiet")
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [record["source"] for record in records] == [str(PERSON_DOC)] * 2
    assert all(set(record) == {"source", "data", "evidence"} for record in records)


def test_a_budget_that_closes_the_document_is_warned_about_and_counted() -> None:
    result = run_extract("--schema", str(PERSON_SCHEMA), str(PERSON_DOC), "--max-tokens", "45", "--stats")
    assert result.returncode == 0, result.stderr
    json.loads(result.stdout)
    assert "the token budget closed the document while writing /" in result.stderr
    stats = json.loads(result.stderr.strip().splitlines()[-1])
    assert stats["budget_closed_at"].startswith("/")


def test_review_with_workers_is_a_usage_error(tmp_path: Path) -> None:
    result = run_extract(
        "--schema", str(PERSON_SCHEMA), str(PERSON_DOC), str(PERSON_DOC), "--workers", "2", "--review", str(tmp_path / "r.html")
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert "--review needs every document's text in one process" in result.stderr


def test_a_grounded_date_is_read_from_the_document_in_another_form() -> None:
    """The sample says `born on 12 March 1990`: under --grounded the birth date is that date
    (without it the bundled model writes one of its own), its evidence the statement, and the
    age one of the numbers the document writes."""
    result = run_extract("--schema", str(PERSON_SCHEMA), str(PERSON_DOC), "--grounded", "--evidence")
    assert result.returncode == 0, result.stderr
    envelope = json.loads(result.stdout)
    document = PERSON_DOC.read_text()
    assert envelope["data"]["birth_date"] == "1990-03-12"
    found = envelope["evidence"]["/birth_date"]
    assert found["grounded"] is True and " ".join(document[slice(*found["span"])].split()) == "12 March 1990"
    age = envelope["evidence"]["/age"]
    assert envelope["data"]["age"] == 34 and age["grounded"] is True and document[slice(*age["span"])] == "34"


def _text_of(page: str) -> str:
    parts: list[str] = []

    class Collect(HTMLParser):
        def handle_data(self, data: str) -> None:
            parts.append(data)

    Collect().feed(page)
    return "".join(parts)
