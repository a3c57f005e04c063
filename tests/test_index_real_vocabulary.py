"""The token index on the bundled model's real vocabulary, against a plain walk of every token.

The index allows whole groups of tokens by their length (text runs, text slices, byte-class
runs with non-ASCII characters judged by plane); here, at every state that documents sampled
from a sample of corpus schemas pass through, its set and end states must equal those of
walking all 49,152 tokens through the automaton byte by byte. Skipped when the shared corpus
is absent.
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gguf_extract.core.automaton.dfa import LazyDFA
from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.errors import SchemaError
from gguf_extract.core.index.compiled import CompiledSchema, compile_schema
from gguf_extract.core.model import GGUFModel, bundled_model_path
from gguf_extract.core.vocab.token_table import Vocabulary

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "jsonschemabench.jsonl.gz"
SAMPLE_EVERY = 150
STATES_PER_SCHEMA = 60
TEXT_BYTES = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,-_"


@pytest.fixture(scope="module")
def vocabulary() -> Vocabulary:
    return GGUFModel.load_vocab_only(bundled_model_path()).vocabulary()


def _sample() -> list[dict[str, Any]]:
    with gzip.open(CORPUS, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for number, line in enumerate(lines) if number % SAMPLE_EVERY == 0]


def _compiled_sample(vocabulary: Vocabulary) -> Iterator[tuple[str, CompiledSchema]]:
    """Each sampled schema that compiles, with its id."""
    for entry in _sample():
        try:
            yield entry["id"], compile_schema(entry["schema"], vocabulary)
        except SchemaError:
            continue


def _visited(dfa: LazyDFA, seed: str, soft_limit: int = 400) -> list[int]:
    """The states two documents sampled from `dfa` (seeded by `seed`) pass through, each once,
    in the order first met."""
    rng = random.Random(seed)
    visited: list[int] = []
    for _ in range(2):
        state = dfa.start
        for byte in sample_accepted(dfa, rng, soft_limit=soft_limit, prefer=TEXT_BYTES):
            visited.append(state)
            state = dfa.step(state, byte)
    return list(dict.fromkeys(visited))


@pytest.mark.model  # reads the bundled model's vocabulary
@pytest.mark.skipif(not CORPUS.exists(), reason="the shared JSONSchemaBench corpus is not present")
def test_index_equals_a_plain_walk_of_the_whole_vocabulary(vocabulary: Vocabulary) -> None:
    checked = 0
    for schema_id, compiled in _compiled_sample(vocabulary):
        dfa, index = compiled.automaton, compiled.token_index
        for state in sorted(_visited(dfa, schema_id))[:STATES_PER_SCHEMA]:
            found = index.transitions(state)
            plain = index._walk_tokens(state, index.table.walkable)
            allowed = dict(zip(found.token_ids.tolist(), found.end_states.tolist(), strict=True))
            assert len(allowed) == found.size, f"{schema_id}: a token listed twice at state {state}"
            assert allowed == dict(zip(plain.token_ids.tolist(), plain.end_states.tolist(), strict=True)), (
                f"{schema_id}: state {state}"
            )
            checked += 1
    assert checked > 1000


@pytest.mark.model  # reads the bundled model's vocabulary
@pytest.mark.skipif(not CORPUS.exists(), reason="the shared JSONSchemaBench corpus is not present")
@pytest.mark.parametrize("every_valid_text", [False, True])
def test_bitmasks_equal_a_plain_walk_of_the_whole_vocabulary(vocabulary: Vocabulary, every_valid_text: bool) -> None:
    """The Guide's masks (core.index.bitmasks: text rows, literals down the sorted pieces,
    string bodies' closings kept per string) against every token walked byte by byte, at the
    states texts of either automaton pass through (members in any order, undeclared ones)."""
    checked = 0
    for schema_id, compiled in _compiled_sample(vocabulary):
        dfa, index = compiled.accepting if every_valid_text else (compiled.automaton, compiled.token_index)
        for state in _visited(dfa, schema_id, soft_limit=200)[:STATES_PER_SCHEMA]:
            bits = np.unpackbits(index.packed_mask(state).view(np.uint8), bitorder="little")
            plain = index._walk_tokens(state, index.table.walkable)
            assert set(np.flatnonzero(bits).tolist()) == set(plain.token_ids.tolist()), f"{schema_id}: state {state}"
            checked += 1
    assert checked > 1000
