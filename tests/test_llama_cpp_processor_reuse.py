"""The llama-cpp-python processor pair: what it refuses when made, and one pair serving one
completion after another. The loop below is llama-cpp-python's own (0.3.x `Llama.generate`),
in small: the processors see the prompt and every token evaluated so far; the stopping
criteria see the same tokens, before the one just sampled is evaluated; an end-of-generation
token ends the completion without being evaluated."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import numpy as np
import pytest
from conftest import EOS, compile_for

from gguf_extract import TokenBudgetTooSmall, llama_cpp_logits_processor
from gguf_extract.core.index.compiled import CompiledSchema
from gguf_extract.core.integrations.llama_cpp_processor import LogitsProcessorList, StoppingCriteriaList
from gguf_extract.core.vocab.token_table import Vocabulary

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
SHORTEST = len('{"name": "", "age": 0}')  # 22 bytes: the fewest the schema allows
PROMPT = [0, 0, 0]  # three prompt tokens


def byte_tokens(text: str) -> list[int]:
    return [2 + byte for byte in text.encode()]  # the hand vocabulary's single-byte tokens


def complete(
    pair: tuple[LogitsProcessorList, StoppingCriteriaList], prompt: list[int], wanted: str, vocab: Vocabulary, limit: int
) -> tuple[str, list[int]]:
    """Greedy generation by a model that wants `wanted`, byte by byte, then the end (elsewhere
    it prefers `9`): the text and the completion's tokens."""
    processors, stopping = pair
    ids, output = list(prompt), b""
    for _ in range(limit):
        scores = np.zeros(vocab.size, dtype=np.single)
        scores[2 + ord("9")] = 1.0
        if wanted.encode().startswith(output):
            following = wanted.encode()[len(output) : len(output) + 1]
            scores[2 + following[0] if following else EOS] = 100.0
        masked = processors(np.asarray(ids, dtype=np.intc), scores)
        token = int(np.argmax(masked))
        assert masked[token] > -np.inf, "the processor allowed nothing"
        if stopping(np.asarray(ids, dtype=np.intc), masked) or token == EOS:
            break
        ids.append(token)
        output += vocab.pieces[token]
    return output.decode(), ids[len(prompt) :]


@pytest.fixture(scope="module")
def compiled(vocab: Vocabulary) -> CompiledSchema:
    return compile_for(PERSON, vocab)


@pytest.mark.parametrize("max_tokens", [SHORTEST - 1, 12, 1])
def test_a_budget_below_the_shortest_document_is_refused_when_the_pair_is_made(compiled: CompiledSchema, max_tokens: int) -> None:
    with pytest.raises(TokenBudgetTooSmall) as refusal:
        llama_cpp_logits_processor(compiled, max_tokens=max_tokens)
    assert (refusal.value.max_tokens, refusal.value.shortest) == (max_tokens, SHORTEST)
    assert str(refusal.value) == (
        f"the shortest document this schema allows is {SHORTEST} bytes, which may take {SHORTEST} tokens:"
        f" {SHORTEST - max_tokens} more than the token budget of {max_tokens} (max_tokens)"
    )
    assert refusal.value.hint == f"raise max_tokens to at least {SHORTEST}"
    assert isinstance(refusal.value, ValueError)  # a value of the caller's that cannot be kept


@pytest.mark.parametrize("max_tokens", [SHORTEST, np.int64(SHORTEST), None])
def test_a_budget_the_shortest_document_fits_is_taken(compiled: CompiledSchema, vocab: Vocabulary, max_tokens: Any) -> None:
    pair = llama_cpp_logits_processor(compiled, max_tokens=max_tokens)
    text, _ = complete(pair, PROMPT, '{"name": "Ada", "age": 36}', vocab, 60)
    jsonschema.validate(json.loads(text), PERSON)


@pytest.mark.parametrize(
    ("max_tokens", "error", "message"),
    [
        (0, ValueError, "max_tokens must be a positive number of tokens, or None for no budget, not 0"),
        (-5, ValueError, "max_tokens must be a positive number of tokens, or None for no budget, not -5"),
        ("x", TypeError, "max_tokens must be a whole number of tokens, or None for no budget, not 'x' (str)"),
        (True, TypeError, "max_tokens must be a whole number of tokens, or None for no budget, not True (bool)"),
        (30.0, TypeError, "max_tokens must be a whole number of tokens, or None for no budget, not 30.0 (float)"),
    ],
)
def test_a_budget_that_is_not_a_positive_whole_number_is_refused(
    compiled: CompiledSchema, max_tokens: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as refusal:
        llama_cpp_logits_processor(compiled, max_tokens=max_tokens)
    assert str(refusal.value) == message
    assert not isinstance(refusal.value, TokenBudgetTooSmall)


@pytest.mark.parametrize("max_tokens", [None, SHORTEST])
def test_one_pair_serves_one_completion_after_another(
    compiled: CompiledSchema, vocab: Vocabulary, max_tokens: int | None
) -> None:
    """Each completion starts a new document, with the whole budget: the same prompt again
    (llama-cpp-python's cache of it included), then another prompt."""
    pair = llama_cpp_logits_processor(compiled, max_tokens=max_tokens)
    first, _ = complete(pair, PROMPT, '{"name": "", "age": 1}', vocab, 60)
    again, _ = complete(pair, PROMPT, '{"name": "", "age": 1}', vocab, 60)
    other, _ = complete(pair, [0, 0], '{"name": "", "age": 7}', vocab, 60)
    assert (first, again, other) == ('{"name": "", "age": 1}', '{"name": "", "age": 1}', '{"name": "", "age": 7}')


def test_a_prompt_going_on_after_a_finished_document_starts_a_new_one(compiled: CompiledSchema, vocab: Vocabulary) -> None:
    """A chat's next turn: the prompt holds the last answer and more. Its tokens are the new
    prompt, not more output after a document that was complete."""
    pair = llama_cpp_logits_processor(compiled)
    first, tokens = complete(pair, PROMPT, '{"name": "Ada", "age": 36}', vocab, 60)
    turn = PROMPT + tokens + byte_tokens("\nAnd Alan?\n")
    second, _ = complete(pair, turn, '{"name": "Alan", "age": 41}', vocab, 60)
    assert (first, second) == ('{"name": "Ada", "age": 36}', '{"name": "Alan", "age": 41}')


def test_a_completion_cut_short_is_not_read_as_the_next_ones_output(compiled: CompiledSchema, vocab: Vocabulary) -> None:
    """llama-cpp-python's own max_tokens ended the first document unfinished; the next prompt
    holds it and more, which the processor must not take for output (not JSON after `"Ad`)."""
    pair = llama_cpp_logits_processor(compiled)
    cut, tokens = complete(pair, PROMPT, '{"name": "Ada", "age": 36}', vocab, 12)
    assert cut == '{"name": "Ad'
    turn = PROMPT + tokens + byte_tokens("...\nAgain, in JSON:\n")
    second, _ = complete(pair, turn, '{"name": "Alan", "age": 41}', vocab, 60)
    assert second == '{"name": "Alan", "age": 41}'


def test_a_draft_models_guesses_are_refused(compiled: CompiledSchema, vocab: Vocabulary) -> None:
    """With a draft_model, llama-cpp-python hands the processor the sampled token and the
    draft's guesses after it, and the stopping criteria only what was sampled: the criterion
    raises rather than the guesses being read as output."""
    processors, stopping = llama_cpp_logits_processor(compiled)
    scores = np.zeros(vocab.size, dtype=np.single)
    prompt = np.asarray(PROMPT, dtype=np.intc)
    processors(prompt, scores)
    assert not stopping(prompt, scores)
    drafted = np.asarray(PROMPT + byte_tokens('{"na'), dtype=np.intc)  # `{` sampled, then three guesses
    processors(drafted, scores)
    with pytest.raises(ValueError, match=r"^the logits processor was given 3 tokens not yet sampled \(a draft_model's guesses\)"):
        stopping(drafted[: len(PROMPT) + 1], scores)
