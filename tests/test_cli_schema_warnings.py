"""Misspelled keywords, keywords of another draft, unknown keywords and lone surrogates at the
command line, through the real command in a subprocess: stdout, stderr and exit code apart."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parent.parent
PERSON_DOC = ROOT / "samples" / "person.txt"
REPORTED = '{"properties": {"name": {"type": "string", "maxLenght": 20}, "age": {"tpye": "integer"}}, "requried": ["name"]}'
DEPENDENCIES_NOTE = (
    "ignoring 'dependencies' at /dependencies: a draft-07 keyword, which 2020-12 (the draft of a schema without"
    ' "$schema") does not read; declare "$schema": "http://json-schema.org/draft-07/schema#" to give it meaning'
)


def run(*args: str) -> tuple[int, str, str]:
    result = subprocess.run([sys.executable, "-m", "gguf_extract", *args], capture_output=True, timeout=300, check=False)
    return result.returncode, result.stdout.decode(), result.stderr.decode()


def schema_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "schema.json"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_check_refuses_each_misspelled_keyword_by_name(tmp_path: Path) -> None:
    code, out, err = run("check", schema_file(tmp_path, REPORTED))
    assert (code, err) == (3, "")
    assert "result: refused: 3 keyword(s)" in out
    assert "refused: /requried: unknown keyword 'requried' at /requried: did you mean 'required'?\n" in out
    assert "refused: /properties/name/maxLenght: unknown keyword 'maxLenght' at /properties/name/maxLenght: did you" in out
    assert "refused: /properties/age/tpye: unknown keyword 'tpye' at /properties/age/tpye: did you mean 'type'?\n" in out


def test_extract_refuses_a_misspelled_keyword_with_exit_3(tmp_path: Path) -> None:
    code, out, err = run("--schema", schema_file(tmp_path, REPORTED), str(PERSON_DOC))
    assert (code, out) == (3, "")
    assert err.splitlines() == [
        "error: unknown keyword 'requried' at /requried: did you mean 'required'?",
        "hint: rename it 'required' (a keyword of your own passes without a word when named 'x-...'), or pass --lenient"
        " to ignore it",
    ]


def test_a_refusal_s_hint_names_lenient_where_it_would_leave_the_keyword_out(tmp_path: Path) -> None:
    code, out, err = run("--schema", schema_file(tmp_path, '{"type": "array", "contains": {"type": "null"}}'), str(PERSON_DOC))
    assert (code, out) == (3, "")
    assert err.splitlines() == [
        "error: unsupported keyword 'contains' at /contains",
        "hint: remove or rewrite that keyword; the schema is refused rather than weakened, unless you pass --lenient,"
        " which leaves it out with a warning",
    ]
    remote = schema_file(tmp_path, '{"$ref": "https://example.com/person.json"}')
    code, out, err = run("--schema", remote, str(PERSON_DOC), "--lenient")
    assert (code, out) == (3, "")
    assert err.startswith("error: unsupported keyword '$ref' at /$ref: 'https://example.com/person.json' is not inside")
    assert "--lenient" not in err  # never relaxed: the final validation could not check it


def test_check_names_why_a_keyword_is_ignored(tmp_path: Path) -> None:
    schema = '{"type": "object", "properties": {"a": {"type": "string"}}, "dependencies": {"a": ["b"]}, "\\ud800": 1}'
    code, out, err = run("check", schema_file(tmp_path, schema))
    assert (code, err) == (0, "")
    assert f"ignored (no meaning in 2020-12): /dependencies: {DEPENDENCIES_NOTE.split(': ', 1)[1]}\n" in out
    assert "ignored (no meaning in 2020-12): /\\ud800: not a JSON Schema keyword\n" in out  # escaped, not a traceback
    code, out, err = run("check", "--json", schema_file(tmp_path, schema))
    assert (code, err) == (0, "")
    assert json.loads(out)["notes"][0] == {
        "keyword": "dependencies",
        "pointer": "/dependencies",
        "reason": DEPENDENCIES_NOTE.split(": ", 1)[1],
    }


def test_check_writes_a_pointer_holding_a_lone_surrogate_as_an_escape(tmp_path: Path) -> None:
    schema = '{"type": "object", "properties": {"\\ud800": {"type": "string"}}, "required": ["\\ud800"]}'
    code, out, err = run("check", schema_file(tmp_path, schema))
    assert (code, err) == (0, "")
    assert "grounded with --grounded: /properties/\\ud800\n" in out
    code, out, err = run("check", "--json", schema_file(tmp_path, schema))
    assert (code, err) == (0, "")
    assert json.loads(out)["grounded_with_flag"] == ["/properties/\ud800"]


@pytest.mark.model
def test_extract_warns_of_ignored_keywords_and_lenient_leaves_misspellings_out(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLenght": 30, "description": "half \ud83d a pair"},
            "\ud800": {"const": "\udc00"},  # written as escapes, in the document and in the prompt
        },
        "required": ["name", "\ud800"],
        "additionalProperties": False,
        "dependencies": {"name": ["age"]},
    }
    path = schema_file(tmp_path, json.dumps(schema))
    code, out, err = run("--schema", path, str(PERSON_DOC), "--lenient", "--max-tokens", "40")
    assert code == 0, err
    assert err.splitlines() == [
        "warning: --lenient: ignoring unknown keyword 'maxLenght' at /properties/name/maxLenght: did you mean 'maxLength'?",
        f"warning: {DEPENDENCIES_NOTE}",
    ]
    value = json.loads(out)
    jsonschema.validate(value, schema)
    assert value["\ud800"] == "\udc00" and '"\\ud800": "\\udc00"' in out


@pytest.mark.model
def test_workers_warn_of_the_schema_once(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}}, "dependencies": {"name": ["age"]}}
    path = schema_file(tmp_path, json.dumps(schema))
    for name in ("a", "b"):
        (tmp_path / f"{name}.txt").write_text("Maria Gonzales\n")
    arguments = ["--schema", path, str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "--max-tokens", "30", "-q"]
    code, out, err = run(*arguments, "--workers", "2", "--threads", "1")
    assert code == 0, err
    assert len(out.splitlines()) == 2
    assert err.count(DEPENDENCIES_NOTE) == 1, err


@pytest.mark.model
def test_extract_warns_of_a_format_and_a_required_name_that_look_mistyped(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 30},
            "email": {"type": "string", "format": "emial", "maxLength": 40},
        },
        "required": ["name", "emali"],
    }
    code, out, err = run("--schema", schema_file(tmp_path, json.dumps(schema)), str(PERSON_DOC), "--max-tokens", "200")
    assert code == 0, err
    assert err.splitlines() == [
        "warning: 'required' at /required/1: names 'emali', which 'properties' does not declare: any value is allowed"
        " for it; did you mean 'email'?",
        "warning: ignoring 'format' at /properties/email/format: 'emial' is not a format JSON Schema defines, so"
        " validators ignore it; did you mean 'email'?",
    ]
    jsonschema.validate(json.loads(out), schema)
