"""Bitmasks made without listing where tokens lead (core.index.bitmasks) equal a plain walk of
every token, at every prefix of random texts of both automata: strings of free text alone and
beside other alternatives, strings searched for a pattern, names other than the declared ones."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from conftest import compile_for, hand_vocab

from gguf_extract.core.automaton.charnfa import machine_from_tree
from gguf_extract.core.automaton.dfa import DEAD, LazyDFA
from gguf_extract.core.automaton.excluded_words import excluding_machine
from gguf_extract.core.automaton.free_text import free_positions
from gguf_extract.core.automaton.regex import Chars, Lit, Repeat, Seq
from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.index.guide import new_bitmask
from gguf_extract.core.index.token_index import TokenIndex
from gguf_extract.core.vocab.token_table import TokenTable, Vocabulary

SCHEMAS = [
    {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string", "pattern": "x[0-9]+"}}},
    {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "string", "pattern": "^ab"}, {"type": "null"}]},
    {"type": "string", "pattern": "wpc-[0-9]+"},
    {"type": "array", "items": {"type": "string", "pattern": "[a-c]b"}, "maxItems": 3},
    {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 4}, "id": {"type": "string", "minLength": 2}},
        "required": ["name"],
    },
    {"type": "object", "properties": {"ab": {"type": "integer"}, "abc": {"type": "boolean"}}, "required": ["ab"]},
]
TEXT_LIKE = b"abcxwpc-019 " + "é日本".encode()


def plain_walk(dfa: LazyDFA, vocab: Vocabulary, state: int) -> set[int]:
    return {token for token, piece in enumerate(vocab.pieces) if piece and dfa.walk(state, piece) != DEAD}


def bits_of(mask: np.ndarray) -> set[int]:
    return set(np.flatnonzero(np.unpackbits(mask.view(np.uint8), bitorder="little")).tolist())


def assert_masks_agree_along(dfa: LazyDFA, index: TokenIndex, vocab: Vocabulary, texts: list[bytes]) -> None:
    for text in texts:
        for cut in range(len(text) + 1):
            state = dfa.walk(dfa.start, text[:cut])
            assert bits_of(index.packed_mask(state)) == plain_walk(dfa, vocab, state), f"after {text[:cut]!r}"


@pytest.mark.parametrize("every_valid_text", [False, True])
@pytest.mark.parametrize("schema", SCHEMAS)
def test_bitmasks_equal_a_plain_walk(vocab: Vocabulary, schema: object, every_valid_text: bool) -> None:
    compiled = compile_for(schema, vocab)
    dfa, index = compiled.accepting if every_valid_text else (compiled.automaton, compiled.token_index)
    rng = random.Random(7)
    texts = [sample_accepted(dfa, rng, soft_limit=40, prefer=TEXT_LIKE) for _ in range(6)]
    assert_masks_agree_along(dfa, index, vocab, texts)


def test_undeclared_names_take_any_text_and_the_guide_s_mask_agrees(vocab: Vocabulary) -> None:
    compiled = compile_for(SCHEMAS[5], vocab)
    guide = compiled.guide(every_valid_text=True)
    for token in (b'{"', b"ab"):  # a declared name's prefix: undeclared names go on from here too
        guide.advance(vocab.pieces.index(token))
    dfa = compiled.accepting[0]
    reach, _, _ = dfa.text_cover(guide.state)
    assert reach == -1
    bitmask = new_bitmask(vocab.size)
    guide.fill_mask(bitmask)
    assert bits_of(bitmask) == plain_walk(dfa, vocab, guide.state)


def test_free_positions_of_string_automata() -> None:
    anything = Repeat(Chars(((0, 0x10FFFF),)), 0, None)
    searched = machine_from_tree(Seq((anything, Lit(b"x"), anything)))
    assert searched.start in free_positions(searched)
    digits = machine_from_tree(Repeat(Chars(((0x30, 0x39),)), 1, None))
    assert not free_positions(digits)
    other_names = excluding_machine(["ab", "abc"])
    assert other_names.start in free_positions(other_names)


def test_text_masks_hold_the_tokens_beginning_a_text_of_so_many_characters(vocab: Vocabulary) -> None:
    table = TokenTable(vocab)
    shortest = {t: _shortest_text(piece) for t, piece in enumerate(vocab.pieces) if piece}
    for characters in (0, 1, 2, 3, -1):
        expected = {t for t, n in shortest.items() if n is not None and (characters < 0 or n <= characters)}
        assert bits_of(table.text_mask(characters)) == expected
    assert shortest[2 + 0xE6] == 1 and shortest[2 + 0x80] is None  # a lead byte begins a character, a continuation byte none


def _shortest_text(piece: bytes) -> int | None:
    """The fewest characters of a text (a JSON string's unescaped characters) `piece` begins,
    by trying every completion of up to three continuation bytes."""
    tails = [b""] + [bytes(t) for n in (1, 2, 3) for t in itertools.product((0x80, 0x90, 0xA0, 0xBF), repeat=n)]
    lengths = []
    for tail in tails:
        try:
            decoded = (piece + tail).decode("utf-8")
        except UnicodeDecodeError:
            continue
        if all(c >= " " and c not in '"\\' for c in decoded):
            lengths.append(len(decoded))
    return min(lengths, default=None)


ESCAPE_TOKENS = [
    "\\n", '\\"', "\\\\", "\\/", "\\u", "\\u00", "\\u00e9", "\\u0041", "\\u001f", "\\ud83d", "\\ud83d\\ude00", "\\udc00",
    "\\uD83D", "\\u12", "\\x", "a\\nb", 'x\\"y', '\\"x"', '\\\\"', '\\""', '\\n":', 'é\\t', "\\t\\t", "\\b\\f\\r", "\\",
]


@pytest.mark.parametrize(
    ("schema", "prefixes"),
    [
        (
            {"type": "object", "properties": {"ab": {"type": "integer"}, "a\n": {"type": "boolean"}}},
            [b'{"', b'{"a', b'{"ab', b'{"x\\n'],
        ),
        ({"type": "array", "items": {"type": "string"}}, [b'["', b'["ab', b'["\\n']),
        ({"type": "string", "minLength": 3}, [b'"', b'"a', b'"\\u00e9']),
        ({"type": "string", "pattern": "x"}, [b'"', b'"ax']),
    ],
)
def test_escapes_taken_alike_equal_a_plain_walk(schema: object, prefixes: list[bytes]) -> None:
    """Where every escape goes on from a state as from any other of its kind (undeclared names,
    strings of free text without a most), the tokens of text and escapes closing no string are
    worked out once per vocabulary; the mask still equals a plain walk of every token."""
    pieces = list(hand_vocab().pieces) + [token.encode() for token in ESCAPE_TOKENS]
    vocab = Vocabulary.from_pieces(pieces, hand_vocab().eog_ids)
    compiled = compile_for(schema, vocab)
    dfa, index = compiled.accepting
    taken_alike = 0
    for prefix in prefixes:
        state = dfa.walk(dfa.start, prefix)
        assert state != DEAD
        _, telling, _ = dfa.text_cover(state)
        taken_alike += telling != DEAD and dfa.escapes_taken(telling) is not None
        assert bits_of(index.packed_mask(state)) == plain_walk(dfa, vocab, state), f"after {prefix!r}"
    assert taken_alike >= len(prefixes) - 1  # the shortcut is taken, not only the general walk


def test_masks_before_a_name_no_member_declares_equal_a_plain_walk() -> None:
    """Before a key, the tokens going on into a name no member declares (those of its text and
    escapes, worked out once per vocabulary) and those closing it (walked) equal a plain walk."""
    pieces = list(hand_vocab().pieces) + [token.encode() for token in [*ESCAPE_TOKENS, '"\\n', ' "a\\"', '"x":', ', "ab"']]
    vocab = Vocabulary.from_pieces(pieces, hand_vocab().eog_ids)
    compiled = compile_for({"type": "object", "properties": {"ab": {"type": "integer"}, "x": {"type": "null"}}}, vocab)
    dfa, index = compiled.accepting
    for prefix in (b"{", b'{"ab": 1', b'{"ab": 1,', b'{"ab": 1, ', b'{"q": 1, "x": null'):
        state = dfa.walk(dfa.start, prefix)
        assert state != DEAD
        assert bits_of(index.packed_mask(state)) == plain_walk(dfa, vocab, state), f"after {prefix!r}"
