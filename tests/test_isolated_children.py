"""Child processes import nothing from the working directory or the environment: a folder of
untrusted documents that holds `gguf_extract.py`, a `gguf_extract/` package, `json.py` (a
standard-library name), `bs4.py` (a converter's) or `sitecustomize.py` runs none of them, in a
converter's child or a --workers process, and PYTHONPATH and PYTHONSTARTUP change nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gguf_extract import module_command
from gguf_extract.core.documents.convert.box import convert_in_box

ROOT = Path(__file__).resolve().parent.parent
# Each planted module records that it ran, then goes on as the real one would not.
PLANTED = ("gguf_extract.py", "json.py", "bs4.py", "sitecustomize.py", "usercustomize.py", "runpy.py", "startup.py")


def plant(folder: Path) -> Path:
    """`folder` filled with modules that write a line to `folder/ran` when imported."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / "ran"
    for name in PLANTED:
        (folder / name).write_text(f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n")
    package = folder / "gguf_extract"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text(f"open({str(marker)!r}, 'a').write('gguf_extract/\\n')\n")
    return marker


def test_a_conversion_child_imports_nothing_from_the_working_directory_or_pythonpath(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evil = tmp_path / "documents"
    marker = plant(evil)
    monkeypatch.chdir(evil)
    monkeypatch.setenv("PYTHONPATH", str(evil))
    monkeypatch.setenv("PYTHONSTARTUP", str(evil / "startup.py"))
    monkeypatch.setenv("PYTHONINSPECT", "1")  # would leave the child waiting at a prompt
    converted = convert_in_box(b"<html><body><p>Invoice 42</p></body></html>", "html", "invoice.html")
    assert "Invoice 42" in converted.text
    assert not marker.exists(), marker.read_text()


def test_module_command_takes_only_the_package_s_modules() -> None:
    with pytest.raises(ValueError, match="not a module of gguf_extract"):
        module_command("json")


def extract_from(folder: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """`extract ARGS` started in `folder` the way the installed `extract` script starts: the
    working directory is not on its own module path (only `python -m` puts it there)."""
    program = "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]\n"
    program += "from gguf_extract.cli.app import main; main()"
    return subprocess.run([sys.executable, "-c", program, *args], capture_output=True, timeout=600, check=False, cwd=folder)


def test_extract_text_in_a_folder_of_planted_modules_runs_none(tmp_path: Path) -> None:
    evil = tmp_path / "documents"
    marker = plant(evil)
    (evil / "invoice.html").write_text("<html><body><h1>Invoice</h1><p>Total: 42 EUR</p></body></html>")
    result = extract_from(evil, "text", "invoice.html")
    assert result.returncode == 0, result.stderr.decode()
    assert "Total: 42 EUR" in result.stdout.decode()
    assert not marker.exists(), marker.read_text()


@pytest.mark.model
def test_workers_in_a_folder_of_planted_modules_run_none(tmp_path: Path) -> None:
    evil = tmp_path / "documents"
    marker = plant(evil)
    schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}}, "required": ["name"]}
    (evil / "s.json").write_text(json.dumps(schema))
    (evil / "a.txt").write_text("Name: Ada Lovelace\n")
    (evil / "b.txt").write_text("Name: Alan Turing\n")
    result = extract_from(evil, "--schema", "s.json", "--workers", "2", "--threads", "1", "a.txt", "b.txt")
    assert result.returncode == 0, result.stderr.decode()
    lines = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert [line["source"] for line in lines] == ["a.txt", "b.txt"]
    assert all("data" in line for line in lines)
    assert not marker.exists(), marker.read_text()
