"""Undeclared properties where `additionalProperties` allows them: the public Guide accepts a
text that has them (anywhere among the declared ones, with any value), exactly when
jsonschema says valid; the generator (the decoder's Guide, `generating=True`) never writes
them. Where the counts bind, or patternProperties, propertyNames or an additionalProperties
schema decide, they stay refused: the README's departures."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from conftest import EOS, compile_for
from test_guide_numbers import valid, walks

from gguf_extract.core.automaton.dfa import DEAD
from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.index.guide import Guide
from gguf_extract.core.schema.validation import validator_for_schema
from gguf_extract.core.vocab.token_table import Vocabulary

OPEN = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a"]}
CLOSED = {**OPEN, "additionalProperties": False}
NESTED = {"type": "object", "properties": {"inner": OPEN, "café": {"type": "null"}}}
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
        ],
    ),
    (CLOSED, ['{"a": 1}', '{"a": 1, "x": 2}', '{"x": 2, "a": 1}']),
    (
        NESTED,
        [
            '{"inner": {"a": 1, "extra": "e"}, "caf\\u00e9": null, "other": 0}',
            '{"caf\\u00e9": null, "cafe": 1}',
            '{"café": null, "caf\\u00e9x": 1}',
            '{"inner": {"a": "1", "extra": "e"}}',
        ],
    ),
    (ONE_OF, ['{"a": null, "x": 1}', '{"x": 1, "b": null}', '{"a": null, "b": null}', '{"x": 1}']),
]


@pytest.mark.parametrize(("schema", "texts"), TEXTS, ids=["open", "closed", "nested", "one-of"])
def test_undeclared_properties_are_accepted_exactly_when_valid(schema: Any, texts: list[str], vocab: Vocabulary) -> None:
    compiled = compile_for(schema, vocab)
    for text in texts:
        assert walks(compiled, text) == valid(schema, text), text


def writes(guide: Guide, text: str) -> bool:
    return all(guide.try_advance(token) for token in [*(byte + 2 for byte in text.encode()), EOS])


def test_the_generator_never_writes_an_undeclared_property(vocab: Vocabulary) -> None:
    compiled = compile_for(OPEN, vocab)
    assert writes(compiled.guide(generating=True), '{"a": 1, "b": "s"}')
    assert not writes(compiled.guide(generating=True), '{"a": 1, "x": 2}')
    assert writes(compiled.guide(), '{"a": 1, "x": 2}')
    rng = random.Random(3)
    for _ in range(50):
        document = json.loads(sample_accepted(compiled.automaton, rng))
        assert set(document) <= {"a", "b"}


@pytest.mark.parametrize(
    ("schema", "text"),
    [
        ({**OPEN, "maxProperties": 3}, '{"a": 1, "x": 2}'),
        ({**OPEN, "patternProperties": {"^x": {"type": "integer"}}}, '{"a": 1, "y": 2}'),
        ({**OPEN, "additionalProperties": {"type": "integer"}}, '{"a": 1, "x": 2}'),
        ({**OPEN, "propertyNames": {"maxLength": 3}}, '{"a": 1, "x": 2}'),
        (OPEN, '{"b": "s", "a": 1}'),
    ],
    ids=["counts", "patternProperties", "additionalProperties-schema", "propertyNames", "order"],
)
def test_the_departures_stay_refused_though_valid(schema: Any, text: str, vocab: Vocabulary) -> None:
    assert valid(schema, text)
    assert not walks(compile_for(schema, vocab), text)


@pytest.mark.parametrize("schema", [OPEN, NESTED, ONE_OF, {"properties": {"k": {"enum": [1, 2]}}, "minProperties": 0}])
def test_every_text_the_accepting_automaton_samples_is_valid(schema: Any, vocab: Vocabulary) -> None:
    """Soundness of what is only accepted: random walks of the accepting automaton, which
    take undeclared members as often as the rest, each validate."""
    compiled = compile_for(schema, vocab)
    dfa = compiled.accepting[0]
    checker = validator_for_schema(schema)
    rng = random.Random(5)
    undeclared = 0
    for _ in range(200):
        text = sample_accepted(dfa, rng)
        assert dfa.walk(dfa.start, text) != DEAD
        value = json.loads(text)
        assert checker.is_valid(value), text
        undeclared += isinstance(value, dict) and bool(set(value) - {"a", "b", "inner", "café", "k"})
    assert undeclared > 0
