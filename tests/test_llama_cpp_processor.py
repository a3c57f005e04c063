"""llama-cpp-python's own create_completion, held to a schema by this library's processor."""

from __future__ import annotations

import json

import jsonschema
import pytest

from gguf_extract import Extractor, llama_cpp_logits_processor
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
