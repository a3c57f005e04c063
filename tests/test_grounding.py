"""Grounded strings and evidence, with a fake model over the hand-made vocabulary: every string
written under grounding is a span of the document (whitespace runs as one space), offsets cut
each value out of the document, and confidence is the product of the model's probabilities
raised to CONFIDENCE_EXPONENT."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import jsonschema
import numpy as np
import numpy.typing as npt
from conftest import EOS, FakeModel, searched_record
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gguf_extract.core.decode.decoder import Decoder
from gguf_extract.core.decode.types import SamplingSettings
from gguf_extract.core.grounding.document_search import DocumentSearch
from gguf_extract.core.grounding.tables import (
    DocumentTokens,
    GroundingText,
    collapse_whitespace,
    vocabulary_bodies,
)
from gguf_extract.core.index.compiled import compile_schema
from gguf_extract.core.json_reader import body_part, read_leaves
from gguf_extract.core.results.evidence import CONFIDENCE_EXPONENT, ValueEvidence, gather
from gguf_extract.core.vocab.token_table import Vocabulary


def run(
    vocab: Vocabulary, schema: Any, document: str, seed: int, grounded: bool = True, max_tokens: int = 400
) -> tuple[str, dict[str, ValueEvidence]]:
    compiled = compile_schema(schema, vocab, grounded=grounded)
    grounding = compiled.grounding(document)
    settings_ = SamplingSettings(max_tokens=max_tokens, temperature=1.0, seed=seed, draft_tokens=4)
    decoder = Decoder(FakeModel(vocab, seed), compiled, settings_, grounding=grounding)
    output = b"".join(decoder.run())
    return output.decode("utf-8"), gather(output, document, decoder.choices, searched_record(grounding))


def test_the_document_as_string_body_bytes() -> None:
    text = GroundingText.of('\ufeffAnn  "Lee"\n\tsaid a\\b, é\x01\u200b!\x1b')
    # Each run of controls and format characters is one NUL, none at either end.
    assert text.escaped == 'Ann \\"Lee\\" said a\\\\b, é\x00!'.encode()
    starts = [i for i, boundary in enumerate(text.boundaries[:-1]) if not boundary]
    # The second bytes of the escapes and of é are not character starts.
    assert [text.escaped[i : i + 1] for i in starts] == [b'"', b'"', b"\\", b"\xa9"]


def test_a_gap_between_columns_is_a_barrier_and_a_line_break_with_its_indent_a_space() -> None:
    footer = "GNU grep 3.8                      2019-12-29                           GREP(1)"
    assert GroundingText.of(footer).escaped == b"GNU grep 3.8\x002019-12-29\x00GREP(1)"
    text = GroundingText.of("Name:\tAnn Lee\nwrote  it.  Then\n       went on   \n   home")
    assert text.escaped == b"Name:\x00Ann Lee wrote it. Then went on home"  # a tab within a line: a gap
    assert not text.occurs(b"3.8 2019") and GroundingText.of(footer).occurs(b"GNU grep 3.8", whole=True)


def test_a_grounded_value_never_spans_two_columns(vocab: Vocabulary) -> None:
    """A manual page's footer: the source, the date and the page's name are three cells."""
    footer = "GNU grep 3.8                      2019-12-29                           GREP(1)"
    cells = ["GNU grep 3.8", "2019-12-29", "GREP(1)"]
    schema = {"type": "object", "properties": {"source": {"type": "string", "minLength": 11}}, "required": ["source"]}
    spanning, held = 0, 0
    for seed in range(24):
        text, evidence = run(vocab, schema, footer, seed)
        if evidence["/source"].grounded:  # else released: begun at `3.8`, no cell could give 11 characters
            assert json.loads(text)["source"] == "GNU grep 3.8"
            held += 1
        free = json.loads(run(vocab, schema, footer.replace("   ", " "), seed)[0])["source"]  # the control: one line of text
        spanning += not any(free in cell for cell in cells)
    assert held > 0 and spanning > 0


def test_a_grounded_value_neither_cuts_a_word_nor_starts_or_ends_with_a_space() -> None:
    text = GroundingText.of("  Capture v0.1.4 of rfc3339-validator, 3.10. Né à Paris \n")
    assert text.escaped == "Capture v0.1.4 of rfc3339-validator, 3.10. Né à Paris".encode()

    def whole(value: str) -> bool:
        return text.occurs(value.encode(), whole=True)

    for value in ["Capture", "v0.1.4", "rfc3339-validator", "rfc3339-validator,", "3.10", "3.10.", "Né à", "Paris", "à"]:
        assert whole(value), value
    for value in ["Captur", "apture", "1.4", "0.1", "rfc3339", "validator", "Capture ", " v0", "3.1", "N", "Pari"]:
        assert not whole(value), value
    assert text.occurs(b"Captur") and not text.occurs(b"apture")  # a value may go on from a word's middle


def test_in_scripts_written_without_spaces_a_value_may_start_and_end_at_any_character() -> None:
    text = GroundingText.of("我住在北京市。東京タワー 서울에서 살아요 ในกรุงเทพ Zürich")
    for value in ["北京", "東京", "タワー", "서울", "กรุงเทพ", "Zürich"]:
        assert text.occurs(value.encode(), whole=True), value
    assert not text.occurs("Züric".encode(), whole=True)


def test_spans_match_runs_of_whitespace_and_take_the_nearest_occurrence() -> None:
    document = "Ada Lovelace\n  wrote notes. Ada\nLovelace again."
    search = DocumentSearch(document)
    assert search.span("Ada Lovelace", 0) == (0, 12)
    start, end = search.span("Ada Lovelace", 20) or (0, 0)
    assert document[start:end] == "Ada\nLovelace"
    start, end = search.span("Lovelace wrote", 0) or (0, 0)
    assert document[start:end] == "Lovelace\n  wrote"
    assert search.span("nowhere", 0) is None


def test_leaves_give_pointers_and_byte_ranges() -> None:
    output = json.dumps({"a": [1, {"b~/": 'x"é'}], "c": None, "d": True}, ensure_ascii=False).encode()
    found = {leaf.pointer: (leaf.value, output[leaf.start : leaf.end]) for leaf in read_leaves(output).leaves}
    assert found == {
        "/a/0": (1, b"1"),
        "/a/1/b~0~1": ('x"é', '"x\\"é"'.encode()),
        "/c": (None, b"null"),
        "/d": (True, b"true"),
    }


DOCUMENTS = st.lists(st.sampled_from([*'ab Johnéx日本"\\\n\t.,12', "ab", "John", "name", "  "]), min_size=1, max_size=30).map(
    "".join
)
STRINGS = st.builds(
    lambda low, extra: {"type": "string", "minLength": low} | ({} if extra is None else {"maxLength": low + extra}),
    st.integers(0, 2),
    st.none() | st.integers(0, 8),
)
VALUES = st.recursive(
    STRINGS | st.just({"type": ["string", "null"]}) | st.just({"type": "integer", "minimum": 0, "maximum": 99}),
    lambda inner: (
        st.builds(lambda item: {"type": "array", "items": item, "maxItems": 3}, inner)
        | st.builds(
            lambda props: {"type": "object", "properties": props, "required": list(props)},
            st.dictionaries(st.sampled_from(["name", "ab", "x"]), inner, min_size=1, max_size=3),
        )
    ),
    max_leaves=5,
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=VALUES, document=DOCUMENTS, seed=st.integers(0, 2**16))
def test_every_grounded_string_is_a_span_of_the_document(vocab: Vocabulary, schema: Any, document: str, seed: int) -> None:
    text, evidence = run(vocab, schema, document, seed)
    value = json.loads(text)
    jsonschema.validate(value, schema)
    collapsed = collapse_whitespace(document)
    for pointer, found in evidence.items():
        leaf = _at(value, pointer)
        if not isinstance(leaf, str):
            # A grounded number is one the document states, perhaps written otherwise (`1,267`):
            # its span holds its digits.
            if found.grounded:
                assert found.span is not None
                start, end = found.span
                assert re.sub(r"[^0-9]", "", document[start:end]).lstrip("0") == str(leaf).lstrip("-0").split(".")[0]
            continue
        if found.span is not None:
            start, end = found.span
            assert collapse_whitespace(document[start:end]) == collapse_whitespace(leaf)
        if found.grounded:
            assert collapse_whitespace(leaf) in collapsed
            assert leaf == "" or found.span is not None
            # ...and it neither cuts a word nor starts or ends with a space.
            body = json.dumps(leaf, ensure_ascii=False)[1:-1].encode()
            assert leaf == "" or GroundingText.of(document).occurs(body, whole=True)
        if isinstance(leaf, str) and found.grounded is False:
            # Grounding yields only where the document cannot give the string its minLength,
            # or its maxLength ends it inside a word.
            assert _has_length_limits(schema, pointer)


def _at(value: Any, pointer: str) -> Any:
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def _has_length_limits(schema: Any, pointer: str) -> bool:
    """Whether the string schema at data `pointer` has a minLength (a grounded string can then
    run into the document's end) or a maxLength (which may end it inside a word)."""
    for part in pointer.split("/")[1:]:
        schema = schema["items"] if schema.get("type") == "array" else schema["properties"][part]
    return int(schema.get("minLength", 0)) > 0 or "maxLength" in schema


def test_grounding_follows_the_flag_and_the_annotation(vocab: Vocabulary) -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "string", "x-grounded": False},
            "c": {"type": "string", "format": "date"},
        },
        "required": ["a", "b", "c"],
    }
    # A date is grounded too (core.grounding.value_holds): to a date the document states.
    assert compile_schema(schema, vocab, grounded=True).grounded_pointers == ["/properties/a", "/properties/c"]
    opted_in = {**schema, "properties": {**schema["properties"], "b": {"type": "string", "x-grounded": True}}}
    assert compile_schema(opted_in, vocab).grounded_pointers == ["/properties/b"]
    for seed in range(20):
        _, evidence = run(vocab, schema, "John ab 日本", seed)
        assert evidence["/a"].grounded is True
        # The document states no date: the date is released, never a failure.
        assert evidence["/b"].grounded is None and evidence["/c"].grounded is False


class ChosenProbabilities(FakeModel):
    """Logits that are the logarithms of a known distribution: the favourite token of each
    step has probability 0.6, the rest share 0.4 evenly."""

    def __init__(self, vocab: Vocabulary, favourites: list[int]) -> None:
        super().__init__(vocab, 0)
        self.favourites = favourites

    def _logits_after(self, length: int) -> npt.NDArray[np.float32]:
        probabilities = np.full(self.vocab.size, 0.4 / (self.vocab.size - 1))
        probabilities[self.favourites[min(length, len(self.favourites) - 1)]] = 0.6
        return np.log(probabilities).astype(np.float32)


def test_confidence_is_the_product_of_the_chosen_tokens_probabilities_raised_to_the_fitted_exponent(
    vocab: Vocabulary,
) -> None:
    one, two = vocab.pieces.index(b"1"), vocab.pieces.index(b"2")
    compiled = compile_schema({"type": "integer", "minimum": 10, "maximum": 99}, vocab)
    model = ChosenProbabilities(vocab, [one, two, EOS])  # then the end, not `12.0`, which the schema allows too
    decoder = Decoder(model, compiled, SamplingSettings(temperature=0.0, draft_tokens=0))
    output = b"".join(decoder.run())
    assert output == b"12"
    evidence = gather(output, "it is 12.", decoder.choices)
    confidence = evidence[""].confidence
    assert confidence is not None and math.isclose(confidence, (0.6 * 0.6) ** CONFIDENCE_EXPONENT, rel_tol=1e-5)
    assert 0.6 * 0.6 < confidence < 1  # the exponent lifts the bare product (bench/calibrate.py)
    assert evidence[""].span == (6, 8)


def test_a_value_with_no_choice_has_no_confidence(vocab: Vocabulary) -> None:
    compiled = compile_schema({"type": "object", "properties": {"k": {"const": "ab"}}, "required": ["k"]}, vocab)
    decoder = Decoder(FakeModel(vocab, 1), compiled, SamplingSettings())
    output = b"".join(decoder.run())
    assert gather(output, "ab", decoder.choices)["/k"] == ValueEvidence((0, 2), None)


@settings(max_examples=80, deadline=None)
@given(document=DOCUMENTS)
def test_the_first_token_set_is_every_token_whose_body_part_occurs(vocab: Vocabulary, document: str) -> None:
    text = GroundingText.of(document)
    tokens = DocumentTokens(text, vocabulary_bodies(vocab), vocab.size)
    expected = np.zeros(vocab.size, dtype=bool)
    for token, piece in enumerate(vocab.pieces):
        if piece and token not in vocab.eog_ids:
            part, closed, _ = body_part(piece)
            expected[token] = (closed and not part) or text.occurs(part, whole=closed)
    assert (tokens.anywhere() == expected).all()
    for offset in range(len(text.escaped)):
        met = {int(t) for t in tokens.at(offset)}
        for token in range(vocab.size):
            piece = vocab.pieces[token]
            part, closed, _ = body_part(piece)
            starts = text.escaped.startswith(part, offset) and bool(piece) and token not in vocab.eog_ids
            starts = starts and (not closed or bool(text.ends[offset + len(part)]))
            assert (token in met) == starts, (offset, piece)


def test_check_lists_the_grounded_pointers() -> None:
    from gguf_extract.core.index.check import check_schema_support

    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "string", "x-grounded": False},
            "c": {"type": "string", "format": "date"},
            "d": {"type": "array", "items": {"type": "string", "maxLength": 9}},
        },
    }
    report = check_schema_support(schema)
    assert report.groundable == ["/properties/a", "/properties/d/items", "/properties/c"]  # strings, then dates
    assert report.never_grounded == ["/properties/b"]
    assert report.as_dict()["grounded_with_flag"] == report.groundable
    assert "x-grounded" not in report.ignored


def _expected_kept(
    vocab: Vocabulary, text: GroundingText, body: bytes, escaped: bool, pending: bytes, ids: list[int]
) -> list[int]:
    """By definition: a candidate keeps the body on the document where the body so far, then
    what the candidate writes into it, occurs there where a value may start (and, where the
    candidate closes the body, end); every candidate where none does, or where the body has
    left the document already."""
    if body and not text.occurs(body):
        return ids
    kept = []
    for token in ids:
        part, closed, _ = body_part(vocab.pieces[token][len(pending) :], escaped)
        written = body + part
        if not written or text.occurs(written, whole=closed):
            kept.append(token)
    return kept or ids


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=DOCUMENTS, data=st.data())
def test_restrict_keeps_what_the_document_allows_whichever_way_it_looks(
    vocab: Vocabulary, document: str, data: st.DataObject
) -> None:
    """The candidates kept inside a body, with the list of candidates met once (filtered by a
    mask) and met again (picked by position), with a byte pending or an escape open (read one
    by one), are those the definition keeps, in the order given."""
    grounding = compile_schema({"type": "string"}, vocab, grounded=True).grounding(document)
    assert grounding is not None
    text = grounding.text
    usable = [t for t, piece in enumerate(vocab.pieces) if piece and t not in vocab.eog_ids]
    backslash = vocab.pieces.index(b"\\")
    lists = st.permutations(usable).flatmap(lambda order: st.integers(1, len(order)).map(lambda size: order[:size]))
    candidates = data.draw(lists)
    grounding.feed(b'"')
    body, escaped = b"", False
    for _ in range(data.draw(st.integers(1, 16))):
        if data.draw(st.integers(0, 4)) == 0:  # the decoder offers a new list now and then
            candidates = data.draw(lists)
        pending = b""
        if data.draw(st.integers(0, 3)) == 0:  # the start of one of a few tokens, met again
            piece = vocab.pieces[candidates[data.draw(st.integers(0, min(2, len(candidates) - 1)))]]
            pending = piece[: data.draw(st.integers(0, min(1, len(piece) - 1)))]
        offered = [t for t in candidates if vocab.pieces[t].startswith(pending)]
        part, closed, escaped_after = body_part(pending, escaped)
        if closed:
            break
        grounding.feed(pending)
        body, escaped = body + part, escaped_after
        expected = _expected_kept(vocab, text, body, escaped, pending, offered)
        ids = np.array(offered, dtype=np.int32)
        for _ in range(3):
            assert grounding.restrict(pending, ids.copy()).tolist() == expected
        # A backslash where it may come, to open escapes.
        chosen = backslash if backslash in expected and data.draw(st.booleans()) else data.draw(st.sampled_from(expected))
        written = vocab.pieces[chosen][len(pending) :]
        grounding.feed(written)
        part, closed, escaped = body_part(written, escaped)
        if closed:
            break
        body += part


def test_a_byte_pending_is_read_against_the_string_so_far_and_the_candidates_given(vocab: Vocabulary) -> None:
    """The same candidates after the same pending byte, met in another string or given in
    another order, are read again for it (what the document allows differs)."""
    grounding = compile_schema({"type": "array", "items": {"type": "string"}}, vocab, grounded=True).grounding("xab yac")
    assert grounding is not None
    a, ab, abc, ag = (vocab.pieces.index(piece) for piece in (b"a", b"ab", b"abc", b"ag"))

    def kept(ids: list[int]) -> list[int]:
        return grounding.restrict(b"a", np.array(ids, dtype=np.int32)).tolist()

    grounding.feed(b'["xa')  # "a" pending, already fed
    assert kept([a, ab, abc, ag]) == [a, ab]
    assert kept([ag, ab, abc, a]) == [ab, a]
    grounding.feed(b'b", "ya')
    assert grounding.inside_body
    assert kept([a, ab, abc, ag]) == [a]


class DocumentLovingModel(FakeModel):
    """Random logits, raised for every token that occurs in the document: its first choice is
    often one grounding keeps, so greedy decoding takes it without listing the candidates."""

    def __init__(self, vocab: Vocabulary, seed: int, document: str) -> None:
        super().__init__(vocab, seed)
        data = document.encode()
        # Tokens with a quote too: outside a value, they open one, with text the document may not hold.
        self.favoured = [token for token, piece in enumerate(vocab.pieces) if piece and (piece in data or b'"' in piece)]

    def _logits_after(self, length: int) -> npt.NDArray[np.float32]:
        logits = super()._logits_after(length)
        logits[self.favoured] += 4.0
        return logits


@given(seed=st.integers(0, 10_000), document=st.sampled_from(["Ann Lee, 34, ab 12", 'x "ab" \\ John 日本 ab.', "John John ab"]))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_greedy_grounded_choice_without_the_list_is_the_full_choice(vocab: Vocabulary, seed: int, document: str) -> None:
    """Grounded greedy decoding takes the model's first choice where grounding keeps it beside
    another candidate, without listing them; a near-zero temperature goes the full way. Both
    write the same text, with the same confidences, spans followed and bodies released."""
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "array", "items": {"type": "string"}}}}
    runs = []
    for temperature in (0.0, 1e-9):
        compiled = compile_schema(schema, vocab, grounded=True)
        grounding = compiled.grounding(document)
        settings_ = SamplingSettings(max_tokens=120, temperature=temperature, seed=seed, draft_tokens=4)
        decoder = Decoder(DocumentLovingModel(vocab, seed, document), compiled, settings_, grounding=grounding)
        output = b"".join(decoder.run())
        assert grounding is not None
        runs.append((output, decoder.choices, decoder.budget_bound_at, decoder.stats.sampled_tokens, grounding.bodies))
    assert runs[0] == runs[1]
