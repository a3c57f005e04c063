"""The DFA's rows and the NFA's closures compiled at install (core/automaton/_rows.c) are the
ones Python builds: the same closures, rows standing for the same successors, the same masks
of both Guides; bad input is refused with an error, never read past."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from conftest import COMPILED_PATH_SCHEMAS, compile_for, masks_along
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_extract.core.automaton import dfa as dfa_module
from gguf_extract.core.automaton import nfa as nfa_module
from gguf_extract.core.automaton.dfa import DEAD, LazyDFA
from gguf_extract.core.automaton.nfa import NFA
from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.index.compiled import accepting_automaton
from gguf_extract.core.vocab.token_table import Vocabulary

compiled_rows = pytest.importorskip("gguf_extract.core.automaton._rows", reason="built without a C compiler")


@pytest.mark.parametrize("every_valid_text", [False, True])
@pytest.mark.parametrize("schema", COMPILED_PATH_SCHEMAS)
def test_masks_are_the_same_with_either_build(
    schema: dict[str, object], every_valid_text: bool, vocab: Vocabulary, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiled = masks_along(schema, vocab, every_valid_text, seed=11)
    monkeypatch.setattr(dfa_module, "_rows", None)
    monkeypatch.setattr(nfa_module, "_rows", None)
    in_python = masks_along(schema, vocab, every_valid_text, seed=11)
    assert len(compiled) > 3 and compiled == in_python


def explored(schema: dict[str, object], vocab: Vocabulary, every_valid_text: bool, seed: int) -> LazyDFA:
    """A fresh automaton, walked along a few sampled documents (rows built as a walk needs them)."""
    dfa = compile_for(schema, vocab).automaton
    if every_valid_text:
        dfa = accepting_automaton(dfa)
    rng = random.Random(seed)
    for _ in range(3):
        dfa.walk(dfa.start, sample_accepted(dfa, rng))
    return dfa


def python_closure(nfa: NFA, state: int) -> tuple[int, ...]:
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(nfa_module, "_rows", None)
        return nfa.closure(state)


@settings(max_examples=20, deadline=None)
@given(schema=st.sampled_from(COMPILED_PATH_SCHEMAS), every_valid_text=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_closures_are_the_ones_python_takes(
    vocab: Vocabulary, schema: dict[str, object], every_valid_text: bool, seed: int
) -> None:
    """On one NFA (the states an expansion names are the same whoever expands first), every
    state's closure as C takes it, ascending, holds what Python's holds."""
    nfa = explored(schema, vocab, every_valid_text, seed).nfa
    for state in range(min(nfa.size, 400)):
        compiled = nfa.closure(state)
        assert list(compiled) == sorted(set(compiled))
        assert set(compiled) == set(python_closure(nfa, state))


def successors_by_set(dfa: LazyDFA, state: int) -> list[tuple[int, ...]]:
    """What each byte leads to from `state`, by the NFA states of the successor (a DFA state's
    number depends on the order states were named in; what it stands for does not)."""
    row = dfa.row(state)
    return [dfa.nfa_states(int(following)) for following in row.tolist()]


@settings(max_examples=20, deadline=None)
@given(schema=st.sampled_from(COMPILED_PATH_SCHEMAS), every_valid_text=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_rows_stand_for_the_successors_python_names(
    vocab: Vocabulary, schema: dict[str, object], every_valid_text: bool, seed: int
) -> None:
    """Along a sampled document, each state's row as C builds it leads, byte by byte, to the
    same NFA states as the row Python builds on a twin automaton over the same NFA, with the
    same distances."""
    dfa = explored(schema, vocab, every_valid_text, seed)
    twin = LazyDFA(dfa.nfa)
    rng = random.Random(seed)
    document = sample_accepted(dfa, rng)
    state, twin_state = dfa.start, twin.start
    with pytest.MonkeyPatch.context() as monkeypatch:
        for byte in document:
            ours = successors_by_set(dfa, state)
            monkeypatch.setattr(dfa_module, "_rows", None)
            monkeypatch.setattr(nfa_module, "_rows", None)
            theirs = successors_by_set(twin, twin_state)
            monkeypatch.undo()
            assert ours == theirs
            assert [dfa.distance(int(s)) for s in dfa.row(state)] == [twin.distance(int(s)) for s in twin.row(twin_state)]
            state, twin_state = int(dfa.row(state)[byte]), int(twin.row(twin_state)[byte])
            assert state != DEAD and twin_state != DEAD
        assert dfa.is_accepting(state) and twin.is_accepting(twin_state)


def test_rows_of_a_growing_table_are_written_where_the_table_now_is(vocab: Vocabulary) -> None:
    """A row that names enough new states to grow the table is written into the grown one."""
    dfa = compile_for({"type": "string", "pattern": "^[a-z]{0,200}$"}, vocab).automaton
    before = len(dfa.table)
    state = int(dfa.row(dfa.start)[ord('"')])
    passed = [state]
    for _ in range(before + 5):
        state = int(dfa.row(state)[ord("a")])
        assert state != DEAD
        passed.append(state)
    assert len(dfa.table) > before
    assert all(int(dfa.table[earlier, ord("a")]) == later for earlier, later in itertools.pairwise(passed))


def test_bad_input_is_refused(vocab: Vocabulary) -> None:
    dfa = compile_for(COMPILED_PATH_SCHEMAS[0], vocab).automaton
    with pytest.raises(ValueError, match="does not exist"):
        compiled_rows.build_row(dfa, dfa.nfa, dfa.state_count)
    with pytest.raises(ValueError, match="does not exist"):
        compiled_rows.build_row(dfa, dfa.nfa, -1)
    with pytest.raises(ValueError, match="outside the NFA's tables"):
        compiled_rows.closure(dfa.nfa, dfa.nfa.size)
    with pytest.raises(AttributeError):
        compiled_rows.build_row(object(), dfa.nfa, 0)
    with pytest.raises(ValueError, match="rows of 256 int32"):
        compiled_rows.build_row(_WideTable(), dfa.nfa, 0)


class _WideTable:
    """A DFA whose table holds 64-bit numbers: refused, never written as 32-bit ones."""

    def __init__(self) -> None:
        self._sets: list[tuple[int, ...]] = [()]
        self._ids: dict[tuple[int, ...], int] = {(): 0}
        self._closures: dict[int, tuple[int, ...]] = {}
        self.table = np.zeros((1, 256), dtype=np.int64)
        self.distance_array = np.zeros(1, dtype=np.int32)
