"""Picking tokens out of a list of candidates gives what a mask over the whole list gives: the
same candidates, in order, for lists met once or again (indexed), lists alike but for order,
lists with a token twice, more lists than are remembered, any tokens and any key."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_extract.core.grounding.positions import CandidatePositions

SIZE = 2048
# Lists long enough for a few tokens to be picked by position (from a seed: hypothesis draws
# long permutations slowly): some alike but for order, some with a token twice.
SEEDS = st.integers(0, 2**32 - 1)
UNIQUE = st.builds(lambda seed, size: np.random.default_rng(seed).permutation(SIZE)[:size], SEEDS, st.integers(0, SIZE))
REORDERED = st.builds(
    lambda ids, seeds: [np.random.default_rng(seed).permutation(ids) for seed in seeds],
    UNIQUE,
    st.lists(SEEDS, min_size=1, max_size=6),
)
TWICE = st.builds(lambda ids, count: np.concatenate([ids, ids[:count]]), UNIQUE.filter(len), st.integers(1, 8))
LISTS = (REORDERED | st.lists(UNIQUE | TWICE, min_size=1, max_size=6)).map(
    lambda lists: [np.asarray(ids, dtype=np.int32) for ids in lists]
)
# Few tokens (picked by position) and many (by a mask), repeats and tokens a list lacks; some
# taken from the list (by index), as most of a grounded string's tokens are.
TOKEN_SETS = st.tuples(
    st.lists(st.integers(0, SIZE - 1), max_size=10) | st.lists(st.integers(0, SIZE - 1), max_size=1000),
    st.lists(st.integers(0, SIZE), max_size=10),
)


def by_mask(ids: np.ndarray, tokens: np.ndarray) -> list[int]:
    mark = np.zeros(SIZE, dtype=bool)
    mark[tokens] = True
    return ids[mark[ids]].tolist()


@settings(max_examples=300, deadline=None)
@given(lists=LISTS, asks=st.lists(st.tuples(st.integers(0, 5), TOKEN_SETS), max_size=16))
def test_positions_agree_with_a_mask(lists: list[np.ndarray], asks: list[tuple[int, tuple[list[int], list[int]]]]) -> None:
    positions = CandidatePositions(SIZE)
    for which, (chosen, picked) in asks:
        ids = lists[which % len(lists)]
        tokens = np.array(chosen + [int(ids[at % len(ids)]) for at in picked if len(ids)], dtype=np.int32)
        for _ in range(2):  # a list met again is indexed
            kept = positions.kept(ids.copy(), tokens, tokens.tobytes())  # the key names the tokens
            assert kept.tolist() == by_mask(ids, tokens) and not kept.flags.writeable


def test_an_answer_is_kept_for_its_list_only() -> None:
    positions = CandidatePositions(SIZE)
    ids, tokens = np.array([5, 3, 9, 1], dtype=np.int32), np.array([9, 1, 1, 7], dtype=np.int32)
    for _ in range(3):
        assert positions.kept(ids.copy(), tokens, "k").tolist() == [9, 1]
    for other in ([1, 9, 4], [9, 7, 5, 3], [7, 1, 7]):
        assert positions.kept(np.array(other, dtype=np.int32), tokens, "k").tolist() == by_mask(np.array(other), tokens)
