"""PDF, HTML and DOCX documents extracted end to end by the real command on the bundled model:
the model reads the converted text, the output validates, and a document that cannot be read
fails alone in a batch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from document_files import scanned_pdf, write_all

from gguf_extract.core.documents.document import read_document

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.model


def run_extract(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-m", "gguf_extract", *args, "--max-tokens", "400"]
    return subprocess.run(command, input=stdin, capture_output=True, timeout=600, check=False)


def strings_in(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings_in(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    return [value] if isinstance(value, str) else []


def check_read_from(value: Any, text: str, schema: str) -> None:
    """Valid for the schema, and copied from the converted text: some value of five or more
    characters occurs in it (whatever else a 135M model makes up)."""
    jsonschema.validate(value, json.loads((ROOT / "schemas" / f"{schema}.json").read_text()))
    assert any(len(s) >= 5 and s in text for s in strings_in(value)), (value, text)


@pytest.mark.parametrize(("kind", "schema"), [("pdf", "invoice"), ("html", "person"), ("docx", "person")])
def test_each_format_extracts_end_to_end(tmp_path: Path, kind: str, schema: str) -> None:
    document = write_all(tmp_path)[kind]
    result = run_extract("--schema", schema, str(document))
    assert result.returncode == 0, result.stderr.decode()
    check_read_from(json.loads(result.stdout), read_document(document), schema)


def test_a_batch_of_formats_goes_on_past_a_scanned_pdf(tmp_path: Path) -> None:
    files = write_all(tmp_path)
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(scanned_pdf())
    result = run_extract("--schema", "person", str(files["html"]), str(scan), str(files["docx"]))
    records = [json.loads(line) for line in result.stdout.decode().splitlines()]
    err = result.stderr.decode()
    assert result.returncode == 5 and "Traceback" not in err
    assert [sorted(record) for record in records] == [["data", "source"], ["error", "source"], ["data", "source"]]
    assert records[1]["error"]["type"] == "DocumentError" and "OCR it first" in records[1]["error"]["message"]
    assert "3 documents: 2 extracted, 1 failed" in err


def test_stdin_is_told_by_content_or_named_by_format(tmp_path: Path) -> None:
    files = write_all(tmp_path)
    piped = run_extract("--schema", "invoice", "--threads", "1", "-", stdin=files["pdf"].read_bytes())
    assert piped.returncode == 0, piped.stderr.decode()
    assert piped.stdout == run_extract("--schema", "invoice", "--threads", "1", str(files["pdf"])).stdout
    fragment = b"<h2>Contact</h2><ul><li>Ada Lovelace, 36, London</li></ul>"
    as_html = run_extract("--schema", "person", "--format", "html", "-", "--verbose", stdin=fragment)
    assert as_html.returncode == 0, as_html.stderr.decode()
    assert "## Contact\n\n* Ada Lovelace, 36, London" in as_html.stderr.decode()  # the prompt holds the converted text
