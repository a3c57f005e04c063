"""Grounded values and evidence spans hold only text a reader sees, whole words of it: a control
or format character separates words and never enters a grounded value, and a span never
starts or ends inside a word (for strings and numbers alike), with the fake model over the
hand-made vocabulary."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from conftest import FakeModel, searched_record
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from review_dom import parse

from gguf_extract.core.decode.decoder import Decoder
from gguf_extract.core.decode.types import SamplingSettings
from gguf_extract.core.grounding.document_search import DocumentSearch
from gguf_extract.core.grounding.tables import GroundingText, collapse_whitespace
from gguf_extract.core.index.compiled import compile_schema
from gguf_extract.core.results.evidence import ValueEvidence, gather
from gguf_extract.core.review.evidence import ReviewDocument
from gguf_extract.core.review.page import render_review
from gguf_extract.core.vocab.token_table import Vocabulary

UNSEEN = ["\x01", "\x1b", "\x7f", "\x85", "\u00ad", "\u200b", "\u200d", "\u202c", "\u202e", "\u2066", "\ufeff"]


def _whole(document: str, value: str) -> bool:
    """Whether grounding lets `value` be written, all of it, from `document`."""
    return GroundingText.of(document).occurs(json.dumps(value, ensure_ascii=False)[1:-1].encode(), whole=True)


def test_a_control_character_separates_words_and_stays_out_of_values() -> None:
    document = "Name: Maria\x01Gonzales"
    for value in ["Maria", "Gonzales", "Name: Maria"]:
        assert _whole(document, value), value
    for value in ["MariaGonzales", "Maria Gonzales", "Maria\x01Gonzales", "Mari", "onzales"]:
        assert not _whole(document, value), value
    assert not GroundingText.of(document).occurs(b"MariaG")  # not even as the start of a value


def test_spaces_beside_a_control_character_lead_nowhere_and_are_left_out() -> None:
    """A value written up to a space before a control character could neither go on nor end
    (no value ends with a space): the space is not offered."""
    text = GroundingText.of("Maria \x01 \u200b Gonzales")
    assert text.escaped == b"Maria\x00Gonzales"
    assert not text.occurs(b"Maria ") and text.occurs(b"Maria", whole=True)


def test_format_and_bidi_characters_never_enter_a_value() -> None:
    document = "\u202eairaM\u202c Gonzales, \u2066Lisbon\u2069, \ufeffPorto, zero\u200bwidth"
    for value in ["airaM", "Gonzales", "Lisbon", "Porto", "zero", "width"]:
        assert _whole(document, value), value
    for value in ["airaM\u202c Gonzales", "airaM Gonzales", "\u202eairaM", "Lisbon\u2069", "zerowidth", "zero\u200bwidth"]:
        assert not _whole(document, value), value


def run(vocab: Vocabulary, schema: Any, document: str, seed: int) -> tuple[Any, dict[str, ValueEvidence]]:
    compiled = compile_schema(schema, vocab, grounded=True)
    grounding = compiled.grounding(document)
    assert grounding is not None
    decoder = Decoder(FakeModel(vocab, seed), compiled, SamplingSettings(max_tokens=400, seed=seed), grounding=grounding)
    output = b"".join(decoder.run())
    return json.loads(output), gather(output, document, decoder.choices, searched_record(grounding))


DOCUMENTS = st.lists(st.sampled_from([*"ab John日.-12 \n", "John", "ab", *UNSEEN]), min_size=1, max_size=24).map("".join)
NAMES = {"type": "array", "items": {"type": "string"}, "maxItems": 4}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=DOCUMENTS, seed=st.integers(0, 2**16))
@example(document="ab\x01John", seed=0)
@example(document="\u202eab\u202c John", seed=0)
def test_every_grounded_value_is_text_a_reader_sees_and_has_a_span(vocab: Vocabulary, document: str, seed: int) -> None:
    """`document` is what `extract text` prints for a file holding it (a final newline aside)."""
    value, evidence = run(vocab, NAMES, document, seed)
    for index, item in enumerate(value):
        found = evidence[f"/{index}"]
        assert found.grounded is True  # nothing in the schema can release a string
        assert collapse_whitespace(item) in collapse_whitespace(document)
        assert not [char for char in item if unicodedata.category(char) in ("Cc", "Cf", "Cs")]
        assert item == "" or found.span is not None


def test_a_span_is_never_found_inside_a_word() -> None:
    document = "THE SOFTWARE IS PROVIDED WITHOUT WARRANTY, LIMITED. Filed DOC1 in 2024."
    search = DocumentSearch(document)
    for value in ["MIT", "20", "1", "024", "OC1", "SOFT", "Fil"]:
        assert search.span(value, 0) is None, value
    for value in ["LIMITED", "2024", "DOC1", "WARRANTY, LIMITED."]:
        assert search.span(value, 0) == (document.index(value), document.index(value) + len(value)), value


def test_a_span_takes_the_nearest_occurrence_at_word_edges() -> None:
    document = "In 2024, aged 20, she moved; 2020 was before."
    assert DocumentSearch(document).span("20", len(document)) == (14, 16)


def test_numbers_have_no_span_inside_longer_numbers_or_names() -> None:
    evidence = gather(b'{"age": 20, "id": 1, "n": 3, "ok": true}', "Born 2024 as DOC1; 3.10 released; ok", [])
    assert [evidence[pointer].span for pointer in ("/age", "/id", "/n", "/ok")] == [None, None, None, None]
    found = gather(b"[20, 1, 3.5]", "aged 20, item 1, 3.5.", [])
    assert [found[pointer].span for pointer in ("/0", "/1", "/2")] == [(5, 7), (14, 15), (17, 20)]


def test_a_number_joined_by_a_hyphen_has_its_span_but_not_one_signed_otherwise() -> None:
    document = "a 34-year-old, born 2024-06-14; it was -5 C"
    found = gather(b"[34, 2024, 14, 5, -5, 6]", document, [])
    spans = [found[f"/{index}"].span for index in range(6)]
    assert spans == [(2, 4), (20, 24), (28, 30), None, (39, 41), None]  # 5 is not -5; 6 is not 06


def test_a_value_found_only_inside_words_shows_as_ungrounded_on_the_review_page() -> None:
    text = "THE SOFTWARE IS PROVIDED WITHOUT WARRANTY, LIMITED TO 2024."
    output = b'{"license": "MIT", "year": 20}'
    evidence = {pointer: found.as_json() for pointer, found in gather(output, text, []).items()}
    page = render_review(
        [ReviewDocument("LICENSE", text, {"source": "LICENSE", "data": json.loads(output), "evidence": evidence})]
    )
    section = parse(page).find("section", "doc")
    table = [[cell.text() for cell in row.find_all("td")] for body in section.find_all("tbody") for row in body.find_all("tr")]
    assert [row[-1] for row in table] == ["ungrounded", "ungrounded"]
    assert section.find_all("mark") == []  # nothing in the text is highlighted


WORDS = st.lists(st.sampled_from([*'ab J2日.-_ \n"\\', "John", "2024", "ab"]), min_size=1, max_size=20).map("".join)


@settings(max_examples=300, deadline=None)
@given(document=WORDS, data=st.data())
def test_a_value_has_a_span_exactly_where_grounding_would_let_it_be_written(document: str, data: st.DataObject) -> None:
    """Evidence and grounding share one notion of a word's edges: a value (neither starting nor
    ending with a space) is found in the document where grounding could have written it."""
    collapsed = collapse_whitespace(document)
    start = data.draw(st.integers(0, len(collapsed) - 1))
    value = collapsed[start : data.draw(st.integers(start + 1, len(collapsed)))].strip(" ")
    if value:
        assert (DocumentSearch(document).span(value, 0) is not None) == _whole(document, value), value


def test_a_value_across_a_gap_between_columns_has_no_span_as_grounding_cannot_write_it() -> None:
    """Three spaces or a tab within a line part two columns (a manual page's header): grounding
    writes no value across them, so evidence finds none there either; one space joins."""
    for document in ["aaa   a", "GNU grep 3.8      2019-12-29", "name\tJohn"]:
        collapsed = " ".join(document.split())
        assert not _whole(document, collapsed)
        assert DocumentSearch(document).span(collapsed, 0) is None, document
    assert _whole("aaa a", "aaa a") and DocumentSearch("aaa a").span("aaa a", 0) == (0, 5)
    assert DocumentSearch("aaa\n   a").span("aaa a", 0) == (0, 8)  # a line break's run joins lines
