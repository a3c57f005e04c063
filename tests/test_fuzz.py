"""Fuzzing with generated schemas: every one compiles or is refused cleanly (a SchemaError,
nothing else), every string its automaton accepts validates with jsonschema (formats
checked), and the decoder driven by random logits always ends in valid JSON inside its
budget or refuses the budget up front.

The suite runs a few hundred examples; a longer run takes the counts from the environment:
    EXTRACT_FUZZ_SCHEMAS=2000 EXTRACT_FUZZ_DECODES=200 pytest tests/test_fuzz.py
"""

from __future__ import annotations

import json
import os
from typing import Any

import jsonschema
import pytest
from conftest import FakeModel, compile_for, hand_vocab, random_walk
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from gguf_extract.core.compiled import CompiledSchema
from gguf_extract.core.decode import Decoder, SamplingSettings
from gguf_extract.core.errors import GenerationError, SchemaError
from gguf_extract.core.vocab import Vocabulary

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
    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return validator(schema, format_checker=validator.FORMAT_CHECKER).is_valid(json.loads(text))


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
