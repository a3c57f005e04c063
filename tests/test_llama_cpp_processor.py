"""llama-cpp-python's own create_completion, held to a schema by this library's processor."""

from __future__ import annotations

import json

import jsonschema
import pytest

from gguf_extract import Extractor, SamplingSettings, TokenBudgetTooSmall, llama_cpp_logits_processor
from gguf_extract.core.model import bundled_model_path

pytestmark = pytest.mark.model

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 40},
        "age": {"type": "integer", "minimum": 0, "maximum": 130},
        "languages": {"type": "array", "items": {"enum": ["English", "French", "Italian"]}, "maxItems": 3},
    },
    "required": ["name", "age", "languages"],
    "additionalProperties": False,
}
PROMPT = (
    "<|im_start|>system\nAnswer in JSON.<|im_end|>\n<|im_start|>user\n"
    "Ada Lovelace was 36 and wrote English and French.<|im_end|>\n<|im_start|>assistant\n"
)


@pytest.fixture(scope="module")
def llm() -> object:
    from llama_cpp import Llama

    return Llama(model_path=str(bundled_model_path()), n_ctx=512, verbose=False)


@pytest.mark.parametrize("max_tokens", [None, 60])
def test_create_completion_writes_schema_valid_json(llm: object, max_tokens: int | None) -> None:
    compiled = Extractor.open().compile(SCHEMA)
    processors, stopping = llama_cpp_logits_processor(compiled, max_tokens=max_tokens)
    result = llm.create_completion(  # type: ignore[attr-defined]
        PROMPT, max_tokens=max_tokens or 300, temperature=0, logits_processor=processors, stopping_criteria=stopping
    )
    value = json.loads(result["choices"][0]["text"])
    jsonschema.validate(value, SCHEMA)
    assert result["usage"]["completion_tokens"] <= (max_tokens or 300)


def test_a_budget_the_document_barely_fits_still_closes(llm: object) -> None:
    compiled = Extractor.open().compile(SCHEMA)
    shortest = len('{"name": "", "age": 0, "languages": []}')  # each byte may take a token
    processors, stopping = llama_cpp_logits_processor(compiled, max_tokens=shortest)
    result = llm.create_completion(  # type: ignore[attr-defined]
        PROMPT, max_tokens=shortest, temperature=0, logits_processor=processors, stopping_criteria=stopping
    )
    jsonschema.validate(json.loads(result["choices"][0]["text"]), SCHEMA)


PAIR = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name", "age"]}


def test_a_budget_below_the_shortest_document_is_refused_as_extract_refuses_it() -> None:
    """The shortest document here, {"name": "", "age": 0}, is 22 bytes; a budget of 12 let
    llama-cpp-python return '' with finish reason 'stop'. Now the pair is refused when made,
    with the error (and message) extract gives for the same budget."""
    extractor = Extractor.open()
    compiled = extractor.compile(PAIR)
    with pytest.raises(TokenBudgetTooSmall) as refusal:
        llama_cpp_logits_processor(compiled, max_tokens=12)
    with pytest.raises(TokenBudgetTooSmall) as extract_refusal:
        "".join(extractor.extract(compiled, "Ada Lovelace, 36.", SamplingSettings(max_tokens=12)))
    assert (refusal.value.max_tokens, refusal.value.shortest) == (12, 22)
    assert (str(refusal.value), refusal.value.hint) == (str(extract_refusal.value), extract_refusal.value.hint)


@pytest.mark.parametrize(("max_tokens", "error"), [(0, ValueError), (-5, ValueError), ("x", TypeError)])
def test_a_budget_that_is_not_a_positive_whole_number_is_refused(max_tokens: object, error: type[Exception]) -> None:
    compiled = Extractor.open().compile(PAIR)
    with pytest.raises(error, match=r"^max_tokens must be a"):
        llama_cpp_logits_processor(compiled, max_tokens=max_tokens)  # type: ignore[arg-type]


@pytest.mark.parametrize("max_tokens", [None, 60])
def test_one_pair_serves_one_completion_after_another(llm: object, max_tokens: int | None) -> None:
    """The same prompt again (llama-cpp-python reuses its cached evaluation), then a chat's next
    turn, whose prompt holds the first answer: each a whole document within the whole budget.
    A reused pair returned '' before."""
    compiled = Extractor.open().compile(SCHEMA)
    processors, stopping = llama_cpp_logits_processor(compiled, max_tokens=max_tokens)
    turn = "<|im_end|>\n<|im_start|>user\nAlan Turing was 41 and wrote English.<|im_end|>\n<|im_start|>assistant\n"
    prompt, texts = PROMPT, []
    for _ in range(3):
        result = llm.create_completion(  # type: ignore[attr-defined]
            prompt, max_tokens=max_tokens or 300, temperature=0, logits_processor=processors, stopping_criteria=stopping
        )
        choice = result["choices"][0]
        jsonschema.validate(json.loads(choice["text"]), SCHEMA)
        assert choice["finish_reason"] == "stop"
        assert result["usage"]["completion_tokens"] <= (max_tokens or 300)
        texts.append(choice["text"])
        prompt = PROMPT if len(texts) == 1 else PROMPT + texts[0] + turn
    assert texts[1] == texts[0]  # greedy, and the same prompt


def test_a_llama_with_a_draft_model_is_refused() -> None:
    """llama-cpp-python hands logits processors a draft model's guesses along with the token
    sampled; read as output they broke the document. The stopping criterion refuses instead."""
    from llama_cpp import Llama
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    drafting = Llama(
        model_path=str(bundled_model_path()), n_ctx=512, verbose=False, draft_model=LlamaPromptLookupDecoding(num_pred_tokens=10)
    )
    processors, stopping = llama_cpp_logits_processor(Extractor.open().compile(PAIR), max_tokens=100)
    prompt = PROMPT.replace("<|im_end|>", ' Answer: {"name": "Ada Lovelace", "age": 36}<|im_end|>', 1)  # something to copy
    with pytest.raises(ValueError, match="draft_model"):
        drafting.create_completion(prompt, max_tokens=100, temperature=0, logits_processor=processors, stopping_criteria=stopping)
