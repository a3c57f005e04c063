"""Schema compiler: every accepted string validates; invalid ones are rejected; refusals name
the keyword and its JSON pointer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import accepts, compile_for, dumps, random_walk
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_extract.core.errors import SchemaError, UnsupportedSchema
from gguf_extract.core.schema.read.load import load_schema_file
from gguf_extract.core.vocab.token_table import Vocabulary

SCHEMAS_DIR = Path(__file__).resolve().parent.parent / "schemas"

SCHEMAS: dict[str, Any] = {
    "scalars": {
        "type": "object",
        "properties": {
            "s": {"type": "string", "minLength": 1, "maxLength": 5},
            "i": {"type": "integer", "minimum": -20, "exclusiveMaximum": 300},
            "n": {"type": "number"},
            "b": {"type": "boolean"},
            "z": {"type": "null"},
        },
        "required": ["s", "b"],
    },
    "optional_only": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
    "enum_const": {
        "type": "object",
        "properties": {"c": {"const": 'x"y'}, "e": {"enum": ["日本", 3, None, {"k": [1]}]}},
        "required": ["c", "e"],
    },
    "type_list_anyof": {
        "anyOf": [{"type": ["integer", "null"]}, {"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 3}]
    },
    "refs": {
        "$defs": {"item": {"type": "object", "properties": {"q": {"type": "integer", "minimum": 1}}, "required": ["q"]}},
        "type": "array",
        "items": {"$ref": "#/$defs/item"},
        "maxItems": 4,
    },
    "formats": {
        "type": "object",
        "properties": {
            "d": {"type": "string", "format": "date"},
            "t": {"type": "string", "format": "date-time"},
            "time": {"type": "string", "format": "time"},
            "u": {"type": "string", "format": "uuid"},
            "ip": {"type": "string", "format": "ipv4"},
            "mail": {"type": "string", "format": "email"},
        },
        "required": ["d", "t", "time", "u", "ip", "mail"],
    },
    "free_object": {"type": "object"},
    "one_of": {
        "$defs": {"b": {"type": "object", "properties": {"kind": {"const": "b"}}, "required": ["kind"]}},
        "oneOf": [
            {"type": "string", "maxLength": 3},
            {"type": ["integer", "null"]},
            {"type": "object", "properties": {"kind": {"const": "a"}, "x": {"type": "integer"}}, "required": ["kind"]},
            {"$ref": "#/$defs/b"},
            {"enum": [1.5, True]},
        ],
    },
    "prefix_items": {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string", "maxLength": 2}],
        "items": {"type": "boolean"},
        "minItems": 1,
        "maxItems": 4,
    },
    "closed_tuple": {"type": "array", "prefixItems": [{"type": "integer"}, {"enum": ["a"]}], "items": False},
    "draft7_tuple": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "array",
        "items": [{"type": "null"}],
        "additionalItems": {"type": "integer"},
        "minItems": 2,
    },
    "any": {},
    "draft4": {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "integer",
        "minimum": 5,
        "exclusiveMinimum": True,
        "maximum": 9,
    },
    "required_not_in_properties": {"type": "object", "required": ["x"], "additionalProperties": {"type": "integer"}},
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_random_accepted_strings_validate(name: str, vocab: Vocabulary) -> None:
    schema = SCHEMAS[name]
    compiled = compile_for(schema, vocab)
    # Each draft's own format checker (the generic one applies draft 3's "time").
    validator_class = jsonschema.validators.validator_for(schema)
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    for seed in range(150):
        text = random_walk(compiled, seed)
        errors = list(validator.iter_errors(json.loads(text)))
        assert not errors, (text, errors[0].message)


@pytest.mark.parametrize("path", sorted(SCHEMAS_DIR.glob("*.json")), ids=lambda p: p.stem)
def test_bundled_schemas_compile_and_stay_sound(path: Path, vocab: Vocabulary) -> None:
    schema = load_schema_file(path)
    compiled = compile_for(schema, vocab)
    for seed in range(60):
        jsonschema.validate(json.loads(random_walk(compiled, seed)), schema, format_checker=jsonschema.FormatChecker())


@settings(max_examples=60, deadline=None)
@given(st.integers(-(10**6), 10**6), st.integers(0, 40))
def test_integer_bounds_accept_exactly(value: int, width: int) -> None:
    schema = {"type": "integer", "minimum": -width * 7, "maximum": width * 13}
    compiled = compile_for(schema, _vocab())
    assert accepts(compiled, str(value)) == (-width * 7 <= value <= width * 13)


def _vocab() -> Vocabulary:
    from conftest import hand_vocab

    return hand_vocab()


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("scalars", '{"b": true}'),  # required s missing
        ("scalars", '{"s": "", "b": true}'),  # minLength
        ("scalars", '{"s": "abcdef", "b": true}'),  # maxLength
        ("scalars", '{"s": "a", "i": 300, "b": true}'),  # exclusiveMaximum
        ("scalars", '{"b": true, "s": "a"}'),  # order is canonical
        ("scalars", '{"s": "a","b": true}'),  # layout is canonical
        ("enum_const", '{"c": "xy", "e": 3}'),
        ("formats", '{"d": "2023-02-29", "t": "2024-01-01T00:00:00Z"'),
        ("formats", '{"d": "2024-02-29", "t": "2024-01-01T00:00:00Z", "time": "10:00:00Z", "u": "x"'),
        (
            "formats",
            '{"d": "2024-02-29", "t": "2024-01-01T00:00:00Z", "time": "10:00:00Z", '
            '"u": "123e4567-e89b-12d3-a456-426614174000", "ip": "01.2.3.4"',
        ),
        ("refs", '[{"q": 0}]'),
        ("draft4", "5"),
        ("optional_only", '{, "b": 1}'),
        ("one_of", '{"kind": "c"}'),
        ("one_of", "2.5"),
        ("prefix_items", "[]"),  # minItems
        ("prefix_items", '[1, "a", true, false, true]'),  # maxItems
        ("prefix_items", "[true]"),  # first item must be an integer
        ("closed_tuple", '[1, "a", 2]'),  # items: false
        ("draft7_tuple", "[null]"),  # minItems
        ("draft7_tuple", "[null, null]"),  # additionalItems
    ],
)
def test_invalid_strings_are_rejected(name: str, text: str, vocab: Vocabulary) -> None:
    assert not accepts(compile_for(SCHEMAS[name], vocab), text)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("scalars", {"s": "日本", "i": -20, "b": False, "z": None}),
        ("enum_const", {"c": 'x"y', "e": {"k": [1]}}),
        ("optional_only", {}),
        ("prefix_items", [3, "ab", False]),
        ("closed_tuple", []),
        (
            "formats",
            {
                "d": "2024-02-29",
                "t": "2024-01-01T00:00:00.5+01:00",
                "time": "23:59:59Z",
                "u": "123e4567-e89b-12d3-a456-426614174000",
                "ip": "255.0.10.1",
                "mail": "a.b+c@example.co.uk",
            },
        ),
        ("one_of", {"kind": "b"}),
        ("one_of", {"kind": "a", "x": 1}),
        ("one_of", 1.5),
        ("one_of", None),
        ("closed_tuple", [1, "a"]),
        ("draft7_tuple", [None, 5, 6]),
        ("optional_only", {"b": 2}),
        ("draft4", 6),
        ("refs", []),
    ],
)
def test_valid_canonical_documents_are_accepted(name: str, value: Any, vocab: Vocabulary) -> None:
    assert accepts(compile_for(SCHEMAS[name], vocab), dumps(value))


@pytest.mark.parametrize(
    ("schema", "keyword", "pointer"),
    [
        ({"type": "string", "pattern": "(?=a)b"}, "pattern", "/pattern"),
        ({"type": "object", "properties": {"x": {"type": "string", "format": "uri-template"}}}, "format", "/properties/x/format"),
        (
            {"type": "object", "properties": {"a": {"oneOf": [{"type": "integer", "multipleOf": 2}, {"minimum": 0}]}}},
            "oneOf",
            "/properties/a/oneOf",
        ),
        ({"oneOf": [{"type": "string", "format": "date"}, {"type": "string", "maxLength": 12}]}, "oneOf", "/oneOf"),
        (
            {"$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}, "minItems": 1}}, "$ref": "#/$defs/n"},
            "$ref",
            "/items/$ref",
        ),
        ({"type": "array", "items": {"type": "integer"}, "uniqueItems": True}, "uniqueItems", "/uniqueItems"),
    ],
)
def test_unsupported_keywords_are_refused_by_pointer(schema: Any, keyword: str, pointer: str, vocab: Vocabulary) -> None:
    with pytest.raises(UnsupportedSchema) as caught:
        compile_for(schema, vocab)
    assert caught.value.keyword == keyword
    assert caught.value.pointer.endswith(pointer)
    assert keyword in str(caught.value) and caught.value.pointer in str(caught.value)


@pytest.mark.parametrize(
    "schema",
    [{"type": "strin"}, {"type": "integer", "minimum": 5, "maximum": 2}, {"enum": []}, False, {"minLength": -1}],
)
def test_invalid_or_unsatisfiable_schemas_are_schema_errors(schema: Any, vocab: Vocabulary) -> None:
    with pytest.raises(SchemaError):
        compile_for(schema, vocab)


def test_bad_json_schema_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"type": "object",')
    with pytest.raises(SchemaError, match=r"broken\.json is not valid JSON"):
        load_schema_file(path)


NUMBER_BOUNDS = [
    {"minimum": 0},
    {"exclusiveMinimum": 0, "maximum": 100},
    {"minimum": -3, "exclusiveMaximum": 5},
    {"exclusiveMinimum": -10, "exclusiveMaximum": -2},
    {"maximum": 0},
    {"$schema": "http://json-schema.org/draft-04/schema#", "minimum": 1, "exclusiveMinimum": True, "maximum": 7},
]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(range(len(NUMBER_BOUNDS))),
    st.integers(-12, 120),
    st.text(alphabet="0123456789", max_size=5),
)
def test_number_bounds_accept_exactly(which: int, whole: int, fraction: str) -> None:
    schema = {"type": "number", **NUMBER_BOUNDS[which]}
    text = f"{whole}.{fraction}" if fraction else str(whole)
    compiled = compile_for(schema, _vocab())
    valid = jsonschema.validators.validator_for(schema)(schema).is_valid(json.loads(text))
    assert accepts(compiled, text) == valid, text  # `10.50`, `0.0` and `-0` too: every form of a valid value


@pytest.mark.parametrize("bounds", NUMBER_BOUNDS)
def test_bounded_number_walks_validate(bounds: dict[str, Any], vocab: Vocabulary) -> None:
    schema = {"type": "number", **bounds}
    compiled = compile_for(schema, vocab)
    validator = jsonschema.validators.validator_for(schema)(schema)
    for seed in range(100):
        assert validator.is_valid(json.loads(random_walk(compiled, seed)))
