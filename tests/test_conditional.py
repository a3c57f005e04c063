"""if/then/else compiled as the union it means: `if` and `then`, or `not: if` and `else`.

Every document the automaton generates validates with jsonschema; both branches are reached;
documents in canonical layout are accepted exactly when jsonschema accepts them, for the `if`
forms enforced (a discriminating property's listed values, required properties, types); any
other `if` is refused by name (keyword `if`, its pointer), and an `if` without `then` or `else`
asserts nothing, as validators read it."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from itertools import product
from typing import Any

import pytest

from gguf_extract.core.automaton.dfa import DEAD
from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.errors import UnsupportedSchema
from gguf_extract.core.index.compiled import compile_automaton
from gguf_extract.core.schema.read.validation import validator_for_schema

DRAFT7 = "http://json-schema.org/draft-07/schema#"
SERVER = {
    "$schema": DRAFT7,
    "type": "object",
    "properties": {"scheme": {"enum": ["http", "https", "ftp"]}, "cert": {"type": "string", "maxLength": 3}},
    "required": ["scheme"],
    "additionalProperties": False,
    "if": {"properties": {"scheme": {"const": "https"}}},
    "then": {"required": ["cert"]},
    "else": {"not": {"required": ["cert"]}},
}


def _acceptor(schema: Any) -> Callable[[Any], bool]:
    """Whether the automaton of `schema`, compiled once, accepts a value in canonical layout."""
    dfa = compile_automaton(schema).dfa

    def accepts(value: Any) -> bool:
        state = dfa.walk(dfa.start, json.dumps(value, ensure_ascii=False).encode("utf-8"))
        return state != DEAD and dfa.is_accepting(state)

    return accepts


def _generated(schema: Any, count: int = 200) -> list[Any]:
    automaton = compile_automaton(schema)
    validator = validator_for_schema(schema)
    rng = random.Random(3)
    values = [json.loads(sample_accepted(automaton.dfa, rng)) for _ in range(count)]
    for value in values:
        assert validator.is_valid(value), value
    return values


def test_a_discriminating_property_picks_the_branch() -> None:
    values = _generated(SERVER)
    assert {(value["scheme"], "cert" in value) for value in values} == {("https", True), ("http", False), ("ftp", False)}


# Objects in the layout the automaton writes (properties in schema order), each checked
# against jsonschema: the automaton accepts exactly those that validate.
_SCHEMES = [None, "http", "https", "ftp"]
_CERTS = [None, "", "abc"]


@pytest.mark.parametrize(
    "conditional",
    [
        {"if": {"properties": {"scheme": {"const": "https"}}}, "then": {"required": ["cert"]}},
        {"if": {"properties": {"scheme": {"const": "https"}}, "required": ["scheme"]}, "then": {"required": ["cert"]}},
        {"if": {"properties": {"scheme": {"enum": ["http", "ftp"]}}}, "else": {"required": ["cert"]}},
        {"if": {"required": ["cert"]}, "then": {"properties": {"scheme": {"const": "https"}}}},
        {
            "if": {"properties": {"scheme": {"const": "https"}}},
            "then": {"required": ["cert"]},
            "else": {"properties": {"cert": False}},
        },
        {
            "if": {"properties": {"scheme": {"type": "string", "const": "ftp"}}},
            "then": {"properties": {"cert": {"maxLength": 0}}},
        },
    ],
)
def test_accepted_exactly_when_valid(conditional: dict[str, Any]) -> None:
    schema = {
        "$schema": DRAFT7,
        "type": "object",
        "properties": {"scheme": {"enum": ["http", "https", "ftp"]}, "cert": {"type": "string", "maxLength": 3}},
        "additionalProperties": False,
        **conditional,
    }
    validator, accepts = validator_for_schema(schema), _acceptor(schema)
    for scheme, cert in product(_SCHEMES, _CERTS):
        value = {key: found for key, found in (("scheme", scheme), ("cert", cert)) if found is not None}
        assert accepts(value) == validator.is_valid(value), value
    _generated(schema)


def test_nested_in_allof_and_under_properties() -> None:
    item = {key: SERVER[key] for key in ("type", "properties", "required", "additionalProperties")}
    conditional = {key: SERVER[key] for key in ("if", "then", "else")}
    schema = {
        "$schema": DRAFT7,
        "type": "object",
        "properties": {"servers": {"type": "array", "items": {"allOf": [item, conditional]}}},
        "required": ["servers"],
    }
    servers = [server for value in _generated(schema) for server in value["servers"]]
    assert {server["scheme"] for server in servers if "cert" in server} == {"https"}


@pytest.mark.parametrize(
    "conditional",
    [
        {"if": {"properties": {"scheme": {"maxLength": 4}}}, "then": {"required": ["cert"]}},
        {"if": {"properties": {"scheme": {"const": "https"}, "cert": {"const": "abc"}}}, "else": {"required": ["cert"]}},
        {"if": {"minProperties": 2}, "then": {"required": ["cert"]}},
    ],
)
def test_other_ifs_are_negated_as_complements(conditional: dict[str, Any]) -> None:
    schema = {"$schema": DRAFT7, "type": "object", "properties": {"scheme": {"type": "string"}, "cert": {}}, **conditional}
    accepts = _acceptor(schema)
    validator = validator_for_schema(schema)
    for value in ({"scheme": "https"}, {"scheme": "ftp"}, {"scheme": "https", "cert": "abc"}, {"cert": 1}, {}):
        assert accepts(value) == validator.is_valid(value), value
    _generated(schema)


def test_an_if_that_cannot_be_negated_is_refused_by_name() -> None:
    schema = {"$schema": DRAFT7, "type": "object", "if": {"properties": {"at": {"format": "date"}}}, "else": {"required": ["x"]}}
    with pytest.raises(UnsupportedSchema) as refusal:
        compile_automaton(schema)
    assert (refusal.value.keyword, refusal.value.pointer) == ("if", "/if")


def test_if_alone_asserts_nothing_and_then_alone_is_ignored() -> None:
    alone = ({"$schema": DRAFT7, "type": "integer", "if": {"minimum": 5}}, {"$schema": DRAFT7, "type": "integer", "then": False})
    for schema in alone:
        accepts = _acceptor(schema)
        assert accepts(1) and accepts(7)


def test_before_draft_7_if_means_nothing() -> None:
    schema = {"$schema": "http://json-schema.org/draft-06/schema#", "type": "integer", "if": {"minimum": 5}, "then": False}
    assert _acceptor(schema)(7)


@pytest.mark.parametrize(("condition", "taken"), [(True, "then"), (False, "else")])
def test_a_boolean_if_always_takes_one_branch(condition: bool, taken: str) -> None:
    schema = {"$schema": DRAFT7, "type": "integer", "if": condition, "then": {"minimum": 5}, "else": {"maximum": 1}}
    accepts = _acceptor(schema)
    assert accepts(7) == (taken == "then") and accepts(0) == (taken == "else")
    _generated(schema)


def test_an_if_of_a_type_leaves_the_numbers_that_are_no_integer() -> None:
    schema = {"$schema": DRAFT7, "type": "number", "if": {"type": "integer"}, "then": {"minimum": 0}}
    accepts = _acceptor(schema)
    assert accepts(3) and not accepts(-3) and accepts(-2.5)
    _generated(schema)


def test_an_if_of_a_divisor_is_refused_as_if() -> None:
    schema = {"$schema": DRAFT7, "type": "integer", "if": {"multipleOf": 2}, "then": {"minimum": 0}}
    with pytest.raises(UnsupportedSchema) as refusal:
        compile_automaton(schema)
    assert (refusal.value.keyword, refusal.value.pointer) == ("if", "/if")
