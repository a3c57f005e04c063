"""Shared fixtures: a hand-made byte-level vocabulary and a fake model for decoder tests."""

from __future__ import annotations

import json
import random
import signal
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.decode import decoder as decoder_module
from gguf_extract.core.decode.decoder import LARGEST_DRAFT_BATCH, Decoder
from gguf_extract.core.decode.sampling import share
from gguf_extract.core.decode.types import SamplingSettings
from gguf_extract.core.grounding.follower import Grounding
from gguf_extract.core.grounding.record import GroundingRecord
from gguf_extract.core.index.compiled import CompiledSchema, compile_schema
from gguf_extract.core.index.guide import new_bitmask
from gguf_extract.core.vocab.token_table import Vocabulary


@pytest.fixture(scope="session", autouse=True)
def signals_reach_the_commands_under_test() -> None:
    """A suite started in the background (`cmd &`) inherits an ignored SIGINT, and so would
    every command it starts (an ignored signal stays ignored across exec, and the command
    rightly keeps it so): the interrupt tests must run their commands as a terminal would. A
    handler, unlike SIG_IGN, is reset to the default in the child."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session", autouse=True)
def private_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The suite never reads or writes the user's own cache."""
    mp = pytest.MonkeyPatch()
    mp.setenv("EXTRACT_CACHE_DIR", str(tmp_path_factory.mktemp("extract-cache")))
    yield
    mp.undo()


MULTI_BYTE_TOKENS = [
    '{"',
    '"}',
    '":',
    '": ',
    ' "',
    '",',
    '", "',
    "name",
    "age",
    "na",
    "me",
    "ag",
    "true",
    "false",
    "null",
    "12",
    "199",
    "-0",
    "0.",
    "e+",
    "]",
    "[]",
    ", ",
    "ab",
    "abc",
    "John",
    " John",
    "é",
    "日本",
    "2024",
    "-01-",
    "T1",
    ":00",
    'Z"',
    "\\n",
    "\\u00",
    "\\",
    "items",
    '["',
    '"]',
]
CONTROL = 0  # a control token: never in any mask
EOS = 1


def hand_vocab() -> Vocabulary:
    """Token 0 is a control token, 1 is end-of-generation, then all 256 bytes, then merges."""
    pieces = [b"", b""] + [bytes([b]) for b in range(256)] + [t.encode() for t in MULTI_BYTE_TOKENS]
    return Vocabulary.from_pieces(pieces, (EOS,))


@pytest.fixture(scope="session")
def vocab() -> Vocabulary:
    return hand_vocab()


def compile_for(schema: Any, vocab: Vocabulary) -> CompiledSchema:
    return compile_schema(schema, vocab)


# Schemas whose automata the compiled modules' tests walk both ways (C and Python or numpy): an
# object, a pattern, an enum beside undeclared names, a format, declared and undeclared names
# sharing a first byte, a bounded string.
COMPILED_PATH_SCHEMAS: list[dict[str, object]] = [
    {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name"]},
    {"type": "array", "items": {"type": "string", "pattern": "^[a-c]{1,3}(-[0-9]+)?$"}, "maxItems": 3},
    {"type": "object", "additionalProperties": {"enum": ["John", "日本", 12, None]}},
    {"type": "string", "format": "date-time"},
    {"type": "object", "properties": {"ab": {"type": "number"}}, "additionalProperties": {"type": "boolean"}},
    {
        "type": "object",
        "properties": {"ab": {"type": "number"}, "ac": {"type": "boolean"}},
        "additionalProperties": {"type": "boolean"},
    },
    {"type": "string", "maxLength": 5},
]


def masks_along(schema: Any, vocab: Vocabulary, every_valid_text: bool, seed: int) -> list[bytes]:
    """Each bitmask of a Guide along a few sampled documents' tokens, on a fresh compilation
    (for comparing the masks of two builds of the same automaton)."""
    compiled = compile_for(schema, vocab)
    rng = random.Random(seed)
    found = []
    bitmask = new_bitmask(compiled.vocab.size)
    for _ in range(3):
        guide = compiled.guide(every_valid_text=every_valid_text)
        document = sample_accepted(compiled.automaton, rng, prefer=b"abcJohn0129 ")
        while document and not guide.is_finished():
            guide.fill_mask(bitmask)
            found.append(bitmask.tobytes())
            allowed = [token for token in guide.allowed_token_ids().tolist() if compiled.vocab.pieces[token]]
            matching = [token for token in allowed if document.startswith(compiled.vocab.pieces[token])]
            if not matching:
                break
            token = rng.choice(matching)
            guide.advance(token)
            document = document[len(compiled.vocab.pieces[token]) :]
    return found


class FakeModel:
    """Random logits that depend only on the seed and the tokens evaluated so far (so a
    batch and token-by-token evaluation agree); greedy longest-match tokenizer over the hand
    vocabulary."""

    def __init__(self, vocab: Vocabulary, seed: int) -> None:
        self.vocab = vocab
        self.seed = seed
        self.evaluated: list[int] = []
        self.calls = 0

    def tokenize(self, text: bytes, add_bos: bool = False, special: bool = False) -> list[int]:
        tokens = []
        while text:
            best = max(
                (i for i, p in enumerate(self.vocab.pieces) if p and text.startswith(p)),
                key=lambda i: len(self.vocab.pieces[i]),
            )
            tokens.append(best)
            text = text[len(self.vocab.pieces[best]) :]
        return tokens

    def eval(self, tokens: list[int]) -> None:
        self.evaluated.extend(tokens)
        self.calls += 1

    def last_logits(self) -> npt.NDArray[np.float32]:
        return self._logits_after(len(self.evaluated))

    def eval_with_logits(self, tokens: list[int], rows: list[int]) -> npt.NDArray[np.float32]:
        assert rows == sorted(set(rows)) and rows[0] >= 0 and rows[-1] < len(tokens)
        assert len(tokens) <= LARGEST_DRAFT_BATCH
        start = len(self.evaluated)
        self.eval(tokens)
        return np.stack([self._logits_after(start + row + 1) for row in rows])

    def discard(self, count: int) -> None:
        del self.evaluated[len(self.evaluated) - count :]

    def _logits_after(self, length: int) -> npt.NDArray[np.float32]:
        context = self.evaluated[:length]
        rng = np.random.default_rng([self.seed, length, *context[-12:]])
        return rng.normal(0, 3, self.vocab.size).astype(np.float32)


def random_walk(compiled: CompiledSchema, seed: int, max_bytes: int = 400) -> str:
    """A random accepted string: random bytes early, then the shortest way to acceptance."""
    rng = random.Random(seed)
    dfa = compiled.automaton
    state, out = dfa.start, bytearray()
    while True:
        row = dfa.row(state)
        options = [int(b) for b in np.flatnonzero(row)]
        if dfa.is_accepting(state) and (not options or rng.random() < 0.2):
            return out.decode("utf-8")
        if len(out) > max_bytes or rng.random() < 0.4:
            byte = min(options, key=lambda b: dfa.distance(int(row[b])))
        else:
            byte = rng.choice(options)
        out.append(byte)
        state = int(row[byte])


def accepts(compiled: CompiledSchema, text: str) -> bool:
    dfa = compiled.automaton
    state = dfa.walk(dfa.start, text.encode("utf-8"))
    return state != 0 and dfa.is_accepting(state)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def spy_on_shares(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, float]]:
    """A list the decoder's held-value scoring fills from now on: for each choice scored among
    the allowed tokens only (core.decode.sampling.share), how many there were and the share."""
    shares: list[tuple[int, float]] = []

    def spy(scores: Any, index: int) -> float:
        found = share(scores, index)
        shares.append((len(scores), found))
        return found

    monkeypatch.setattr(decoder_module, "share", spy)
    return shares


def grounded_decode(
    vocab: Vocabulary, schema: Any, document: str, seed: int, max_tokens: int, grounded: bool = True
) -> tuple[CompiledSchema, bytes, Decoder, Grounding | None]:
    """A sampled decoding (temperature 1, drafts of 4) of `schema` over `document` by a
    FakeModel, grounded unless `grounded` is False: the compiled schema, the output, the
    decoder and the grounding that followed it."""
    compiled = compile_schema(schema, vocab, grounded=grounded)
    grounding = compiled.grounding(document)
    settings = SamplingSettings(max_tokens=max_tokens, temperature=1.0, seed=seed, draft_tokens=4)
    decoder = Decoder(FakeModel(vocab, seed), compiled, settings, grounding=grounding)
    return compiled, b"".join(decoder.run()), decoder, grounding


def searched_record(grounding: Grounding | None, followed: bool = False, within: bool = True) -> GroundingRecord | None:
    """What `grounding` recorded of its output (Grounding.record), as these tests hand it to
    evidence: without the occurrences followed to each body's close unless `followed` (each
    span is then searched for in the document, as these tests check), without the labeled
    values a held value was narrowed to unless `within`, and the document's values read anew."""
    if grounding is None:
        return None
    record = grounding.record()
    bodies = record.bodies if followed else tuple(replace(body, followed=()) for body in record.bodies)
    values = record.values if within else tuple(replace(value, within=()) for value in record.values)
    return GroundingRecord(bodies, values)
