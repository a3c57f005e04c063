"""Splitting a long document into pieces that fit: every character covered, pieces in order
with a small overlap, each within its room, cut at the strongest boundary available."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_extract.core.documents.split import split_document


def words(text: str) -> int:
    """A stand-in tokenizer: a token per word, and one per 8 characters of a long word."""
    return sum(max(1, math.ceil(len(word) / 8)) for word in text.split()) + text.count("\n")


def check_pieces(document: str, room: int, overlap: int) -> list[tuple[int, int]]:
    pieces = split_document(document, room, words, overlap)
    assert pieces[0].start == 0 and pieces[-1].end == len(document)
    for piece in pieces:
        assert piece.text == document[piece.start : piece.end]
        assert words(piece.text) <= room
    for before, after in itertools.pairwise(pieces):
        assert before.start < after.start <= before.end < after.end  # in order, touching or overlapping
        assert words(document[after.start : before.end]) <= overlap
    return [(piece.start, piece.end) for piece in pieces]


PARTS = st.sampled_from(["alpha ", "beta. ", "gamma\n", "\n\n", "x", "delta! ", "  ", "\t"])
TEXT = st.lists(PARTS, min_size=1, max_size=120).map("".join)


@settings(max_examples=300, deadline=None)
@given(document=TEXT, room=st.integers(1, 40), overlap=st.integers(0, 10))
def test_pieces_cover_the_document_in_order_each_within_its_room(document: str, room: int, overlap: int) -> None:
    check_pieces(document, room, overlap)


def test_pieces_end_at_paragraph_ends_when_paragraphs_fit() -> None:
    paragraphs = [f"Paragraph {n} has a few words. And a second sentence here." for n in range(12)]
    document = "\n\n".join(paragraphs)
    for _, end in check_pieces(document, 40, 6)[:-1]:
        assert document[:end].endswith("\n\n")


def test_the_next_piece_starts_with_the_last_sentence_of_the_one_before() -> None:
    document = "\n\n".join(f"Member {n} joined. The committee met again." for n in range(10))
    pieces = split_document(document, 20, words, 7)
    assert pieces[1].text.startswith("The committee met again.")
    assert len(pieces) > 2


def test_a_paragraph_longer_than_a_piece_is_cut_between_sentences_then_words() -> None:
    sentence = "one two three four five six. "
    document = sentence * 10
    spans = check_pieces(document, 14, 0)
    assert all(document[:end].endswith(". ") for _, end in spans[:-1])
    no_sentences = "word " * 50
    assert all(no_sentences[:end].endswith(" ") for _, end in check_pieces(no_sentences, 7, 2)[:-1])


def test_text_without_spaces_is_cut_into_runs_that_fit() -> None:
    document = "x" * 200
    spans = check_pieces(document, 3, 1)
    assert [end - start for start, end in spans][:-1] == [24] * (len(spans) - 1)


def test_a_document_that_fits_is_one_piece() -> None:
    assert check_pieces("short text.\n\nAnother paragraph.", 100, 10) == [(0, 31)]


@pytest.mark.parametrize("document", ["x" * 200_000, "ab\u00e9" * 70_000, "word. " * 30_000 + "y" * 100_000])
def test_planning_counts_each_run_not_the_rest_of_the_text(document: str) -> None:
    """A run of text without spaces is found among lengths near its own, not by bisecting the
    rest of the text: the characters counted stay a small multiple of the document's (bisecting
    the rest counted about 250 times as many here, quadratic in its length)."""
    counted = 0

    def counting(text: str) -> int:
        nonlocal counted
        counted += len(text)
        return words(text)

    pieces = split_document(document, 50, counting, 5)
    assert pieces[0].start == 0 and pieces[-1].end == len(document)
    assert all(words(piece.text) <= 50 for piece in pieces)
    assert counted < 40 * len(document)
