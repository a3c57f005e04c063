"""Every valid JSON number text gets through the public Guide, wherever the schema accepts its
value: a sampler driving the Guide (fill_mask, test the token's bit, advance) that writes
`1.0`, `100.00`, `-0`, `1E+2` or `2.5e-07` may always go on as the schema allows, and is never
left with a number it cannot end. Texts are walked as json.dumps writes them, one token per
byte of the hand vocabulary, and must be accepted exactly when jsonschema says valid.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from bench_modules import bench_module
from conftest import EOS, compile_for

from gguf_extract.core.index.compiled import CompiledSchema
from gguf_extract.core.index.guide import new_bitmask
from gguf_extract.core.schema.read.validation import validator_for_schema
from gguf_extract.core.vocab.token_table import Vocabulary

DRAFT_04 = "http://json-schema.org/draft-04/schema#"
DRAFT_07 = "http://json-schema.org/draft-07/schema#"


def walks(compiled: CompiledSchema, text: str, every_valid_text: bool = False) -> bool:
    """Whether a sampler can write `text` and then end: at each byte's token (the hand
    vocabulary's byte tokens follow the control and end tokens) fill_mask, test the bit,
    advance; then the end-of-generation token."""
    guide = compiled.guide(every_valid_text=every_valid_text)
    bitmask = new_bitmask(compiled.vocab.size)
    words = bitmask.view(np.uint32)
    for token in [byte + 2 for byte in text.encode()] + [EOS]:
        guide.fill_mask(bitmask)
        if not (int(words[token >> 5]) >> (token & 31)) & 1:
            return False
        guide.advance(token)
    return True


def valid(schema: Any, text: str) -> bool:
    """Whether `text` is JSON (Python's `Infinity` and `NaN` are not) that validates."""
    try:
        value = json.loads(text, parse_constant=_not_json)
    except ValueError:
        return False
    return bool(validator_for_schema(schema).is_valid(value))


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


NUMBER = {"type": "number"}
NUMBERS = ["0", "-0", "-0.0", "1.0", "100.00", "1e0", "1E+2", "1e05", "0.0e0", "2.5e-07", "1.5E-7", "1e+16", "9.538e+102"]
NUMBERS += ["-12.50", "6.431015656963091e+16", "0.000", "1" * 19 + "." + "0" * 17]
NOT_JSON = ["01", "1.", ".5", "+1", "1e", "1e+", "--1", "-", "00", "1.e5", "0x10", "Infinity", "NaN"]

CASES: list[tuple[Any, list[str]]] = [
    (NUMBER, NUMBERS + NOT_JSON),
    ({"type": "object", "properties": {"K": NUMBER}}, ['{"K": 1.0}', '{"K": 1267000000.0}', '{"K": -0}']),
    ({"type": "array", "items": NUMBER}, ["[3.0, 2.0, -4.0]", "[100.0, 1e-05, 0.0]"]),
    # Integers: 1.0 is one after draft 4 (jsonschema's type checkers differ there), 1.5 never.
    ({"type": "integer"}, ["1", "-0", "1.0", "-0.0", "1e2", "1E+2", "1.5e1", "2.5e-07", "1.5", "1e-1", "1.0e0", "0e-5"]),
    ({"$schema": DRAFT_07, "type": "integer"}, ["3.0", "3.00", "3.5", "1e+16"]),
    ({"$schema": DRAFT_04, "type": "integer"}, ["3", "-0", "3.0", "1e2", "3.5"]),
    ({"$schema": DRAFT_04, "type": "number"}, ["3", "3.0", "1E2"]),
    # Bounds: trailing zeros and minus zero leave the value, and its place in the bounds, as it was.
    ({"type": "number", "minimum": 0, "maximum": 100}, ["100.00", "100.01", "0.0", "-0.0", "-0", "-0.01", "99.99000"]),
    ({"type": "number", "exclusiveMinimum": 0, "maximum": 1}, ["0.0", "-0", "0.50", "1.000", "1.0001", "0.00001"]),
    ({"type": "integer", "minimum": -5, "maximum": 5}, ["-5.0", "5.00", "0.0", "-0", "6.0", "4.5"]),
    ({"$schema": DRAFT_04, "type": "integer", "minimum": 0}, ["5", "-0", "5.0"]),
    # multipleOf: whole multiples in any form.
    ({"type": "number", "multipleOf": 2}, ["4.00", "-0.0", "4", "3.0", "2.50"]),
    ({"type": "integer", "multipleOf": 3, "maximum": 100}, ["99.0", "-3.00", "100.0"]),
    ({"type": "number", "multipleOf": 0.01, "minimum": 0.1, "maximum": 0.2}, ["0.15", "0.150", "0.1000", "0.155"]),
    # Listed numbers: every form of the value, where the keywords beside the list accept it.
    ({"enum": [1, 2.5, "a"]}, ["1", "1.0", "1.00", "2.5", "2.50", "-0", "3"]),
    ({"const": 0}, ["0", "-0", "0.0", "-0.0", "1"]),
    ({"$schema": DRAFT_04, "type": "integer", "enum": [0, 1]}, ["0", "-0", "1", "1.0", "-0.0"]),
    ({"type": "integer", "not": {"const": 1}}, ["2", "2.0", "1", "1.0", "1.00"]),
]


@pytest.mark.parametrize(("schema", "texts"), CASES, ids=[json.dumps(schema)[:60] for schema, _ in CASES])
def test_a_number_is_accepted_exactly_when_valid(schema: Any, texts: list[str], vocab: Vocabulary) -> None:
    compiled = compile_for(schema, vocab)
    assert [text for text in texts if walks(compiled, text) != valid(schema, text)] == []


@pytest.mark.parametrize(
    ("schema", "refused", "accepted"),
    [
        ({"type": "number", "minimum": 0, "maximum": 1}, "1e-05", "0.000010"),  # no exponent under bounds
        ({"type": "integer", "minimum": 0}, "1e2", "100.0"),
        ({"type": "integer"}, "100e-2", "1.0"),  # a whole value with a negative exponent
        ({"type": "number", "multipleOf": 0.5}, "2.50", "3.00"),  # multipleOf on numbers: whole multiples
        ({"type": "number", "maximum": 1e20}, "1e+16", "9999999999.0"),  # bounds beyond the digits written
        (NUMBER, "1e289", "1E+288"),  # the exponent's limit
        ({"type": "number", "minimum": 0, "maximum": 1}, "0.123456", "0.123450"),  # 5 significant fraction digits
        ({"type": "integer", "minimum": 0}, "1234567890123456.0", "123456789012345.0"),  # 15 digits with a fraction
        ({"enum": [1e15]}, "1000000000000000", "1000000000000000.00"),
    ],
)
def test_the_departures_are_refused_though_valid(schema: Any, refused: str, accepted: str, vocab: Vocabulary) -> None:
    """What the departures (docs/schema-support.md) list: valid, and refused (so that a sampler is never let
    into a number it could not finish), where another form near it gets through."""
    compiled = compile_for(schema, vocab)
    assert valid(schema, refused) and not walks(compiled, refused)
    assert valid(schema, accepted) and walks(compiled, accepted)


def test_a_zero_after_the_point_leaves_the_number_free_to_end(vocab: Vocabulary) -> None:
    """The failure this guards against: a sampler that picked `0` after `1.` was left with no
    way to end the number, and was forced on to `1.0X`."""
    compiled = compile_for({"type": "object", "properties": {"K": NUMBER}, "required": ["K"]}, vocab)
    guide = compiled.guide()
    for byte in b'{"K": 1.0':
        guide.advance(byte + 2)
    allowed = {bytes([token - 2]) for token in guide.allowed_token_ids().tolist() if 2 <= token < 258}
    assert {b"}", b"0", b"5", b"e", b"E"} <= allowed


# --- property: json.dumps forms of documents sampled from corpus schemas -------------------


number_forms = bench_module("number_forms")


@pytest.mark.skipif(not number_forms.CORPUS.exists(), reason="the shared JSONSchemaBench corpus is not present")
def test_float_forms_of_sampled_corpus_documents_get_through(vocab: Vocabulary) -> None:
    """Documents sampled from corpus schemas, with every integer that may be a float made one
    (`3` as `3.0`), serialized as json.dumps writes them by default (`2.5e-07`, strings with
    ASCII output: `\\u00e9`, surrogate pairs): each walks through the public Guide."""
    results = [
        number_forms.measure(entry, 4, lambda text: [byte + 2 for byte in text], vocab, ascii=True)
        for entry in number_forms.corpus_sample(80, seed=11)
    ]
    walked = sum(result["walked"] for result in results)
    rejected = [(result["id"], each) for result in results for each in result["rejected"]]
    assert walked > 200
    assert [(schema, each["cause"], each["item"]) for schema, each in rejected] == []
