"""The inlined 2020-12 and 2019-09 meta-schemas (core.schema.read.meta) say what the published
ones say: the same verdict on real schemas and on schemas broken one keyword at a time."""

from __future__ import annotations

import copy
import random
from typing import Any

import jsonschema
import pytest

from gguf_extract.core.schema.read.meta import BASES, inlined

# A wrong value for each keyword 2020-12 gives a shape (and for a few annotations).
WRONG: dict[str, Any] = {
    "type": 5,
    "enum": 5,
    "const": None,
    "minLength": "x",
    "maxItems": -1,
    "minimum": "1",
    "multipleOf": 0,
    "pattern": 5,
    "format": 5,
    "required": "a",
    "uniqueItems": "y",
    "minContains": "a",
    "dependentRequired": {"a": 5},
    "properties": [],
    "patternProperties": {"a": 3},
    "additionalProperties": "x",
    "items": 5,
    "prefixItems": {},
    "contains": [],
    "propertyNames": 3,
    "allOf": [],
    "anyOf": {},
    "oneOf": [1],
    "not": 3,
    "if": 3,
    "then": "t",
    "dependentSchemas": 3,
    "unevaluatedProperties": 5,
    "unevaluatedItems": "u",
    "$defs": 5,
    "definitions": 5,
    "dependencies": {"a": 5},
    "$ref": 5,
    "$dynamicRef": 3,
    "$recursiveRef": 3,
    "$recursiveAnchor": "yes",
    "$anchor": "1bad",
    "$dynamicAnchor": "",
    "$id": 5,
    "$vocabulary": 3,
    "$comment": 1,
    "title": 3,
    "description": [],
    "deprecated": "x",
    "readOnly": 1,
    "examples": 5,
    "contentEncoding": 5,
    "contentMediaType": 5,
    "contentSchema": 3,
}
SCHEMAS: list[Any] = [
    {
        "type": "object",
        "properties": {"name": {"type": "string", "minLength": 1}, "tags": {"type": "array", "items": {"enum": ["a", "b"]}}},
        "required": ["name"],
        "additionalProperties": False,
    },
    {"$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}}, "$ref": "#/$defs/node"},
    {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "format": "date"}], "not": {"const": 3}},
    {
        "type": "array",
        "prefixItems": [{"type": "number"}],
        "items": {"type": "boolean"},
        "contains": {"const": True},
        "minContains": 1,
    },
    {
        "if": {"properties": {"k": {"const": 1}}},
        "then": {"required": ["v"]},
        "dependentSchemas": {"a": {"required": ["b"]}},
        "patternProperties": {"^x-": {}},
        "propertyNames": {"maxLength": 9},
        "unevaluatedProperties": False,
    },
    {"title": "t", "description": "d", "examples": [1], "deprecated": True, "$comment": "c", "$anchor": "top", "$id": "urn:x"},
]


def _subschemas(node: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


VALIDATORS = {"2020-12": jsonschema.Draft202012Validator, "2019-09": jsonschema.Draft201909Validator}


def _verdicts(draft: str, schema: Any) -> tuple[bool, bool]:
    validator = VALIDATORS[draft]
    return validator(validator.META_SCHEMA).is_valid(schema), validator(inlined(draft)).is_valid(schema)


def test_every_inlined_draft_is_checked_here() -> None:
    assert set(VALIDATORS) == set(BASES)


@pytest.mark.parametrize("draft", sorted(VALIDATORS))
def test_the_inlined_meta_schema_has_no_dynamic_reference(draft: str) -> None:
    text = repr(inlined(draft))
    assert "'$dynamicRef': '#meta'" not in text and "'$recursiveRef': '#'" not in text and "'meta/" not in text


@pytest.mark.parametrize("draft", sorted(VALIDATORS))
@pytest.mark.parametrize("schema", SCHEMAS)
def test_valid_schemas_pass_both(draft: str, schema: Any) -> None:
    assert _verdicts(draft, schema) == (True, True)


@pytest.mark.parametrize("draft", sorted(VALIDATORS))
@pytest.mark.parametrize("keyword", sorted(WRONG))
def test_a_keyword_broken_anywhere_gets_the_same_verdict(draft: str, keyword: str) -> None:
    rng = random.Random(keyword)
    for schema in SCHEMAS:
        for _ in range(3):
            broken = copy.deepcopy(schema)
            rng.choice(_subschemas(broken))[keyword] = WRONG[keyword]
            published, inlined_verdict = _verdicts(draft, broken)
            assert published == inlined_verdict, (draft, keyword, broken)
