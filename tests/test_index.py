"""Token index and cursor on a hand-made vocabulary, checked against a brute-force walk."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from conftest import CONTROL, EOS, compile_for, random_walk

from gguf_extract.core.automaton.dfa import DEAD
from gguf_extract.core.automaton.regex import text_nodes
from gguf_extract.core.index.token_index import TokenIndex, Transitions
from gguf_extract.core.vocab.token_table import TokenTable, Vocabulary

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 6}, "age": {"type": "integer", "minimum": 0, "maximum": 130}},
    "required": ["name"],
}


def brute_force(compiled, state: int) -> dict[int, int]:  # type: ignore[no-untyped-def]
    allowed = {}
    for token, piece in enumerate(compiled.vocab.pieces):
        if piece:
            end = compiled.automaton.walk(state, piece)
            if end != DEAD:
                allowed[token] = end
    return allowed


def assert_index_agrees_along_random_documents(compiled, seeds: int) -> None:  # type: ignore[no-untyped-def]
    """At every prefix of random accepted documents, the index equals a brute-force walk."""
    for seed in range(seeds):
        text = random_walk(compiled, seed).encode()
        for cut in range(len(text) + 1):
            state = compiled.automaton.walk(compiled.automaton.start, text[:cut])
            transitions = compiled.token_index.transitions(state)
            found = dict(zip(transitions.token_ids.tolist(), transitions.end_states.tolist(), strict=True))
            assert found == brute_force(compiled, state), f"after {text[:cut]!r}"


@pytest.mark.parametrize("prefix", ["", '{"', '{"name": "', '{"name": "ab', '{"name": "abc", "age": 1'])
def test_index_matches_brute_force(prefix: str, vocab: Vocabulary) -> None:
    compiled = compile_for(PERSON, vocab)
    state = compiled.automaton.walk(compiled.automaton.start, prefix.encode())
    transitions = compiled.token_index.transitions(state)
    assert dict(zip(transitions.token_ids.tolist(), transitions.end_states.tolist(), strict=True)) == brute_force(compiled, state)
    assert len(set(transitions.token_ids.tolist())) == len(transitions.token_ids)
    assert list(compiled.guide().allowed_token_ids()) == sorted(compiled.guide().allowed_token_ids())


def test_cursor_walks_a_document_token_by_token(vocab: Vocabulary) -> None:
    compiled = compile_for(PERSON, vocab)
    assert compiled.guide(every_valid_text=True).forced_text() == b'{"'  # any member, or an undeclared one, first
    cursor = compiled.guide()
    assert cursor.forced_text() == b'{"name": "'
    for piece in ['{"', "name", '": ', '"', "John", '",', ' "', "age", '":', " ", "12", "}"]:
        token = vocab.pieces.index(piece.encode())
        assert token in cursor.allowed_token_ids()
        cursor.advance(token)
    assert cursor.is_accepting() and cursor.is_finished()
    assert EOS in cursor.allowed_token_ids()


def test_cursor_refuses_disallowed_and_control_tokens(vocab: Vocabulary) -> None:
    cursor = compile_for(PERSON, vocab).guide()
    assert CONTROL not in cursor.allowed_token_ids() and EOS not in cursor.allowed_token_ids()
    with pytest.raises(ValueError):
        cursor.advance(vocab.pieces.index(b"["))
    with pytest.raises(ValueError):
        cursor.advance(CONTROL)


def test_multibyte_tokens_split_characters_safely(vocab: Vocabulary) -> None:
    compiled = compile_for({"type": "string", "maxLength": 2}, vocab)
    cursor = compiled.guide()
    cursor.advance(vocab.pieces.index(b'"'))
    cursor.advance(vocab.pieces.index("日本".encode()))
    assert vocab.pieces.index(b'"') in cursor.allowed_token_ids()
    assert vocab.pieces.index("é".encode()) not in cursor.allowed_token_ids()  # a third character
    first_half = "é".encode()[:1]
    assert vocab.pieces.index(first_half) not in cursor.allowed_token_ids()


def test_prefix_lookup(vocab: Vocabulary) -> None:
    table = TokenTable(vocab)
    found = {vocab.pieces[i] for i in table.with_prefix(b'"')}
    assert found == {p for p in vocab.pieces if p.startswith(b'"')}
    assert {vocab.pieces[i] for i in table.with_prefix(b"\xff")} == {b"\xff"}


def test_walks_stay_valid_for_every_cached_state(vocab: Vocabulary) -> None:
    compiled = compile_for(PERSON, vocab)
    for seed in range(30):
        json.loads(random_walk(compiled, seed))
    states = np.arange(1, compiled.automaton.state_count)
    for state in states[:40]:
        transitions = compiled.token_index.transitions(int(state))
        assert (transitions.end_states != DEAD).all()


WIDE_SCHEMAS = [
    {"type": "string", "maxLength": 3},
    {"type": "string", "minLength": 2, "maxLength": 40},
    {"type": "string"},
    {"type": "string", "pattern": "^[a-c ]{0,5}x?$"},
    {"type": "array", "items": {"type": "string", "maxLength": 4}, "maxItems": 3},
    {"type": "object", "properties": {"n": {"type": "string", "maxLength": 2}, "m": {"enum": ["ab", "a b"]}}},
    {"type": "string", "format": "email", "maxLength": 12},
    {"type": "string", "pattern": "^[a-z0-9_-]+$"},
    {"type": "string", "pattern": "^[a-zA-Z0-9 ]+$"},
    {"type": "string", "pattern": "^[a-zA-Z0-9 ]{3,9}$"},
    {"type": "string", "pattern": "^[A-Za-z ]{0,6}$"},
    {"type": "string", "pattern": "^[a-z]{2,4}-[0-9]{1,3}$"},
    {"type": "object", "patternProperties": {"^[a-z]+$": {"type": "integer"}}, "additionalProperties": False, "maxProperties": 2},
]


@pytest.mark.parametrize("schema", WIDE_SCHEMAS, ids=[json.dumps(s) for s in WIDE_SCHEMAS])
def test_index_matches_brute_force_at_every_prefix_of_random_documents(schema: object) -> None:
    """States inside strings take the plain-slice shortcut; every one must agree with a walk."""
    from conftest import hand_vocab

    assert_index_agrees_along_random_documents(compile_for(schema, hand_vocab()), seeds=8)


def test_text_run_states_are_recognised_and_build_nothing_ahead(vocab: Vocabulary) -> None:
    """Inside a long bounded string the index names the positions ahead without building them."""
    compiled = compile_for({"type": "string", "minLength": 2, "maxLength": 5000}, vocab)
    state = compiled.automaton.walk(compiled.automaton.start, b'"ab')
    assert compiled.automaton.text_run(state) == (0, 4998)
    built_before = int((compiled.automaton.table[: compiled.automaton.state_count, 0] != -1).sum())
    transitions = compiled.token_index.transitions(state)
    built_after = int((compiled.automaton.table[: compiled.automaton.state_count, 0] != -1).sum())
    assert built_after - built_before < 10
    found = dict(zip(transitions.token_ids.tolist(), transitions.end_states.tolist(), strict=True))
    assert found == brute_force(compiled, state)


PLAIN_STRINGS = [
    ({"type": "string"}, b'"ab', ""),
    ({"type": "string", "minLength": 1, "maxLength": 9}, b'"', ""),
    ({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}, b'{"name": "x', "/properties/name"),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, b'{"k', None),  # a key: no label
]


@pytest.mark.parametrize(("schema", "prefix", "pointer"), PLAIN_STRINGS, ids=[json.dumps(s[0]) for s in PLAIN_STRINGS])
def test_plain_strings_are_text_and_the_index_takes_the_text_run_shortcut(
    schema: object, prefix: bytes, pointer: str | None, vocab: Vocabulary, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiled = compile_for(schema, vocab)
    dfa = compiled.automaton
    assert text_nodes(dfa.tree)
    state = dfa.walk(dfa.start, prefix)
    assert dfa.text_run(state) is not None
    assert dfa.starts_text(state) == prefix.endswith(b'"')
    label = dfa.text_label(state)
    assert (label.pointer if label is not None else None) == pointer
    shortcuts: list[int] = []
    walk_text_run = TokenIndex._walk_text_run

    def spy(index: TokenIndex, at: int, run: tuple[int, int]) -> Transitions:
        shortcuts.append(at)
        return walk_text_run(index, at, run)

    monkeypatch.setattr(TokenIndex, "_walk_text_run", spy)
    transitions = compiled.token_index.transitions(state)
    assert shortcuts == [state]
    assert dict(zip(transitions.token_ids.tolist(), transitions.end_states.tolist(), strict=True)) == brute_force(compiled, state)


CONSTRAINED_STRINGS = [
    ({"type": "string", "pattern": "^[a-z ]+$"}, b'"ab'),
    ({"type": "string", "format": "date"}, b'"20'),
    ({"type": "string", "format": "email", "maxLength": 20}, b'"ab'),
    ({"type": "string", "maxLength": 9, "not": {"enum": ["abc"]}}, b'"ab'),
    ({"enum": ["abc", "abd"]}, b'"ab'),
]


@pytest.mark.parametrize(("schema", "prefix"), CONSTRAINED_STRINGS, ids=[json.dumps(s[0]) for s in CONSTRAINED_STRINGS])
def test_strings_with_a_pattern_format_or_excluded_values_are_not_text(schema: object, prefix: bytes, vocab: Vocabulary) -> None:
    dfa = compile_for(schema, vocab).automaton
    assert not text_nodes(dfa.tree)
    state = dfa.walk(dfa.start, prefix)
    assert all(dfa.nfa.text_run(member) is None for member in dfa.nfa_states(state))


@pytest.mark.parametrize("every_valid_text", [False, True])
def test_an_open_object_s_automata_read_back_from_a_pickle_walk_as_before(vocab: Vocabulary, every_valid_text: bool) -> None:
    """Each automaton of an object that may hold undeclared properties pickles (its undeclared
    member is made by a class, not a closure), and walks the same texts read back."""
    compiled = compile_for({"type": "object", "properties": {"a": {"type": "integer"}}}, vocab)
    original = compiled.accepting[0] if every_valid_text else compiled.automaton
    text = b'{"x": [1], "a": 2}' if every_valid_text else b'{"a": 2}'
    assert original.is_accepting(original.walk(original.start, text))
    dfa = pickle.loads(pickle.dumps(original))
    assert dfa.is_accepting(dfa.walk(dfa.start, text))
    assert dfa.walk(dfa.start, b'{"x": 1}') == 0 or every_valid_text


def test_text_runs_are_recognised_in_an_automaton_read_back_from_a_pickle(vocab: Vocabulary) -> None:
    """Recognised by type, a string body stays text in a copy of the tree."""
    dfa = pickle.loads(pickle.dumps(compile_for({"type": "string", "maxLength": 50}, vocab).automaton))
    assert dfa.text_run(dfa.walk(dfa.start, b'"abc')) == (0, 47)


def test_strings_inside_alternatives_are_not_text_runs(vocab: Vocabulary) -> None:
    """Where text may also continue something else, the structural shortcut must not apply."""
    schema = {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "string", "pattern": "^x+$"}]}
    compiled = compile_for(schema, vocab)
    for prefix in (b'"', b'"x', b'"xx', b'"xxx'):
        state = compiled.automaton.walk(compiled.automaton.start, prefix)
        transitions = compiled.token_index.transitions(state)
        found = dict(zip(transitions.token_ids.tolist(), transitions.end_states.tolist(), strict=True))
        assert found == brute_force(compiled, state), prefix


def test_long_token_lists_are_kept_only_for_the_latest_states(vocab: Vocabulary, monkeypatch: pytest.MonkeyPatch) -> None:
    from gguf_extract.core.index import token_index as index

    monkeypatch.setattr(index, "_WIDE_SET", 20)
    monkeypatch.setattr(index, "_WIDE_SETS_KEPT", 2)
    compiled = compile_for({"type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 3}, vocab)
    for seed in range(4):
        text = random_walk(compiled, seed).encode()
        for cut in range(len(text) + 1):
            state = compiled.automaton.walk(compiled.automaton.start, text[:cut])
            for _ in range(2):  # evicted or not, the set is the same
                transitions = compiled.token_index.transitions(state)
                found = dict(zip(transitions.token_ids.tolist(), transitions.end_states.tolist(), strict=True))
                assert found == brute_force(compiled, state)
            assert len(compiled.token_index._wide) <= 2
    # Kept for good: sets whose own list is short, however many tokens their groups by length hold.
    assert all(t.own_size <= 20 for t in compiled.token_index.computed().values())


MIXED_TOKENS = [
    "é1",
    "éa",
    "aé",
    "a日",
    "1é",
    "ab1",
    'é"',
    "日本x",
    "x-",
    "-x",
    "zz",
    " é",
    "ü ü",
    "12-",
    "\\é",
    "😀",
    "a😀",
    "é😀",
    "😀1",
]
SEARCH_SCHEMAS = [
    {"type": "string", "pattern": "\\d{2}-x"},
    {"type": "string", "pattern": "\\d.\\d"},
    {"type": "string", "pattern": "[a-z]+é"},
    {"type": "string", "pattern": "^[^0-9]*$"},
    {"type": "string", "pattern": "^[a-z日本é]{1,6}$"},
    {"type": "object", "patternProperties": {"[0-9]x": {"type": "integer"}}, "additionalProperties": False, "maxProperties": 2},
]


@pytest.mark.parametrize("schema", SEARCH_SCHEMAS, ids=[json.dumps(s) for s in SEARCH_SCHEMAS])
def test_class_runs_with_non_ascii_characters_match_brute_force(schema: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tokens mixing class bytes with non-ASCII characters are allowed by length only where
    every such character keeps to the run; a pattern searched for anywhere in a string loops
    on every character but the ones that start a match."""
    from conftest import hand_vocab

    from gguf_extract.core.index import token_index as index

    base = hand_vocab()
    vocabulary = Vocabulary.from_pieces(base.pieces + tuple(t.encode() for t in MIXED_TOKENS), base.eog_ids)
    monkeypatch.setattr(index, "_CLASS_RUN_CANDIDATES", 0)  # the shortcut wherever it may apply
    classes: list[int] = []
    text_class = index.TokenIndex._text_class

    def counted(self: index.TokenIndex, members: np.ndarray) -> object:  # type: ignore[type-arg]
        classes.append(int(members.sum()))
        return text_class(self, members)

    monkeypatch.setattr(index.TokenIndex, "_text_class", counted)
    assert_index_agrees_along_random_documents(compile_for(schema, vocabulary), seeds=10)
    assert classes, "no state took the byte-class shortcut"


def test_transitions_in_parts_answer_as_whole_arrays_do() -> None:
    from gguf_extract.core.index.token_index import Part, Transitions

    ids = np.array([7, 3, 9], dtype=np.int32)
    chain = np.array([40, 41, 42, 43], dtype=np.int32)
    grouped = Part(ids, chain, lengths=np.array([1, 1, 3], dtype=np.int32))
    listed = Part(np.array([5, 11], dtype=np.int32), np.array([50, 51], dtype=np.int32))
    transitions = Transitions((grouped, listed))
    assert transitions.token_ids.tolist() == [7, 3, 9, 5, 11]
    assert transitions.end_states.tolist() == [41, 41, 43, 50, 51]
    assert [transitions.end_of(t) for t in (7, 9, 11, 4)] == [41, 43, 51, DEAD]
    assert (transitions.size, transitions.own_size) == (5, 2)
    assert transitions.is_well_formed()
    assert not Transitions((Part(ids, chain, lengths=np.array([1, 4, 0], dtype=np.int32)),)).is_well_formed()
    assert not Transitions((Part(ids, chain[:2]),)).is_well_formed()
