"""Extreme or malformed schemas end in one clean SchemaError (exit 3), or compile correctly:
huge number bounds, deep nesting, very long integers, lone surrogates, references to parts
that are not schemas, a `$schema` that is not a string. Never a traceback."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gguf_extract.cli.app import check_app
from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.errors import SchemaError
from gguf_extract.core.index.compiled import CompiledSchema, compile_automaton
from gguf_extract.core.schema.read.load import MAX_SCHEMA_DEPTH, check_schema, load_schema_file


def _nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    for _ in range(levels):
        schema = {"items": schema}
    return schema


def _sampled_documents_validate(schema: Any, count: int = 20) -> list[str]:
    automaton = compile_automaton(schema)
    checker = CompiledSchema.__new__(CompiledSchema)
    checker.schema = schema
    rng = random.Random(1)
    texts = [sample_accepted(automaton.dfa, rng).decode() for _ in range(count)]
    for text in texts:
        checker.validate(text)  # raises GenerationError when a document is invalid
    return texts


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "number", "maximum": 3.4028234663852886e38},
        {"type": "number", "minimum": -1.7976931348623157e308, "maximum": 1.7976931348623157e308},
        {"type": "number", "exclusiveMinimum": -3.4028234663852886e38, "exclusiveMaximum": 1e23},
        {"type": "integer", "minimum": -1.7976931348623157e308, "exclusiveMaximum": 1e300},
        {"type": "number", "minimum": 0, "maximum": 1e25, "multipleOf": 0.5},
    ],
)
def test_huge_bounds_do_not_restrict_the_generated_digits(schema: dict[str, Any]) -> None:
    _sampled_documents_validate(schema)


def test_nesting_beyond_the_limit_is_refused_before_any_recursion() -> None:
    _sampled_documents_validate(_nested(MAX_SCHEMA_DEPTH - 1), 3)
    for levels in (300, 5000):
        with pytest.raises(SchemaError, match=f"more than {MAX_SCHEMA_DEPTH} levels deep"):
            compile_automaton(_nested(levels))


def test_schema_files_too_deep_or_with_huge_integers_are_refused(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"items":' * 5000 + "{}" + "}" * 5000)
    with pytest.raises(SchemaError, match="nests objects and arrays more deeply than JSON parsing allows"):
        load_schema_file(deep)
    digits = tmp_path / "digits.json"
    digits.write_text('{"const": ' + "9" * 5000 + "}")
    with pytest.raises(SchemaError, match="more digits than Python reads"):
        load_schema_file(digits)
    with pytest.raises(SchemaError, match="more than 4000 digits at /maximum"):
        compile_automaton({"maximum": 10**4500})


@pytest.mark.parametrize(
    "schema",
    [
        {"const": "\ud800"},
        {"enum": ["a", "\udfff", {"k\ud800": 1}]},
        {"type": "object", "properties": {"\ud800": {"type": "integer"}}, "required": ["\ud800"]},
        {"type": "object", "propertyNames": {"enum": ["\ud800x"]}, "minProperties": 1, "maxProperties": 1},
        {"type": "string", "maxLength": 1, "not": {"const": "\ud800"}},
    ],
)
def test_lone_surrogates_are_written_as_escapes(schema: dict[str, Any]) -> None:
    texts = _sampled_documents_validate(schema)
    assert all(text.isascii() or "\ud800" not in json.loads(text) for text in texts)


@pytest.mark.parametrize(("ref", "kind"), [("#/minimum", "a number"), ("#/required", "an array"), ("#/$comment", "a string")])
def test_reference_to_something_that_is_not_a_schema(ref: str, kind: str) -> None:
    schema = {"minimum": 1, "required": ["a"], "$comment": "c", "properties": {"a": {"$ref": ref}}}
    with pytest.raises(SchemaError, match=f"names {kind}, not a schema"):
        compile_automaton(schema)
    with pytest.raises(SchemaError, match="names a number"):
        compile_automaton({"minimum": 1, "not": {"$ref": "#/minimum"}}, lenient=True)


@pytest.mark.parametrize("declared", [5, ["https://json-schema.org/draft/2020-12/schema"], None])
def test_schema_keyword_that_is_not_a_string(declared: Any) -> None:
    with pytest.raises(SchemaError, match="`\\$schema` must be a string"):
        compile_automaton({"$schema": declared, "type": "integer"})


@pytest.mark.parametrize(
    "schema",
    [
        {"$schema": 5},
        {"properties": {"a": {"$ref": "#/required"}}, "required": ["a"]},
        {"type": "string", "minLength": 1e12},
        _nested(300),
    ],
)
def test_extract_check_reports_one_line_and_exit_3(schema: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    result = CliRunner().invoke(check_app, [str(path)])
    assert result.exit_code == 3 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ") or "refused: /minLength" in result.stdout


def _wrapped(levels: int, inner: Any) -> Any:
    """`inner` as a value `levels` containers down (objects and arrays taking turns)."""
    value = inner
    for level in range(levels):
        value = {"x": value} if level % 2 else [value]
    return {"const": value}  # the const itself is one level below the root


@pytest.mark.parametrize("inner", [{}, [], 1, "a", None, True])
def test_values_at_the_depth_limit_pass_and_one_level_deeper_is_refused(inner: Any) -> None:
    """The limits are checked in one pass that names no place, and again with places only when
    it finds something: both must agree at the edge."""
    check_schema(_wrapped(MAX_SCHEMA_DEPTH - 1, inner))  # `inner` at depth MAX_SCHEMA_DEPTH
    with pytest.raises(SchemaError, match=f"more than {MAX_SCHEMA_DEPTH} levels deep"):
        check_schema(_wrapped(MAX_SCHEMA_DEPTH, inner))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (float("nan"), "NaN or infinity\\) at /const/x/0"),
        (-float("inf"), "NaN or infinity\\) at /const/x/0"),
        (10**4500, "more than 4000 digits at /const/x/0"),
        (-(10**4500), "more than 4000 digits at /const/x/0"),
    ],
    ids=["nan", "minus-infinity", "long-integer", "long-negative-integer"],
)
def test_a_value_beyond_the_limits_is_named_where_it_is(value: Any, message: str) -> None:
    check_schema({"const": {"x": [1.5, 10**3999]}})
    with pytest.raises(SchemaError, match=message):
        check_schema({"const": {"x": [value, 1.5]}})


DRAFT_04 = "http://json-schema.org/draft-04/schema#"
DRAFT_07 = "http://json-schema.org/draft-07/schema#"


@pytest.mark.parametrize(
    ("schema", "hint"),
    [
        (
            {"type": "object", "properties": {"n": {"type": "number", "maximum": 9, "exclusiveMaximum": True}}},
            f'/properties/n/exclusiveMaximum is written as draft-04 reads it: add "$schema": "{DRAFT_04}" to the root,'
            ' or write the bound itself ("exclusiveMaximum": 9, without "maximum")',
        ),
        (
            {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
            f'/items is written as draft-07 reads it: add "$schema": "{DRAFT_07}" to the root, or write the tuple as'
            ' "prefixItems" (and "additionalItems" as "items")',
        ),
        (
            {"$schema": DRAFT_04, "type": "integer", "exclusiveMinimum": 3},
            f'/exclusiveMinimum is written as draft-07 reads it: declare "$schema": "{DRAFT_07}" instead of "{DRAFT_04}",'
            ' or write it as draft-04 does ("minimum": 3, "exclusiveMinimum": true)',
        ),
        ({"type": "strin"}, "fix the schema so that it is valid JSON Schema"),
        ({"$schema": DRAFT_04, "enum": ["a", "a"]}, "fix the schema so that it is valid JSON Schema"),  # valid draft-06
        ({"$defs": []}, "fix the schema so that it is valid JSON Schema"),  # draft-07 would not read `$defs` at all
        (  # draft-04 alone reads the boolean bound, and reads the tuple too (whichever fails first is named)
            {"type": "object", "properties": {"n": {"minimum": 0, "exclusiveMinimum": True}, "t": {"items": [{}]}}},
            (
                f'/properties/n/exclusiveMinimum is written as draft-04 reads it: add "$schema": "{DRAFT_04}" to the root,'
                ' or write the bound itself ("exclusiveMinimum": 0, without "minimum")',
                f'/properties/t/items is written as draft-04 reads it: add "$schema": "{DRAFT_04}" to the root,'
                ' or write the tuple as "prefixItems" (and "additionalItems" as "items")',
            ),
        ),
        (  # draft-07's meta-schema passes only because draft-07 does not read `$defs`
            {"$defs": {"n": {"minimum": 0, "exclusiveMinimum": True}}, "items": [{"$ref": "#/$defs/n"}]},
            f'/$defs/n/exclusiveMinimum is written as draft-04 reads it: add "$schema": "{DRAFT_04}" to the root,'
            ' or write the bound itself ("exclusiveMinimum": 0, without "minimum")',
        ),
        (
            {"type": "number", "minimum": 0, "exclusiveMinimum": False},
            f'/exclusiveMinimum is written as draft-04 reads it: add "$schema": "{DRAFT_04}" to the root,'
            ' or drop it ("exclusiveMinimum": false says what "minimum" alone says: the bound is inclusive)',
        ),
        (
            {"type": "number", "exclusiveMaximum": False},
            '/exclusiveMaximum is draft-04\'s boolean form, which needs "maximum" beside it even in draft-04:'
            ' drop it ("exclusiveMaximum": false makes no bound)',
        ),
        (
            {"type": "integer", "exclusiveMinimum": True},
            '/exclusiveMinimum is draft-04\'s boolean form, which needs "minimum" beside it even in draft-04:'
            ' write the bound itself ("exclusiveMinimum": the number it excludes)',
        ),
        (  # no draft reads both bounds' forms: the rewrite alone
            {"type": "number", "minimum": 0, "exclusiveMinimum": True, "exclusiveMaximum": 9},
            '/exclusiveMinimum is draft-04\'s boolean form: write the bound itself ("exclusiveMinimum": 0, without "minimum")',
        ),
    ],
)
def test_a_schema_failing_its_meta_schema_is_told_the_draft_it_is_valid_in(
    schema: dict[str, Any], hint: str | tuple[str, ...]
) -> None:
    assert_meta_schema_hint(schema, hint)


@pytest.mark.parametrize(
    ("schema", "hint"),
    [
        (
            {"type": "object", "properties": {"a": {"type": "string", "required": True}, "b": {}}},
            "/properties/a/required is draft-03's form (true on the property):"
            ' list the property in its object\'s "required" instead ("required": ["a"])',
        ),
        (  # every property marked true is named, so that one edit fixes them all
            {"properties": {"o": {"properties": {"a": {"required": True}, "b": {"required": True}}}}},
            (
                "/properties/o/properties/a/required is draft-03's form (true on the property):"
                ' list the property in its object\'s "required" instead ("required": ["a", "b"])',
                "/properties/o/properties/b/required is draft-03's form (true on the property):"
                ' list the property in its object\'s "required" instead ("required": ["a", "b"])',
            ),
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string", "required": False}}},
            "/properties/a/required is draft-03's form (false on the property):"
            ' drop it (a property is optional unless its object\'s "required" lists it)',
        ),
        (  # a property named `properties` is a name, not the keyword
            {"properties": {"properties": {"required": True}}},
            "/properties/properties/required is draft-03's form (true on the property):"
            ' list the property in its object\'s "required" instead ("required": ["properties"])',
        ),
        (
            {"type": "array", "items": {"required": True}},
            "/items/required is draft-03's form (true), which meant something only on a property's own schema:"
            ' drop it, and list the properties an object requires in its "required" (an array of names)',
        ),
        (  # a property named `required` whose schema is a boolean, which draft-04 does not allow
            {"$schema": DRAFT_04, "properties": {"required": True}},
            "fix the schema so that it is valid JSON Schema",
        ),
    ],
)
def test_draft_03_s_required_on_a_property_is_told_how_later_drafts_write_it(
    schema: dict[str, Any], hint: str | tuple[str, ...]
) -> None:
    assert_meta_schema_hint(schema, hint)


def assert_meta_schema_hint(schema: dict[str, Any], hint: str | tuple[str, ...]) -> None:
    """`schema` fails its meta-schema, with `hint` (or one of them, where which keyword fails
    first is jsonschema's choice)."""
    with pytest.raises(SchemaError) as failed:
        check_schema(schema)
    assert "fails the JSON Schema meta-schema" in failed.value.message
    assert failed.value.hint in ((hint,) if isinstance(hint, str) else hint)
