"""The decoding loop driven by a fake model with random logits: it always ends in valid JSON
inside its budget, forced text is never sampled, and budgets too small are refused."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import jsonschema
import numpy as np
import numpy.typing as npt
import pytest
from conftest import FakeModel, compile_for

from gguf_extract.core.decode.decoder import Decoder
from gguf_extract.core.decode.types import SamplingSettings
from gguf_extract.core.errors import GenerationError
from gguf_extract.core.vocab.token_table import Vocabulary

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0, "maximum": 130},
        "tags": {"type": "array", "items": {"enum": ["ab", "abc", "日本"]}},
        "ok": {"type": "boolean"},
        "when": {"type": "string", "format": "date"},
    },
    "required": ["name", "tags", "when"],
}


def decode(
    vocab: Vocabulary,
    seed: int,
    max_tokens: int,
    temperature: float = 1.0,
    draft_tokens: int = 6,
    model: FakeModel | None = None,
    seen: Sequence[int] = (),
) -> tuple[str, Decoder, FakeModel]:
    compiled = compile_for(SCHEMA, vocab)
    model = model or FakeModel(vocab, seed)
    settings = SamplingSettings(max_tokens=max_tokens, temperature=temperature, seed=seed, draft_tokens=draft_tokens)
    decoder = Decoder(model, compiled, settings, seen=seen)
    text = b"".join(decoder.run()).decode("utf-8")
    return text, decoder, model


class CopyingModel(FakeModel):
    """Random logits plus a strong pull towards the token that followed the latest earlier
    occurrence of the last token: it copies, as extraction models do, so drafts get accepted."""

    def __init__(self, vocab: Vocabulary, seed: int, document: list[int]) -> None:
        super().__init__(vocab, seed)
        self.evaluated = list(document)

    def _logits_after(self, length: int) -> npt.NDArray[np.float32]:
        logits = super()._logits_after(length)
        context = self.evaluated[:length]
        for start in range(len(context) - 2, -1, -1):
            if context[start] == context[-1]:
                logits[context[start + 1]] += 8.0
                break
        return logits


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("max_tokens", [48, 200])
def test_random_models_always_finish_valid_inside_budget(vocab: Vocabulary, seed: int, max_tokens: int) -> None:
    text, decoder, model = decode(vocab, seed, max_tokens)
    jsonschema.validate(json.loads(text), SCHEMA, format_checker=jsonschema.FormatChecker())
    assert decoder.stats.output_tokens <= max_tokens
    evaluated = b"".join(vocab.pieces[t] for t in model.evaluated)
    assert short_numbers(text.encode()).startswith(short_numbers(evaluated))  # held zeros are evaluated, not written


def short_numbers(text: bytes) -> bytes:
    """`text` with the zeros that end each fraction, and a point left bare, taken out."""
    return re.sub(rb"(?<=[0-9])\.(?![0-9])", b"", re.sub(rb"(\.[0-9]*?)0+(?![0-9])", rb"\1", text))


def test_forced_text_is_evaluated_in_batches_not_sampled(vocab: Vocabulary) -> None:
    text, decoder, _model = decode(vocab, 3, 200, temperature=0.0)
    assert text.startswith('{"name": "')
    assert decoder.stats.forced_tokens > 0
    assert decoder.stats.model_calls < decoder.stats.output_tokens


def test_budget_below_the_shortest_document_is_refused_before_generating(vocab: Vocabulary) -> None:
    with pytest.raises(GenerationError, match="shortest document"):
        decode(vocab, 0, 10)


def test_same_seed_same_output(vocab: Vocabulary) -> None:
    assert decode(vocab, 11, 120)[0] == decode(vocab, 11, 120)[0]


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_drafts_change_the_calls_never_the_output(vocab: Vocabulary, seed: int, temperature: float) -> None:
    """Speculation keeps exactly the tokens the model would have chosen one by one: the
    same text, the same tokens left in the model's context, the same random draws."""
    document = FakeModel(vocab, 0).tokenize(b'{"name": "John abc", "tags": ["abc", "ab"], "when": "2024-01-02"}')
    runs = [decode(vocab, seed, 120, temperature, drafts, CopyingModel(vocab, seed, document), document) for drafts in (0, 1, 6)]
    (plain, plain_decoder, plain_model), *drafted = runs
    for text, decoder, model in drafted:
        assert text == plain
        kept = len(model.evaluated) - decoder.tokens_to_forget  # a guess rejected at the end goes with the sequence
        assert model.evaluated[:kept] == plain_model.evaluated and plain_decoder.tokens_to_forget == 0
        assert decoder.stats.output_tokens == plain_decoder.stats.output_tokens
        assert decoder.stats.model_calls <= plain_decoder.stats.model_calls
    jsonschema.validate(json.loads(plain), SCHEMA, format_checker=jsonschema.FormatChecker())


def test_drafts_copied_from_the_document_are_accepted(vocab: Vocabulary) -> None:
    document = FakeModel(vocab, 0).tokenize(b'{"name": "John abc abc", "tags": ["abc", "ab", "abc"], "when": "2024-01-02"}')
    totals = {"plain": 0, "drafted": 0, "accepted": 0}
    for seed in range(10):
        plain = decode(vocab, seed, 200, 0.0, 0, CopyingModel(vocab, seed, document), document)[1]
        drafted = decode(vocab, seed, 200, 0.0, 6, CopyingModel(vocab, seed, document), document)[1]
        totals["plain"] += plain.stats.model_calls
        totals["drafted"] += drafted.stats.model_calls
        totals["accepted"] += drafted.stats.accepted_draft_tokens
    assert totals["accepted"] > 0
    assert totals["drafted"] < totals["plain"]


def test_long_forced_runs_never_overfill_a_speculative_batch(vocab: Vocabulary) -> None:
    keys = {f"field_number_{i:02d}_with_a_long_name": {"type": "string", "maxLength": 3} for i in range(12)}
    schema = {"type": "object", "properties": keys, "required": sorted(keys)}
    compiled = compile_for(schema, vocab)
    text = '{"' + '", "'.join(f'{k}": "ab' for k in keys) + '"}'
    document = FakeModel(vocab, 0).tokenize(text.encode())
    for seed in range(5):
        model = CopyingModel(vocab, seed, document)
        decoder = Decoder(model, compiled, SamplingSettings(max_tokens=900, temperature=0.0, seed=seed), seen=document)
        jsonschema.validate(json.loads(b"".join(decoder.run())), schema)


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("max_tokens", [48, 60, 200])
def test_greedy_choice_without_listing_the_allowed_tokens_is_the_full_choice(
    vocab: Vocabulary, seed: int, max_tokens: int
) -> None:
    """Greedy decoding takes the model's first choice where it is allowed without listing the
    tokens allowed; a temperature too small to choose anything but the highest allowed score
    goes the full way. Both write the same text with the same confidences, and see the budget
    bind at the same place."""
    greedy, quick, _ = decode(vocab, seed, max_tokens, temperature=0.0)
    listed, full, _ = decode(vocab, seed, max_tokens, temperature=1e-9)
    assert greedy == listed
    assert quick.choices == full.choices
    assert quick.budget_bound_at == full.budget_bound_at
    assert quick.stats.sampled_tokens == full.stats.sampled_tokens


@pytest.mark.parametrize("seed", range(10))
def test_a_temperature_too_small_to_divide_by_decodes_as_greedy_decoding_does(vocab: Vocabulary, seed: int) -> None:
    greedy, quick, _ = decode(vocab, seed, 200, temperature=0.0)
    tiny, full, _ = decode(vocab, seed, 200, temperature=1e-320)
    assert tiny == greedy and full.choices == quick.choices
