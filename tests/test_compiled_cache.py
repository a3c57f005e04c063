"""The on-disk cache of compiled schemas: a second compile continues where the first stopped,
with the same masks, and a damaged, foreign or concurrent entry never changes a mask."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import FakeModel, hand_vocab

from gguf_extract.core.automaton.dfa import DEAD
from gguf_extract.core.compiled import CompiledSchema, compile_schema
from gguf_extract.core.decode import Decoder, SamplingSettings

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "tags": {"type": "array", "items": {"enum": ["ab", "abc", "日本"]}, "maxItems": 3},
        "age": {"type": "integer", "minimum": 0, "maximum": 130},
        "note": {"type": "string"},
    },
    "required": ["name", "age"],
}


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("EXTRACT_CACHE_DIR", str(folder))
    return folder


def decode_some(compiled: CompiledSchema, seeds: range) -> list[str]:
    """Drive the decoder with random logits: it explores the automaton like a real run."""
    texts = []
    for seed in seeds:
        decoder = Decoder(FakeModel(compiled.vocab, seed), compiled, SamplingSettings(max_tokens=80, temperature=1.0, seed=seed))
        texts.append(b"".join(decoder.run()).decode())
    return texts


def token_sets(compiled: CompiledSchema, prefixes: list[bytes]) -> list[dict[int, bytes]]:
    """For each prefix: allowed token -> the bytes of a shortest path on (states themselves are
    numbered differently by each process, so compare what they accept)."""
    found = []
    for prefix in prefixes:
        state = compiled.dfa.walk(compiled.dfa.start, prefix)
        transitions = compiled.index.transitions(state)
        found.append(
            {
                int(t): compiled.dfa.forced_bytes(int(e))
                for t, e in zip(transitions.token_ids, transitions.end_states, strict=True)
            }
        )
    return found


def entries(folder: Path) -> list[Path]:
    return sorted((folder / "compiled").glob("*.bin"))


def test_second_compile_continues_from_the_stored_automaton(cache_dir: Path) -> None:
    vocab = hand_vocab()
    first = compile_schema(SCHEMA, vocab, use_cache=True)
    texts = decode_some(first, range(6))
    first.save_to_cache()
    assert len(entries(cache_dir)) == 1
    second = compile_schema(SCHEMA, vocab, use_cache=True)
    assert second.stored_states == first.dfa.state_count == second.dfa.state_count
    prefixes = sorted({text.encode()[:cut] for text in texts for cut in range(0, len(text.encode()) + 1, 3)})
    assert token_sets(second, prefixes) == token_sets(compile_schema(SCHEMA, vocab), prefixes)
    for text in decode_some(second, range(6, 12)):  # and keeps growing lazily where it stopped
        assert first.validate(text) is not None


def test_cached_and_fresh_decodes_are_identical() -> None:
    vocab = hand_vocab()
    fresh = decode_some(compile_schema(SCHEMA, vocab), range(5))
    warm = compile_schema(SCHEMA, vocab, use_cache=True)
    decode_some(warm, range(20, 25))
    warm.save_to_cache()
    assert decode_some(compile_schema(SCHEMA, vocab, use_cache=True), range(5)) == fresh


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_damaged_entry_means_a_fresh_compile(cache_dir: Path, damage: str) -> None:
    vocab = hand_vocab()
    compiled = compile_schema(SCHEMA, vocab, use_cache=True)
    decode_some(compiled, range(3))
    compiled.save_to_cache()
    (entry,) = entries(cache_dir)
    data = entry.read_bytes()
    damaged = {
        "truncate": data[: len(data) // 2],
        "flip": data[:-50] + bytes([data[-50] ^ 1]) + data[-49:],
        "garbage": os.urandom(len(data)),
        "empty": b"",
    }[damage]
    entry.write_bytes(damaged)
    again = compile_schema(SCHEMA, vocab, use_cache=True)
    assert again.stored_states == 0  # compiled afresh
    assert token_sets(again, [b"", b'{"name": "ab']) == token_sets(compile_schema(SCHEMA, vocab), [b"", b'{"name": "ab'])


def test_other_schema_options_and_vocabulary_never_share_an_entry(cache_dir: Path) -> None:
    from gguf_extract.core.vocab import Vocabulary

    vocab = hand_vocab()
    other_vocab = Vocabulary.from_pieces([*vocab.pieces[:-1], b"zz"], vocab.eog_ids)
    for schema, options, vocabulary in [
        (SCHEMA, {}, vocab),
        ({**SCHEMA, "required": ["name"]}, {}, vocab),
        (SCHEMA, {"recursion_depth": 5}, vocab),
        (SCHEMA, {}, other_vocab),
    ]:
        compiled = compile_schema(schema, vocabulary, use_cache=True, **options)
        decode_some(compiled, range(1))
        compiled.save_to_cache()
    assert len(entries(cache_dir)) == 4


def test_lenient_compiles_that_ignored_keywords_are_not_cached(cache_dir: Path) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "if": {"maxLength": 1}, "then": {}}}}
    compiled = compile_schema(schema, hand_vocab(), lenient=True, use_cache=True)
    assert compiled.relaxed and compiled.cache_key is None
    compiled.save_to_cache()
    assert not entries(cache_dir)


def _compile_and_store(arguments: tuple[str, int]) -> list[Any]:
    folder, seed = arguments
    os.environ["EXTRACT_CACHE_DIR"] = folder
    vocab = hand_vocab()
    results = []
    for round_ in range(6):
        compiled = compile_schema(SCHEMA, vocab, use_cache=True)
        decode_some(compiled, range(seed * 100 + round_, seed * 100 + round_ + 1))
        compiled.save_to_cache()
        state = compiled.dfa.walk(compiled.dfa.start, b'{"name": "a')
        results.append(state != DEAD and sorted(compiled.index.transitions(state).token_ids.tolist()))
    return results


def test_two_processes_compiling_one_schema_at_once(cache_dir: Path) -> None:
    with multiprocessing.get_context("fork").Pool(2) as pool:
        outcomes = pool.map(_compile_and_store, [(str(cache_dir), 1), (str(cache_dir), 2)])
    fresh = compile_schema(SCHEMA, hand_vocab())
    expected = sorted(fresh.index.transitions(fresh.dfa.walk(fresh.dfa.start, b'{"name": "a')).token_ids.tolist())
    assert all(result == expected for results in outcomes for result in results)
    assert len(entries(cache_dir)) == 1
    assert not list((cache_dir / "compiled").glob(".*.tmp"))
