"""Schemas that have valid documents are never refused as unsatisfiable: either the documents
generated validate, or the error names the departure that leaves none (the digits generated,
a format's subset), with the keyword and its pointer. Such a place is treated like an
unsatisfiable one (a SchemaError): where the value is optional it is simply not generated."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.errors import SchemaError
from gguf_extract.core.index.compiled import compile_automaton
from gguf_extract.core.schema.read.validation import best_error, validator_for_schema


def _documents(schema: dict[str, Any], count: int = 30) -> set[str]:
    automaton = compile_automaton(schema)
    validator = validator_for_schema(schema)
    rng = random.Random(2)
    texts = {sample_accepted(automaton.dfa, rng).decode() for _ in range(count)}
    for text in texts:
        assert best_error(validator, json.loads(text)) is None, text
    return texts


def test_decimal_multiples_where_no_whole_number_fits() -> None:
    """Only the decimals the validator's float division accepts are listed (0.07 / 0.01 is
    7.000000000000001, so 0.07 is not among them)."""
    texts = _documents({"type": "number", "multipleOf": 0.01, "exclusiveMinimum": 0, "exclusiveMaximum": 1}, 200)
    assert "0.5" in texts and "0.07" not in texts
    assert all(0 < float(text) < 1 for text in texts)


def test_decimal_multiples_none_accepted_names_the_departure() -> None:
    with pytest.raises(SchemaError) as refusal:
        compile_automaton({"type": "number", "multipleOf": 0.1, "minimum": 0.69, "maximum": 0.71})
    assert refusal.value.message.startswith("'multipleOf' at /multipleOf: ")
    assert "generated as whole numbers" in refusal.value.message and "[0.69, 0.71]" in refusal.value.message


@pytest.mark.parametrize(
    ("schema", "digits"),
    [
        ({"type": "integer", "minimum": 1e20}, 21),
        ({"type": "integer", "maximum": -1e20}, 22),
        ({"type": "integer", "minimum": 123456789012345678901234, "maximum": 123456789012345678901240}, 24),
        ({"type": "number", "minimum": 12345678901.5}, None),
        ({"type": "number", "exclusiveMaximum": -1e15, "minimum": -1e16}, None),
    ],
)
def test_bounds_beyond_the_generated_digits_still_generate(schema: dict[str, Any], digits: int | None) -> None:
    texts = _documents(schema)
    if digits is not None:
        assert {len(text) for text in texts} == {digits}


def test_bounds_between_the_generated_fraction_digits_name_the_departure() -> None:
    with pytest.raises(SchemaError) as refusal:
        compile_automaton({"type": "number", "exclusiveMinimum": 0.1, "exclusiveMaximum": 0.10001})
    assert refusal.value.message.startswith("'exclusiveMinimum' at /exclusiveMinimum: ")
    assert "5 fraction digits" in refusal.value.message and "(0.1, 0.10001)" in refusal.value.message


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "string", "format": "hostname", "pattern": "\\.$"}, "no trailing dot"),
        ({"type": "string", "format": "email", "maxLength": 3}, "shortest string has 5 characters, more than maxLength 3"),
        ({"properties": {"at": {"format": "date-time", "pattern": "t"}}, "required": ["at"]}, "upper-case T"),
    ],
)
def test_format_subset_leaving_nothing_names_the_subset(schema: dict[str, Any], reason: str) -> None:
    with pytest.raises(SchemaError) as refusal:
        compile_automaton(schema)
    assert "'format' at /" in refusal.value.message and "/format: format '" in refusal.value.message
    assert "generated from a subset" in refusal.value.message and reason in refusal.value.message


def test_optional_place_left_empty_by_a_departure_is_not_generated() -> None:
    """As for an unsatisfiable optional property: the object is generated without it."""
    schema = {"properties": {"a": {"type": "null"}, "url": {"type": "string", "format": "uri", "pattern": "^git@"}}}
    assert _documents(schema) <= {"{}", '{"a": null}'}


def test_exact_format_that_truly_leaves_nothing_stays_unsatisfiable() -> None:
    with pytest.raises(SchemaError, match="no string satisfies"):
        compile_automaton({"type": "string", "format": "date", "maxLength": 9})
