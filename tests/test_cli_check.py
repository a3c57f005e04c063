"""`extract check`, `--schema NAME`, `--schema module:Class` and `--lenient`: stdout, stderr
and exit code checked separately."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gguf_extract import SchemaReport
from gguf_extract.cli.app import app, check_app
from gguf_extract.cli.commands.check import render_report
from gguf_extract.core.errors import UnsupportedSchema

ROOT = Path(__file__).resolve().parent.parent
PERSON_DOC = ROOT / "samples" / "person.txt"
REFUSED = {
    "type": "object",
    "properties": {"a": {"type": "string", "maxLength": 5}, "b": {"type": "integer", "x-unit": "cm"}},
    "required": ["a"],
    "if": {"properties": {"a": {"format": "date"}}},
    "then": {"required": ["a"]},
    "contains": {"type": "null"},
}


def check(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(check_app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_check_supported_packaged_schema_by_name() -> None:
    code, out, err = check("invoice")
    assert (code, err) == (0, "")
    assert "schema: invoice (packaged) (2020-12)" in out
    assert "result: supported: every keyword is enforced exactly" in out
    assert "NFA states" in out
    example = out.split("example: ", 1)[1]
    assert set(json.loads(example)) >= {"invoice_number"}


def test_check_lists_every_refusal_and_ignored_keyword(tmp_path: Path) -> None:
    schema = tmp_path / "refused.json"
    schema.write_text(json.dumps(REFUSED))
    code, out, err = check(str(schema))
    assert (code, err) == (3, "")
    assert "refused: /if: unsupported keyword 'if' at /if" in out
    assert "refused: /contains:" in out
    assert "ignored (no meaning in 2020-12): /properties/b/x-unit" in out


def test_check_json_report(tmp_path: Path) -> None:
    schema = tmp_path / "refused.json"
    schema.write_text(json.dumps(REFUSED))
    code, out, _ = check(str(schema), "--json")
    report = json.loads(out)
    assert code == 3 and report["supported"] is False
    assert {r["pointer"] for r in report["refused"]} == {"/if", "/contains"}
    assert set(report["ignored"]) == {"/properties/b/x-unit"}


def test_check_invalid_schema_is_an_error(tmp_path: Path) -> None:
    schema = tmp_path / "bad.json"
    schema.write_text(json.dumps({"type": "strin"}))
    code, out, err = check(str(schema))
    assert (code, out) == (3, "")
    assert "fails the JSON Schema meta-schema" in err


def test_unknown_schema_name_lists_packaged_ones() -> None:
    code, out, err = check("no-such-schema")
    assert (code, out) == (3, "")
    assert "schema file not found: no-such-schema" in err and "person" in err


def test_pydantic_model_by_module_and_class(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "shop_models.py").write_text(
        "from typing import Optional\nfrom pydantic import BaseModel, Field\n\n"
        "class Item(BaseModel):\n    name: str = Field(max_length=20)\n    price: int = Field(ge=0)\n\n"
        "class Order(BaseModel):\n    items: list[Item]\n    note: Optional[str] = None\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, err = check("shop_models:Order")
    assert (code, err) == (0, ""), out
    assert "schema: shop_models:Order" in out
    code, out, err = check("shop_models:Missing")
    assert code == 3 and "has no attribute 'Missing'" in err


def test_check_subcommand_through_the_installed_entry_point() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "gguf_extract", "check", "person"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "result: supported" in result.stdout


def test_lenient_ignores_refused_keywords_and_still_validates(tmp_path: Path) -> None:
    schema = tmp_path / "refused.json"
    schema.write_text(json.dumps(REFUSED))
    result = CliRunner().invoke(app, ["--schema", str(schema), str(PERSON_DOC), "--lenient", "--max-tokens", "40"])
    assert result.exit_code == 0, result.stderr
    assert "--lenient: ignoring keyword 'if' at /if" in result.stderr
    assert "keyword 'contains' at /contains" in result.stderr
    value = json.loads(result.stdout)
    assert isinstance(value["a"], str) and len(value["a"]) <= 5


def test_check_counts_keywords_only_where_they_are_keywords(tmp_path: Path) -> None:
    """Property names and `$defs` names are data: a property named `format` enforces nothing."""
    schema = {
        "type": "object",
        "properties": {n: {"type": "string"} for n in ("format", "pattern", "maximum", "enum")},
        "$defs": {"items": {"type": "null"}, "required": {"type": "boolean"}},
        "enum": [{"minLength": 1}],  # a value, not a schema
    }
    path = tmp_path / "names.json"
    path.write_text(json.dumps(schema))
    code, out, err = check(str(path))
    assert (code, err) == (0, "")
    assert "enforced: enum x1, properties x1, type x7\n" in out
    code, out, err = check(str(path), "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["enforced"] == {"enum": 1, "properties": 1, "type": 7}


def test_check_names_the_draft_that_gives_another_draft_s_form_its_meaning(tmp_path: Path) -> None:
    schema = tmp_path / "draft4.json"
    schema.write_text(json.dumps({"type": "integer", "minimum": 0, "exclusiveMinimum": True}))
    code, out, err = check(str(schema))
    assert (code, out) == (3, "")
    assert err.splitlines() == [
        f"error: {schema} fails the JSON Schema meta-schema at /exclusiveMinimum: True is not of type 'number'",
        'hint: /exclusiveMinimum is written as draft-04 reads it: add "$schema": "http://json-schema.org/draft-04/schema#"'
        ' to the root, or write the bound itself ("exclusiveMinimum": 0, without "minimum")',
    ]
    schema.write_text(json.dumps({"type": "array", "items": [{"type": "string"}], "additionalItems": False}))
    code, out, err = check(str(schema))
    assert (code, out) == (3, "")
    assert err.splitlines()[1] == (
        'hint: /items is written as draft-07 reads it: add "$schema": "http://json-schema.org/draft-07/schema#" to the'
        ' root, or write the tuple as "prefixItems" (and "additionalItems" as "items")'
    )


def test_check_does_not_call_a_schema_with_warnings_fully_enforced(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "email": {"type": "string", "format": "emial"}},
        "required": ["name", "emali"],
    }
    path = tmp_path / "contact.json"
    path.write_text(json.dumps(schema))
    code, out, err = check(str(path))
    assert (code, err) == (0, "")  # the schema compiles; what it leaves open is said, not refused
    lines = out.splitlines()
    assert lines[1] == (
        "result: supported, not fully enforced: 2 warnings below; every keyword they do not name is enforced exactly"
    )
    assert (
        "ignored (no meaning in 2020-12): /properties/email/format: 'emial' is not a format JSON Schema defines,"
        " so validators ignore it; did you mean 'email'?"
    ) in lines
    assert (
        "warning: /required/1: names 'emali', which 'properties' does not declare: any value is allowed for it;"
        " did you mean 'email'?"
    ) in lines
    code, out, err = check(str(path), "--json")
    report = json.loads(out)
    assert (code, report["supported"], report["fully_enforced"]) == (0, True, False)
    assert [note["pointer"] for note in report["notes"]] == ["/required/1", "/properties/email/format"]
    code, out, err = check("invoice", "--json")
    assert (code, json.loads(out)["fully_enforced"]) == (0, True)


LENIENT_LINE = "hint: extract --lenient leaves the refused keywords out, with a warning each, and still validates the output"


def test_check_of_a_schema_lenient_would_run_says_so(tmp_path: Path) -> None:
    path = tmp_path / "typo.json"
    path.write_text(json.dumps({"type": "object", "properties": {"a": {"typ": "string"}}, "contains": {}}))
    code, out, err = check(str(path))
    assert (code, err) == (3, "")
    lines = out.splitlines()
    assert "refused: /properties/a/typ: unknown keyword 'typ' at /properties/a/typ: did you mean 'type'?" in lines[3:5]
    assert any(line.startswith("refused: /contains: unsupported keyword 'contains'") for line in lines[3:5])
    assert lines[5] == LENIENT_LINE  # after the refusals it speaks of


def test_check_does_not_offer_lenient_where_it_would_refuse_too() -> None:
    relaxable = UnsupportedSchema("contains", "/contains", "no way to enforce it")
    kept = UnsupportedSchema("$ref", "/$ref", "'#a' names an anchor two subschemas declare", relaxable=False)
    report = SchemaReport("2020-12", {}, [relaxable, kept], [], 1, 1, 2, "{}", 0.0)
    assert LENIENT_LINE not in render_report("s.json", report)
    assert LENIENT_LINE in render_report("s.json", replace(report, refused=[relaxable]))
    assert LENIENT_LINE not in render_report("s.json", replace(report, refused=[]))


def test_check_names_the_root_as_slash_among_grounded_values(tmp_path: Path) -> None:
    path = tmp_path / "root.json"
    path.write_text(json.dumps({"type": "string", "maxLength": 10}))
    code, out, _ = check(str(path))
    assert code == 0 and "grounded with --grounded: /\n" in out
