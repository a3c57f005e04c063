"""The span evidence gives a grounded string is one of the occurrences grounding followed while
the string was written (kept when it closes), not one a second search of the document finds,
with the fake model over the hand-made vocabulary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from conftest import FakeModel, searched_record
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gguf_extract.core.decode.decoder import Decoder
from gguf_extract.core.decode.types import SamplingSettings
from gguf_extract.core.extract.extractor import Extractor, ModelOptions
from gguf_extract.core.grounding.document_search import DocumentSearch
from gguf_extract.core.grounding.follower import Grounding
from gguf_extract.core.grounding.record import GroundedBody, GroundingRecord
from gguf_extract.core.grounding.tables import GroundingText, byte_origins, collapse_whitespace
from gguf_extract.core.index.compiled import compile_schema
from gguf_extract.core.results.evidence import ValueEvidence, gather
from gguf_extract.core.vocab.token_table import Vocabulary

ROOT = Path(__file__).resolve().parent.parent
NAMES = {"type": "array", "items": {"type": "string"}, "maxItems": 4}


class ScriptedModel(FakeModel):
    """The fake model steered to write `script`: the tokens that continue it outweigh the rest."""

    def __init__(self, vocab: Vocabulary, seed: int, script: bytes) -> None:
        super().__init__(vocab, seed)
        self.script = script

    def _logits_after(self, length: int) -> npt.NDArray[np.float32]:
        logits = super()._logits_after(length)
        written = b"".join(self.vocab.pieces[token] for token in self.evaluated[:length])
        rest = self.script[len(written) :] if self.script.startswith(written) else b""
        logits[[bool(piece) and rest.startswith(piece) for piece in self.vocab.pieces]] += 100.0
        return logits


def decode(model: FakeModel, schema: Any, document: str) -> tuple[bytes, Grounding, dict[str, ValueEvidence]]:
    compiled = compile_schema(schema, model.vocab, grounded=True)
    grounding = compiled.grounding(document)
    assert grounding is not None
    decoder = Decoder(model, compiled, SamplingSettings(max_tokens=400, seed=model.seed), grounding=grounding)
    output = b"".join(decoder.run())
    evidence = gather(output, document, decoder.choices, searched_record(grounding, followed=True))
    return output, grounding, evidence


def test_the_span_is_the_followed_occurrence_nearest_the_previous_value(vocab: Vocabulary) -> None:
    """Where a word occurs more often than a search of the document looks at (4096 times at
    word edges), the search stops short of the occurrence beside the previous value; grounding
    followed every occurrence, so the span is the nearest of them, after `John`."""
    document = "ab " * 4100 + "John ab"
    output, grounding, evidence = decode(ScriptedModel(vocab, 0, b'["John", "ab"]'), NAMES, document)
    assert output == b'["John", "ab"]'
    john, after = document.index("John"), len(document) - 2
    assert evidence["/0"].span == (john, john + 4) and evidence["/0"].grounded is True
    assert evidence["/1"].span == (after, after + 2) and evidence["/1"].grounded is True
    assert (after, after + 2) in grounding.followed_spans()[1] and len(grounding.followed_spans()[1]) == 4101
    searched = DocumentSearch(document).span("ab", john + 4)
    assert searched is not None and searched[0] < john  # what evidence gave before: far from the value before it
    assert gather(output, document, [], searched_record(grounding))["/1"].span == searched


def test_a_released_string_falls_back_to_the_search(vocab: Vocabulary) -> None:
    """A string released from grounding followed no occurrence to its close: its span is
    searched for, as for any ungrounded value."""
    output = b'["John", "ab"]'
    evidence = gather(output, "ab John", [], GroundingRecord((GroundedBody(2, 6, False), GroundedBody(10, 12, True, ((0, 2),)))))
    assert evidence["/0"] == ValueEvidence((3, 7), None, False)
    assert evidence["/1"] == ValueEvidence((0, 2), None, True)


UNSEEN = ["\x01", "\u200b", "\ufeff"]
DOCUMENTS = st.lists(st.sampled_from([*'ab John日.-12 \n"\\', "John", "ab", *UNSEEN]), min_size=1, max_size=24).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=DOCUMENTS, seed=st.integers(0, 2**16))
@example(document="ab John ab\nab", seed=3)
@example(document='a "John" \\ ab', seed=0)
def test_every_grounded_span_is_an_occurrence_grounding_kept(vocab: Vocabulary, document: str, seed: int) -> None:
    output, grounding, evidence = decode(FakeModel(vocab, seed), NAMES, document)
    value = json.loads(output)
    followed = grounding.followed_spans()
    assert len(followed) == len(grounding.bodies) == len(value)
    for index, (item, spans, (_, _, grounded)) in enumerate(zip(value, followed, grounding.bodies, strict=True)):
        found = evidence[f"/{index}"]
        assert found.grounded is grounded
        if not grounded or not item:
            assert spans == ()
            continue
        assert found.span in spans
        for start, end in spans:  # each kept occurrence is the value, whitespace runs aside
            assert collapse_whitespace(document[start:end]) == item


@settings(max_examples=300, deadline=None)
@given(document=DOCUMENTS)
def test_each_byte_of_the_laid_out_document_comes_from_its_character(document: str) -> None:
    text = GroundingText.of(document)
    origins = byte_origins(document)
    assert len(origins) == len(text.escaped)
    laid_out = text.escaped.decode("utf-8")
    at = 0
    for character in laid_out.replace('\\"', '"').replace("\\\\", "\\"):
        source = document[origins[at]]
        assert source == character or (character in " \x00" and (source.isspace() or not source.isprintable()))
        at += len(json.dumps(character, ensure_ascii=False)[1:-1].encode()) if character in '"\\' else len(character.encode())


@pytest.mark.model
def test_with_truncate_grounding_and_evidence_see_the_head_the_model_saw() -> None:
    """A document cut to its head to fit the context: grounding holds strings to the head, and
    evidence finds values in it, never in the tail the model did not see."""
    extractor = Extractor.open(options=ModelOptions(n_ctx=512))
    compiled = extractor.compile(json.loads((ROOT / "schemas" / "person.json").read_text()), grounded=True)
    document = "Ada Lovelace is 36, a mathematician. " + "Nothing else to say here. " * 400 + "Ada Byron, 37, poet, London."
    extraction = extractor.extract(compiled, document, SamplingSettings(max_tokens=100), truncate=True)
    head = extraction.document
    assert extraction.stats.document_tokens_dropped > 0
    assert head is not None and len(head) < len(document) and document.startswith(head)
    assert f"{head}<|im_end|>" in extraction.prompt  # the head is the prompt's document text
    extraction.run()
    for pointer, found in extraction.evidence.items():
        assert found.span is None or found.span[1] <= len(head), pointer
        value = extraction.value[pointer[1:]]
        if found.grounded and isinstance(value, str):
            assert value in head, pointer
