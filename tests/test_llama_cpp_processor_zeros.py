"""The llama-cpp-python processor masks with the Guide alone, and the automaton takes every
number text whose value the schema allows: a model that wants `559.40` and then `,` writes
exactly that, never forced on to another digit (`559.401`: valid, and a wrong value).
llama-cpp-python writes every token it sampled, so its text is the model's. The loop below
is llama-cpp-python's own, in small: processors, then the greedy choice, then the stopping
criteria."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import jsonschema
import numpy as np
import pytest
from conftest import EOS, compile_for
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_extract import llama_cpp_logits_processor
from gguf_extract.core.vocab.token_table import Vocabulary

PRICE = {"type": "object", "properties": {"price": {"type": "number"}, "n": {"type": "integer"}}, "required": ["price", "n"]}
BOUNDED = {"type": "object", "properties": {"price": {"type": "number", "minimum": 0, "maximum": 1000}}, "required": ["price"]}
PROMPT = [0, 0, 0]  # three prompt tokens: the processor reads everything after them as output


def complete(schema: Any, wanted: str, vocab: Vocabulary, max_tokens: int | None = None) -> str:
    """Greedy generation through the processor by a model that wants `wanted`, byte by byte,
    then the end of generation (elsewhere it prefers the token of `9`)."""
    processors, stopping = llama_cpp_logits_processor(compile_for(schema, vocab), max_tokens=max_tokens)
    wanted_bytes, output = wanted.encode(), b""
    ids = list(PROMPT)
    for _ in range(max_tokens or 200):
        scores = np.zeros(vocab.size, dtype=np.single)
        scores[2 + ord("9")] = 1.0
        if wanted_bytes.startswith(output):
            following = wanted_bytes[len(output) : len(output) + 1]
            scores[2 + following[0] if following else EOS] = 100.0
        masked = processors(np.asarray(ids, dtype=np.intc), scores)
        token = int(np.argmax(masked))
        assert masked[token] > -np.inf
        if token == EOS:
            break
        ids.append(token)
        output += vocab.pieces[token]
        if stopping(np.asarray(ids, dtype=np.intc), masked):
            break
    return output.decode()


@pytest.mark.parametrize(
    ("schema", "wanted"),
    [
        (PRICE, '{"price": 559.40, "n": 1}'),
        (PRICE, '{"price": 10.00, "n": 1}'),
        (PRICE, '{"price": 1.0050, "n": 1}'),
        (PRICE, '{"price": 0.0, "n": 1}'),
        (BOUNDED, '{"price": 559.40}'),
        ({"type": "number"}, "10.0"),
        ({"type": "array", "items": {"type": "number"}}, "[2.50, 3.0]"),
        (PRICE, '{"price": -0.050, "n": -1}'),
        (PRICE, '{"price": -0.0, "n": -0}'),
        (PRICE, '{"price": 1E+05, "n": 1.0}'),
        (BOUNDED, '{"price": 10.00}'),
    ],
)
@pytest.mark.parametrize("max_tokens", [None, 40])
def test_a_fraction_may_end_in_the_zeros_the_model_wants(
    schema: Any, wanted: str, max_tokens: int | None, vocab: Vocabulary
) -> None:
    text = complete(schema, wanted, vocab, max_tokens)
    assert text == wanted
    jsonschema.validate(json.loads(text), schema)


@pytest.mark.parametrize("number", ["-00", "-0.", "10.", "-0.0"])
def test_what_llama_cpp_python_writes_is_json(number: str, vocab: Vocabulary) -> None:
    """Its text keeps every token sampled: `-00` and `10.` are not JSON, so the mask has the
    model write something else there (`-0`, a digit after the point)."""
    text = complete(PRICE, f'{{"price": {number}, "n": 1}}', vocab, 40)
    value = json.loads(text)
    jsonschema.validate(value, PRICE)


def test_zeros_up_to_the_digit_limit_may_end_the_number(vocab: Vocabulary) -> None:
    """A fraction holds 17 digits: a model writing as many zeros ends the number there, not
    on a digit it did not want."""
    wanted = '{"price": 10.' + "0" * 17 + "}"
    assert complete(BOUNDED, wanted, vocab) == wanted


def test_zeros_inside_strings_are_not_held(vocab: Vocabulary) -> None:
    schema = {"type": "string", "pattern": "^1(\\.01)?$"}
    assert complete(schema, '"1.0"', vocab) == '"1.01"'  # a pattern may give zeros a meaning


@settings(max_examples=60, deadline=None)
@given(
    whole=st.integers(0, 999),
    fraction=st.text("0123456789", max_size=4),
    zeros=st.integers(1, 3),
)
def test_the_value_written_is_the_value_wanted(whole: int, fraction: str, zeros: int, vocab: Vocabulary) -> None:
    number = f"{whole}.{fraction}{'0' * zeros}"
    text = complete(PRICE, f'{{"price": {number}, "n": 2}}', vocab)
    value = json.loads(text, parse_float=Decimal)
    assert value["price"] == Decimal(number) and value["n"] == 2
    jsonschema.validate(json.loads(text), PRICE)


@settings(max_examples=60, deadline=None)
@given(
    wanted=st.lists(st.sampled_from(["-", "0", ".", "5", "00", "-0", "0."]), min_size=1, max_size=6).map("".join),
    ending=st.sampled_from([", ", "]"]),
)
def test_any_run_of_signs_points_and_zeros_gives_json(wanted: str, ending: str, vocab: Vocabulary) -> None:
    """Whatever mix of signs, points and zeros a model wants in a number, llama-cpp-python's
    text is JSON that validates."""
    schema = {"type": "array", "items": {"type": "number"}, "maxItems": 3}
    text = complete(schema, f"[{wanted}{ending}", vocab, 40)
    jsonschema.validate(json.loads(text), schema)
