"""Walks of text inside strings (LazyDFA.walk without a state per byte) end where a walk of
one byte at a time ends, in the automaton the generator writes from and in the one that
accepts every valid text, from every state along sampled documents."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_extract.core.automaton import dfa as dfa_module
from gguf_extract.core.automaton.dfa import DEAD, LazyDFA
from gguf_extract.core.automaton.nfa import build_nfa
from gguf_extract.core.automaton.regex import Lit, Machine
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
PLAIN_TEXT = re.compile(rb'[^\x00-\x1f"\\]+')  # a run of text a JSON string holds unescaped
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


def test_a_document_span_is_walked_in_time_in_proportion_to_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the NFA cannot tell where a token's text leads, the walk steps a byte and asks
    again (a step may reach states that tell); a run longer than a token's (a document's span,
    which grounding walks) is never asked about, nor searched again at every byte."""
    dfa = compile_automaton({"type": "string"}).dfa
    asked: list[bytes] = []

    def untold(state: int, data: bytes) -> None:
        asked.append(data)

    monkeypatch.setattr(dfa, "_after_plain_text", untold)
    word = b"a word"
    assert dfa.walk(dfa.start, b'"' + word + b'"') != DEAD
    assert asked == [word[start:] for start in range(len(word))]
    searched: list[int] = []

    class CountedSearch:
        def match(self, data: bytes, at: int) -> object:
            searched.append(at)
            return PLAIN_TEXT.match(data, at)

    monkeypatch.setattr(dfa_module, "_PLAIN_TEXT", CountedSearch())
    fresh_dfa = compile_automaton({"type": "string"}).dfa  # no cell built
    span = b"word " * 2_000
    assert fresh_dfa.walk(fresh_dfa.start, b'"' + span + b'"') != DEAD
    assert asked == [word[start:] for start in range(len(word))]
    assert len(searched) <= 3  # the quote, the span once, the closing quote


def test_a_string_automaton_guessing_widely_is_left_to_the_dfa() -> None:
    """A walk of text over a string automaton follows a few positions at once; past that (a
    machine of overlapping edges) it says it does not tell, and the DFA's cells serve."""

    def after_a(targets: int) -> tuple[int, ...] | None:
        edges = (tuple((0x61, 0x61, target) for target in range(1, targets + 1)), *(((0x61, 0x61, 1),),) * targets)
        machine = Machine(edges=edges, start=0, accepts=frozenset(range(1, targets + 1)))
        nfa = build_nfa(Lit(b"x"))
        state = nfa.named(machine, nfa.named(Lit(b'"'), nfa.accept))
        return nfa.after_plain_text(state, b"a", "a")

    few = after_a(5)
    assert few is not None and len(few) == 5
    assert after_a(9) is None
