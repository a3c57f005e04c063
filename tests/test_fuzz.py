"""Fuzzing with generated schemas: every one compiles or is refused cleanly (a SchemaError,
nothing else), every string its automaton accepts validates with jsonschema (formats
checked), and the decoder driven by random logits always ends in valid JSON inside its
budget or refuses the budget up front.

The differential test draws schemas in every draft read (04, 06, 07, 2019-09, 2020-12) over
keywords whose meaning differs between drafts or between value and text (`$ref` with
siblings, `prefixItems`, `const`, `nullable`, `propertyNames`, `patternProperties`, `not`
of structured values), walks each automaton with the sampler and validates every document
under the schema's own draft. Its runs are derandomized (the same schemas every run); the
soundness bugs it once found are its explicit examples.

The suite runs a few hundred examples; a longer run takes the counts from the environment:
    EXTRACT_FUZZ_SCHEMAS=2000 EXTRACT_FUZZ_DECODES=200 pytest tests/test_fuzz.py
Counts of compiled and refused schemas: add --hypothesis-show-statistics. `python bench/fuzz.py`
runs the differential test at thousands of schemas and counts disagreements by kind.
"""

from __future__ import annotations

import json
import os
import random
from typing import Any

import pytest
from conftest import FakeModel, compile_for, hand_vocab, random_walk
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.decode.decoder import Decoder
from gguf_extract.core.decode.types import SamplingSettings
from gguf_extract.core.errors import GenerationError, SchemaError
from gguf_extract.core.index.compiled import CompiledSchema, compile_automaton
from gguf_extract.core.schema.read.validation import validator_for_schema
from gguf_extract.core.vocab.token_table import Vocabulary

SCHEMAS = int(os.environ.get("EXTRACT_FUZZ_SCHEMAS", "300"))
DECODES = int(os.environ.get("EXTRACT_FUZZ_DECODES", "60"))
VOCAB: Vocabulary = hand_vocab()

NAMES = st.sampled_from(["name", "age", "id", "tags", "when", "ok", "note", "a b", "é", 'x"y', "items"])
FORMATS = ["date", "time", "date-time", "email", "uuid", "ipv4", "ipv6", "hostname", "uri", "duration"]
PATTERNS = ["^[a-z]+$", "^[A-Z]{2,4}-[0-9]{3}$", "ab+c", "^\\d{4}$", "^(yes|no)$", "[0-9]", "^.{0,5}$", "^(?!x)"]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 1000),
    st.floats(-100, 100, allow_nan=False).map(lambda f: round(f, 2)),
    st.text(max_size=6),
)


@st.composite
def strings(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    kind = draw(st.sampled_from(["plain", "length", "format", "pattern", "pattern-length"]))
    if kind in ("length", "pattern-length"):
        low = draw(st.integers(0, 6))
        schema["minLength"] = low
        schema["maxLength"] = draw(st.integers(low, low + 12))
    if kind == "format":
        schema["format"] = draw(st.sampled_from(FORMATS))
    if kind.startswith("pattern"):
        schema["pattern"] = draw(st.sampled_from(PATTERNS))
    return schema


@st.composite
def numbers(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": draw(st.sampled_from(["integer", "number"]))}
    bounds = draw(st.sets(st.sampled_from(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"])))
    for bound in sorted(bounds):
        if bound == "multipleOf":
            schema[bound] = draw(st.sampled_from([1, 2, 5, 0.5, 0.25]))
        else:
            schema[bound] = draw(st.integers(-50, 50)) if draw(st.booleans()) else draw(st.sampled_from([-1.5, 0.5, 2.75]))
    return schema


leaves = st.one_of(
    strings(),
    numbers(),
    st.sampled_from([{"type": "boolean"}, {"type": "null"}, {}, True, False]),
    SCALARS.map(lambda value: {"const": value}),
    st.lists(SCALARS, max_size=4).map(lambda values: {"enum": values}),
    st.lists(st.sampled_from(["string", "integer", "number", "boolean", "null"]), min_size=1, max_size=3, unique=True).map(
        lambda types: {"type": types}
    ),
)


def composites(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    objects = st.tuples(
        st.dictionaries(NAMES, children, max_size=4),
        st.data(),
        st.sampled_from([None, False, True, {"type": "integer"}]),
    ).map(_object)
    arrays = st.tuples(children, st.integers(0, 3), st.integers(0, 4), st.integers(0, 9).map(lambda n: n == 0)).map(_array)
    unions = st.lists(children, min_size=1, max_size=3).flatmap(
        lambda options: st.sampled_from(["anyOf", "anyOf", "allOf", "oneOf"]).map(lambda key: {key: options})
    )
    # Mostly the negations the compiler folds exactly (types, values, required names);
    # now and then an arbitrary one, which must be refused by name.
    negated = st.one_of(
        st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"]).map(lambda t: {"type": t}),
        st.lists(SCALARS, min_size=1, max_size=3).map(lambda values: {"enum": values}),
        NAMES.map(lambda name: {"required": [name]}),
        children,
    )
    negation = st.tuples(children, negated).map(lambda pair: {**_as_object(pair[0]), "not": pair[1]})
    return st.one_of(objects, objects, arrays, arrays, unions, negation)


def _as_object(schema: Any) -> dict[str, Any]:
    return schema if isinstance(schema, dict) else {}


def _object(parts: tuple[dict[str, Any], st.DataObject, Any]) -> dict[str, Any]:
    properties, data, additional = parts
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if properties:
        schema["required"] = data.draw(st.lists(st.sampled_from(sorted(properties)), unique=True))
    if additional is not None:
        schema["additionalProperties"] = additional
    return schema


def _array(parts: tuple[Any, int, int, bool]) -> dict[str, Any]:
    items, low, extra, unique = parts
    schema: dict[str, Any] = {"type": "array", "items": items, "minItems": low, "maxItems": low + extra}
    if unique:
        schema["uniqueItems"] = True
    return schema


schemas = st.recursive(leaves, composites, max_leaves=8)


def compile_or_refuse(schema: Any, record: bool = True) -> CompiledSchema | None:
    """The compiled schema, or None when it is refused with a SchemaError (any other
    exception fails the test)."""
    try:
        compiled = compile_for(schema, VOCAB)
    except SchemaError as error:
        assert error.message, "a refusal must say why"
        if record:
            event(f"refused: {type(error).__name__}")
        return None
    if record:
        event("compiled")
    return compiled


def validates(text: str, schema: Any) -> bool:
    """The oracle: the library's own validator, under the schema's draft, formats checked."""
    return bool(validator_for_schema(schema).is_valid(json.loads(text)))


@settings(max_examples=SCHEMAS, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(schemas, st.integers(0, 2**16))
def test_generated_schemas_compile_or_refuse_and_accept_only_valid_documents(schema: Any, seed: int) -> None:
    compiled = compile_or_refuse(schema)
    if compiled is None:
        return
    for offset in range(5):
        text = random_walk(compiled, seed + offset, max_bytes=120)
        assert validates(text, schema), f"accepted but invalid: {text!r} for {json.dumps(schema)}"


@settings(max_examples=DECODES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(schemas, st.integers(0, 2**16), st.integers(8, 160), st.sampled_from([0.0, 0.7, 1.5]))
def test_random_logits_always_end_in_valid_json_inside_the_budget(
    schema: Any, seed: int, max_tokens: int, temperature: float
) -> None:
    compiled = compile_or_refuse(schema)
    if compiled is None:
        return
    model = FakeModel(VOCAB, seed)
    decoder = Decoder(model, compiled, SamplingSettings(max_tokens=max_tokens, temperature=temperature, seed=seed))
    try:
        text = b"".join(decoder.run()).decode("utf-8")
    except GenerationError as error:
        assert "shortest document" in error.message, error.message  # refused before generating
        assert not model.evaluated
        event("budget refused up front")
        return
    assert decoder.stats.output_tokens <= max_tokens
    assert validates(text, schema), f"decoded but invalid: {text!r} for {json.dumps(schema)}"
    event("decoded: valid, inside the budget")


@pytest.mark.parametrize("schema", [{"not": {}}, {"enum": []}, False, {"type": "integer", "minimum": 3, "maximum": 2}])
def test_unsatisfiable_schemas_are_refused_cleanly(schema: Any) -> None:
    assert compile_or_refuse(schema, record=False) is None


def test_unique_items_treat_equal_numbers_as_one_value() -> None:
    schema = {"type": "array", "items": {"enum": [0, 0.0, 1]}, "minItems": 2, "maxItems": 2, "uniqueItems": True}
    compiled = compile_or_refuse(schema, record=False)
    assert compiled is not None
    for seed in range(30):
        assert validates(random_walk(compiled, seed), schema)
    schema["items"] = {"enum": [0, 0.0]}
    assert compile_or_refuse(schema, record=False) is None  # one distinct value cannot fill two places


# --- Differential fuzzing across drafts -----------------------------------------------------

DRAFTS = {
    "04": "http://json-schema.org/draft-04/schema#",
    "06": "http://json-schema.org/draft-06/schema#",
    "07": "http://json-schema.org/draft-07/schema#",
    "2019-09": "https://json-schema.org/draft/2019-09/schema",
    "2020-12": "https://json-schema.org/draft/2020-12/schema",
}
DEFS = "$gguf-test-defs"  # replaced by the draft's own `definitions` or `$defs`
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2),
    max_leaves=6,
)
ID = "$gguf-test-id"  # replaced by the draft's `$id` (draft 4: `id`)
# An anchor named a0: `$anchor` from 2019-09 on, an id that is only a fragment before.
ANCHOR = '"$gguf-test-anchor": "a0"'
ANCHORED = {"$gguf-test-anchor": "a0"}
# Mostly fragments (resolved inside the innermost embedded resource, else the root); now and
# then a relative reference naming an embedded resource, or one that names none (refused).
REFS = st.sampled_from(
    [
        *(f"#/{DEFS}/d0", f"#/{DEFS}/d1", f"#/{DEFS}/d0", f"#/{DEFS}/d1"),
        *("inner.json", f"inner.json#/{DEFS}/d1", "#", "#a0", "inner.json#a0"),
    ]
)
EMBEDDED_IDS = st.sampled_from(["inner.json", "inner.json", "sub/inner.json", "https://example.com/other.json"])
OWN_DRAFTS = st.sampled_from([{}, {}, {}, *({"$schema": uri} for uri in DRAFTS.values())])
REF_SIBLINGS = st.sampled_from([{}, {"type": "string"}, {"maxLength": 1}, {"const": 1}, {"enum": [1.0, True]}])

drafted_leaves = st.one_of(
    leaves,
    VALUES.map(lambda value: {"const": value}),
    st.lists(VALUES, min_size=1, max_size=3).map(lambda values: {"enum": values}),
    st.tuples(REFS, REF_SIBLINGS).map(lambda pair: {"$ref": pair[0], **pair[1]}),
    st.sampled_from([{"type": "string", "nullable": True}, {"type": "integer", "nullable": True, "minimum": 3}]),
)


# Now and then a leaf carrying the anchor a0 (where it is an object without an id of its own).
anchored_leaves = st.tuples(drafted_leaves, st.booleans()).map(
    lambda pair: {**pair[0], **ANCHORED} if pair[1] and isinstance(pair[0], dict) else pair[0]
)


def drafted_composites(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    names = st.sampled_from([{"type": "integer"}, {"maxLength": 2}, {"enum": ["kind", 1]}, False, True])
    maps = st.tuples(st.sampled_from(["^k", "^[a-z]+$", "x"]), children, names).map(
        lambda parts: {"type": "object", "patternProperties": {parts[0]: parts[1]}, "propertyNames": parts[2]}
    )
    tuples = st.tuples(st.lists(children, min_size=1, max_size=2), children).map(
        lambda parts: {"type": "array", "prefixItems": parts[0], "items": parts[1], "maxItems": 3}
    )
    tagged = st.tuples(st.lists(VALUES, min_size=2, max_size=3, unique_by=json.dumps), children).map(_tagged_one_of)
    negated_values = st.tuples(children, st.lists(VALUES, min_size=1, max_size=2)).map(
        lambda pair: {**_as_object(pair[0]), "not": {"enum": pair[1]}}
    )
    # A subschema that is a resource of its own, with its own definitions under the same names,
    # now and then declaring a draft of its own.
    embedded = st.tuples(EMBEDDED_IDS, children, anchored_leaves, children, OWN_DRAFTS).map(
        lambda parts: {**_as_object(parts[1]), ID: parts[0], DEFS: {"d0": parts[2], "d1": parts[3]}, **parts[4]}
    )
    # if/then/else: mostly the `if`s the compiler negates exactly (a property's listed values,
    # required names, types); now and then an arbitrary one, which must be refused by name.
    conditions = st.one_of(
        st.tuples(st.lists(VALUES, min_size=1, max_size=2), st.booleans()).map(_discriminator),
        NAMES.map(lambda name: {"required": [name]}),
        st.sampled_from(["string", "integer", "object", "null"]).map(lambda t: {"type": t}),
        children,
    )
    conditional = st.tuples(children, conditions, children, st.one_of(st.none(), children)).map(_conditional)
    return st.one_of(composites(children), maps, tuples, tagged, negated_values, embedded, conditional)


def _discriminator(parts: tuple[list[Any], bool]) -> dict[str, Any]:
    values, required = parts
    condition: dict[str, Any] = {"properties": {"kind": {"enum": values} if len(values) > 1 else {"const": values[0]}}}
    return {**condition, "required": ["kind"]} if required else condition


def _conditional(parts: tuple[Any, Any, Any, Any]) -> dict[str, Any]:
    body, condition, then, otherwise = parts
    schema = {**_as_object(body), "if": condition, "then": then}
    return schema if otherwise is None else {**schema, "else": otherwise}


def _tagged_one_of(parts: tuple[list[Any], Any]) -> dict[str, Any]:
    tags, other = parts
    branches: list[Any] = [{"properties": {"kind": {"const": tag}}, "required": ["kind"]} for tag in tags]
    branches.append({"patternProperties": {"^k": other}, "additionalProperties": {"const": tags[0]}})
    return {"type": "object", "oneOf": branches}


drafted_bodies = st.recursive(drafted_leaves, drafted_composites, max_leaves=8)
drafted_schemas = st.tuples(st.sampled_from(sorted(DRAFTS)), drafted_bodies, anchored_leaves, drafted_bodies).map(
    lambda parts: in_draft(parts[0], parts[1], {"d0": parts[2], "d1": parts[3]})
)


def in_draft(draft: str, body: Any, definitions: dict[str, Any]) -> Any:
    """`body` as a root schema of `draft`, with `definitions` where its references point;
    draft 4's forms where its meta-schema asks for them."""
    defs = "definitions" if draft in ("04", "06", "07") else "$defs"
    root = {"$schema": DRAFTS[draft], DEFS: definitions, **_as_object(body)}
    if body is False:
        root["not"] = {}
    id_keyword = "id" if draft == "04" else "$id"
    anchor = f'"{id_keyword}": "#a0"' if draft in ("04", "06", "07") else '"$anchor": "a0"'
    text = json.dumps(root).replace(DEFS, defs).replace(ID, id_keyword).replace(ANCHOR, anchor)
    schema = json.loads(text)
    return _draft_4_forms(schema) if draft == "04" else schema


def _draft_4_forms(schema: Any) -> Any:
    """Boolean exclusive bounds and non-empty `required`, as draft 4's meta-schema demands."""
    if isinstance(schema, list):
        return [_draft_4_forms(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result = {key: _draft_4_forms(value) if key not in ("const", "enum") else value for key, value in schema.items()}
    for exclusive, inclusive in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        bound = result.pop(exclusive, None)
        if bound is not None and not isinstance(bound, bool) and inclusive not in result:
            result[inclusive], result[exclusive] = bound, True
    if result.get("required") == []:
        del result["required"]
    return result


# The soundness bugs this test would have found, kept as fixed examples.
REGRESSIONS: list[Any] = [
    {"type": "object", "properties": {"nick": {"type": "string", "nullable": True, "minLength": 4}}, "required": ["nick"]},
    {"not": {"const": 1}, "anyOf": [{"enum": [1.0, 2]}]},
    {"not": {"const": {"b": 2, "a": 1}}, "anyOf": [{"enum": [{"a": 1, "b": 2}, 3]}]},
    {"enum": [{"a": 1}, {"a": True}], "const": {"a": True}},
    {"type": "object", "propertyNames": {"type": "integer"}},
    {
        "type": "object",
        "oneOf": [
            {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
            {"patternProperties": {"^k": {"type": "string"}}, "additionalProperties": {"const": "b"}},
        ],
    },
    {"$schema": DRAFTS["07"], "type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}},
    {"$schema": DRAFTS["2019-09"], "type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}},
    {"$schema": DRAFTS["04"], "type": "integer", "not": {"const": 1}, "enum": [1, 2]},
    {"$schema": DRAFTS["04"], "oneOf": [{"const": 1}, {"type": "string"}]},
    {
        "$schema": DRAFTS["07"],
        "definitions": {"any": {}},
        "oneOf": [{"$ref": "#/definitions/any", "type": "string"}, {"type": "integer"}],
    },
    {
        "$defs": {
            "inner": {
                "$id": "https://example.com/inner",
                "$defs": {"v": {"type": "string"}},
                "properties": {"v": {"$ref": "#/$defs/v"}},
            },
            "v": {"type": "integer"},
        },
        "$ref": "#/$defs/inner",
    },
    {
        "$defs": {
            "item": {"$id": "item.json", "type": "string", "maxLength": 2},
            "tree": {"$id": "tree.json", "type": "array", "items": {"$ref": "#"}},
        },
        "properties": {"x": {"$ref": "item.json"}, "t": {"$ref": "tree.json"}},
    },
    {
        "$schema": DRAFTS["04"],
        "definitions": {
            "in": {"id": "in.json", "definitions": {"v": {"type": "null"}}, "items": {"$ref": "#/definitions/v"}},
            "v": {},
        },
        "$ref": "#/definitions/in",
    },
    {"anyOf": [{"$ref": "#/$defs/missing"}, {"type": "integer"}]},
    {"$defs": {"d0": {"anyOf": [{"$ref": "#/$defs/d0"}, {"type": "string"}]}}, "$ref": "#/$defs/d0"},
    # A negated items schema's "an item failing them" beside uniqueItems (was left out: [1] generated).
    {"type": "array", "items": {"enum": [1, 2]}, "uniqueItems": True, "not": {"type": "array", "items": {"enum": [1, 2]}}},
    # Raised an automaton-size error, not a refusal, while deciding whether a format can be negated.
    {"type": "string", "format": "hostname", "not": {"type": "string", "format": "hostname"}},
    # Crashed: the numbers that are no integer, read from a tree holding a machine (multipleOf).
    {"type": "number", "minimum": -1.5, "multipleOf": 1, "not": {"type": "integer"}},
]
WALKS = 5


def sample_documents(schema: Any, seed: int) -> list[str] | None:
    """WALKS documents from the schema's automaton, or None when it is refused cleanly."""
    try:
        dfa = compile_automaton(schema).dfa
    except SchemaError as error:
        assert error.message, "a refusal must say why"
        event(f"refused: {type(error).__name__}")
        return None
    event("compiled")
    rng = random.Random(seed)
    return [sample_accepted(dfa, rng, soft_limit=120).decode("utf-8") for _ in range(WALKS)]


def _with_examples(test: Any) -> Any:
    for schema in REGRESSIONS:
        test = example(schema, 0)(test)
    return test


@settings(max_examples=SCHEMAS, deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True)
@given(drafted_schemas, st.integers(0, 2**16))
@_with_examples
def test_drafted_schemas_generate_only_documents_their_draft_accepts(schema: Any, seed: int) -> None:
    for text in sample_documents(schema, seed) or []:
        assert validates(text, schema), f"generated but invalid: {text!r} for {json.dumps(schema)}"
