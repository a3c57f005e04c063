"""A decoding's state and its followers taken back to a snapshot: every field, every follower,
as many times as asked, so that what a decoding tries (a preview, guessed tokens) leaves no trace."""

from __future__ import annotations

import copy
from dataclasses import fields
from typing import Any

import numpy as np
import pytest
from conftest import compile_for

from gguf_extract.core.decode.decoder import start_state
from gguf_extract.core.decode.held_zeros import ZeroHolder
from gguf_extract.core.decode.state import DecodeState
from gguf_extract.core.decode.types import SamplingSettings
from gguf_extract.core.index.compiled import CompiledSchema, compile_schema
from gguf_extract.core.vocab.token_table import Vocabulary

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}, "n": {"type": "number"}},
    "required": ["name", "tags", "n"],
}
DOCUMENT = "Ann Lee wrote grep and egrep, then 1.5 more"


@pytest.fixture
def compiled(vocab: Vocabulary) -> CompiledSchema:
    return compile_schema(SCHEMA, vocab, grounded=True)


def state_after(compiled: CompiledSchema, text: bytes) -> DecodeState:
    grounding = compiled.grounding(DOCUMENT)
    state = start_state(compiled, SamplingSettings(), seen=[1, 2, 3], grounding=grounding)
    state.emit(text)
    return state


def _values(state: DecodeState) -> dict[str, Any]:
    """The state's values, each copied (the followers aside)."""
    return {each.name: copy.copy(getattr(state, each.name)) for each in fields(state) if each.name != "followers"}


def _followers_seen(state: DecodeState) -> tuple[object, ...]:
    """What the followers say about the output so far."""
    followers = state.followers
    assert followers.grounding is not None and followers.repeats is not None
    scanner = followers.repeats.scanner
    return (
        followers.zeros.in_string,
        followers.zeros.hold(None, b"0", state.position.guide),
        followers.grounding.snapshot(),
        list(followers.grounding.bodies),
        bytes(scanner.output),
        [None if frame is None else (frame.items, frame.start, frame.end) for frame in scanner.stack],
        followers.repeats.continued_array(b', "'),
        len(followers.history),
    )


def _changed(state: DecodeState, compiled: CompiledSchema) -> set[str]:
    """Every field of `state` changed, the followers fed; the names of the fields changed."""
    state.followers.history.extend([4, 5])
    state.emit(b'Ann", "tags": ["grep", "egrep"], "n": 1.5')
    state.position = state.position.at(compiled.guide(), pending=b" ")
    state.stats.sampled_tokens += 3
    state.record(state.position, 2)
    state.probability = 0.25
    state.logits = np.ones(4, dtype=np.float32)
    state.budget_bound_at = 7
    return {"position", "written", "stats", "choices", "probability", "logits", "budget_bound_at"}


def _same(left: dict[str, Any], right: dict[str, Any]) -> bool:
    def equal(a: Any, b: Any) -> bool:
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
        return bool(a == b)

    return left.keys() == right.keys() and all(equal(left[k], right[k]) for k in left)


def test_a_restored_state_has_every_value_and_follower_as_at_its_snapshot(compiled: CompiledSchema) -> None:
    state = state_after(compiled, b'{"name": "')
    state.record(state.position, 4)
    before, seen = _values(state), _followers_seen(state)
    mark = state.snapshot()
    changed = _changed(state, compiled)
    assert changed == set(before)  # a field added to the state is to be changed here too
    assert all(not _same({k: before[k]}, {k: getattr(state, k)}) for k in changed)
    assert _followers_seen(state) != seen
    for _ in range(2):  # a snapshot may be restored more than once
        state.restore(mark)
        assert _same(_values(state), before) and _followers_seen(state) == seen
        _changed(state, compiled)


def test_a_watch_follows_the_output_only_while_attached_and_is_restored_with_the_rest(compiled: CompiledSchema) -> None:
    state = state_after(compiled, b'{"name": "Ann", "tags": ["grep", "egrep"')
    repeats = state.followers.repeats
    assert repeats is not None
    array = repeats.continued_array(b', "')
    assert array is not None
    watch = repeats.watch(array)
    with state.followers.watching(watch):
        mark = state.followers.snapshot()
        state.emit(b', "lzcmp')  # a guess, taken back
        assert not watch.wants_more
        state.followers.restore(mark)
        state.emit(b', "grep"')
    assert watch.repeats
    assert all(follower is not watch for follower, _ in state.followers.snapshot().output)  # detached


def test_zeros_restored_hold_as_before(vocab: Vocabulary) -> None:
    guide = compile_for({"type": "number"}, vocab).guide()
    zeros = ZeroHolder()
    zeros.feed(b'{"n": 1')
    mark = zeros.snapshot()
    zeros.feed(b'.5, "s": "')
    assert zeros.in_string
    for _ in range(2):
        zeros.restore(mark)
        assert not zeros.in_string
        held = zeros.hold(None, b".0", guide)
        assert held is not None and held.text == b".0"
        zeros.feed(b'", "')
