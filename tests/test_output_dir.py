"""`--output-dir` never loses data: results never replace the schema, an input document or a
file this run did not write unless --skip-existing or --overwrite says what to do; refusals
come before any model loads (exit 2). --skip-existing keeps only valid earlier results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runs import NO_MODEL, SCHEMA, assert_usage_error


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    environment = {**os.environ, "EXTRACT_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "gguf_extract", "--max-tokens", "40", *args]
    return subprocess.run(command, capture_output=True, env=environment, timeout=600, check=False, cwd=tmp_path)


@pytest.fixture
def schema(tmp_path: Path) -> Path:
    path = tmp_path / "person.json"
    path.write_text(json.dumps(SCHEMA))
    return path


@pytest.mark.parametrize("option", [[], ["--overwrite"], ["--skip-existing"]])
def test_the_schema_is_never_a_result(tmp_path: Path, schema: Path, option: list[str]) -> None:
    (tmp_path / "person.txt").write_text("Ada Lovelace, 36.")
    before = schema.read_bytes()
    result = run(tmp_path, "--schema", "person.json", "person.txt", "--output-dir", ".", "--model", NO_MODEL, *option)
    err = assert_usage_error(result, "refusing to write the result of person.txt to person.json: that is the schema file")
    assert "choose another --output-dir" in err
    assert schema.read_bytes() == before


@pytest.mark.parametrize("option", [[], ["--overwrite"], ["--skip-existing"]])
def test_an_input_document_is_never_a_result(tmp_path: Path, schema: Path, option: list[str]) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.json").write_text('{"note": "an input, not a result"}')
    (notes / "b.txt").write_text("Alan Turing, 41.")
    result = run(
        tmp_path, "--schema", str(schema), "notes/a.json", "notes/b.txt", "--output-dir", "notes/", "--model", NO_MODEL, *option
    )
    assert_usage_error(
        result, "refusing to write the result of notes/a.json to notes/a.json: that is the input document notes/a.json"
    )
    assert (notes / "a.json").read_text() == '{"note": "an input, not a result"}'


def test_an_existing_result_needs_skip_existing_or_overwrite(tmp_path: Path, schema: Path) -> None:
    (tmp_path / "docs").mkdir()
    for name in ("a", "b", "c"):
        (tmp_path / "docs" / f"{name}.txt").write_text(f"{name} is 30 years old.")
    (tmp_path / "out").mkdir()
    for name in ("a", "c"):
        (tmp_path / "out" / f"{name}.json").write_text("earlier")
    arguments = ["--schema", str(schema), "docs", "--output-dir", "out", "--model", NO_MODEL]
    err = assert_usage_error(run(tmp_path, *arguments), "out/a.json exists (and 1 more results), and this run did not write it")
    assert "pass --skip-existing" in err and "--overwrite" in err
    assert (tmp_path / "out" / "a.json").read_text() == "earlier"
    # --overwrite says what to do: the run goes on to the model (missing here, exit 4)
    assert run(tmp_path, *arguments, "--overwrite").returncode == 4


@pytest.mark.parametrize("option", ["--skip-existing", "--overwrite"])
def test_result_options_without_output_dir_are_usage_errors(tmp_path: Path, schema: Path, option: str) -> None:
    (tmp_path / "a.txt").write_text("Ada Lovelace, 36.")
    assert_usage_error(
        run(tmp_path, "--schema", str(schema), "a.txt", option, "--model", NO_MODEL), f"{option} applies only with --output-dir"
    )


def test_skip_existing_and_overwrite_exclude_each_other(tmp_path: Path, schema: Path) -> None:
    (tmp_path / "a.txt").write_text("Ada Lovelace, 36.")
    result = run(tmp_path, "--schema", str(schema), "a.txt", "--output-dir", "out", "--skip-existing", "--overwrite")
    assert_usage_error(result, "exclude each other")


@pytest.mark.model
def test_skip_existing_extracts_again_what_is_not_a_valid_result(tmp_path: Path, schema: Path) -> None:
    docs, out = tmp_path / "docs", tmp_path / "out"
    docs.mkdir()
    out.mkdir()
    for name, person in (("a", "Ada Lovelace is 36."), ("b", "Alan Turing is 41."), ("c", "Grace Hopper is 85.")):
        (docs / f"{name}.txt").write_text(person)
    (out / "a.json").write_text('{"name": "Ada Lo')  # cut short: not JSON
    (out / "b.json").write_text('{"name": 5}\n')  # JSON, but fails the schema
    (out / "c.json").write_text('{"name": "Grace Hopper", "age": 85}\n')  # a valid result: kept
    kept = (out / "c.json").stat().st_mtime_ns
    result = run(tmp_path, "--schema", str(schema), "docs", "--output-dir", "out", "--skip-existing")
    err = result.stderr.decode()
    assert result.returncode == 0, err
    assert "3 documents: 2 extracted, 0 failed, 1 skipped" in err
    assert "out/a.json is not valid JSON for the schema: extracting docs/a.txt again" in err
    for name in ("a", "b"):
        assert set(json.loads((out / f"{name}.json").read_text())) == {"name", "age"}
    assert (out / "c.json").stat().st_mtime_ns == kept
