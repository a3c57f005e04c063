"""Keywords beyond the first cut: allOf and keywords beside $ref/anyOf/oneOf, exclusive oneOf,
recursive $ref within a depth, OpenAPI nullable, keywords a draft gives no meaning, and
character machines (several string constraints at once). Each is checked both ways: sampled
documents validate with jsonschema, and documents the schema forbids are rejected."""

from __future__ import annotations

import json
import random
from decimal import Decimal
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_extract.core.automaton.charnfa import intersect, is_empty, length_machine, machine_from_tree
from gguf_extract.core.automaton.dfa import DEAD, LazyDFA
from gguf_extract.core.automaton.nfa import build_nfa
from gguf_extract.core.automaton.regex import Repeat, chars, lit, seq
from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.errors import SchemaError, UnsupportedSchema
from gguf_extract.core.index.compiled import SchemaAutomaton, compile_automaton
from gguf_extract.core.schema.build.numbers import divides_integers
from gguf_extract.core.schema.compiler import compile_schema_tree

PERSON = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8}}, "required": ["name"]}

SOUND_SCHEMAS: dict[str, Any] = {
    "all_of_objects": {
        "allOf": [
            PERSON,
            {"type": "object", "properties": {"age": {"type": "integer", "minimum": 0, "maximum": 120}}, "required": ["age"]},
        ]
    },
    "all_of_additional_false": {
        "allOf": [
            {"properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "additionalProperties": False},
            {"properties": {"a": {"minimum": 5}, "c": {"type": "null"}}},
        ]
    },
    "all_of_bounds_and_types": {
        "allOf": [{"type": ["integer", "string"], "minimum": 3}, {"type": "number", "exclusiveMaximum": 9}, {"maximum": 7}]
    },
    "all_of_enums": {"allOf": [{"enum": ["a", "b", "c", 1]}, {"enum": ["b", "c", True]}, {"not": {"const": "x"}}]},
    "ref_with_siblings": {
        "$defs": {"base": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}},
        "$ref": "#/$defs/base",
        "properties": {"tag": {"enum": ["x", "y"]}},
        "required": ["tag"],
    },
    "draft4_exclusive_merge": {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "allOf": [{"type": "integer", "minimum": 0, "exclusiveMinimum": True}, {"maximum": 4, "exclusiveMaximum": True}],
    },
    "type_beside_any_of": {
        "type": "object",
        "properties": {"kind": {"type": "string", "maxLength": 5}},
        "anyOf": [{"required": ["kind"]}, {"properties": {"n": {"type": "integer"}}, "required": ["n"]}],
    },
    "one_of_required_sets": {
        "type": "object",
        "properties": {"appId": {"type": "string", "maxLength": 4}, "appIds": {"type": "array", "items": {"type": "integer"}}},
        "oneOf": [{"required": ["appId"]}, {"required": ["appIds"]}],
    },
    "one_of_enum_discriminator": {
        "oneOf": [
            {"properties": {"grant": {"enum": ["code"]}, "scope": {"type": "string"}}, "required": ["grant"]},
            {"properties": {"grant": {"enum": ["token", "refresh"]}}, "required": ["grant"]},
        ]
    },
    "one_of_kinds_with_refs": {
        "definitions": {"s": {"type": "string", "maxLength": 3}, "n": {"type": "integer"}},
        "oneOf": [{"$ref": "#/definitions/s"}, {"$ref": "#/definitions/n"}, {"type": "null"}],
    },
    "recursive_tree": {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"v": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                "required": ["v"],
            }
        },
        "$ref": "#/$defs/node",
    },
    "recursive_optional_link": {
        "definitions": {"item": {"type": "object", "properties": {"next": {"$ref": "#/definitions/item"}, "x": {"const": 1}}}},
        "$ref": "#/definitions/item",
    },
    "property_counts": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}, "d": {"type": "null"}},
        "required": ["d"],
        "minProperties": 2,
        "maxProperties": 3,
    },
    "map_counts": {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 1, "maxProperties": 2},
    "multiples": {"type": "integer", "multipleOf": 7, "minimum": -30, "maximum": 100},
    "number_multiples": {"type": "number", "multipleOf": 25},
    "unique_enum": {"type": "array", "items": {"enum": ["r", "g", "b", 1]}, "uniqueItems": True, "minItems": 2},
    "unique_booleans": {"type": "array", "items": {"type": "boolean"}, "uniqueItems": True},
    "pattern_and_lengths": {"type": "string", "pattern": "^[a-z0-9-]+$", "minLength": 3, "maxLength": 12},
    "search_pattern": {"type": "string", "pattern": 'ab|c"d', "maxLength": 6},
    "pattern_with_format": {"type": "string", "format": "date", "pattern": "^2024-"},
    "merged_patterns": {"allOf": [{"pattern": "^a"}, {"pattern": "z$"}], "type": "string", "maxLength": 5},
    "format_with_length": {"type": "string", "format": "email", "maxLength": 20},
    "unknown_format": {"type": "string", "format": "int32", "maxLength": 4},
    "pattern_properties_map": {
        "type": "object",
        "patternProperties": {"^x-[a-z]{1,6}$": {"type": "integer", "maximum": 9}, "^x-": {"minimum": 1}},
        "additionalProperties": False,
        "maxProperties": 3,
    },
    "pattern_properties_declared": {
        "type": "object",
        "properties": {"x-a": {"type": "integer"}, "name": {"type": "string", "maxLength": 3}},
        "patternProperties": {"^x-": {"minimum": 10}},
        "required": ["x-a"],
        "additionalProperties": False,
    },
    "property_names": {
        "type": "object",
        "propertyNames": {"pattern": "^[A-Z]", "maxLength": 4},
        "additionalProperties": {"type": "null"},
    },
    "property_names_filter": {
        "type": "object",
        "properties": {"Ok": {"type": "null"}, "bad": {"type": "null"}},
        "propertyNames": {"enum": ["Ok", "Other"]},
    },
    "decimal_bounds": {
        "type": "object",
        "properties": {
            "price": {"type": "number", "minimum": 0.01, "exclusiveMaximum": 99.95},
            "temp": {"type": "number", "exclusiveMinimum": -273.15, "maximum": 1.5},
        },
        "required": ["price", "temp"],
    },
    "dependencies": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "card": {"type": "string", "maxLength": 4},
            "billing": {"type": "string", "maxLength": 4},
            "cvv": {"type": "integer"},
        },
        "dependencies": {"card": ["billing"], "cvv": {"required": ["card"]}},
    },
    "dependent_required": {
        "type": "object",
        "properties": {"a": {"type": "null"}, "b": {"type": "null"}},
        "required": ["a"],
        "dependentRequired": {"a": ["b"]},
        "dependentSchemas": {"a": {"properties": {"b": {"type": "null"}}}},
    },
    "dependency_brings_one_of": {
        "$schema": "http://json-schema.org/draft-06/schema#",
        "type": "object",
        "properties": {"op": {"enum": ["eq", "or"]}},
        "required": ["op"],
        "dependencies": {
            "op": {
                "oneOf": [
                    {"properties": {"op": {"enum": ["or"]}, "value": {"type": "array"}}, "required": ["value"]},
                    {"properties": {"op": {"enum": ["eq"]}, "value": {"type": "integer"}}, "required": ["value"]},
                ]
            }
        },
    },
    "not_values": {
        "type": "object",
        "properties": {
            "s": {"type": "string", "not": {"enum": ["", "n/a", 3]}, "maxLength": 3},
            "i": {"type": ["integer", "null", "boolean"], "not": {"enum": [0, 2.0, None, False]}, "minimum": 0, "maximum": 3},
        },
        "required": ["s", "i"],
    },
    "cents": {"type": "number", "multipleOf": 0.01, "minimum": -5, "maximum": 5},
    "one_of_overlapping_enums": {"oneOf": [{"enum": ["a", "b"]}, {"enum": ["b", "c"]}, {"const": "a"}, {"type": "integer"}]},
    # a branch that accepts only listed values: the others leave out those they would accept
    "one_of_enum_beside_pattern": {"oneOf": [{"enum": ["x", "y"]}, {"type": "string", "pattern": "^y"}]},
    "one_of_id_or_empty": {"oneOf": [{"type": "string", "pattern": "^[a-f0-9]{4}$"}, {"enum": [""]}]},
    "one_of_short_string_or_listed": {"oneOf": [{"type": "string", "maxLength": 2}, {"enum": ["ab", 7, "abc"]}]},
    "all_of_pattern_properties": {
        "allOf": [
            {"type": "object", "patternProperties": {"^x-": {"type": "integer"}}},
            {"properties": {"x-a": {"minimum": 3}, "b": {"type": "string"}}, "required": ["x-a"]},
        ]
    },
    "unsatisfiable_optional_parts": {
        "type": "object",
        "properties": {
            "never": {"type": "object", "required": ["id"], "additionalProperties": False},
            "empty": {"type": "array", "items": {"type": "string", "minLength": 3, "maxLength": 2}},
            "n": {"type": "integer"},
        },
        "required": ["n"],
    },
    "vendor_keywords": {
        "type": "object",
        "x-order": 3,
        "properties": {"n": {"type": "integer", "maximum": 3, "x-go-type": "int", "readonly": True}},
        "required": ["n"],
    },
}


def sample_documents(automaton: SchemaAutomaton, count: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [sample_accepted(automaton.dfa, rng, soft_limit=200).decode("utf-8") for _ in range(count)]


def accepts(automaton: SchemaAutomaton, value: Any) -> bool:
    dfa = automaton.dfa
    state = dfa.walk(dfa.start, json.dumps(value, ensure_ascii=False).encode("utf-8"))
    return state != DEAD and dfa.is_accepting(state)


def validator_for(schema: Any) -> jsonschema.protocols.Validator:
    validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)


@pytest.mark.parametrize("name", sorted(SOUND_SCHEMAS))
def test_sampled_documents_validate(name: str) -> None:
    schema = SOUND_SCHEMAS[name]
    automaton = compile_automaton(schema)
    validator = validator_for(schema)
    for text in sample_documents(automaton, 200):
        problem = jsonschema.exceptions.best_match(validator.iter_errors(json.loads(text)))
        assert problem is None, (text, problem.message if problem else "")


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("all_of_objects", {"name": "Ann", "age": 30}, True),
        ("all_of_objects", {"name": "Ann"}, False),
        ("all_of_objects", {"name": "Ann", "age": 121}, False),
        ("all_of_additional_false", {"a": 5}, True),
        ("all_of_additional_false", {"a": 4}, False),
        ("all_of_additional_false", {"a": 6, "c": None}, False),
        ("all_of_bounds_and_types", 7, True),
        ("all_of_bounds_and_types", 8, False),
        ("all_of_bounds_and_types", "7", False),
        ("all_of_enums", "b", True),
        ("all_of_enums", "a", False),
        ("all_of_enums", True, False),
        ("ref_with_siblings", {"id": 1, "tag": "x"}, True),
        ("ref_with_siblings", {"id": 1}, False),
        ("draft4_exclusive_merge", 1, True),
        ("draft4_exclusive_merge", 0, False),
        ("draft4_exclusive_merge", 4, False),
        ("type_beside_any_of", {"kind": "a"}, True),
        ("type_beside_any_of", {"n": 1}, True),
        ("type_beside_any_of", {}, False),
        ("one_of_required_sets", {"appId": "a"}, True),
        ("one_of_required_sets", {"appIds": [1]}, True),
        ("one_of_required_sets", {"appId": "a", "appIds": [1]}, False),
        ("one_of_enum_discriminator", {"grant": "code"}, True),
        ("one_of_enum_discriminator", {"grant": "refresh"}, True),
        ("one_of_kinds_with_refs", "abc", True),
        ("one_of_kinds_with_refs", None, True),
        ("recursive_tree", {"v": 1, "children": [{"v": 2, "children": [{"v": 3}]}]}, True),
        ("recursive_tree", {"v": 1, "children": [{"v": 2, "children": [{"v": 3, "children": [{"v": 4}]}]}]}, False),
        ("property_counts", {"a": 1, "d": None}, True),
        ("property_counts", {"d": None}, False),
        ("property_counts", {"a": 1, "b": 2, "d": None}, True),
        ("property_counts", {"a": 1, "b": 2, "c": 3, "d": None}, False),
        ("map_counts", {}, False),
        ("map_counts", {"x": 1, "y": 2}, True),
        ("map_counts", {"x": 1, "y": 2, "z": 3}, False),
        ("multiples", 98, True),
        ("multiples", -28, True),
        ("multiples", 0, True),
        ("multiples", 97, False),
        ("multiples", -35, False),
        ("number_multiples", 125, True),
        ("number_multiples", 30, False),
        ("unique_enum", ["r", "b"], True),
        ("unique_enum", ["r", "r"], False),
        ("unique_enum", ["r"], False),
        ("unique_booleans", [True, False], True),
        ("unique_booleans", [True, True], False),
        ("pattern_and_lengths", "ab-9", True),
        ("pattern_and_lengths", "ab", False),
        ("pattern_and_lengths", "Ab-9", False),
        ("search_pattern", 'xc"dy', True),
        ("search_pattern", "xyz", False),
        ("pattern_with_format", "2024-02-29", True),
        ("pattern_with_format", "2023-01-01", False),
        ("merged_patterns", "abz", True),
        ("merged_patterns", "abc", False),
        ("format_with_length", "a@b.co", True),
        ("unknown_format", "xyz", True),
        ("pattern_properties_map", {"x-ab": 3}, True),
        ("pattern_properties_map", {"x-ab": 0}, False),
        ("pattern_properties_map", {"y": 3}, False),
        ("pattern_properties_declared", {"x-a": 10, "name": "abc"}, True),
        ("pattern_properties_declared", {"x-a": 9}, False),
        ("property_names", {"Ab": None}, True),
        ("property_names", {"ab": None}, False),
        ("property_names_filter", {"Ok": None}, True),
        ("property_names_filter", {"bad": None}, False),
        ("dependencies", {"card": "1234", "billing": "x"}, True),
        ("dependencies", {"card": "1234"}, False),
        ("dependent_required", {"a": None, "b": None}, True),
        ("dependent_required", {"a": None}, False),
        ("dependency_brings_one_of", {"op": "eq", "value": 1}, True),
        ("dependency_brings_one_of", {"op": "eq"}, False),
        ("not_values", {"s": "n/b", "i": 1}, True),
        ("not_values", {"s": "n/a", "i": 1}, False),
        ("not_values", {"s": "", "i": 1}, False),
        ("not_values", {"s": "x", "i": 2}, False),
        ("not_values", {"s": "x", "i": None}, False),
        ("not_values", {"s": "x", "i": True}, True),
        ("not_values", {"s": "x", "i": False}, False),
        ("cents", 4, True),
        ("cents", 6, False),
        ("one_of_overlapping_enums", "c", True),
        ("one_of_overlapping_enums", "b", False),
        ("one_of_overlapping_enums", "a", False),
        ("one_of_overlapping_enums", 7, True),
        ("all_of_pattern_properties", {"x-a": 3, "b": "q"}, True),
        ("all_of_pattern_properties", {"x-a": 2}, False),
        ("unsatisfiable_optional_parts", {"empty": [], "n": 1}, True),
        ("unsatisfiable_optional_parts", {"never": {}, "n": 1}, False),
        ("vendor_keywords", {"n": 3}, True),
        ("vendor_keywords", {"n": 4}, False),
    ],
)
def test_documents_accepted_exactly_as_expected(name: str, value: Any, expected: bool) -> None:
    automaton = compile_automaton(SOUND_SCHEMAS[name])
    assert accepts(automaton, value) == expected
    if expected:
        assert validator_for(SOUND_SCHEMAS[name]).is_valid(value)


def test_keywords_without_meaning_in_the_draft_are_listed_as_ignored() -> None:
    ignored = compile_schema_tree(SOUND_SCHEMAS["vendor_keywords"]).ignored
    assert set(ignored) == {"/x-order", "/properties/n/x-go-type", "/properties/n/readonly"}


@settings(max_examples=150, deadline=None)
@given(
    st.integers(-5000, 5000),
    st.integers(0, 4000),
    st.booleans(),
    st.booleans(),
    st.lists(st.integers(-20000, 20000), min_size=1, max_size=8),
)
def test_decimal_bounds_are_exact(
    low_milli: int, width_milli: int, low_exclusive: bool, high_exclusive: bool, values: list[int]
) -> None:
    low, high = Decimal(low_milli) / 1000, Decimal(low_milli + width_milli) / 1000
    schema: dict[str, Any] = {"type": "number"}
    schema["exclusiveMinimum" if low_exclusive else "minimum"] = float(low)
    schema["exclusiveMaximum" if high_exclusive else "maximum"] = float(high)
    if low == high and (low_exclusive or high_exclusive):
        return
    automaton = compile_automaton(schema)
    for hundredths in values:
        value = Decimal(hundredths) / 100
        inside = (low < value if low_exclusive else low <= value) and (value < high if high_exclusive else value <= high)
        text = format(value, "f")
        state = automaton.dfa.walk(automaton.dfa.start, text.encode())
        assert (state != DEAD and automaton.dfa.is_accepting(state)) == inside, (schema, text)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 10**6), st.lists(st.integers(-(10**19), 10**19), min_size=1, max_size=20))
def test_fractional_divisors_accepted_only_where_the_validator_agrees(multiplier: int, numbers: list[int]) -> None:
    divisor = 1 / multiplier
    if divides_integers(divisor):
        validator = jsonschema.Draft202012Validator({"multipleOf": divisor})
        assert all(validator.is_valid(n) for n in numbers), divisor


def test_unknown_format_names_are_ignored_and_listed() -> None:
    assert compile_schema_tree(SOUND_SCHEMAS["unknown_format"]).ignored == ["/format"]


def test_recursion_depth_is_a_parameter() -> None:
    schema = SOUND_SCHEMAS["recursive_tree"]
    deep = {"v": 1, "children": [{"v": 2, "children": [{"v": 3, "children": [{"v": 4}]}]}]}
    assert not accepts(compile_automaton(schema), deep)
    assert accepts(compile_automaton(schema, recursion_depth=5), deep)


@pytest.mark.parametrize(
    ("schema", "keyword", "pointer"),
    [
        (
            {
                "$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}, "required": ["next"]}},
                "$ref": "#/$defs/n",
            },
            "$ref",
            "/$defs/n/properties/next/$ref",
        ),
        ({"oneOf": [{"type": "number", "multipleOf": 2}, {"type": "number", "minimum": 0}]}, "oneOf", "/oneOf"),
        ({"oneOf": [{"type": "integer", "multipleOf": 3}, {"type": "integer", "maximum": 10}]}, "oneOf", "/oneOf"),
        ({"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 2}, "minProperties", "/minProperties"),
        ({"type": "number", "multipleOf": 0.3}, "multipleOf", "/multipleOf"),
        ({"type": "number", "not": {"const": 1.5}}, "not", "/not"),
        ({"type": "string", "pattern": "(a)\\1"}, "pattern", "/pattern"),
        ({"type": "array", "items": {"type": "string"}, "uniqueItems": True}, "uniqueItems", "/uniqueItems"),
        ({"oneOf": [{"type": "string", "format": "date"}, {"type": "string", "maxLength": 3}]}, "oneOf", "/oneOf"),
        ({"allOf": [{"format": "date"}, {"format": "email"}]}, "format", "/format"),
        ({"$schema": "http://json-schema.org/draft-03/schema#", "type": "string"}, "$schema", "/$schema"),
    ],
)
def test_refusals_name_keyword_and_pointer(schema: Any, keyword: str, pointer: str) -> None:
    with pytest.raises(UnsupportedSchema) as caught:
        compile_automaton(schema)
    assert caught.value.keyword == keyword
    assert caught.value.pointer == pointer, str(caught.value)


def test_contradictory_all_of_is_reported_as_unsatisfiable() -> None:
    with pytest.raises(SchemaError, match="nothing matches"):
        compile_automaton({"allOf": [{"type": "string"}, {"type": "integer"}]})


def test_openapi_nullable_is_an_unknown_keyword_as_validators_see_it() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "nullable": True}}, "required": ["a"]}
    automaton = compile_automaton(schema)
    assert automaton.ignored == ["/properties/a/nullable"]
    assert not accepts(automaton, {"a": None})
    assert not validator_for(schema).is_valid({"a": None})


ANY = chars((0, 0xD7FF), (0xE000, 0x10FFFF))


def test_machine_intersection_of_search_and_length_escapes_json() -> None:
    body = seq(Repeat(ANY, 0, None), lit('a"b\\'), Repeat(ANY, 0, None))
    machine = intersect(machine_from_tree(body), length_machine(4, 7))
    dfa = LazyDFA(build_nfa(seq(lit('"'), machine, lit('"'))))
    rng = random.Random(3)
    for _ in range(300):
        value = json.loads(sample_accepted(dfa, rng).decode("utf-8"))
        assert 4 <= len(value) <= 7 and 'a"b\\' in value
    text = json.dumps('x\x01a"b\\\n')
    state = dfa.walk(dfa.start, text.encode())
    assert state != DEAD and dfa.is_accepting(state)


def test_machine_intersection_can_be_empty() -> None:
    assert is_empty(intersect(machine_from_tree(lit("abcdef")), length_machine(0, 3)))
    assert not is_empty(intersect(machine_from_tree(lit("abc")), length_machine(0, 3)))
