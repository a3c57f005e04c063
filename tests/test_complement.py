"""oneOf branches that may overlap, and `not` of any shape whose keywords can be negated,
compiled as complements (core/schema/build/complement.py): exact, checked against jsonschema.

Each case compiles; every document sampled from the generator's automaton and from the one
accepting every valid text validates; and each listed instance is accepted by the automaton
accepting every valid text exactly when jsonschema says it is valid (the generator's takes the
properties in one order only). Untyped keywords generate the types they imply, as everywhere
(docs/schema-support.md), so the instances keep to those. What cannot be negated exactly is
refused, naming the keyword.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from gguf_extract.core.automaton.dfa import DEAD
from gguf_extract.core.automaton.regex import Machine
from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.errors import UnsupportedSchema
from gguf_extract.core.index.compiled import accepting_automaton, compile_automaton
from gguf_extract.core.schema.lexical.pattern import pattern_unmatched
from gguf_extract.core.schema.read.validation import validator_for_schema

DRAFT_07 = "http://json-schema.org/draft-07/schema#"


def assert_exact(schema: Any, instances: list[Any], samples: int = 150) -> None:
    """Sampled documents validate; each instance is accepted (by the automaton taking every
    valid text; neither when invalid) exactly when it is valid."""
    automaton = compile_automaton(schema)
    validator = validator_for_schema(schema)
    automata = (automaton.dfa, accepting_automaton(automaton.dfa))
    rng = random.Random(7)
    for dfa in automata:
        for _ in range(samples):
            document = json.loads(sample_accepted(dfa, rng, soft_limit=200))
            assert validator.is_valid(document), f"generated {document!r}, which the schema rejects"
    for instance in instances:
        text = json.dumps(instance, ensure_ascii=False).encode("utf-8")
        valid = validator.is_valid(instance)
        for dfa in automata[1:] if valid else automata:
            state = dfa.walk(dfa.start, text)
            assert (state != DEAD and dfa.is_accepting(state)) == valid, (instance, valid)


@pytest.mark.parametrize(
    ("schema", "instances"),
    [
        # Open objects told apart by a property neither requires: each takes the other's value.
        (
            {
                "type": "object",
                "oneOf": [{"properties": {"red": {"type": "string"}}}, {"properties": {"blue": {"type": "string"}}}],
            },
            [{}, {"red": "a"}, {"red": 1}, {"blue": 1}, {"red": 1, "blue": "b"}],
        ),
        # A discriminator that is not required: objects without it match both.
        (
            {
                "oneOf": [
                    {"properties": {"kind": {"enum": ["a"]}, "value": {"type": "string"}}},
                    {"properties": {"kind": {"enum": ["b", "c"]}, "value": {"type": ["string", "number"]}}},
                ]
            },
            [{"kind": "a", "value": "x"}, {"kind": "b", "value": 2}, {"value": "x"}, {"value": 2}, {}, {"kind": "a"}, "s"],
        ),
        # Bounds: values above the first maximum and up to the second.
        ({"type": "number", "oneOf": [{"maximum": 2}, {"maximum": 5}]}, [1, 2, 3, 5, 6, 2.5, 5.5]),
        # One required name more: objects with both fail the first too.
        ({"type": "object", "oneOf": [{"required": ["id"]}, {"required": ["id", "url"]}]}, [{"id": 1}, {"id": 1, "url": 2}, {}]),
        # Patterns: strings one finds something in and the other does not.
        ({"oneOf": [{"type": "string", "pattern": "^y"}, {"type": "string", "pattern": "y$"}]}, ["y", "ya", "ay", "yay", "a"]),
        # Arrays: a non-empty array of numbers is no array of arrays (the empty one is both).
        (
            {"oneOf": [{"type": "array", "items": {"type": "number"}}, {"type": "array", "items": {"type": "array"}}]},
            [[], [1], [[1]], [1, [2]]],
        ),
        # Items overlapping: an array of short strings is both.
        (
            {
                "oneOf": [
                    {"type": "array", "items": {"type": "string"}},
                    {"type": "array", "items": {"type": ["string", "integer"], "maxLength": 2}},
                ]
            },
            [[], ["a"], ["abc"], [1], ["a", "abc"], [1, "abc"]],
        ),
        # A branch that is itself a oneOf: values matching none of its branches, or two.
        (
            {"oneOf": [{"type": "string", "minLength": 2}, {"oneOf": [{"type": "string"}, {"maxLength": 3}]}]},
            ["a", "ab", "abcd", 1, None],
        ),
        # A map of one flag, or an object of a discriminated oneOf (every branch apart from the map).
        (
            {
                "oneOf": [
                    {
                        "type": "object",
                        "oneOf": [
                            {"properties": {"type": {"const": "a"}, "url": {"type": "string"}}, "required": ["type", "url"]},
                            {"properties": {"type": {"const": "b"}, "url": {"type": "string"}}, "required": ["type", "url"]},
                        ],
                    },
                    {"type": "object", "additionalProperties": {"enum": [False]}, "minProperties": 1, "maxProperties": 1},
                ]
            },
            [{"type": "a", "url": "u"}, {"x": False}, {"type": False}, {}, {"type": "a", "url": False}],
        ),
    ],
)
def test_overlapping_one_of_is_exact(schema: Any, instances: list[Any]) -> None:
    assert_exact(schema, instances)


@pytest.mark.parametrize(
    ("schema", "instances"),
    [
        ({"type": "string", "not": {"minLength": 3}}, ["", "ab", "abc"]),
        ({"type": "string", "not": {"pattern": "//"}}, ["a/b", "a//b", ""]),
        ({"type": "integer", "not": {"minimum": 3, "maximum": 5}}, [2, 3, 5, 6]),
        # Numbers that are no integer: written with a nonzero fraction digit.
        ({"type": "number", "not": {"type": "integer"}, "maximum": 3}, [1, 1.0, 1.5, 2.25, 3.5]),
        ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, [1, 1.5, "a"]),
        ({"type": "object", "not": {"properties": {"a": {"type": "string"}}, "required": ["a"]}}, [{}, {"a": "s"}, {"a": 1}]),
        (
            {"type": "array", "items": {"type": ["integer", "string"]}, "not": {"items": {"type": "integer"}}},
            [[], [1], ["a"], [1, "a"]],
        ),
        ({"type": "string", "not": {"oneOf": [{"minLength": 2}, {"maxLength": 3}]}}, ["a", "ab", "abcd"]),
        # Two items schemas failed: one item may fail both, or one each.
        (
            {
                "type": "array",
                "items": {"type": ["integer", "string", "boolean"]},
                "not": {"anyOf": [{"items": {"type": "integer"}}, {"items": {"type": "string"}}]},
            },
            [[], [1], ["a"], [True], [1, "a"], ["a", 1], [1, 2, "a", True]],
        ),
        (
            {"type": "object", "properties": {"b": {}}, "not": {"anyOf": [{"required": ["a"]}, {"maxProperties": 0}]}},
            [{}, {"a": 1}, {"b": 1}],
        ),
        # A recursive schema negated, within the recursion depth.
        (
            {
                "$defs": {"t": {"type": "object", "properties": {"c": {"$ref": "#/$defs/t"}, "v": {"type": "string"}}}},
                "type": "object",
                "not": {"$ref": "#/$defs/t"},
            },
            [{}, {"v": 1}, {"v": "s"}, {"c": {"v": 1}}, {"c": 1}],
        ),
    ],
)
def test_not_of_more_shapes_is_exact(schema: Any, instances: list[Any]) -> None:
    assert_exact(schema, instances)


@pytest.mark.parametrize(
    ("schema", "instances"),
    [
        # Every IPv4 address is a host name too (fqdn takes numeric labels): only host names
        # that are not, and IPv6 addresses, match one branch alone.
        (
            {"type": "string", "oneOf": [{"format": "hostname"}, {"format": "ipv4"}, {"format": "ipv6"}]},
            ["example.com", "localhost", "1.2.3.4", "::1", "fe80::1", "a b"],
        ),
        ({"type": "string", "oneOf": [{"format": "uri"}, {"pattern": "^\\./.+$"}]}, ["https://a.com/x", "./x", "x"]),
        (
            {"type": "string", "oneOf": [{"format": "uuid"}, {"pattern": "^\\$[A-Z0-9-_]+"}]},
            ["$ABC", "123e4567-e89b-12d3-a456-426614174000"],
        ),
        ({"type": "string", "format": "hostname", "not": {"format": "ipv6"}}, ["example.com", "::1"]),
    ],
)
def test_formats_told_apart_by_what_their_checkers_accept(schema: Any, instances: list[Any]) -> None:
    assert_exact(schema, instances)


@pytest.mark.parametrize(
    "conditional",
    [
        {
            "if": {"type": "object", "properties": {"name": {"type": "string", "const": "regex"}}},
            "then": {"required": ["pattern"]},
        },
        {"if": {"properties": {"kind": {"anyOf": [{"const": "run"}, {"type": "null"}]}}}, "then": {"required": ["cmd"]}},
    ],
)
def test_ifs_negated_as_complements(conditional: dict[str, Any]) -> None:
    schema = {"$schema": DRAFT_07, "type": "object", **conditional}
    assert_exact(schema, [{}, {"name": "regex"}, {"name": "regex", "pattern": 1}, {"kind": "run"}, {"kind": None, "cmd": 1}])


def test_two_different_one_of_merged_are_both_enforced() -> None:
    schema = {"allOf": [{"oneOf": [{"type": "string"}, {"minLength": 3}]}, {"oneOf": [{"maxLength": 5}, {"type": "integer"}]}]}
    assert_exact(schema, ["", "ab", "abc", "abcdef", 1])


def test_kinds_of_a_branch_with_a_union_or_a_list_are_all_it_generates() -> None:
    # A branch whose keywords imply strings generates integers through its anyOf, or its list:
    # both match the integer branch too, so neither is generated.
    assert_exact(
        {"oneOf": [{"minLength": 1, "anyOf": [{"type": "integer"}, {"type": "string"}]}, {"type": "integer"}]}, [1, "a", ""]
    )
    assert_exact({"oneOf": [{"enum": [1, "a"], "minLength": 1}, {"type": "integer"}]}, [1, "a", 2])


@pytest.mark.parametrize(
    ("schema", "keyword", "pointer"),
    [
        ({"oneOf": [{"type": "string", "format": "date"}, {"type": "string", "maxLength": 12}]}, "oneOf", "/oneOf"),
        ({"oneOf": [{"type": "integer", "multipleOf": 3}, {"type": "integer"}]}, "oneOf", "/oneOf"),
        ({"type": "string", "not": {"format": "email"}}, "not", "/not"),
        ({"type": "number", "not": {"multipleOf": 2}}, "not", "/not"),
        ({"type": "array", "not": {"uniqueItems": True}}, "not", "/not"),
    ],
)
def test_what_cannot_be_negated_is_refused_by_name(schema: Any, keyword: str, pointer: str) -> None:
    with pytest.raises(UnsupportedSchema) as refusal:
        compile_automaton(schema)
    assert (refusal.value.keyword, refusal.value.pointer) == (keyword, pointer)


def _matches(machine: Machine, text: str) -> bool:
    """Whether the (nondeterministic) character machine matches `text`."""
    states = {machine.start}
    for char in map(ord, text):
        states = {target for state in states for low, high, target in machine.edges[state] if low <= char <= high}
    return bool(states & machine.accepts)


@pytest.mark.parametrize(
    ("pattern", "unmatched", "matched"),
    [
        # Python's \d takes Arabic-Indic digits, ECMA-262's does not: such a string is left out.
        ("^\\d+$", ["a", "", "1a"], ["12", "\u0663"]),
        # Python's `$` also matches before a final newline.
        ("^a$", ["b", "aa", ""], ["a", "a\n"]),
        # ECMA-262's `.` skips \r, Python's takes it: either engine may match.
        ("^.$", ["", "ab", "\n"], ["a", "\r"]),
        ("a|b", ["c", ""], ["xa", "b"]),
    ],
)
def test_pattern_unmatched_leaves_out_what_either_engine_matches(pattern: str, unmatched: list[str], matched: list[str]) -> None:
    machine = pattern_unmatched(pattern)
    assert all(_matches(machine, text) for text in unmatched)
    assert not any(_matches(machine, text) for text in matched)


def test_two_negated_items_no_one_item_meets_are_held_by_two() -> None:
    """An array holding an item failing each of two items schemas, where no item fails both:
    satisfiable (`[-1, 11]`), so compiled, one item for each."""
    schema = {
        "type": "array",
        "items": {"type": "integer"},
        "not": {"items": {"type": "integer", "minimum": 0}},
        "allOf": [{"not": {"items": {"type": "integer", "maximum": 10}}}],
    }
    assert_exact(schema, [[-1, 11], [11, -1], [-1], [11], [], [5, -1, 20]])


def test_no_integer_beside_a_fractional_multiple_is_refused_by_name() -> None:
    """multipleOf 0.25 is written as its whole multiples: none is left that is no integer, though
    the schema allows 0.25. Refused by the `not` that asks for it, never called unsatisfiable."""
    with pytest.raises(UnsupportedSchema) as refusal:
        compile_automaton({"type": "number", "multipleOf": 0.25, "not": {"type": "integer"}})
    assert "at /not" in str(refusal.value) and "fractional multipleOf" in str(refusal.value)


def test_pattern_machines_are_kept_within_their_edges_the_latest_always() -> None:
    """The machines of a schema's patterns stay while their edges fit the budget (a oneOf of
    twenty patterned branches compares each with each), the oldest going first."""
    from gguf_extract.core.schema.build.strings_overlap import _LatestMachines

    kept = _LatestMachines(edges=20)
    first = kept.get(("pattern", "^[a-z]{3}$", False))
    assert first is not None and kept.get(("pattern", "^[a-z]{3}$", False)) is first
    for index in range(10):
        kept.get(("pattern", f"^x{index}$", False))
    assert kept.get(("pattern", "^x9$", False)) is kept.get(("pattern", "^x9$", False))
    assert kept.get(("pattern", "^[a-z]{3}$", False)) is not first  # gone, and built again
    huge = kept.get(("pattern", "^[a-z0-9]{100}$", False))  # more edges than the budget: kept alone
    assert huge is not None and kept.get(("pattern", "^[a-z0-9]{100}$", False)) is huge
