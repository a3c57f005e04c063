"""CLI errors: stdout stays empty, stderr has one clear message, the exit code is documented."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gguf_extract.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
PERSON_SCHEMA = ROOT / "schemas" / "person.json"
PERSON_DOC = ROOT / "samples" / "person.txt"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_bad_schema_json(tmp_path: Path) -> None:
    schema = tmp_path / "bad.json"
    schema.write_text('{"type": "object", }')
    code, out, err = invoke("--schema", str(schema), str(PERSON_DOC))
    assert (code, out) == (3, "")
    assert "bad.json is not valid JSON" in err and "line 1" in err


def test_unsupported_keyword_names_keyword_and_pointer(tmp_path: Path) -> None:
    schema = tmp_path / "conditional.json"
    conditional = {"type": "object", "if": {"properties": {"a": {"multipleOf": 3}}}, "then": {"required": ["b"]}}
    schema.write_text(json.dumps({"type": "object", "properties": {"zip": conditional}}))
    code, out, err = invoke("--schema", str(schema), str(PERSON_DOC))
    assert (code, out) == (3, "")
    assert "unsupported keyword 'if' at /properties/zip/if" in err


def test_schema_failing_the_meta_schema(tmp_path: Path) -> None:
    schema = tmp_path / "meta.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"a": {"type": "strng"}}}))
    code, out, err = invoke("--schema", str(schema), str(PERSON_DOC))
    assert (code, out) == (3, "")
    assert "meta-schema" in err and "/properties/a/type" in err


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_schema_with_a_number_json_does_not_have(tmp_path: Path, constant: str) -> None:
    schema = tmp_path / "inf.json"
    schema.write_text(f'{{"type": "number", "maximum": {constant}}}')
    code, out, err = invoke("--schema", str(schema), str(PERSON_DOC))
    assert (code, out) == (3, "")
    assert f"{constant} is not a JSON value" in err and "inf.json" in err


def test_library_schema_with_infinity_is_refused_with_its_pointer() -> None:
    from gguf_extract.core.errors import SchemaError
    from gguf_extract.core.index.compiled import compile_automaton

    with pytest.raises(SchemaError, match="NaN or infinity\\) at /properties/x/maximum"):
        compile_automaton({"properties": {"x": {"type": "number", "maximum": float("inf")}}})


def test_missing_document() -> None:
    code, out, err = invoke("--schema", str(PERSON_SCHEMA), "no/such/file.txt")
    assert (code, out) == (5, "")
    assert "document not found: no/such/file.txt" in err


def test_empty_document(tmp_path: Path) -> None:
    doc = tmp_path / "empty.txt"
    doc.write_text("  \n")
    code, out, err = invoke("--schema", str(PERSON_SCHEMA), str(doc))
    assert (code, out) == (5, "")
    assert "is empty" in err


def test_missing_model_file() -> None:
    code, out, err = invoke("--schema", str(PERSON_SCHEMA), str(PERSON_DOC), "--model", "/nowhere/model.gguf")
    assert (code, out) == (4, "")
    assert "model file not found: /nowhere/model.gguf" in err


def test_file_that_is_not_gguf(tmp_path: Path) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"not a model")
    code, out, err = invoke("--schema", str(PERSON_SCHEMA), str(PERSON_DOC), "--model", str(fake))
    assert (code, out) == (4, "")
    assert "not a GGUF model file" in err


def test_model_from_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXTRACT_MODEL", "/env/model.gguf")
    code, _, err = invoke("--schema", str(PERSON_SCHEMA), str(PERSON_DOC))
    assert code == 4 and "/env/model.gguf" in err


def test_usage_error_exit_code() -> None:
    code, out, _ = invoke(str(PERSON_DOC))
    assert code == 2 and out == ""


def test_help_shows_examples() -> None:
    code, out, _ = invoke("--help")
    assert code == 0
    assert "extract --schema schemas/person.json samples/person.txt" in out
    assert "Exit codes" in out


def test_no_document_at_all_is_a_usage_error() -> None:
    code, out, err = invoke("--schema", str(PERSON_SCHEMA))
    assert (code, out) == (2, "")
    assert "no documents given" in err and "--files-from" in err


# -- options that do not apply, and messages that say what to do (issue 14) ----------------------


def test_shard_for_a_single_document_is_a_usage_error() -> None:
    code, out, err = invoke("--schema", str(PERSON_SCHEMA), str(PERSON_DOC), "--shard", "0/3")
    assert (code, out) == (2, "")
    assert "--shard applies to a batch" in err


def test_shard_out_of_range_is_a_usage_error_even_for_one_document() -> None:
    code, out, err = invoke("--schema", str(PERSON_SCHEMA), str(PERSON_DOC), "--shard", "5/3")
    assert (code, out) == (2, "")
    assert "--shard 5/3: I must be at least 0 and below N" in err


def test_piped_input_without_dash_hints_at_dash() -> None:
    result = CliRunner().invoke(app, ["--schema", str(PERSON_SCHEMA)], input="Ada Lovelace, 36.\n")
    assert (result.exit_code, result.stdout) == (2, "")
    assert "no documents given" in result.stderr and "pass -" in result.stderr


@pytest.mark.parametrize("pattern", ["/etc/*.txt", "../*.txt", ""])
def test_glob_outside_the_directory_is_a_usage_error(tmp_path: Path, pattern: str) -> None:
    (tmp_path / "a.txt").write_text("x")
    code, out, err = invoke("--schema", str(PERSON_SCHEMA), str(tmp_path), "--glob", pattern)
    assert (code, out) == (2, "")
    assert "--glob" in err and "is not a pattern inside a directory" in err


def test_name_collision_inside_a_directory_does_not_say_pass_the_directory(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("x")
    (tmp_path / "docs" / "a.md").write_text("x")
    code, out, err = invoke("--schema", str(PERSON_SCHEMA), str(tmp_path / "docs"), "--output-dir", str(tmp_path / "out"))
    assert (code, out) == (2, "")
    assert "would both write" in err and "--glob" in err and "pass their directory" not in err


def test_name_collision_of_files_in_two_folders_suggests_separate_runs(tmp_path: Path) -> None:
    for folder in ("x", "y"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.txt").write_text("x")
    code, _, err = invoke(
        "--schema",
        str(PERSON_SCHEMA),
        str(tmp_path / "x" / "a.txt"),
        str(tmp_path / "y" / "a.txt"),
        "--output-dir",
        str(tmp_path / "out"),
    )
    assert code == 2 and "would both write" in err and "run them separately with different --output-dir" in err


@pytest.mark.model  # the vocabulary loads; no weights (every document fails before generation)
def test_sources_keep_the_leading_dot_slash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "b.txt").write_text(" \n")
    code, out, _ = invoke("--schema", str(PERSON_SCHEMA), "./missing.txt", "./docs")
    assert code == 5
    assert [json.loads(line)["source"] for line in out.splitlines()] == ["./missing.txt", "./docs/b.txt"]


@pytest.mark.model  # the vocabulary loads; no weights
def test_quiet_hides_the_summary(tmp_path: Path) -> None:
    arguments = ["--schema", str(PERSON_SCHEMA), str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    _, _, loud = invoke(*arguments)
    code, _, quiet = invoke(*arguments, "--quiet")
    assert "2 documents: 0 extracted, 2 failed" in loud
    assert code == 5 and "documents:" not in quiet and "document not found" in quiet


@pytest.mark.parametrize("seed", ["-1", "-5"])
def test_negative_seed_is_a_usage_error(seed: str) -> None:
    code, out, err = invoke("--schema", str(PERSON_SCHEMA), str(PERSON_DOC), "--seed", seed)
    assert (code, out) == (2, "")
    assert "--seed" in err


@pytest.mark.parametrize("encoding", ["rot13", "hex", "base64", "zlib"])
def test_codecs_that_are_not_text_encodings_are_usage_errors(encoding: str) -> None:
    code, out, err = invoke("--schema", str(PERSON_SCHEMA), str(PERSON_DOC), "--encoding", encoding)
    assert (code, out) == (2, "")
    assert "is not a text encoding" in err


@pytest.mark.parametrize(("flags", "stops"), [((), True), (("--allow-repeats",), False)])
def test_allow_repeats_turns_the_remedy_for_runaway_values_off(
    flags: tuple[str, ...], stops: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gguf_extract.cli.commands import extract
    from gguf_extract.cli.extraction_steps import sampling
    from gguf_extract.cli.request import Request

    seen: list[Request] = []
    monkeypatch.setattr(extract, "execute", lambda request: seen.append(request) or 0)
    code, _out, _err = invoke("--schema", str(PERSON_SCHEMA), str(PERSON_DOC), *flags)
    assert code == 0 and sampling(seen[0]).stop_repeats is stops
