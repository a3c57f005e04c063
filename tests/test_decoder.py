"""The decoding loop driven by a fake model with random logits: it always ends in valid JSON
inside its budget, forced text is never sampled, and budgets too small are refused."""

from __future__ import annotations

import json

import jsonschema
import pytest
from conftest import FakeModel, compile_for

from gguf_extract.core.decode import Decoder, SamplingSettings
from gguf_extract.core.errors import GenerationError
from gguf_extract.core.vocab import Vocabulary

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


def decode(vocab: Vocabulary, seed: int, max_tokens: int, temperature: float = 1.0) -> tuple[str, Decoder, FakeModel]:
    compiled = compile_for(SCHEMA, vocab)
    model = FakeModel(vocab, seed)
    decoder = Decoder(model, compiled, SamplingSettings(max_tokens=max_tokens, temperature=temperature, seed=seed))
    text = b"".join(decoder.run()).decode("utf-8")
    return text, decoder, model


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("max_tokens", [48, 200])
def test_random_models_always_finish_valid_inside_budget(vocab: Vocabulary, seed: int, max_tokens: int) -> None:
    text, decoder, model = decode(vocab, seed, max_tokens)
    jsonschema.validate(json.loads(text), SCHEMA, format_checker=jsonschema.FormatChecker())
    assert decoder.stats.output_tokens <= max_tokens
    evaluated = b"".join(vocab.pieces[t] for t in model.evaluated)
    assert text.encode().startswith(evaluated)


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
