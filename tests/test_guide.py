"""The public Guide on a hand-made vocabulary: its bitmask, its ids and its moves agree with a
plain walk of the automaton, and it refuses what it cannot do."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import EOS, compile_for, random_walk

from gguf_extract.core.index.bitmasks import mask_words
from gguf_extract.core.index.guide import Guide, new_bitmask
from gguf_extract.core.vocab.token_table import Vocabulary

SCHEMAS = [
    {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12}, "n": {"type": "integer"}}, "required": ["n"]},
    {"type": "array", "items": {"enum": ["r", "g", 7]}, "maxItems": 3},
    {"type": "string", "pattern": "^[a-c]{2,4}-\\d$"},
]


def ids_in(bitmask: np.ndarray) -> set[int]:
    bits = np.unpackbits(bitmask.view(np.uint8), bitorder="little")
    return set(np.flatnonzero(bits).tolist())


def walked(vocab: Vocabulary, guide: Guide) -> set[int]:
    """Every token whose bytes the automaton takes from here, by a plain walk."""
    allowed = set()
    for token, piece in enumerate(vocab.pieces):
        if piece and guide.copy().try_advance(token):
            allowed.add(token)
    if guide.is_accepting():
        allowed |= set(vocab.eog_ids)
    return allowed


@pytest.mark.parametrize("schema", SCHEMAS)
def test_mask_ids_and_walk_agree_along_documents(vocab: Vocabulary, schema: dict[str, object]) -> None:
    compiled = compile_for(schema, vocab)
    bitmask = new_bitmask(vocab.size)
    for seed in range(4):
        guide = compiled.guide()
        for byte in random_walk(compiled, seed, 60).encode():
            guide.fill_mask(bitmask)
            assert ids_in(bitmask) == set(guide.allowed_token_ids().tolist()) == walked(vocab, guide)
            guide.advance(byte + 2)  # the single-byte tokens follow the control and end tokens
        assert guide.is_accepting() and guide.shortest_completion() == 0
        guide.advance(EOS)
        guide.fill_mask(bitmask)
        assert guide.is_finished() and not bitmask.any() and len(guide.allowed_token_ids()) == 0


def test_bitmask_layout_is_llguidance_s(vocab: Vocabulary) -> None:
    guide = compile_for({"const": "a"}, vocab).guide()
    bitmask = new_bitmask(vocab.size)
    assert bitmask.shape == (mask_words(vocab.size),) == (-(-vocab.size // 32),)
    guide.fill_mask(bitmask)
    assert set(guide.allowed_token_ids().tolist()) == {2 + ord('"')}
    token = 2 + ord('"')
    assert int(bitmask.view(np.uint32)[token // 32]) == 1 << (token % 32)


def test_refusals_leave_the_guide_where_it_was(vocab: Vocabulary) -> None:
    guide = compile_for({"type": "integer"}, vocab).guide()
    for bad in (-1, vocab.size, 10**6):
        with pytest.raises(ValueError, match="outside the vocabulary"):
            guide.advance(bad)
    with pytest.raises(ValueError, match="not allowed"):
        guide.advance(2 + ord("x"))
    with pytest.raises(ValueError, match="not allowed"):
        guide.advance(EOS)  # nothing written yet: not a complete document
    with pytest.raises(ValueError, match="int32 array of shape"):
        guide.fill_mask(np.zeros(3, dtype=np.int32))
    assert guide.tokens_taken == 0 and guide.state == compile_for({"type": "integer"}, vocab).automaton.start


def test_rollback_and_copy(vocab: Vocabulary) -> None:
    compiled = compile_for({"type": "string", "maxLength": 3}, vocab)
    guide = compiled.guide()
    start = guide.state
    for byte in b'"ab':
        guide.advance(byte + 2)
    twin = guide.copy()
    guide.rollback(2)
    assert guide.tokens_taken == 1 and twin.tokens_taken == 3
    assert twin.forced_text() == b"" and twin.shortest_completion() == 1
    guide.rollback(1)
    assert guide.state == start and guide.forced_text() == b'"'
    with pytest.raises(ValueError, match="cannot roll back"):
        guide.rollback(1)


@pytest.mark.parametrize("schema", SCHEMAS)
def test_allowed_arrays_agree_with_ids_under_a_prefix_and_a_budget(vocab: Vocabulary, schema: dict[str, object]) -> None:
    """`allowed` (what the decoder asks) is `allowed_token_ids` as a set, with the prefix and
    budget filters a plain walk gives: a token kept by the budget leaves room to close."""
    compiled = compile_for(schema, vocab)
    for seed in range(3):
        guide = compiled.guide()
        for byte in random_walk(compiled, seed, 40).encode():
            for budget in (None, 1, 2, 5):
                for prefix in (b"", bytes([byte])):
                    allowed = guide.allowed(budget, prefix)
                    expected = {
                        token
                        for token in walked(vocab, guide) - set(vocab.eog_ids)
                        if vocab.pieces[token].startswith(prefix) and fits(guide, token, budget)
                    }
                    assert set(allowed.ids.tolist()) == expected
                    assert allowed.may_end == (guide.is_accepting() and not prefix)
                    unbudgeted = set(guide.allowed(None, prefix).ids.tolist())
                    assert allowed.budget_cut == (unbudgeted != expected)
                    assert set(guide.allowed_token_ids(budget, prefix).tolist()) == expected | (
                        set(vocab.eog_ids) if allowed.may_end else set()
                    )
            guide.advance(byte + 2)


@pytest.mark.parametrize("schema", SCHEMAS)
def test_a_choice_told_without_listing_agrees_with_the_list(vocab: Vocabulary, schema: dict[str, object]) -> None:
    """`allows_among_others` says yes only for a token `allowed` holds beside another choice,
    and where `budget_cuts_nothing`, `allowed` leaves no token out for the budget."""
    compiled = compile_for(schema, vocab)
    bound = compiled.guide().shortest_completion()
    said_yes = cuts_nothing = 0
    for seed in range(3):
        guide = compiled.guide()
        for byte in random_walk(compiled, seed, 40).encode():
            for budget in (1, 2, 5, bound, 100, 1000):
                allowed = guide.allowed(budget)
                held = set(allowed.ids.tolist())
                if guide.budget_cuts_nothing(budget):
                    assert not allowed.budget_cut
                    cuts_nothing += budget < 1000
                for token in range(vocab.size):
                    if guide.allows_among_others(token, budget):
                        said_yes += 1
                        assert token in held and (len(held) > 1 or allowed.may_end)
            guide.advance(byte + 2)
    assert said_yes > 0 and cuts_nothing > 0  # both were put to the test


def fits(guide: Guide, token: int, budget: int | None) -> bool:
    after = guide.copy()
    after.advance(token)
    return budget is None or 1 + after.shortest_completion() <= budget


def test_copies_share_nothing_they_change(vocab: Vocabulary) -> None:
    """A copy moves on its own: advancing or rolling back one leaves the other where it was,
    however long the shared trail."""
    compiled = compile_for({"type": "string"}, vocab)
    guide = compiled.guide()
    for byte in b'"' + b"x" * 500:
        guide.advance(byte + 2)
    twin = guide.copy()
    twin.advance(2 + ord("y"))
    guide.rollback(400)
    assert (guide.tokens_taken, twin.tokens_taken) == (101, 502)
    twin.rollback(502)
    assert twin.state == compiled.guide().state and guide.tokens_taken == 101
    guide.advance(2 + ord('"'))
    assert guide.is_finished() and not twin.is_accepting()
