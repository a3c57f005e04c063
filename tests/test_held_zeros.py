"""Zeros a model writes at the end of a number's fraction are held back (core.decode.held_zeros): a
model that wants `559.40` and then `,` gets `559.4,`, one that wants `1.05` gets `1.05`. The
automaton takes `559.40` too; the zeros are dropped only where it takes the number's end
without them (not for `enum: [10.0]`), so outputs always validate, and no fraction is padded
with zeros the model chose."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

import jsonschema
import numpy as np
import numpy.typing as npt
import pytest
from conftest import EOS, FakeModel, compile_for
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gguf_extract.core.decode.decoder import Decoder
from gguf_extract.core.decode.types import SamplingSettings
from gguf_extract.core.errors import SchemaError
from gguf_extract.core.index.compiled import compile_schema
from gguf_extract.core.results.evidence import gather
from gguf_extract.core.vocab.token_table import Vocabulary

PRICE = {"type": "object", "properties": {"price": {"type": "number"}, "n": {"type": "integer"}}, "required": ["price", "n"]}
ONLY = {"type": "object", "properties": {"price": {"type": "number"}}, "required": ["price"]}
BOUNDED = {"type": "object", "properties": {"price": {"type": "number", "minimum": 0, "maximum": 1000}}, "required": ["price"]}
# Zeros after a fraction's nonzero digit, more than one zero after a point, or a bare point
# (a single `.0` is written where the automaton forces its zero: `12.` in an integer).
PADDED = re.compile(rb"\.[0-9]*[1-9]0+(?![0-9])|\.00+(?![0-9])|\.(?![0-9])")


def _byte_token(byte: int) -> int:
    return 2 + byte  # the hand vocabulary: control, end of generation, then the 256 bytes


class WantingModel(FakeModel):
    """Wants to write `wanted`, byte by byte, then to stop: while what it has evaluated is a
    prefix of `wanted`, the token of the next byte (or the end of generation) gets a logit far
    above the others; elsewhere its logits are random."""

    def __init__(self, vocab: Vocabulary, wanted: str, seed: int = 0) -> None:
        super().__init__(vocab, seed)
        self.wanted = wanted.encode()

    def written(self) -> bytes:
        return b"".join(self.vocab.pieces[t] for t in self.evaluated)

    def _logits_after(self, length: int) -> npt.NDArray[np.float32]:
        logits = super()._logits_after(length)
        seen = b"".join(self.vocab.pieces[t] for t in self.evaluated[:length])
        if self.wanted.startswith(seen):
            following = self.wanted[len(seen) : len(seen) + 1]
            logits[_byte_token(following[0]) if following else EOS] += 100.0
        return logits


def _decode(schema: Any, model: FakeModel, max_tokens: int = 64, draft_tokens: int = 6, hot: bool = False) -> tuple[str, Decoder]:
    temperature = 1.0 if hot else 0.0
    sampling = SamplingSettings(max_tokens=max_tokens, temperature=temperature, seed=model.seed, draft_tokens=draft_tokens)
    decoder = Decoder(model, compile_for(schema, model.vocab), sampling)
    return b"".join(decoder.run()).decode(), decoder


@pytest.mark.parametrize(
    ("schema", "wanted", "written"),
    [
        (PRICE, '{"price": 559.40, "n": 1}', '{"price": 559.4, "n": 1}'),
        (PRICE, '{"price": 10.00, "n": 1}', '{"price": 10, "n": 1}'),
        (PRICE, '{"price": 1.05, "n": 1}', '{"price": 1.05, "n": 1}'),
        (PRICE, '{"price": 1.0050, "n": 1}', '{"price": 1.005, "n": 1}'),
        (PRICE, '{"price": 0.0, "n": 1}', '{"price": 0, "n": 1}'),
        (PRICE, '{"price": 100, "n": 1}', '{"price": 100, "n": 1}'),
        (PRICE, '{"price": 1.0e5, "n": 1}', '{"price": 1e5, "n": 1}'),
        (BOUNDED, '{"price": 559.40}', '{"price": 559.4}'),
        (BOUNDED, '{"price": 10.00}', '{"price": 10}'),
        (BOUNDED, '{"price": 0.00005}', '{"price": 0.00005}'),
        ({"type": "number"}, "10.0", "10"),
        ({"type": "array", "items": {"type": "number"}}, "[2.50, 3.0]", "[2.5, 3]"),
        # A sign is written as the model writes it: the zeros after it are held as any others.
        (ONLY, '{"price": -0.0}', '{"price": -0}'),
        (ONLY, '{"price": -0}', '{"price": -0}'),
        (PRICE, '{"price": -0.05, "n": 1}', '{"price": -0.05, "n": 1}'),
        (PRICE, '{"price": -5.0, "n": -1}', '{"price": -5, "n": -1}'),
        ({"type": "number"}, "-0.000", "-0"),
        ({"type": "array", "items": {"type": "number"}}, "[-0.0, -1.50, -0.20]", "[-0, -1.5, -0.2]"),
        # Listed numbers in any form; zeros dropped only where the automaton takes the end without
        # them: a listed 1e15 (16 digits, beyond those a whole number is also written as) keeps `.0`.
        ({"type": "array", "items": {"enum": [2.5, 10.0]}}, "[2.50, 10.0]", "[2.5, 10]"),
        ({"enum": [1e15, "a"]}, "1000000000000000.00", "1000000000000000.0"),
        # `12.` in an integer (after draft 4) forces its `0`, chosen as the only token allowed, and held.
        ({"type": "integer", "minimum": 0}, "12.000", "12"),
        ({"type": "integer"}, "12.00", "12"),
    ],
)
@pytest.mark.parametrize("drafts", [0, 6])
def test_zeros_ending_a_fraction_are_dropped(schema: Any, wanted: str, written: str, drafts: int, vocab: Vocabulary) -> None:
    model = WantingModel(vocab, wanted)
    text, decoder = _decode(schema, model, draft_tokens=drafts)
    assert text == written
    assert wanted.encode().startswith(model.written())  # the model saw what it wrote, zeros included
    _, plain = _decode(schema, WantingModel(vocab, written), draft_tokens=drafts)
    dropped = len(wanted) - len(written)  # one token a byte here
    assert decoder.stats.output_tokens == plain.stats.output_tokens + dropped  # held tokens count against the budget


@pytest.mark.parametrize(("schema", "zeros"), [(ONLY, "0" * 17), (BOUNDED, "0" * 17), ({"type": "number"}, "0" * 17)])
def test_zeros_up_to_the_digit_limit_are_dropped(schema: Any, zeros: str, vocab: Vocabulary) -> None:
    """A fraction holds 17 digits: a model writing as many zeros may still end the number,
    also where the automaton then forces its end (BOUNDED: no exponent)."""
    wanted = f"10.{zeros}" if schema == {"type": "number"} else f'{{"price": 10.{zeros}}}'
    text, _decoder = _decode(schema, WantingModel(vocab, wanted), max_tokens=80)
    assert text == ("10" if schema == {"type": "number"} else '{"price": 10}')


def test_a_bare_point_keeps_its_first_zero(vocab: Vocabulary) -> None:
    """A token ending in a point (`0.`) is written; the zero after it is a digit the number
    needs there, the zeros after that are held as any others."""
    assert _decode({"type": "number"}, WantingModel(vocab, "100.000"))[0] == "100"  # `.` and zeros: one a token
    pieces_of = LongestTokenModel(vocab, "100.000")
    assert _decode({"type": "number"}, pieces_of)[0] == "100.0"  # `10`, `0.`, then zeros


@pytest.mark.parametrize(
    ("schema", "wanted", "written"),
    [
        ({"type": "string", "pattern": "^a0*$"}, '"a00"', '"a00"'),
        # Inside a string zeros are written as they come, even where its pattern then needs a digit.
        ({"type": "string", "pattern": "^1(\\.01)?$"}, '"1.0"', '"1.01"'),
        ({"type": "integer"}, "100", "100"),
    ],
)
def test_zeros_outside_fractions_are_written(schema: Any, wanted: str, written: str, vocab: Vocabulary) -> None:
    text, _decoder = _decode(schema, WantingModel(vocab, wanted))
    assert text == written


@pytest.mark.parametrize("bound", ["exclusiveMaximum", "maximum"])
def test_held_zeros_are_written_where_the_number_must_go_on(bound: str, vocab: Vocabulary) -> None:
    """Where 0 is out of bounds, `-0.0` cannot end: its zeros are written when the number goes
    on to a nonzero digit, as the schema demands."""
    schema = {"type": "number", bound: 0 if bound == "exclusiveMaximum" else -0.001}
    text, _decoder = _decode(schema, WantingModel(vocab, "-0.0"))
    assert text.startswith("-0.0") and float(text) < 0
    jsonschema.validate(json.loads(text), schema)


class LongestTokenModel(FakeModel):
    """Wants `wanted`: the longest token continuing it gets a logit far above the others."""

    def __init__(self, vocab: Vocabulary, wanted: str) -> None:
        super().__init__(vocab, 0)
        self.wanted = wanted.encode()

    def _logits_after(self, length: int) -> npt.NDArray[np.float32]:
        logits = super()._logits_after(length)
        seen = b"".join(self.vocab.pieces[t] for t in self.evaluated[:length])
        if self.wanted.startswith(seen):
            rest = self.wanted[len(seen) :]
            if not rest:
                logits[EOS] += 100.0
            for token, piece in enumerate(self.vocab.pieces):
                if piece and rest.startswith(piece):
                    logits[token] += 50.0 + len(piece)
        return logits


@pytest.mark.parametrize("wanted", ['[-0, "Zed"]', '[-0.0, "Zed"]', '[0.00, "Zed"]', '[0, "Zed"]'])
def test_the_token_after_held_zeros_is_read_by_grounding_after_the_written_text(wanted: str) -> None:
    """A token ending the number and opening a string (`, "Zed`) is read by grounding after the
    text written, without the held zeros, so an ungrounded string cannot slip in with it."""
    pieces = [b"", b""] + [bytes([b]) for b in range(256)] + [b', "Zed']
    vocab = Vocabulary.from_pieces(pieces, (EOS,))
    # The number is not held to the document's (core.grounding.value_holds): the string is.
    schema = {"type": "array", "items": {"anyOf": [{"type": "number", "x-grounded": False}, {"type": "string"}]}}
    compiled = compile_schema(schema, vocab, grounded=True)
    grounding = compiled.grounding("Ann 5 Bob")
    settings = SamplingSettings(max_tokens=60, seed=0, draft_tokens=0)
    text = b"".join(Decoder(LongestTokenModel(vocab, wanted), compiled, settings, grounding=grounding).run()).decode()
    assert text.startswith(wanted.split(".")[0].split(",")[0] + ", ") and "Zed" not in text
    assert all(grounded for _start, _end, grounded in grounding.bodies)


def test_dropped_zeros_still_count_for_the_confidence_of_their_number(vocab: Vocabulary) -> None:
    text, decoder = _decode(PRICE, WantingModel(vocab, '{"price": 559.40, "n": 1}'))
    output = text.encode()
    starts = [choice.start for choice in decoder.choices]
    assert starts == sorted(starts)
    assert all(0 <= choice.start <= choice.end <= len(output) for choice in decoder.choices)
    number_end = output.index(b"559.4") + len(b"559.4")
    dropped = [choice for choice in decoder.choices if choice.start == number_end - 1 and choice.end == number_end]
    assert len(dropped) == 2  # the `4`, and the `0` the model chose after it
    evidence = gather(output, None, decoder.choices)
    product = 1.0
    for choice in decoder.choices:
        if output.index(b"559") <= choice.start < number_end and choice.probability is not None:
            product *= choice.probability
    assert evidence["/price"].confidence == pytest.approx(product)


# --- any number schema, any model -----------------------------------------------------


class ZeroLovingModel(FakeModel):
    """Random logits with a pull towards `0` and `.`, and some towards `-`: it pads numbers
    whenever it may, up to the digit limits, and writes `-0.0` often."""

    def _logits_after(self, length: int) -> npt.NDArray[np.float32]:
        logits = super()._logits_after(length)
        logits[[_byte_token(ord("0")), _byte_token(ord("."))]] += 5.0
        logits[_byte_token(ord("-"))] += 3.0
        return logits


_HUNDREDTHS = st.integers(-100_000, 100_000).map(lambda n: Decimal(n) / 100)


@st.composite
def number_schemas(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": draw(st.sampled_from(["number", "number", "integer"]))}
    low, high = draw(st.one_of(st.none(), _HUNDREDTHS)), draw(st.one_of(st.none(), _HUNDREDTHS))
    if low is not None and high is not None and low > high:
        low, high = high, low
    for name, bound in (("minimum", low), ("maximum", high)):
        if bound is not None:
            exclusive = draw(st.booleans()) and low != high
            schema["exclusive" + name.capitalize() if exclusive else name] = float(bound)
    divisor = draw(st.sampled_from([None, None, 1, 5, 0.5]))
    if divisor is not None:
        schema["multipleOf"] = divisor
    return schema


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(item=number_schemas(), seed=st.integers(0, 2**16), budget=st.sampled_from([32, 60]))
# Held zeros count against the budget: they must leave room to close the array.
@example(item={"type": "number"}, seed=3610, budget=32)
def test_outputs_validate_and_no_fraction_is_padded(vocab: Vocabulary, item: dict[str, Any], seed: int, budget: int) -> None:
    items = {"type": "array", "items": item, "maxItems": 4}
    schema = {"type": "object", "properties": {"a": item, "b": items}, "required": ["a", "b"]}
    try:
        compile_for(schema, vocab)
    except SchemaError:  # no number meets the bounds, or a divisor is refused: nothing to decode
        return
    outputs = []
    for draft_tokens in (0, 6):
        text, decoder = _decode(schema, ZeroLovingModel(vocab, seed), max_tokens=budget, draft_tokens=draft_tokens, hot=True)
        jsonschema.validate(json.loads(text), schema)
        assert PADDED.search(text.encode()) is None, text
        assert decoder.stats.output_tokens <= budget
        outputs.append(text)
    assert outputs[0] == outputs[1]  # drafts change the calls, never the output
