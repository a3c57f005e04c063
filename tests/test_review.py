"""The review page, read back with an HTML parser: highlights cut exactly the spans, labels,
table rows, low-confidence marks, hostile text kept as text, large batches, atomic writing."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from review_dom import Element, parse, text_before

from gguf_extract.core.errors import OutputError, ReviewError
from gguf_extract.core.review.assets import PAGE_SCRIPT
from gguf_extract.core.review.evidence import ReviewDocument, json_leaves
from gguf_extract.core.review.markup import visible_text
from gguf_extract.core.review.page import render_review, write_review

PERSON = "Maria Gonzales, 34, architect in Lisbon.\nReach her at maria@example.com."


def envelope(data: Any, evidence: dict[str, Any], source: str = "doc.txt") -> dict[str, Any]:
    return {"source": source, "data": data, "evidence": evidence}


def entry(span: list[int] | None, confidence: float | None, **extra: Any) -> dict[str, Any]:
    return {"span": span, "confidence": confidence, **extra}


def person(source: str = "samples/person.txt") -> ReviewDocument:
    data = {"name": "Maria Gonzales", "first": "Maria", "age": 34, "city": "Lisbon", "born": "1990", "retired": None}
    evidence = {
        "/name": entry([0, 14], 0.97, grounded=True),
        "/first": entry([0, 5], 0.41, grounded=True),
        "/age": entry([16, 18], 0.8),
        "/city": entry([32, 38], 0.62, grounded=True),
        "/born": entry(None, 0.12),
        "/retired": entry(None, None),
    }
    return ReviewDocument(source, PERSON, envelope(data, evidence, source))


def span_texts(section: Element) -> dict[int, str]:
    """Each field's highlighted text: the pieces that name it, in order."""
    texts: dict[int, str] = {}
    for mark in section.find_all("mark", "seg"):
        for index in mark.attrs["data-spans"].split():
            texts[int(index)] = texts.get(int(index), "") + mark.text()
    return texts


def rows(section: Element) -> list[Element]:
    return [row for body in section.find_all("tbody") for row in body.find_all("tr")]


def cells(row: Element) -> list[str]:
    return [cell.text() for cell in row.find_all("td")]


# ---- highlights ---------------------------------------------------------------------------

TEXT_ALPHABET = st.sampled_from([*"ab c\n\t<>&\"'é日🎉", "\u00a0"])


@st.composite
def text_and_spans(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]]]:
    text = draw(st.text(TEXT_ALPHABET, min_size=1, max_size=60))
    bound = st.integers(0, len(text))
    pairs = draw(st.lists(st.tuples(bound, bound), max_size=12))
    return text, [(min(pair), max(pair)) for pair in pairs]


@settings(max_examples=150, deadline=None)
@given(text_and_spans())
def test_every_span_highlights_exactly_its_text_and_is_labelled_at_its_start(case: tuple[str, list[tuple[int, int]]]) -> None:
    text, spans = case
    data = [f"v{index}" for index in range(len(spans))]
    evidence = {f"/{index}": entry(list(span), 0.5) for index, span in enumerate(spans)}
    page = parse(render_review([ReviewDocument("d", text, envelope(data, evidence))]))
    section = page.find("section", "doc")
    container = section.find("div", "text")
    assert container.text() == text  # labels add no text; nothing is lost or doubled
    highlighted = span_texts(section)
    for index, (start, end) in enumerate(spans):
        assert highlighted.get(index, "") == text[start:end]
        label = container.find("span", "tag", data_field=str(index))
        assert label.attrs["data-pointer"] == f"/{index}"
        assert text_before(container, label) == start
    assert len(rows(section)) == len(spans)


def test_overlapping_and_nested_spans_share_pieces_coloured_by_the_innermost() -> None:
    text = "0123456789abcdefghij"
    data = {"outer": "x", "inner": "x", "cross": "x", "same": "x"}
    evidence = {
        "/outer": entry([0, 12], 0.95),
        "/inner": entry([2, 5], 0.2),
        "/cross": entry([8, 16], 0.6),
        "/same": entry([2, 5], 0.75),
    }
    section = parse(render_review([ReviewDocument("d", text, envelope(data, evidence))])).find("section", "doc")
    assert span_texts(section) == {0: text[0:12], 1: text[2:5], 2: text[8:16], 3: text[2:5]}
    pieces = {mark.text(): mark for mark in section.find_all("mark", "seg")}
    assert set(pieces) == {"01", "234", "567", "89ab", "cdef"}
    assert pieces["234"].attrs["data-spans"] == "0 1 3" and {"nested", "c0"} <= pieces["234"].classes()
    assert pieces["234"].attrs["data-inner"] == "1"  # same length as /same: the less sure one wins
    assert "c4" in pieces["01"].classes() and "nested" not in pieces["01"].classes()
    assert pieces["89ab"].attrs["data-spans"] == "0 2" and "c2" in pieces["89ab"].classes()  # the shorter one
    labels = [label.attrs["data-pointer"] for label in section.find_all("span", "tag")]
    assert labels == ["/outer", "/inner", "/same", "/cross"]  # at each start, the longer first


def test_text_that_browsers_would_change_keeps_offsets_and_renders() -> None:
    text = "a\r\nb\rc\x00d\x85e\udcffé\x7f\r"
    spans = [(0, 3), (2, 4), (4, 6), (6, 9), (9, 11), (11, 13), (12, 13)]
    data = ["x"] * len(spans)
    evidence = {f"/{index}": entry(list(span), 0.9) for index, span in enumerate(spans)}
    page = render_review([ReviewDocument("d", text, envelope(data, evidence))])
    page.encode("utf-8")  # no lone surrogate reaches the page
    section = parse(page).find("section", "doc")
    highlighted = span_texts(section)
    for index, (start, end) in enumerate(spans):
        assert highlighted.get(index, "") == visible_text(text[start:end], text[end : end + 1])
    assert section.find("div", "text").text() == "a\nb\nc\u2400d\ufffde\ufffdé\u2421\n"


def test_empty_span_is_a_label_without_highlight() -> None:
    document = ReviewDocument("d", "abc", envelope({"empty": ""}, {"/empty": entry([1, 1], 0.9)}))
    section = parse(render_review([document])).find("section", "doc")
    container = section.find("div", "text")
    assert section.find_all("mark") == []
    label = container.find("span", "tag")
    assert "empty" in label.classes() and text_before(container, label) == 1


# ---- the table ----------------------------------------------------------------------------


def test_table_lists_every_leaf_in_document_order_with_value_confidence_and_span() -> None:
    section = parse(render_review([person()])).find("section", "doc")
    table = [cells(row) for row in rows(section)]
    assert [row[0] for row in table] == ["/name", "/first", "/age", "/city", "/born", "/retired"]
    assert table[0] == ["/name", '"Maria Gonzales"', "0.97", "0\u201314 grounded"]
    assert table[2] == ["/age", "34", "0.80", "16\u201318"]  # found verbatim, not constrained
    assert table[4] == ["/born", '"1990"', "0.12", "ungrounded"]
    assert table[5] == ["/retired", "null", "—", "ungrounded"]
    assert {"ungrounded"} <= rows(section)[4].classes()
    assert section.find("p", "stats").text() == f"6 values · 2 ungrounded · {len(PERSON)} characters"


def test_values_below_the_threshold_are_marked_everywhere_and_no_choice_never_is() -> None:
    page = parse(render_review([person()], min_confidence=0.5))
    section = page.find("section", "doc")
    low_rows = [row.attrs["data-field"] for row in rows(section) if "low" in row.classes()]
    assert low_rows == ["1", "4"]  # /first 0.41 and /born 0.12; /retired (null) is not low
    for row in rows(section):
        has_badge = any("low" in badge.classes() for badge in row.find_all("span", "badge"))
        assert has_badge == ("low" in row.classes())
    assert {"low"} <= section.find("span", "tag", data_field="1").classes()
    assert "low" not in section.find("span", "tag", data_field="0").classes()
    first_only = [mark for mark in section.find_all("mark", "seg") if mark.attrs["data-inner"] == "1"]
    assert first_only and all("low" in mark.classes() for mark in first_only)
    assert "2 below 0.5" in page.find("p", "stats").text() and "2 below 0.5" in page.find("p", "summary").text()
    assert page.find("li").attrs["data-flagged"] == "1"


def test_without_a_threshold_nothing_is_low() -> None:
    page = parse(render_review([person()]))
    assert not [element for element in page.walk() if "low" in element.classes()]


def test_pointers_escape_slash_and_tilde_and_a_leaf_document_is_the_root() -> None:
    data = {"a/b": {"~c": [True, 1.5]}}
    assert list(json_leaves(data)) == [("/a~1b/~0c/0", True), ("/a~1b/~0c/1", 1.5)]
    evidence = {"/a~1b/~0c/0": entry(None, 0.9), "/a~1b/~0c/1": entry(None, 0.3)}
    section = parse(render_review([ReviewDocument("d", "x", envelope(data, evidence))])).find("section", "doc")
    assert [cells(row)[:2] for row in rows(section)] == [["/a~1b/~0c/0", "true"], ["/a~1b/~0c/1", "1.5"]]
    root = ReviewDocument("d", "42", envelope(42, {"": entry([0, 2], 0.7)}))
    assert cells(rows(parse(render_review([root])).find("section", "doc"))[0])[:2] == ["/", "42"]


# ---- hostile input ------------------------------------------------------------------------

HOSTILE = '<script>alert("x")</script> & <img src=x onerror=alert(1)> "quoted" \'single\' </div></section>'


def test_hostile_text_source_keys_and_values_stay_text() -> None:
    source = '"><script>alert(2)</script><b onclick="x">'
    key = '</td><script>alert(3)</script>"'
    data = {key: HOSTILE}
    pointer = "/" + key.replace("~", "~0").replace("/", "~1")
    text = "before " + HOSTILE + " after"
    document = ReviewDocument(source, text, envelope(data, {pointer: entry([7, 7 + len(HOSTILE)], 0.1)}, source))
    page = parse(render_review([document], min_confidence=0.5))
    scripts = page.find_all("script")
    assert len(scripts) == 1 and scripts[0].text() == PAGE_SCRIPT
    assert not page.find_all("img") and not page.find_all("b")
    assert not [name for element in page.walk() for name in element.attrs if name.startswith("on")]
    section = page.find("section", "doc")
    assert section.find("h2").text() == source
    assert section.find("div", "text").text() == text
    assert span_texts(section) == {0: HOSTILE}
    assert cells(rows(section)[0])[:2] == [pointer, json.dumps(HOSTILE)]
    assert section.find("span", "tag").attrs["data-pointer"] == pointer
    assert page.find("span", "name").text() == source


def test_undecodable_names_and_values_show_as_escapes_and_the_page_encodes() -> None:
    source = "bad\udcff\n.txt"
    data = {"k\udcfe": "v\udcfd"}
    document = ReviewDocument(source, "v", envelope(data, {"/k\udcfe": entry(None, None)}, source))
    page = render_review([document])
    page.encode("utf-8")
    parsed = parse(page)
    assert parsed.find("h2").text() == "bad\\udcff\\x0a.txt"
    assert cells(rows(parsed.find("section", "doc"))[0])[:2] == ["/k\\udcfe", '"v\\udcfd"']


def test_the_page_needs_nothing_from_outside() -> None:
    page = render_review([person(), person("b.txt")], min_confidence=0.5)
    parsed = parse(page)
    assert not parsed.find_all("link") and not parsed.find_all("iframe") and not parsed.find_all("object")
    for element in parsed.walk():
        for name in ("src", "href", "action", "srcset"):
            assert element.attrs.get(name, "#").startswith("#"), (element.tag, name)
    style = parsed.find("style").text()
    assert "url(" not in style and "@import" not in style and "@font-face" not in style
    assert "http" not in page.replace("http-equiv", "")


# ---- batches ------------------------------------------------------------------------------


def test_a_batch_of_500_lists_every_document_and_shows_only_the_first() -> None:
    documents = []
    for number in range(500):
        text = f"Document {number}: value {number * 7}."
        value = str(number * 7)
        start = text.index(value, len(f"Document {number}:"))
        evidence = {"/v": entry([start, start + len(value)], (number % 100) / 100)}
        documents.append(ReviewDocument(f"docs/{number:04}.txt", text, envelope({"v": value}, evidence)))
    page = parse(render_review(documents, min_confidence=0.3))
    links = page.find("ol").find_all("a")
    assert [link.attrs["href"] for link in links] == [f"#doc-{number}" for number in range(500)]
    assert [link.find("span", "name").text() for link in links] == [document.source for document in documents]
    assert ["current" in link.classes() for link in links] == [True] + [False] * 499
    sections = page.find_all("section", "doc")
    assert len(sections) == 500
    assert [section.attrs.get("hidden") is None for section in sections] == [True] + [False] * 499
    assert [section.find("h2").text() for section in sections] == [document.source for document in documents]
    assert [span_texts(section)[0] for section in sections] == [str(number * 7) for number in range(500)]
    flagged = [item.attrs["data-flagged"] == "1" for item in page.find("ol").find_all("li")]
    assert flagged == [number % 100 < 30 for number in range(500)]
    assert page.find("p", "summary").text() == "500 documents · 500 values · 150 below 0.3 · 0 ungrounded"


def test_a_failed_document_of_a_batch_shows_its_error() -> None:
    failed = ReviewDocument("gone.txt", "", {"source": "gone.txt", "error": {"type": "DocumentError", "message": "not found"}})
    page = parse(render_review([person(), failed]))
    section = page.find_all("section", "doc")[1]
    assert section.find("p", "error").text() == "DocumentError: not found"
    assert section.find_all("tr") == [] and "failed" in page.find("p", "summary").text()
    assert page.find_all("li")[1].attrs["data-flagged"] == "1"


def test_a_single_document_page_hides_the_list() -> None:
    page = parse(render_review([person()]))
    assert "single" in page.find("body").classes()
    assert "single" not in parse(render_review([person(), person("b")])).find("body").classes()


# ---- refusals -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("evidence", "message"),
    [
        ({"/v": entry([0, 9], 0.5)}, "span [0, 9] is outside the text of 3 characters"),
        ({"/v": entry([2, 1], 0.5)}, "outside the text"),
        ({"/v": entry([-1, 1], 0.5)}, "outside the text"),
        ({"/v": entry([0, True], 0.5)}, "is not [start, end] or null"),
        ({"/v": entry([0, 1, 2], 0.5)}, "is not [start, end] or null"),
        ({"/v": entry([0, 1], 1.5)}, "confidence 1.5 is not a number in [0, 1]"),
        ({"/v": entry([0, 1], True)}, "confidence True"),
        ({"/v": entry([0, 1], float("nan"))}, "confidence nan"),
        ({"/v": entry([0, 1], 0.5, grounded="yes")}, "'grounded' is 'yes'"),
        ({}, "at /v: missing"),
        ({"/v": entry(None, None), "/w": entry(None, None)}, "names '/w', which is not a leaf value"),
    ],
)
def test_evidence_that_does_not_fit_is_refused_naming_source_and_pointer(evidence: dict[str, Any], message: str) -> None:
    document = ReviewDocument("in.txt", "abc", envelope({"v": "a"}, evidence))
    with pytest.raises(ReviewError, match=r"in\.txt") as raised:
        render_review([document])
    assert message in str(raised.value)


def test_an_envelope_without_evidence_and_a_bad_threshold_are_refused() -> None:
    with pytest.raises(ReviewError, match="no 'data' and 'evidence'") as raised:
        render_review([ReviewDocument("in.txt", "abc", {"source": "in.txt", "data": {"v": "a"}})])
    assert raised.value.hint
    for threshold in (-0.1, 1.5, float("nan")):
        with pytest.raises(ReviewError, match="min_confidence"):
            render_review([person()], min_confidence=threshold)


# ---- writing ------------------------------------------------------------------------------


def test_write_review_writes_the_page_atomically_with_the_umask_mode(tmp_path: Path) -> None:
    target = tmp_path / "review.html"
    target.write_text("old")
    old_mask = os.umask(0o027)
    try:
        write_review(target, [person()], min_confidence=0.5)
    finally:
        os.umask(old_mask)
    assert target.read_text(encoding="utf-8") == render_review([person()], min_confidence=0.5)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(path.name for path in tmp_path.iterdir()) == ["review.html"]


def test_a_refused_page_leaves_the_old_file_and_an_unwritable_folder_is_an_output_error(tmp_path: Path) -> None:
    target = tmp_path / "review.html"
    target.write_text("old")
    bad = ReviewDocument("in.txt", "abc", envelope({"v": "a"}, {"/v": entry([0, 9], 0.5)}))
    with pytest.raises(ReviewError):
        write_review(target, [bad])
    assert target.read_text() == "old"
    with pytest.raises(OutputError, match=r"cannot write the review page .*missing") as raised:
        write_review(tmp_path / "missing" / "review.html", [person()])
    assert raised.value.hint
    assert sorted(path.name for path in tmp_path.iterdir()) == ["review.html"]
