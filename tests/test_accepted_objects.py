"""Members in any order, and undeclared properties where `additionalProperties` allows them:
the public Guide accepts a text that has them (declared members in any order, undeclared ones
anywhere among them with any value; an array of distinct listed values in any order), exactly
when jsonschema says valid, through `compiled.guide(every_valid_text=True)`; the default Guide
(what the decoder writes) takes declared members in schema order and no undeclared ones.
Names that patternProperties taking any value find (`"^x-": {}` beside a closed object), names
no pattern finds in an object whose keys come from patterns, and free-form values nesting up to
8 levels are accepted too. Where the counts bind, or other patternProperties, propertyNames or
an additionalProperties schema decide, the rest stays refused, and so does a name written twice
(RFC 8259: names should be unique; parsers differ on which value counts): the departures of
docs/schema-support.md."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from conftest import EOS, compile_for
from hypothesis import given, settings
from hypothesis import strategies as st
from test_guide_numbers import valid, walks

from gguf_extract.core.automaton.dfa import DEAD
from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.index.guide import Guide
from gguf_extract.core.schema.read.validation import validator_for_schema
from gguf_extract.core.vocab.token_table import Vocabulary

OPEN = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a"]}
CLOSED = {**OPEN, "additionalProperties": False}
NESTED = {"type": "object", "properties": {"inner": OPEN, "café": {"type": "null"}}}
UNIQUE = {"type": "array", "items": {"enum": ["a", "b", "c"]}, "uniqueItems": True}
EXTENSIONS = {**CLOSED, "patternProperties": {"^x-": {}}}
MAP = {"type": "object", "properties": {"m": {"type": "object", "patternProperties": {"^[a-z]+$": {"type": "integer"}}}, "f": {}}}
ESCAPED_NAMES = {
    "type": "object",
    "properties": {"a\"b": {"type": "boolean"}, "t\n": {"type": "integer"}, "ab": {"type": "null"}},
    "required": ["ab"],
}
ONE_OF = {
    "type": "object",
    "properties": {"a": {"type": "null"}, "b": {"type": "null"}},
    "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
}

TEXTS: list[tuple[Any, list[str]]] = [
    (
        OPEN,
        [
            '{"a": 1, "x": 2}',
            '{"x": [1, {"y": null}], "a": 1}',
            '{"a": 1, "b": "s", "c": true}',
            '{"z": "", "a": 1, "y": 1.5, "b": "s", "x": {}}',
            '{"a": 1, "b": 2}',
            '{"x": 1}',
            '{"a": 1, "x": 2,}',
            '{"a": 1 "x": 2}',
            '{"b": "s", "a": 1}',
            '{"b": "s", "x": null, "a": 1}',
            '{"b": "s"}',
            '{"b": 1, "a": 1}',
        ],
    ),
    (CLOSED, ['{"a": 1}', '{"a": 1, "x": 2}', '{"x": 2, "a": 1}', '{"b": "", "a": 1}', '{"b": "", "a": 1, "x": 2}']),
    (UNIQUE, ["[]", '["c", "a"]', '["b", "c", "a"]', '["a", "a"]', '["c", "a", "c"]', '["d"]']),
    (
        NESTED,
        [
            '{"inner": {"a": 1, "extra": "e"}, "caf\\u00e9": null, "other": 0}',
            '{"caf\\u00e9": null, "cafe": 1}',
            '{"café": null, "caf\\u00e9x": 1}',
            '{"inner": {"a": "1", "extra": "e"}}',
        ],
    ),
    (
        ESCAPED_NAMES,  # a declared name however JSON writes it: the member it names, its value held to its schema
        [
            '{"ab": null, "a\\u0022b": true}',
            '{"ab": null, "a\\u0022b": 1}',
            '{"ab": null, "a\\"b": false, "t\\u000a": 3}',
            '{"t\\n": "x", "ab": null}',
            '{"t\\u000A": 1, "ab": null, "a\\u0022": 0}',
        ],
    ),
    (ONE_OF, ['{"a": null, "x": 1}', '{"x": 1, "b": null}', '{"a": null, "b": null}', '{"x": 1}']),
    (EXTENSIONS, ['{"a": 1, "x-b": [2]}', '{"x-": {}, "a": 1}', '{"a": 1, "y": 2}', '{"x-b": 1}']),
    (
        MAP,
        [
            '{"m": {"ab": 1, "x-y": "s"}}',
            '{"m": {"X": [1, {"y": null}]}}',
            '{"m": {"ab": "s"}}',
            '{"f": [[[[[1]]]]], "m": {}}',
            '{"f": {"a": {"b": {"c": {"d": [1]}}}}}',
        ],
    ),
]


@pytest.mark.parametrize(
    ("schema", "texts"), TEXTS, ids=["open", "closed", "unique", "nested", "escaped-names", "one-of", "extensions", "map"]
)
def test_objects_and_unique_arrays_are_accepted_exactly_when_valid(schema: Any, texts: list[str], vocab: Vocabulary) -> None:
    compiled = compile_for(schema, vocab)
    for text in texts:
        assert walks(compiled, text, every_valid_text=True) == valid(schema, text), text


def writes(guide: Guide, text: str) -> bool:
    return all(guide.try_advance(token) for token in [*(byte + 2 for byte in text.encode()), EOS])


def test_the_generator_never_writes_an_undeclared_property(vocab: Vocabulary) -> None:
    compiled = compile_for(OPEN, vocab)
    assert writes(compiled.guide(), '{"a": 1, "b": "s"}')
    assert not writes(compiled.guide(), '{"a": 1, "x": 2}')
    assert not writes(compiled.guide(), '{"b": "s", "a": 1}')
    assert writes(compiled.guide(every_valid_text=True), '{"a": 1, "x": 2}')
    assert writes(compiled.guide(every_valid_text=True), '{"b": "s", "a": 1}')
    rng = random.Random(3)
    for _ in range(50):
        document = json.loads(sample_accepted(compiled.automaton, rng))
        assert list(document) in (["a"], ["a", "b"])


@pytest.mark.parametrize(
    ("schema", "text"),
    [
        ({**OPEN, "maxProperties": 3}, '{"a": 1, "x": 2}'),
        ({**OPEN, "patternProperties": {"^x": {"type": "integer"}}}, '{"a": 1, "y": 2}'),
        ({**OPEN, "additionalProperties": {"type": "integer"}}, '{"a": 1, "x": 2}'),
        ({**OPEN, "propertyNames": {"maxLength": 3}}, '{"a": 1, "x": 2}'),
        ({**OPEN, "minProperties": 2}, '{"b": "s", "a": 1}'),
        ({**UNIQUE, "maxItems": 2}, '["b", "a"]'),
        (OPEN, '{"b": "s", "a": 1, "a": 2}'),
        (OPEN, '{"a": 1, "b": "s", "b": "t"}'),
    ],
    ids=[
        "counts",
        "patternProperties",
        "additionalProperties-schema",
        "propertyNames",
        "order-with-counts",
        "unique-with-counts",
        "duplicate",
        "duplicate-2",
    ],
)
def test_the_departures_stay_refused_though_valid(schema: Any, text: str, vocab: Vocabulary) -> None:
    assert valid(schema, text)
    assert not walks(compile_for(schema, vocab), text, every_valid_text=True)


@pytest.mark.parametrize(
    "schema", [OPEN, NESTED, ONE_OF, UNIQUE, EXTENSIONS, MAP, {"properties": {"k": {"enum": [1, 2]}}, "minProperties": 0}]
)
def test_every_text_the_accepting_automaton_samples_is_valid(schema: Any, vocab: Vocabulary) -> None:
    """Soundness of what is only accepted: random walks of the accepting automaton, which
    take other orders and undeclared members as often as the rest, each validate, and some
    are texts the generator never writes."""
    compiled = compile_for(schema, vocab)
    dfa = compiled.accepting[0]
    checker = validator_for_schema(schema)
    rng = random.Random(5)
    beyond_the_generator = 0
    for _ in range(200):
        text = sample_accepted(dfa, rng)
        assert dfa.walk(dfa.start, text) != DEAD
        assert checker.is_valid(json.loads(text)), text
        beyond_the_generator += compiled._dfa.walk(compiled._dfa.start, text) == DEAD
    assert beyond_the_generator > 0


# Names that share prefixes, need escapes, or run past U+007F (read member by member then).
NAMES = ["a", "ab", "b", 'q"', "n\n", "é", "ba"]
VALUES: list[tuple[dict[str, Any], list[Any]]] = [
    ({"type": "integer"}, [1, -2, "x"]),
    ({"type": "boolean"}, [True, None]),
    ({"type": "string", "maxLength": 2}, ["", "xy", "xyz", 3]),
    ({"type": "null"}, [None, 0]),
]


@st.composite
def objects_and_texts(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    """An object schema of a few declared names (undeclared ones taken or refused) and an object
    text of declared and other names in any order, each name once, with names' characters written
    in each form JSON allows them where undeclared names are taken (elsewhere as the schema's text
    spells them: a departure, docs/schema-support.md)."""
    declared = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
    kinds = {name: draw(st.sampled_from(range(len(VALUES)))) for name in declared}
    schema: dict[str, Any] = {"type": "object", "properties": {name: VALUES[kinds[name]][0] for name in declared}}
    schema["required"] = draw(st.lists(st.sampled_from(declared), unique=True, max_size=len(declared)))
    extra = draw(st.sampled_from(["absent", True, False]))  # (a schema there is a departure: above)
    if extra != "absent":
        schema["additionalProperties"] = extra
    names = draw(st.lists(st.sampled_from([*NAMES, "zz", ""]), unique=True, max_size=5))
    members = []
    for name in names:
        choices = VALUES[kinds[name]][1] if name in kinds else [None, 1, "v"]
        key = json.dumps(name, ensure_ascii=draw(st.booleans()))
        if extra is not False and draw(st.booleans()):  # the other form of an escaped character
            key = key.replace("\\n", "\\u000a").replace('\\"', "\\u0022")
        members.append(f"{key}: {json.dumps(draw(st.sampled_from(choices)))}")
    return schema, "{" + ", ".join(members) + "}"


@settings(max_examples=150, deadline=None)
@given(objects_and_texts())
def test_every_valid_object_text_is_accepted_exactly_when_valid(vocab: Vocabulary, case: tuple[dict[str, Any], str]) -> None:
    """Declared names in any order and in any form JSON writes their characters, other names
    where undeclared ones are taken: the Guide of every valid text takes the text exactly when
    jsonschema says it is valid (each name once: a name twice is a departure)."""
    schema, text = case
    assert walks(compile_for(schema, vocab), text, every_valid_text=True) == valid(schema, text), (schema, text)
