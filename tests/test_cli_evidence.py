"""`--grounded`, `--evidence`, `--min-confidence` and `--review` through the command, with the
bundled model: stdout, stderr and the exit code checked apart."""

from __future__ import annotations

import json
import re
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


CONTACT = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "email": {"type": ["string", "null"], "format": "email"},
        "work_email": {"type": "string", "format": "email"},
    },
    "required": ["name", "email", "work_email"],
}
NOT_STATED = r"is not stated in the document \(released from grounding, no span; confidence [0-9.e-]+\)"


def test_a_value_the_document_does_not_state_is_null_where_it_may_be_and_named_where_not(tmp_path: Path) -> None:
    """The document gives no e-mail address: grounded, both addresses are released and the
    bundled model writes its own (`johnsmith@johnsmith.com`); the nullable one is written as
    null, the other kept and named on stderr with what to do."""
    schema, document = tmp_path / "contact.json", tmp_path / "john.txt"
    schema.write_text(json.dumps(CONTACT))
    document.write_text("John Smith is a carpenter from Leeds. He builds tables and chairs.\n")
    result = run_extract("--schema", str(schema), str(document), "--grounded")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["email"] is None and data["name"] == "John Smith"
    kept = data["work_email"]
    assert kept not in document.read_text()  # the model's own address
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2, result.stderr
    assert re.fullmatch(rf'warning: {re.escape(str(document))}: /email "[^"]+" {NOT_STATED}: written as null', lines[0])
    assert re.fullmatch(
        rf"warning: {re.escape(str(document))}: /work_email {re.escape(json.dumps(kept))} {NOT_STATED}: kept, as the"
        r' schema allows no null there; make the field nullable to have it written as null, or mark it "x-grounded":'
        r" false to accept values of the model's own",
        lines[1],
    ), lines[1]
    envelope = run_extract("--schema", str(schema), str(document), "--grounded", "--evidence")
    assert envelope.returncode == 0, envelope.stderr
    assert envelope.stderr == result.stderr
    found = json.loads(envelope.stdout)
    assert found["data"] == data
    assert found["evidence"]["/email"] == {"span": None, "confidence": None}  # nothing left of the value withheld
    assert found["evidence"]["/work_email"]["grounded"] is False and found["evidence"]["/work_email"]["span"] is None
    other = tmp_path / "jane.txt"
    other.write_text("Jane Smith is a carpenter from York. She builds tables and chairs.\n")
    batch = run_extract("--schema", str(schema), str(document), str(other), "--grounded", "--quiet")
    assert batch.returncode == 0, batch.stderr
    records = [json.loads(line) for line in batch.stdout.splitlines()]
    assert [record["source"] for record in records] == [str(document), str(other)]
    assert records[0]["data"] == data and records[1]["data"]["email"] is None
    assert batch.stderr.startswith(result.stderr)  # the first document's lines, then the second's
    assert f"warning: {other}: /email " in batch.stderr
    plain = run_extract("--schema", str(schema), str(document))  # not grounded: nothing released, nothing said
    assert plain.returncode == 0 and plain.stderr == ""
    assert json.loads(plain.stdout)["email"] is not None


DEPENDENCIES = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "dependencies": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 6},
    },
    "required": ["name", "dependencies"],
}


def test_abstain_drops_doubtful_items_the_least_sure_first_while_min_items_allows(tmp_path: Path) -> None:
    """Every dependency below the threshold: they go, the least sure first, until `minItems: 1`
    keeps the last (the surest), which stays with its warning; the evidence is that of the
    item kept, at its new place, and nothing of the dropped ones is left."""
    schema, document = tmp_path / "deps.json", tmp_path / "pkg.txt"
    schema.write_text(json.dumps(DEPENDENCIES))
    document.write_text(
        "# awsome-tool\n\n![build](https://img.shields.io/badge/build-passing-green.svg) ![boto3.svg](boto3.svg)\n\n"
        "awsome-tool uploads files to S3. It needs requests and boto3, and click for its command line.\n"
    )
    first = run_extract("--schema", str(schema), str(document), "--grounded", "--evidence")
    assert first.returncode == 0, first.stderr
    written = json.loads(first.stdout)
    items = written["data"]["dependencies"]
    assert len(items) >= 2, items  # the model wrote several, so some can go
    confidences = [written["evidence"][f"/dependencies/{index}"]["confidence"] for index in range(len(items))]
    assert all(confidence is not None for confidence in confidences)
    threshold = round(max(confidences) + 0.001, 6)
    surest = confidences.index(max(confidences))
    options = ["--grounded", "--evidence", "--min-confidence", str(threshold), "--abstain"]
    result = run_extract("--schema", str(schema), str(document), *options)
    assert result.returncode == 0, result.stderr
    envelope = json.loads(result.stdout)
    assert envelope["data"]["dependencies"] == [items[surest]]
    assert envelope["evidence"]["/dependencies/0"] == written["evidence"][f"/dependencies/{surest}"]
    assert not any(pointer.startswith("/dependencies/") and pointer != "/dependencies/0" for pointer in envelope["evidence"])
    source = re.escape(str(document))
    for index, (item, confidence) in enumerate(zip(items, confidences, strict=True)):
        below = rf"has confidence {confidence:.3g}, below --min-confidence {threshold}"
        if index == surest:
            line = rf"/dependencies/{index} {below}: kept, as the schema allows neither null nor its removal there \(--abstain\)"
        else:
            line = rf"/dependencies/{index} {re.escape(json.dumps(item))} {below}: dropped from its array \(--abstain\)"
        assert re.search(rf"^warning: {source}: {line}$", result.stderr, re.MULTILINE), (line, result.stderr)


def _text_of(page: str) -> str:
    parts: list[str] = []

    class Collect(HTMLParser):
        def handle_data(self, data: str) -> None:
            parts.append(data)

    Collect().feed(page)
    return "".join(parts)
