"""The token walk compiled at install (core/index/_walks.c) keeps the tokens the numpy walk
keeps, ending at the same states, and the Guides' masks are the same with either; so are the
bits its packing of token ids sets, and a mask written out or set from ids is the one numpy
writes; bad input is refused with an error, never read past."""

from __future__ import annotations

import random

import numpy as np
import pytest
from conftest import COMPILED_PATH_SCHEMAS, compile_for, masks_along
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_extract.core.automaton.dfa import DEAD, LazyDFA
from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.index import bitmasks, mask_walks
from gguf_extract.core.index.compiled import token_table
from gguf_extract.core.vocab.token_table import Vocabulary

compiled_walks = pytest.importorskip("gguf_extract.core.index._walks", reason="built without a C compiler")


@pytest.mark.parametrize("compiled_part", ["walk", "pack", "fill_words", "add_ids"])
@pytest.mark.parametrize("every_valid_text", [False, True])
@pytest.mark.parametrize("schema", COMPILED_PATH_SCHEMAS)
def test_masks_are_the_same_without_the_compiled_part(
    schema: dict[str, object], every_valid_text: bool, compiled_part: str, vocab: Vocabulary, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiled = masks_along(schema, vocab, every_valid_text, seed=7)
    if compiled_part == "walk":
        monkeypatch.setattr(mask_walks, "_walks", None)
    else:
        monkeypatch.setattr(bitmasks, compiled_part, None)
    in_python = masks_along(schema, vocab, every_valid_text, seed=7)
    assert len(compiled) > 3 and compiled == in_python


def fresh_dfa(schema: dict[str, object], vocab: Vocabulary) -> LazyDFA:
    return compile_for(schema, vocab).automaton


@settings(max_examples=25, deadline=None)
@given(schema=st.sampled_from(COMPILED_PATH_SCHEMAS), seed=st.integers(0, 2**32 - 1))
def test_walks_keep_the_same_tokens_at_the_same_states(vocab: Vocabulary, schema: dict[str, object], seed: int) -> None:
    """From a state along a sampled document, each token from a random position of its own:
    the compiled walk (first, building the rows it needs) and the numpy one keep the same
    tokens, ending at the same states."""
    table = token_table(vocab)
    rng = random.Random(seed)
    dfa = fresh_dfa(schema, vocab)
    document = sample_accepted(dfa, rng)
    start = dfa.walk(dfa.start, document[: rng.randrange(len(document) + 1)])
    assert start != DEAD
    ids = table.walkable[rng.sample(range(len(table.walkable)), min(40, len(table.walkable)))]
    positions = np.array([rng.randrange(int(table.lengths[token]) + 1) for token in ids], dtype=np.int32)
    states = np.full(len(ids), start, dtype=np.int32)
    kept = mask_walks.walk_through_table(dfa, table, ids, states, positions)
    reference = mask_walks.numpy_walk_through_table(dfa, table, ids, states, positions)
    assert _pairs(kept) == _pairs(reference)
    assert len(kept[0]) == len(set(kept[0].tolist()))
    assert _pairs(mask_walks.walk_through_table(dfa, table, ids, np.int32(start), positions)) == _pairs(kept)  # one state for all
    at = rng.randrange(3)
    long_enough = ids[table.lengths[ids] >= at]
    one_position = mask_walks.walk_through_table(dfa, table, long_enough, start, at)
    reference = mask_walks.numpy_walk_through_table(
        dfa, table, long_enough, np.full(len(long_enough), start, dtype=np.int32), np.full(len(long_enough), at, dtype=np.int32)
    )
    assert _pairs(one_position) == _pairs(reference)


def _pairs(kept: tuple[np.ndarray, np.ndarray]) -> list[tuple[int, int]]:
    """The tokens a walk kept with the states they end at, in order."""
    return sorted(zip(*(part.tolist() for part in kept), strict=True))


def test_bad_input_is_refused(vocab: Vocabulary) -> None:
    table = token_table(vocab)
    dfa = fresh_dfa(COMPILED_PATH_SCHEMAS[0], vocab)
    room = np.empty(1, dtype=np.int32)
    one = np.zeros(1, dtype=np.int32)
    start = np.full(1, dfa.start, dtype=np.int32)
    beyond = np.full(1, vocab.size, dtype=np.int32)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        compiled_walks.walk(dfa, table.bytes, table.lengths, beyond, start, one, room, room.copy())
    with pytest.raises(ValueError, match="outside the DFA's table"):
        token = np.full(1, int(table.walkable[0]), dtype=np.int32)
        compiled_walks.walk(dfa, table.bytes, table.lengths, token, np.full(1, 10**6, dtype=np.int32), one, room, room.copy())
    with pytest.raises(ValueError, match="position is negative"):
        token = np.full(1, int(table.walkable[0]), dtype=np.int32)
        compiled_walks.walk(dfa, table.bytes, table.lengths, token, start, np.full(1, -1, dtype=np.int32), room, room.copy())
    with pytest.raises(ValueError, match="one entry per token"):
        compiled_walks.walk(dfa, table.bytes, table.lengths, np.zeros(2, dtype=np.int32), start, one, room, room.copy())
    with pytest.raises(ValueError, match="dimensions of 4-byte integers"):
        compiled_walks.walk(dfa, table.bytes, table.lengths.astype(np.int64), one, start, one, room, room.copy())
    with pytest.raises(ValueError, match="dimensions of 4-byte integers"):
        compiled_walks.walk(dfa, table.bytes, table.lengths.astype(np.float32), one, start, one, room, room.copy())
    with pytest.raises(ValueError, match="fit in 32 bits"):
        compiled_walks.walk(dfa, table.bytes, table.lengths, one, 2**32 + dfa.start, one, room, room.copy())
    with pytest.raises(ValueError, match="outside the DFA's table"):
        token = np.full(1, int(table.walkable[0]), dtype=np.int32)
        compiled_walks.walk(dfa, table.bytes, table.lengths, token, 10**6, 0, room, room.copy())
    with pytest.raises(ValueError, match="position is negative"):
        token = np.full(1, int(table.walkable[0]), dtype=np.int32)
        compiled_walks.walk(dfa, table.bytes, table.lengths, token, dfa.start, -1, room, room.copy())
    assert mask_walks.walk_through_table(dfa, table, one.astype(np.int64), start.astype(np.int64), one)[0].dtype == np.int32


class _RowlessDFA:
    """A table of rows never built, and a `row` that builds none."""

    def __init__(self) -> None:
        self.table = np.full((2, 256), -1, dtype=np.int32)
        self.asked: list[int] = []

    def row(self, state: int) -> None:
        self.asked.append(state)


def test_a_row_the_dfa_does_not_build_is_an_error_not_a_state(vocab: Vocabulary) -> None:
    table = token_table(vocab)
    dfa = _RowlessDFA()
    token = np.full(1, int(table.walkable[0]), dtype=np.int32)
    room = np.empty(1, dtype=np.int32)
    state, position = np.ones(1, dtype=np.int32), np.zeros(1, dtype=np.int32)
    with pytest.raises(RuntimeError, match="built no row for state 1"):
        compiled_walks.walk(dfa, table.bytes, table.lengths, token, state, position, room, room.copy())
    assert dfa.asked == [1]


@settings(max_examples=60, deadline=None)
@given(ids=st.lists(st.integers(0, 262_143), max_size=300), as_list=st.booleans())
def test_packed_ids_set_the_bits_numpy_sets(ids: list[int], as_list: bool) -> None:
    given_ids = ids if as_list else np.asarray(ids, dtype=np.int32)
    words, bits = np.empty(len(ids), dtype=np.int32), np.empty(len(ids), dtype=np.int32)
    count = compiled_walks.pack(given_ids, words, bits)
    mask = np.zeros(262_144 // 32, dtype=np.uint32)
    mask[words[:count]] |= bits[:count].view(np.uint32)
    expected = np.zeros(262_144, dtype=bool)
    expected[ids] = True
    assert np.array_equal(mask, np.packbits(expected, bitorder="little").view("<u4"))
    assert count == len(set(words[:count].tolist())) == len({token >> 5 for token in ids})
    first_words, first_bits = words[:count].copy(), bits[:count].copy()
    again = compiled_walks.pack(given_ids, words, bits)  # the scratch words were cleared
    assert again == count and np.array_equal(words[:count], first_words) and np.array_equal(bits[:count], first_bits)


def test_bad_ids_are_refused_and_leave_nothing_behind() -> None:
    room = np.empty(4, dtype=np.int32)
    with pytest.raises(ValueError, match="-1 is not a vocabulary's"):
        compiled_walks.pack([3, -1], room, room.copy())
    with pytest.raises(TypeError):
        compiled_walks.pack([3, "4"], room, room.copy())
    with pytest.raises(ValueError, match="16777216 is not a vocabulary's"):
        compiled_walks.pack([3, 2**24], room, room.copy())
    with pytest.raises(OverflowError):
        compiled_walks.pack([3, 2**70], room, room.copy())
    with pytest.raises(ValueError, match="room for one entry per id"):
        compiled_walks.pack([1, 2, 3, 4, 5], room, room.copy())
    with pytest.raises(ValueError, match="dimensions of 4-byte integers"):
        compiled_walks.pack(np.zeros(2, dtype=np.int64), room, room.copy())
    bits = room.copy()
    assert compiled_walks.pack([5], room, bits) == 1 and room[0] == 0 and bits[0] == 1 << 5  # nothing left set from before


@settings(max_examples=60, deadline=None)
@given(
    ids=st.lists(st.integers(0, 4_095), max_size=200),
    row=st.one_of(st.none(), st.lists(st.integers(-(2**31), 2**31 - 1), min_size=128, max_size=128)),
)
def test_a_mask_written_out_and_ids_added_are_what_numpy_writes(ids: list[int], row: list[int] | None) -> None:
    base = None if row is None else np.asarray(row, dtype=np.int32)
    words = np.asarray(sorted({token >> 5 for token in ids}), dtype=np.int32)
    bits = np.zeros(len(words), dtype=np.uint32)
    for token in ids:
        bits[np.searchsorted(words, token >> 5)] |= np.uint32(1 << (token & 31))
    expected = np.zeros(128, dtype=np.int32) if base is None else base.copy()
    expected.view(np.uint32)[words] |= bits
    written = np.full(128, 7, dtype=np.int32)  # every word overwritten
    compiled_walks.fill(written, base, words, bits.view(np.int32))
    assert np.array_equal(written, expected)
    added = np.zeros(128, dtype=np.int32) if base is None else base.copy()
    compiled_walks.add(added, np.asarray(ids, dtype=np.int32))
    assert np.array_equal(added, expected)


def test_words_and_ids_outside_the_mask_are_refused() -> None:
    mask = np.zeros(4, dtype=np.int32)
    with pytest.raises(ValueError, match="word 4 is outside the bitmask"):
        compiled_walks.fill(mask, None, np.array([1, 4], dtype=np.int32), np.array([1, 1], dtype=np.int32))
    with pytest.raises(ValueError, match="as long as"):
        compiled_walks.fill(mask, np.zeros(3, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32))
    with pytest.raises(ValueError, match="token id 128 is outside the bitmask"):
        compiled_walks.add(mask, np.array([3, 128], dtype=np.int32))
    with pytest.raises(ValueError, match="token id -1 is outside the bitmask"):
        compiled_walks.add(mask, np.array([-1], dtype=np.int32))
    with pytest.raises(ValueError, match="dimensions of 4-byte integers"):
        compiled_walks.add(mask, np.array([3], dtype=np.int64))
