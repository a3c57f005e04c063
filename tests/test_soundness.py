"""Soundness regressions: schemas that once produced documents their own validator rejects.

Each case either compiles and then every sampled document validates under the schema's own
draft, or is refused by name (keyword and JSON pointer). The checks use only the public
compile step, the sampler and the validator, so they hold for any later compiler.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from conftest import hand_vocab

from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.errors import SchemaError, UnsupportedSchema
from gguf_extract.core.index.compiled import compile_automaton, compile_schema
from gguf_extract.core.jsontext import distinct_values, join_pointer, json_equal
from gguf_extract.core.schema import work_limits
from gguf_extract.core.schema.read.validation import validator_for_schema
from gguf_extract.core.schema.work_limits import CompileWorkExceeded

DRAFT_04 = "http://json-schema.org/draft-04/schema#"
DRAFT_07 = "http://json-schema.org/draft-07/schema#"
DRAFT_2019 = "https://json-schema.org/draft/2019-09/schema"


def sampled(schema: Any, count: int = 40) -> list[Any]:
    """`count` documents drawn from the schema's automaton, each parsed."""
    dfa = compile_automaton(schema).dfa
    rng = random.Random(0)
    return [json.loads(sample_accepted(dfa, rng, soft_limit=200)) for _ in range(count)]


def is_integer(value: Any) -> bool:
    """An integer as drafts after 4 read one: `5`, and also `5.0` (a whole float)."""
    return not isinstance(value, bool) and (isinstance(value, int) or (isinstance(value, float) and value.is_integer()))


def assert_sound(schema: Any, count: int = 40) -> list[Any]:
    """Every sampled document validates under the schema's own draft; the documents."""
    validator = validator_for_schema(schema)
    documents = sampled(schema, count)
    for document in documents:
        assert validator.is_valid(document), f"generated {document!r}, which the schema rejects"
    return documents


# --- JSON-value semantics --------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second", "equal"),
    [
        (1, 1.0, True),
        (True, 1, False),
        ([True], [1], False),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1.0}, True),
        ({"a": 1}, {"a": True}, False),
        (None, False, False),
        ("1", 1, False),
        ([1, [2]], [1.0, [2.0]], True),
    ],
)
def test_json_equality_is_json_schemas(first: Any, second: Any, equal: bool) -> None:
    assert json_equal(first, second) is equal
    assert json_equal(second, first) is equal


def test_distinct_values_and_pointer_parts() -> None:
    assert distinct_values([0, 0.0, False, {"a": 1}, {"a": 1.0}]) == [0, False, {"a": 1}]
    assert join_pointer("/properties", "a/b~c") == "/properties/a~1b~0c"


# --- `not`, `enum` and `const` compare JSON values, not their text ------------------------


@pytest.mark.parametrize(
    "schema",
    [
        {"not": {"const": 1}, "anyOf": [{"enum": [1.0, 2]}]},
        {"not": {"const": {"b": 2, "a": 1}}, "anyOf": [{"enum": [{"a": 1, "b": 2}, 3]}]},
        {"not": {"enum": [[1]]}, "anyOf": [{"enum": [[1.0], [True]]}]},
    ],
)
def test_not_excludes_equal_values_whatever_their_text(schema: Any) -> None:
    assert_sound(schema)


def test_const_with_enum_keeps_booleans_apart_from_numbers() -> None:
    with pytest.raises(SchemaError, match="enum/const"):
        compile_automaton({"enum": [{"a": 1}], "const": {"a": True}})
    assert {json.dumps(d) for d in assert_sound({"enum": [{"a": 1}, {"a": True}], "const": {"a": True}})} == {'{"a": true}'}


# --- OpenAPI's `nullable` is not JSON Schema: ignored, as validators ignore it -------------


def test_nullable_never_widens_what_is_generated() -> None:
    schema = {
        "type": "object",
        "properties": {"nick": {"type": "string", "nullable": True, "minLength": 40}},
        "required": ["nick"],
    }
    assert compile_automaton(schema).ignored == ["/properties/nick/nullable"]
    assert all(isinstance(document["nick"], str) for document in assert_sound(schema))


def test_validation_reads_the_schema_as_written() -> None:
    # A reference into anyOf must name the same subschema for the compiler and the validator.
    schema = {"$defs": {"a": {"nullable": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}}, "$ref": "#/$defs/a/anyOf/0"}
    assert all(is_integer(document) for document in assert_sound(schema))
    assert compile_schema(schema, hand_vocab()).validate("5") == 5  # the check run after generation


# --- propertyNames: a name is always a string -------------------------------------------


def test_property_names_admitting_no_string_leave_only_the_empty_object() -> None:
    with pytest.raises(SchemaError, match="propertyNames at /propertyNames admits no string"):
        compile_automaton({"type": "object", "propertyNames": {"type": "integer"}, "minProperties": 1})
    for names in ({"type": "integer"}, {"enum": [1, 2]}, False, {"type": ["null", "array"], "maxLength": 2}):
        assert assert_sound({"type": "object", "propertyNames": names}) == [{}] * 40


# --- oneOf discriminators ----------------------------------------------------------------


def assert_sound_or_refused(schema: Any, keyword: str, pointer: str) -> None:
    """The schema compiles soundly, or is refused naming `keyword` at `pointer`."""
    try:
        assert_sound(schema)
    except UnsupportedSchema as refusal:
        assert (refusal.keyword, refusal.pointer) == (keyword, pointer)


def test_one_of_discriminator_sees_pattern_properties() -> None:
    branches = [
        {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
        {"patternProperties": {"^k": {"type": "string"}}, "additionalProperties": {"const": "b"}},
    ]
    assert_sound_or_refused({"type": "object", "oneOf": branches}, "oneOf", "/oneOf")
    # A pattern whose schema still rejects the discriminating value keeps the branches apart.
    branches[1]["patternProperties"] = {"^k": {"const": "b"}}
    assert {json.dumps(d) for d in assert_sound({"type": "object", "oneOf": branches})} >= {'{"kind": "a"}'}


# --- references ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "pointer"),
    [
        ({"anyOf": [{"$ref": "#/$defs/missing"}, {"type": "integer"}]}, "/anyOf/0/$ref"),
        ({"properties": {"a": {"$ref": "#/$defs/missing"}}}, "/properties/a/$ref"),
        ({"type": "array", "items": {"$ref": "#/required"}, "required": []}, "/items/$ref"),
    ],
)
def test_an_unresolvable_reference_is_refused_wherever_it_is(schema: Any, pointer: str) -> None:
    with pytest.raises(UnsupportedSchema) as refusal:
        compile_automaton(schema)
    assert (refusal.value.keyword, refusal.value.pointer, refusal.value.relaxable) == ("$ref", pointer, False)
    with pytest.raises(UnsupportedSchema):
        compile_automaton(schema, lenient=True)


# --- drafts: a keyword means what the schema's own draft says, or nothing ------------------


def test_prefix_items_means_nothing_before_2020_12() -> None:
    for draft in (DRAFT_07, DRAFT_2019):
        schema = {"$schema": draft, "type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}}
        assert compile_automaton(schema).ignored == ["/prefixItems"]
        assert all(is_integer(item) for document in assert_sound(schema) for item in document)


@pytest.mark.parametrize(
    "schema",
    [
        {"$schema": DRAFT_04, "type": "integer", "not": {"const": 1}},
        {"$schema": DRAFT_04, "type": "integer", "not": {"const": 1}, "enum": [1, 2]},
    ],
)
def test_draft_4_has_no_const_inside_not(schema: Any) -> None:
    with pytest.raises(SchemaError):  # not: {} matches nothing
        compile_automaton(schema)


def test_draft_4_has_no_const_in_one_of_or_beside_enum() -> None:
    one_of = {"$schema": DRAFT_04, "oneOf": [{"const": 1}, {"type": "string"}]}
    assert_sound_or_refused(one_of, "oneOf", "/oneOf")
    documents = assert_sound({"$schema": DRAFT_04, "enum": [1, 2], "const": 1}, 80)
    assert set(documents) == {1, 2}  # as 1, 1.0, 2 or 2.0
    discriminated = {
        "$schema": DRAFT_04,
        "type": "object",
        "oneOf": [
            {"properties": {"k": {"const": "a"}}, "required": ["k"]},
            {"properties": {"k": {"const": "b"}}, "required": ["k"]},
        ],
    }
    # Draft 4 reads no `const`: both branches are one schema, so no value matches one alone.
    with pytest.raises(SchemaError, match="oneOf at /oneOf leaves no value"):
        compile_automaton(discriminated)


@pytest.mark.parametrize("draft", [DRAFT_04, "http://json-schema.org/draft-06/schema#", DRAFT_07])
def test_keywords_beside_ref_mean_nothing_before_2019_09(draft: str) -> None:
    defs = "definitions"
    schema = {
        "$schema": draft,
        defs: {"any": {}},
        "oneOf": [{"$ref": "#/definitions/any", "type": "string"}, {"type": "integer"}],
    }
    assert_sound_or_refused(schema, "oneOf", "/oneOf")
    negated = {"$schema": draft, defs: {"s": {"type": "string"}}, "not": {"$ref": "#/definitions/s", "maxLength": 1}}
    assert all(isinstance(d, str) is False for d in assert_sound(negated))


def test_keywords_beside_ref_apply_from_2019_09() -> None:
    schema = {"$schema": DRAFT_2019, "$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "maxLength": 1}
    assert all(len(d) <= 1 for d in assert_sound(schema))


# --- embedded resources ----------------------------------------------------------------------
# A subschema with its own `$id` (draft 4: `id`) is a resource of its own: a `#...` reference
# inside it names a part of it, and a relative reference naming its URI names it. The
# compiler resolves them as jsonschema does; any other URI is refused (never retrieved).

INNER_STRING = {
    "$defs": {
        "inner": {
            "$id": "https://example.com/inner",
            "$defs": {"v": {"type": "string"}},
            "type": "object",
            "properties": {"v": {"$ref": "#/$defs/v"}},
            "required": ["v"],
        },
        "v": {"type": "integer"},
    },
    "$ref": "#/$defs/inner",
}
INNER_STRING_DRAFT_04 = {
    "$schema": DRAFT_04,
    "definitions": {
        "inner": {
            "id": "inner.json",
            "definitions": {"v": {"type": "string"}},
            "type": "object",
            "properties": {"v": {"$ref": "#/definitions/v"}},
            "required": ["v"],
        },
        "v": {"type": "integer"},
    },
    "type": "array",
    "items": {"$ref": "#/definitions/inner"},
    "minItems": 1,
}


def _values_of_v(document: Any) -> list[Any]:
    found = [document["v"]] if isinstance(document, dict) and "v" in document else []
    return found + [value for item in (document if isinstance(document, list) else []) for value in _values_of_v(item)]


@pytest.mark.parametrize("schema", [INNER_STRING, INNER_STRING_DRAFT_04])
def test_a_fragment_reference_inside_an_embedded_resource_names_a_part_of_that_resource(schema: Any) -> None:
    values = [value for document in assert_sound(schema) for value in _values_of_v(document)]
    assert values and all(isinstance(value, str) for value in values)


@pytest.mark.parametrize("root_id", [{}, {"$id": "https://example.com/schemas/root.json"}])
def test_a_relative_reference_names_an_embedded_resource_by_its_id(root_id: dict[str, Any]) -> None:
    schema = {
        **root_id,
        "$defs": {
            "item": {"$id": "item.json", "type": "string", "maxLength": 3},
            "parts": {"$id": "parts/all.json", "$defs": {"n": {"type": "integer", "minimum": 7}}},
        },
        "type": "object",
        "properties": {"x": {"$ref": "item.json"}, "n": {"$ref": "parts/all.json#/$defs/n"}},
        "required": ["x", "n"],
    }
    for document in assert_sound(schema):
        assert len(document["x"]) <= 3 and document["n"] >= 7


def test_a_reference_from_an_embedded_resource_back_to_the_root_by_its_uri() -> None:
    schema = {
        "$id": "https://example.com/schemas/root.json",
        "$defs": {
            "v": {"type": "boolean"},
            "inner": {"$id": "inner/one.json", "properties": {"v": {"$ref": "../root.json#/$defs/v"}}},
        },
        "type": "object",
        "properties": {"i": {"$ref": "#/$defs/inner"}},
        "required": ["i"],
    }
    assert all(isinstance(d["i"].get("v", True), bool) for d in assert_sound(schema))


def test_recursion_through_an_embedded_resource_stays_inside_it() -> None:
    """`#` inside the resource is the resource, not the root: the children are trees."""
    tree = {
        "$id": "tree.json",
        "type": "object",
        "properties": {"kids": {"type": "array", "items": {"$ref": "#"}, "maxItems": 2}},
        "additionalProperties": False,
    }
    schema = {"$defs": {"tree": tree}, "type": "object", "properties": {"t": {"$ref": "#/$defs/tree"}}, "required": ["t"]}
    documents = assert_sound(schema, 60)
    assert any(document["t"].get("kids") for document in documents)


@pytest.mark.parametrize(("draft", "expected"), [(DRAFT_07, "integer"), (DRAFT_2019, "string")])
def test_an_id_beside_ref_starts_a_resource_from_2019_09(draft: str, expected: str) -> None:
    """Draft 7 ignores every keyword beside `$ref`, `$id` included: the `#` reference then
    resolves against the root."""
    defs = "definitions" if draft == DRAFT_07 else "$defs"
    inner = {"$id": "in.json", "$ref": f"#/{defs}/v", defs: {"v": {"type": "string"}}}
    schema = {"$schema": draft, defs: {"v": {"type": "integer"}, "inner": inner}, "$ref": f"#/{defs}/inner"}
    assert all(
        ("integer" if is_integer(d) else type(d).__name__.replace("str", "string")) == expected for d in assert_sound(schema)
    )


def test_an_id_that_is_only_a_fragment_embeds_nothing() -> None:
    schema = {"$schema": DRAFT_07, "definitions": {"s": {"$id": "#s", "type": "string"}}, "items": {"$ref": "#/definitions/s"}}
    assert_sound({**schema, "type": "array"})


@pytest.mark.parametrize(
    ("schema", "pointer", "words"),
    [
        ({"$defs": {"item": {"$id": "item.json"}}, "$ref": "other.json"}, "/$ref", "never retrieved"),
        (
            {
                "$defs": {"a": {"$id": "item.json", "type": "string"}, "b": {"$id": "item.json", "type": "integer"}},
                "$ref": "item.json",
            },
            "/$ref",
            "/$defs/a and /$defs/b all declare",
        ),
    ],
)
def test_a_reference_to_no_resource_or_an_ambiguous_one_is_refused(schema: Any, pointer: str, words: str) -> None:
    for lenient in (False, True):
        with pytest.raises(UnsupportedSchema) as refusal:
            compile_automaton(schema, lenient=lenient)
        assert (refusal.value.keyword, refusal.value.pointer, refusal.value.relaxable) == ("$ref", pointer, False)
        assert words in refusal.value.message


# --- the compile limit is counted work, not time ---------------------------------------------


def test_compile_work_is_counted_and_refused_the_same_way_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "object", "properties": {"q": {}}} for i in range(40)}}
    compile_automaton(schema)
    monkeypatch.setattr(work_limits, "MAX_COMPILE_FUEL", 50)
    refusals = []
    for _ in range(2):
        with pytest.raises(CompileWorkExceeded) as refusal:
            compile_automaton(schema, lenient=True)  # never relaxed, never swallowed by an optional property
        refusals.append((refusal.value.pointer, refusal.value.message))
    assert refusals[0] == refusals[1]
    assert "more than 50 units of compile work" in refusals[0][1]


@pytest.mark.parametrize(
    ("schema", "pointer"),
    [
        (
            {
                "$schema": DRAFT_07,
                "definitions": {"d": {"$ref": "#/definitions/d", "type": "string"}},
                "anyOf": [{"$ref": "#/definitions/d"}, {}],
            },
            "/definitions/d/$ref",
        ),
        ({"$defs": {"d": {"anyOf": [{"$ref": "#/$defs/d"}, {"type": "string"}]}}, "$ref": "#/$defs/d"}, "/$defs/d/anyOf/0/$ref"),
    ],
)
def test_a_reference_cycle_that_never_reaches_a_part_of_the_value_is_refused(schema: Any, pointer: str) -> None:
    # A validator would follow it without end (RecursionError after the output was written).
    with pytest.raises(UnsupportedSchema) as refusal:
        compile_automaton(schema, lenient=True)
    assert (refusal.value.keyword, refusal.value.pointer) == ("$ref", pointer)


def test_a_reference_cycle_through_properties_is_recursion() -> None:
    schema = {"$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"}
    assert_sound(schema)
