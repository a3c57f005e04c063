"""Resource limits: schemas that would cost minutes and gigabytes are refused by keyword,
pointer and limit (deterministic counts, never time), or compile into a small automaton whose
first documents are cheap. Nothing here is timed: sizes are asserted instead."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.errors import SchemaError, UnsupportedSchema
from gguf_extract.core.index.compiled import compile_automaton
from gguf_extract.core.schema.read.validation import best_error, validator_for_schema
from gguf_extract.core.schema.work_limits import (
    MAX_COMPILE_FUEL,
    MAX_DIVISOR_STATES,
    MAX_FLOOR_BYTES,
    MAX_FLOOR_TEXT,
    MAX_LISTED_MULTIPLES,
    MAX_OBJECT_NODES,
    WORK_WEIGHTS,
    CompileWorkExceeded,
    Fuel,
)

WIDE_OBJECT = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(2000)}, "maxProperties": 1000}

REFUSED: list[tuple[dict[str, Any], str, str, str]] = [
    # (schema, keyword, pointer, the limit named in the message)
    ({"type": "integer", "multipleOf": 999983}, "multipleOf", "/multipleOf", str(MAX_DIVISOR_STATES)),
    ({"type": "integer", "multipleOf": 123457, "minimum": 0}, "multipleOf", "/multipleOf", str(MAX_DIVISOR_STATES)),
    ({"type": "array", "minItems": 1000000}, "minItems", "/minItems", str(MAX_FLOOR_BYTES)),
    ({"type": "array", "minItems": 30, "items": {"minLength": 999}}, "minItems", "/minItems", str(MAX_FLOOR_TEXT)),
    ({"type": "string", "minLength": 100000}, "minLength", "/minLength", str(MAX_FLOOR_TEXT)),
    ({"type": "string", "minLength": 1e12}, "minLength", "/minLength", str(MAX_FLOOR_TEXT)),
    ({"properties": {"a": {"pattern": "^([^x]{1000}){5}$"}}}, "pattern", "/properties/a/pattern", str(MAX_FLOOR_TEXT)),
    (WIDE_OBJECT, "maxProperties", "/maxProperties", str(MAX_OBJECT_NODES)),
]


@pytest.mark.parametrize(("schema", "keyword", "pointer", "limit"), REFUSED)
def test_costly_keyword_is_refused_by_name_pointer_and_limit(schema: Any, keyword: str, pointer: str, limit: str) -> None:
    with pytest.raises(UnsupportedSchema) as refusal:
        compile_automaton(schema)
    assert (refusal.value.keyword, refusal.value.pointer) == (keyword, pointer)
    assert limit in refusal.value.message


def test_many_small_floors_adding_up_are_refused_with_the_limit() -> None:
    properties = {f"p{i}": {"type": "string", "minLength": 1000} for i in range(5)}
    with pytest.raises(SchemaError, match=f"shortest document.*{MAX_FLOOR_TEXT}"):
        compile_automaton({"type": "object", "properties": properties, "required": list(properties)})


def _first_documents(schema: dict[str, Any], count: int = 5) -> tuple[list[str], int]:
    """Some sampled documents (each checked with jsonschema) and the DFA states they built."""
    automaton = compile_automaton(schema)
    validator = validator_for_schema(schema)
    rng = random.Random(0)
    texts = [sample_accepted(automaton.dfa, rng).decode() for _ in range(count)]
    for text in texts:
        assert best_error(validator, json.loads(text)) is None, text
    return texts, automaton.dfa.state_count


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "integer", "multipleOf": 1e300},
        {"type": "integer", "multipleOf": 10**30, "minimum": -5},
        {"type": "number", "multipleOf": 1e300},
    ],
)
def test_divisor_beyond_the_generated_digits_gives_zero(schema: dict[str, Any]) -> None:
    texts, states = _first_documents(schema)
    assert {json.loads(text) for text in texts} == {0} and states < 40  # 0, -0, 0.0, ...


def test_divisor_with_factors_of_ten_compiles_small() -> None:
    texts, states = _first_documents({"type": "integer", "multipleOf": 10000000})
    assert all(json.loads(text) % 10000000 == 0 for text in texts)
    assert states < 500


def test_few_multiples_within_bounds_are_listed_for_any_divisor() -> None:
    texts, _ = _first_documents({"type": "integer", "multipleOf": 999983, "minimum": -3000000, "maximum": 3000000}, 30)
    assert {json.loads(text) for text in texts} <= {k * 999983 for k in range(-3, 4)}
    with pytest.raises(SchemaError, match="no integer within the bounds"):
        compile_automaton({"type": "integer", "multipleOf": 999983, "minimum": 1, "maximum": 999982})
    assert MAX_LISTED_MULTIPLES >= 7


def test_counts_that_cannot_bind_cost_nothing() -> None:
    """maxProperties at or above the number of properties, or minProperties met by the
    required ones, leave the object as cheap as without them."""
    schema = {**WIDE_OBJECT, "maxProperties": 2000, "minProperties": 1, "required": ["p0"]}
    texts, _ = _first_documents(schema, 2)
    assert texts[0].startswith('{"p0": ')


def test_unsatisfiable_minimum_count_is_refused_at_once() -> None:
    with pytest.raises(SchemaError, match="between 1000000"):
        compile_automaton({"type": "object", "properties": {"a": {"type": "null"}}, "minProperties": 1000000})


def test_within_limits_still_compiles() -> None:
    """The largest floor in the shared corpus: 600 required objects in an array (20,445 bytes)."""
    item = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    compile_automaton({"type": "array", "minItems": 600, "items": item})
    compile_automaton({"type": "string", "minLength": MAX_FLOOR_TEXT})


def _mutually_recursive(count: int) -> dict[str, Any]:
    """`count` object definitions whose properties refer to each of them."""
    names = [f"d{i}" for i in range(count)]
    definitions = {n: {"type": "object", "properties": {m: {"$ref": f"#/$defs/{m}"} for m in names}} for n in names}
    return {"$defs": definitions, "$ref": "#/$defs/d0"}


def test_recursion_that_unrolls_into_too_much_work_is_refused_by_counted_units() -> None:
    # Six definitions each holding all six, unrolled three levels deep: millions of units.
    schema = _mutually_recursive(6)
    with pytest.raises(CompileWorkExceeded) as refusal:
        compile_automaton(schema)
    assert f"more than {MAX_COMPILE_FUEL:,} units of compile work" in refusal.value.message
    assert not refusal.value.relaxable
    assert compile_automaton(schema, recursion_depth=1).work < MAX_COMPILE_FUEL // 50


def test_compile_work_is_weighted_by_kind() -> None:
    fuel = Fuel(limit=100)
    fuel.burn("/a", "member", 3)
    fuel.burn("/a")
    assert fuel.used == 3 * WORK_WEIGHTS["member"] + WORK_WEIGHTS["schema"]
    assert fuel.counts == {"member": 3, "schema": 1}
    with pytest.raises(CompileWorkExceeded) as refusal:
        fuel.burn("/b", "state", 100)
    assert refusal.value.pointer == "/b"


def test_many_negated_patterns_are_compile_work() -> None:
    """Each pattern a string must not match is a complement automaton of thousands of states, a
    second or more to build: counted as compile work, so a schema of many is refused by the
    work limit after a few instead of compiling for as long as it has them."""
    patterns = [f"[^{skip}]*{letter}[^\u0100]{{13}}$" for skip, letter in zip("xyzwvuts", "abcdefgh", strict=True)]
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string", "maxLength": 20}},
        "required": ["a"],
        "allOf": [{"not": {"properties": {"a": {"pattern": pattern}}}} for pattern in patterns],
    }
    with pytest.raises(CompileWorkExceeded):
        compile_automaton(schema)


def test_a_length_bound_counted_as_written_pays_for_its_table() -> None:
    """A 400-state pattern under minLength 3000 is counted as written, with a table of 1.36
    million cells: the schema pays a state of compile work per 64 of them, so that the tables
    of one schema add up to megabytes at the most; without the length bound it costs little."""
    schema = {"type": "string", "pattern": "^(?:[a-z]+-){0,199}[a-z]+$", "minLength": 3000}
    cells = (3000 + 400 + 1) * 400
    assert compile_automaton(schema).work >= 3 * (cells // 64)
    assert compile_automaton({**schema, "minLength": 0}).work < 3 * (cells // 64) // 10
