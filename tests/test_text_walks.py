"""Walks of text inside strings (LazyDFA.walk without a state per byte) end where a walk of
one byte at a time ends, in the automaton the generator writes from and in the one that
accepts every valid text, from every state along sampled documents."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_extract.core.automaton.dfa import DEAD, LazyDFA
from gguf_extract.core.automaton.nfa import build_nfa
from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.index.compiled import compile_automaton

SCHEMAS: list[dict[str, object]] = [
    {"type": "object", "properties": {"name": {"type": "string"}, "note": {"type": "string", "maxLength": 6}}},
    {
        "type": "object",
        "properties": {"settingsButton": {"type": "boolean"}, "settingsButtonEnabled": {"type": "integer"}},
        "additionalProperties": {"type": "string", "minLength": 2},
    },
    {"type": "object", "properties": {"code": {"type": "string", "pattern": "^[a-z]{2,4}-[0-9é]+$"}}, "required": ["code"]},
    {"type": "array", "items": {"type": "string", "pattern": "wpc-[0-9]+"}},
    {"type": "object", "propertyNames": {"maxLength": 5}, "additionalProperties": {"enum": ["añejo", "añadir", "b"]}},
    {"type": "array", "items": {"type": "string", "format": "date"}, "maxItems": 2},
    {"type": "object", "properties": {"word": {"const": "ab cd"}}, "additionalProperties": False},
]
# Text to walk besides pieces of the sampled documents: words of plain text (some with
# characters of two, three and four bytes).
WORDS = ["a", "ab", "settings", "Button", "Enabled", "é", "añ", "ejo", "wpc-", "12", "2024", "-0", " cd", "ab cd", "€", "𝄞x"]


def byte_walk(dfa: LazyDFA, state: int, data: bytes) -> int:
    """Where `data` leads from `state`, one byte's step at a time."""
    for byte in data:
        state = dfa.step(state, byte)
        if state == DEAD:
            break
    return state


def fresh(generator: LazyDFA, every_valid_text: bool) -> LazyDFA:
    """A new automaton over the generator's tree: no state named, no cell built."""
    return LazyDFA(build_nfa(generator.tree, accepting_all=every_valid_text))


@pytest.mark.parametrize("every_valid_text", [False, True])
@pytest.mark.parametrize("schema", SCHEMAS)
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_text_walks_end_where_byte_walks_do(schema: dict[str, object], every_valid_text: bool, seed: int) -> None:
    generator = compile_automaton(schema).dfa
    rng = random.Random(seed)
    document = sample_accepted(fresh(generator, every_valid_text), rng, prefer=b"abcdeSBE\xc3\xa9- 0123456789")
    for cut in sorted({rng.randrange(len(document)) for _ in range(6)}):
        dfa = fresh(generator, every_valid_text)
        state = byte_walk(dfa, dfa.start, document[:cut])
        pieces = [document[cut : cut + rng.randint(1, 8)] for _ in range(3)] + [word.encode() for word in WORDS]
        pieces.append(document[cut:])  # text, then quotes and all that follows them
        for piece in pieces:
            walked = dfa.walk(state, piece)  # first: the cells after `state` are not built yet
            assert walked == byte_walk(dfa, state, piece), (document, cut, piece)


def test_a_walk_of_text_names_no_state_per_byte() -> None:
    """Inside a string searched for a pattern, a long word of text leads to one new DFA state."""
    dfa = compile_automaton({"type": "string", "pattern": "^[a-z]*x[a-z]*$"}).dfa
    state = dfa.walk(dfa.start, b'"')
    before = dfa.state_count
    after = dfa.walk(state, b"abcdefghxyz")
    assert after != DEAD and dfa.state_count == before + 1
    assert dfa.walk(after, b'"') != DEAD and dfa.is_accepting(dfa.walk(after, b'"'))
    assert dfa.walk(state, b"abcdefgh") != DEAD and not dfa.is_accepting(dfa.walk(dfa.walk(state, b"abcdefgh"), b'"'))


def test_each_run_of_text_is_tried_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the NFA cannot tell where a run of text leads, the walk goes on a byte at a time
    and does not ask again within the run: a walk of a document's span costs time in
    proportion to its length."""
    dfa = compile_automaton({"type": "string"}).dfa
    asked: list[bytes] = []

    def untold(state: int, data: bytes) -> None:
        asked.append(data)

    monkeypatch.setattr(dfa, "_after_plain_text", untold)
    text = b"word " * 2_000
    assert dfa.walk(dfa.start, b'"' + text + b'"') != DEAD
    assert asked == [text]
