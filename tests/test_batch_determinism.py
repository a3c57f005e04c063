"""A batch decoded several documents at a time writes the same files every run: documents are
admitted in input order when a slot frees, whatever their conversions took (core.runtime), so
which documents share each decode, and so the model's numbers, never depend on timing. On the
bundled model, over every format a batch takes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from document_files import PAGE, invoice_pdf, report_docx

pytestmark = pytest.mark.model

SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 40},
        "people": {"type": "array", "items": {"type": "string", "maxLength": 30}, "maxItems": 3},
        "total": {"type": ["number", "null"]},
    },
    "required": ["title", "people", "total"],
    "additionalProperties": False,
}
SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def mixed_documents(folder: Path) -> list[str]:
    """Documents of every format, the slow conversions (PDF, DOCX, HTML) among quick text files."""
    folder.mkdir()
    files = {
        "a-invoice.pdf": invoice_pdf(),
        "b-person.txt": (SAMPLES / "person.txt").read_bytes(),
        "c-report.docx": report_docx(),
        "d-notes.md": b"# Team notes\n\n- Grace Hopper leads the compiler work.\n- Alan Turing reviews it.\n\nBudget: 1200.\n",
        "e-page.html": PAGE.encode(),
        "f-event.txt": (SAMPLES / "event.txt").read_bytes(),
        "g-invoice.txt": (SAMPLES / "invoice.txt").read_bytes(),
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return sorted(files)


def run(tmp_path: Path, folder: Path, out: Path) -> subprocess.CompletedProcess[bytes]:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    environment = {**os.environ, "EXTRACT_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "gguf_extract", "-s", str(schema), str(folder), "--parallel", "4"]
    command += ["--max-tokens", "60", "--output-dir", str(out), "--evidence"]
    return subprocess.run(command, capture_output=True, env=environment, timeout=900, check=False)


def test_two_runs_over_every_format_at_parallel_4_write_identical_results(tmp_path: Path) -> None:
    names = mixed_documents(tmp_path / "docs")
    written = []
    for number in (1, 2):
        out = tmp_path / f"out{number}"
        done = run(tmp_path, tmp_path / "docs", out)
        assert done.returncode == 0, done.stderr.decode()
        assert f"{len(names)} documents: {len(names)} extracted, 0 failed" in done.stderr.decode()
        written.append({path.name: path.read_bytes() for path in sorted(out.iterdir())})
    assert sorted(written[0]) == sorted(Path(name).stem + ".json" for name in names)
    assert written[0] == written[1]
    for data in written[0].values():
        jsonschema.validate(json.loads(data), SCHEMA)


def test_parallel_below_one_is_refused_before_any_model_loads(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Ada, 36.")
    command = [sys.executable, "-m", "gguf_extract", "-s", "person", str(tmp_path / "a.txt"), str(tmp_path / "a.txt")]
    run = subprocess.run([*command, "--parallel", "0"], capture_output=True, timeout=120, check=False)
    assert run.returncode == 2 and run.stdout == b""
    assert "--parallel" in run.stderr.decode() and "greater than or equal to 1" in run.stderr.decode()
