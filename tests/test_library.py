"""The library API as docs/library.md documents it, on the bundled model."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from gguf_extract import DocumentError, Extractor, SamplingSettings, UnsupportedSchema

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def extractor() -> Extractor:
    return Extractor.open()


def test_readme_library_example(extractor: Extractor) -> None:
    schema = json.loads((ROOT / "schemas" / "person.json").read_text())
    compiled = extractor.compile(schema)
    run = extractor.extract(compiled, document="Ada Lovelace, 36, mathematician in London.")
    chunks = list(run)
    assert len(chunks) > 3 and "".join(chunks) == run.text
    jsonschema.validate(run.value, schema)
    assert run.stats.forced_tokens > 0 and run.stats.output_tokens == run.stats.sampled_tokens + run.stats.forced_tokens


def test_extract_prompt_given_as_is(extractor: Extractor) -> None:
    compiled = extractor.compile({"type": "object", "properties": {"answer": {"enum": ["yes", "no"]}}, "required": ["answer"]})
    prompt = "<|im_start|>user\nIs the sky blue? Answer in JSON.<|im_end|>\n<|im_start|>assistant\n"
    run = extractor.extract_prompt(compiled, prompt, SamplingSettings(max_tokens=20))
    assert run.run() in ({"answer": "yes"}, {"answer": "no"})
    assert run.stats.sampled_tokens == 1  # only the yes/no choice is asked of the model


def test_cursor_follows_the_vocabulary(extractor: Extractor) -> None:
    compiled = extractor.compile({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    assert compiled.guide(every_valid_text=True).forced_text() == b'{"'  # an undeclared property may come first
    cursor = compiled.guide()
    assert cursor.forced_text() == b'{"n": '
    for token in extractor.tokenizer.tokenize(b'{"n": 42}'):
        assert token in cursor.allowed_token_ids()
        cursor.advance(token)
    assert cursor.is_finished()
    allowed = cursor.allowed_token_ids()
    assert isinstance(allowed, np.ndarray) and set(allowed.tolist()) == set(extractor.vocabulary.eog_ids)


def test_errors_are_raised_before_generation(extractor: Extractor) -> None:
    with pytest.raises(UnsupportedSchema):
        extractor.compile({"type": "string", "pattern": "(?=a)b"})
    with pytest.raises(DocumentError):
        extractor.extract(extractor.compile({"type": "integer"}), document="   ")
