"""The typed schema model: each schema object read once into frozen nodes that carry their
JSON pointers, read as the schema's draft reads it; merged as nodes; and written back
(render.py) into a schema the validator judges exactly as it judges the original.

The last is the oracle for the whole model: for generated schemas in every draft, every
subschema's node, written back, accepts exactly the values the subschema as written accepts.
"""

from __future__ import annotations

import collections
import dataclasses
import json
from typing import Any

import pytest
import referencing.exceptions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fuzz import DRAFTS, VALUES, drafted_schemas

from gguf_extract.core.errors import SchemaError, UnsupportedSchema
from gguf_extract.core.index.compiled import compile_automaton
from gguf_extract.core.jsontext import join_pointer
from gguf_extract.core.schema.build.compilation import Compilation
from gguf_extract.core.schema.nodes.conjunction import Conjunction
from gguf_extract.core.schema.nodes.render import Dialect, reference, render
from gguf_extract.core.schema.nodes.schema_document import SchemaDocument
from gguf_extract.core.schema.nodes.schema_node import SchemaNode, Sub
from gguf_extract.core.schema.read.load import check_schema, refuse_reference_cycles
from gguf_extract.core.schema.read.mixed_drafts import refuse_mixed_drafts
from gguf_extract.core.schema.read.resources import Resources
from gguf_extract.core.schema.read.validation import validator_for_schema
from gguf_extract.core.schema.refusals import Refusals
from gguf_extract.core.schema.work_limits import Fuel


def document(schema: Any, lenient: bool = False) -> SchemaDocument:
    return SchemaDocument(schema, Refusals(lenient))


def node_at(schema: Any, pointer: str = "") -> SchemaNode:
    found = document(schema).node(pointer)
    assert isinstance(found, SchemaNode)
    return found


# --- reading ------------------------------------------------------------------------------


def test_keywords_land_in_typed_fields_with_their_pointers() -> None:
    schema = {"properties": {"s": {"type": "string", "minLength": 2.0, "pattern": "^a", "format": "date"}}}
    root = node_at(schema)
    assert root.object is not None and [name for name, _ in root.object.properties] == ["s"]
    (sub,) = (sub for _, sub in root.object.properties)
    assert sub.parts == ("/properties/s",)
    string = node_at(schema, "/properties/s").string
    assert string is not None
    assert (string.min_length, string.max_length, string.format) == (2, None, "date")
    assert [(p.source, p.pointer) for p in string.patterns] == [("^a", "/properties/s/pattern")]


def test_nodes_are_frozen_and_read_once() -> None:
    doc = document({"$defs": {"a": {"type": "integer"}}, "items": {"$ref": "#/$defs/a"}})
    node = doc.node("/$defs/a")
    assert doc.node("/$defs/a") is node
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.types = ("string",)  # type: ignore[misc, union-attr]


def test_bounds_are_read_in_the_numeric_form_of_every_draft() -> None:
    draft4 = node_at({"$schema": DRAFTS["04"], "minimum": 3, "exclusiveMinimum": True, "maximum": 5})
    assert draft4.number is not None and draft4.number.minimum is not None and draft4.number.maximum is not None
    assert (draft4.number.minimum.value, draft4.number.minimum.exclusive, draft4.number.minimum.keyword) == (3, True, "minimum")
    assert draft4.number.maximum.exclusive is False
    modern = node_at({"minimum": 3, "exclusiveMinimum": 3, "exclusiveMaximum": 9, "maximum": 7})
    assert modern.number is not None and modern.number.minimum is not None and modern.number.maximum is not None
    assert (modern.number.minimum.keyword, modern.number.minimum.pointer) == ("exclusiveMinimum", "/exclusiveMinimum")
    assert (modern.number.maximum.value, modern.number.maximum.exclusive) == (7, False)


def test_keywords_without_meaning_in_the_draft_are_listed_as_ignored() -> None:
    schema = {
        "$schema": DRAFTS["07"],
        "definitions": {"a": {"type": "string"}},
        "properties": {
            "r": {"$ref": "#/definitions/a", "maxLength": 1},
            "p": {"prefixItems": [{"type": "string"}], "const": 1, "nullable": True, "x-unit": "cm"},
            "f": {"format": "int32"},
        },
    }
    doc = document(schema)
    ref = doc.node("/properties/r")
    assert isinstance(ref, SchemaNode) and ref.ref is not None and ref.string is None
    assert ref.ref.target == "/definitions/a" and ref.ref.pointer == "/properties/r/$ref"
    other = doc.node("/properties/p")
    assert isinstance(other, SchemaNode) and other.array is None and other.values is not None
    assert isinstance(doc.node("/properties/f"), SchemaNode)
    assert doc.ignored == [
        "/properties/r/maxLength",
        "/properties/p/prefixItems",
        "/properties/p/nullable",
        "/properties/p/x-unit",
        "/properties/f/format",
    ]
    assert node_at({"$schema": DRAFTS["04"], "const": 1}).values is None  # no const in draft 4


def test_an_unsupported_keyword_is_refused_by_pointer_or_left_out_when_lenient() -> None:
    schema = {"properties": {"a": {"type": "string", "unevaluatedItems": {"maxLength": 1}, "contains": {}}}}
    with pytest.raises(UnsupportedSchema) as refusal:
        document(schema).node("/properties/a")
    assert (refusal.value.keyword, refusal.value.pointer) == ("unevaluatedItems", "/properties/a/unevaluatedItems")
    doc = document(schema, lenient=True)
    node = doc.node("/properties/a")
    assert isinstance(node, SchemaNode) and node.keywords() == {"type"}
    found = [(r.keyword, r.pointer) for r in doc.refusals.found]
    assert found == [("unevaluatedItems", "/properties/a/unevaluatedItems"), ("contains", "/properties/a/contains")]


def test_a_reference_that_leads_nowhere_is_refused_when_read_even_when_lenient() -> None:
    with pytest.raises(UnsupportedSchema) as refusal:
        document({"items": {"$ref": "#/$defs/missing"}}, lenient=True).node("/items")
    assert (refusal.value.pointer, refusal.value.relaxable) == ("/items/$ref", False)


# --- merging ------------------------------------------------------------------------------


def merge(schema: Any, lenient: bool = False) -> SchemaNode | bool:
    doc = document(schema, lenient)
    return Conjunction(doc, Fuel(), "").resolve(Sub(("",), ""))


def test_all_of_merges_kind_by_kind() -> None:
    merged = merge(
        {
            "allOf": [
                {"type": ["string", "integer"], "minLength": 1, "maxLength": 9, "pattern": "a"},
                {"type": ["number", "string"], "maxLength": 4, "pattern": "b", "minimum": 2},
                {"enum": [1.0, "ab", True], "not": {"const": "x"}},
                {"const": 1},
            ]
        }
    )
    assert isinstance(merged, SchemaNode) and merged.string is not None and merged.number is not None
    assert merged.types == ("integer", "string")
    assert (merged.string.min_length, merged.string.max_length) == (1, 4)
    assert [p.pointer for p in merged.string.patterns] == ["/allOf/0/pattern", "/allOf/1/pattern"]
    assert merged.values is not None and merged.values.items == (1.0,)  # 1 == 1.0, never true
    assert [sub.pointer for sub in merged.nots] == ["/allOf/2/not"]


def test_merged_property_schemas_are_conjoined_lazily() -> None:
    schema = {
        "$defs": {"n": {"properties": {"next": {"$ref": "#/$defs/n"}}}},
        "allOf": [{"$ref": "#/$defs/n"}, {"properties": {"next": {"type": "object"}}, "patternProperties": {"^n": {}}}],
    }
    merged = merge(schema)
    assert isinstance(merged, SchemaNode) and merged.object is not None
    ((name, sub),) = merged.object.properties
    assert name == "next"
    assert sub.parts == ("/$defs/n/properties/next", "/allOf/1/properties/next", "/allOf/1/patternProperties/^n")


def test_merges_with_no_exact_rule_are_refused_or_unsatisfiable() -> None:
    with pytest.raises(UnsupportedSchema) as refusal:
        merge({"allOf": [{"format": "date"}, {"format": "email"}]})
    assert (refusal.value.keyword, refusal.value.pointer) == ("format", "/format")
    relaxed = merge({"allOf": [{"format": "date"}, {"format": "email", "maxLength": 3}]}, lenient=True)
    assert isinstance(relaxed, SchemaNode) and relaxed.string is not None and relaxed.string.format is None
    with pytest.raises(SchemaError, match="nothing matches"):
        merge({"allOf": [{"const": {"a": 1}}, {"const": {"a": True}}]})


# --- written back, the validator's verdicts do not change -----------------------------------


def subschema_pointers(schema: Any, pointer: str = "") -> list[str]:
    """Every object in a schema position (as validators apply them), with its pointer."""
    if not isinstance(schema, dict):
        return []
    found = [pointer]
    for keyword, value in schema.items():
        here = join_pointer(pointer, keyword)
        if keyword in ("not", "items", "additionalProperties", "propertyNames", "additionalItems"):
            found += subschema_pointers(value, here)
        elif keyword in ("allOf", "anyOf", "oneOf", "prefixItems") and isinstance(value, list):
            found += [p for i, item in enumerate(value) for p in subschema_pointers(item, join_pointer(here, i))]
        elif keyword in ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas"):
            found += [p for name, item in value.items() for p in subschema_pointers(item, join_pointer(here, name))]
    return found


def declaring_pointers(schema: Any, resources: Resources) -> list[str]:
    """The subschemas below the root that declare their own `$schema`."""
    return [p for p in subschema_pointers(schema) if p and "$schema" in resources.raw(p)]


PROBES = st.lists(st.one_of(VALUES, st.dictionaries(st.sampled_from(["kind", "k", "a", "name"]), VALUES)), max_size=12)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True)
@given(drafted_schemas, PROBES)
def test_every_node_written_back_accepts_what_its_schema_accepts(schema: Any, probes: list[Any]) -> None:
    try:
        check_schema(schema)  # as every compilation does first
        resources = Resources(schema)
        resources.refuse_remote()  # references to no resource of the schema are never followed
        refuse_reference_cycles(schema)  # validators would follow those without end
        refuse_mixed_drafts(resources)  # what validation reaches is read alike under both drafts
        doc = document(schema, lenient=True)
    except SchemaError:
        return
    root = validator_for_schema(schema)
    dialect = Dialect(doc.draft4, "dependentRequired" in doc.asserting)
    if declaring_pointers(schema, resources):
        # Validators read such a subschema under its own draft; the compiler reads it only where
        # validation reaches it, and refuses what the drafts read differently there. The
        # differential fuzzer (tests/test_fuzz.py) checks those schemas end to end.
        return
    for pointer in subschema_pointers(schema):
        try:
            node = doc.node(pointer)
        except SchemaError:
            return  # refused (a reference that leads nowhere): the compiler refuses it where validation reaches it
        if not isinstance(node, SchemaNode) or doc.refusals.found:
            return  # a keyword left out changes the meaning
        # The subschema as it stands in the root: its references resolve inside the embedded
        # resources around it, as the written node's do.
        written, original = root.evolve(schema=render(node, dialect)), root.evolve(schema=reference(pointer))
        for value in probes:
            try:
                expected = original.is_valid(value)
            except referencing.exceptions.Unresolvable:
                return  # a reference that leads nowhere: refused wherever validation reaches it
            assert written.is_valid(value) == expected, (pointer, json.dumps(value), json.dumps(schema))


# --- refusals in one pass -------------------------------------------------------------------


def test_lenient_compilation_collects_every_refusal_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "pattern": "(?=x)a", "if": {"format": "date"}, "then": {"minLength": 1}},
            "b": {"oneOf": [{"type": "integer", "multipleOf": 2}, {"type": "integer"}]},
            "c": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "d": {"type": "number", "multipleOf": 0.3},
            "e": {"allOf": [{"format": "date"}, {"format": "email"}]},
        },
        "required": ["a", "b", "c", "d", "e"],
    }
    passes = []
    original = Compilation.__init__

    def counted(self: Compilation, *args: Any) -> None:
        passes.append(1)
        original(self, *args)

    monkeypatch.setattr(Compilation, "__init__", counted)
    automaton = compile_automaton(schema, lenient=True)
    assert len(passes) == 1
    assert [(r.keyword, r.pointer) for r in automaton.relaxed] == [
        ("pattern", "/properties/a/pattern"),
        ("if", "/properties/a/if"),
        ("oneOf", "/properties/b/oneOf"),
        ("uniqueItems", "/properties/c/uniqueItems"),
        ("multipleOf", "/properties/d/multipleOf"),
        ("format", "/properties/e/format"),
    ]


def test_lenient_and_strict_compile_a_supported_schema_alike() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 2}, "b": {"enum": [1, "x"]}}}
    strict, lenient = compile_automaton(schema), compile_automaton(schema, lenient=True)
    assert lenient.relaxed == [] and strict.dfa.nfa_state_count == lenient.dfa.nfa_state_count


def test_one_of_written_alike_in_two_places_merges() -> None:
    # Two definitions with the same oneOf, met by one property through two patterns.
    token = {"oneOf": [{"type": "string", "maxLength": 3}, {"type": "integer"}]}
    schema = {
        "$defs": {"a": {"properties": {"token": token}}, "b": {"properties": {"token": token}}},
        "type": "object",
        "patternProperties": {".*": {"$ref": "#/$defs/a"}, "x": {"$ref": "#/$defs/b"}},
        "additionalProperties": False,
    }
    compile_automaton(schema)
    # Two different ones: the second is kept as the anyOf it means (each branch, not the others).
    merged = merge({"allOf": [token, {"oneOf": [{"type": "string"}, {"type": "integer"}]}]})
    assert isinstance(merged, SchemaNode) and merged.one_of is not None and merged.any_of is not None
    assert [len(branch.parts) for branch in merged.any_of.branches] == [2, 2]


def test_an_any_of_met_again_is_not_multiplied_out() -> None:
    # (A or B) and (A or B) is A or B: nine branches met three times stay nine, not 729.
    nine = {"anyOf": [{"type": "string", "maxLength": n} for n in range(9)]}
    twice = {"$defs": {"u": nine, "v": nine}, "allOf": [{"$ref": "#/$defs/u"}, {"$ref": "#/$defs/u"}, {"$ref": "#/$defs/v"}]}
    merged = merge(twice)
    assert isinstance(merged, SchemaNode) and merged.any_of is not None and len(merged.any_of.branches) == 9
    assert compile_automaton(twice).dfa.walk(compile_automaton(twice).dfa.start, b'"abcdefgh"') != 0


def test_any_of_pairs_no_value_meets_are_left_out_of_the_product() -> None:
    schema = {"allOf": [{"anyOf": [{"type": "string"}, {"type": "integer"}]}, {"anyOf": [{"type": "string"}, {"type": "null"}]}]}
    merged = merge(schema)
    assert isinstance(merged, SchemaNode) and merged.any_of is not None and len(merged.any_of.branches) == 1
    with pytest.raises(SchemaError, match="nothing matches"):
        merge({"allOf": [{"anyOf": [{"type": "integer"}]}, {"anyOf": [{"type": "null"}, {"type": "string"}]}]})


def test_a_subschema_is_compiled_once_for_all_expansions_it_cannot_tell_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    # `leaf` meets no reference, so its tree is the same at every depth of the recursion
    # through `a` and `b`; `a` meets both, so it is compiled once per count of each.
    schema = {
        "$defs": {
            "leaf": {"enum": ["x", "y"]},
            "a": {"type": "object", "properties": {"v": {"$ref": "#/$defs/leaf"}, "b": {"$ref": "#/$defs/b"}}},
            "b": {"type": "object", "properties": {"v": {"$ref": "#/$defs/leaf"}, "a": {"$ref": "#/$defs/a"}}},
        },
        "$ref": "#/$defs/a",
    }
    dispatched: collections.Counter[str] = collections.Counter()
    original = Compilation._dispatch

    def counted(self: Compilation, node: SchemaNode) -> Any:
        dispatched[node.pointer] += 1
        return original(self, node)

    monkeypatch.setattr(Compilation, "_dispatch", counted)
    automaton = compile_automaton(schema, recursion_depth=3)
    assert dispatched["/$defs/leaf"] == 1
    assert dispatched["/$defs/a"] <= 4
    deep = {"b": {"a": {"b": {"a": {"v": "x"}}}}}
    state = automaton.dfa.walk(automaton.dfa.start, json.dumps(deep).encode())
    assert state != 0 and automaton.dfa.is_accepting(state)
