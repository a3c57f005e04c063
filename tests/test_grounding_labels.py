"""Labeled values: a grounded plain string whose property a label of the document names is held
to the values stated under that label (core/grounding/labels.py), with the fake model over the
hand-made vocabulary (each seed a different model): what is written is always one of them, up to
the end of its line, and a schema that takes none of them falls back to any span."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import numpy as np
import pytest
from conftest import FakeModel
from test_grounding import run

from gguf_extract.core.decode.decoder import Decoder
from gguf_extract.core.decode.state import TokenChoice
from gguf_extract.core.decode.types import SamplingSettings
from gguf_extract.core.grounding.labels import labeled_values, normalized_name, property_name
from gguf_extract.core.index.compiled import compile_schema
from gguf_extract.core.vocab.token_table import Vocabulary

SEEDS = range(24)


def _labels(document: str) -> dict[str, list[str]]:
    return {label: [document[start:end] for start, end in spans] for label, spans in labeled_values(document).items()}


def test_a_label_is_a_line_s_head_before_a_colon_and_its_value_the_rest_of_the_line() -> None:
    document = (
        "Metadata-Version: 2.4\n"
        "Requires-Python: >=3.9  \n"
        "  - **Version:** 2.0\n"
        "> Invoice number:\t1042\n"
        "Classifier: A :: B\n"
        "Classifier: C\n"
        "Summary:\n"  # no value
        "see https://example.org: a link\n"  # a URL is no label
        "10:30 Meeting\n"  # nor a time
        "The reason is this: it works\n"  # a sentence's head is a label too, if it names no property
        "Date: 2024-06-14\r\n"  # a Windows line end
        "Title: one\u2028two\n"  # a Unicode line separator ends the line
    )
    assert _labels(document) == {
        "metadataversion": ["2.4"],
        "requirespython": [">=3.9"],
        "version": ["2.0"],
        "invoicenumber": ["1042"],
        "classifier": ["A :: B", "C"],
        "thereasonisthis": ["it works"],
        "date": ["2024-06-14"],
        "title": ["one"],
    }


def test_reading_labels_takes_one_pass_over_a_long_run_of_spaces() -> None:
    """A value that never comes after a label's spaces is given up at once, not retried from
    each split of the spaces (which took over an hour for a megabyte of them)."""
    for document in ["a:" + " " * 1_000_000, "a:" + "\t" * 1_000_000 + "\u00a0", "a: " + "x " * 500_000 + "\u00a0"]:
        assert labeled_values(document) == {}
    assert _labels("a:" + " " * 1_000_000 + "x") == {"a": ["x"]}


def test_a_label_stating_more_than_256_values_is_not_read() -> None:
    """A log's or a table's column of `Level: info` lines is no record's field (and each value
    would be walked through the automaton where the property's value opens)."""
    assert len(_labels("".join(f"Level: {n}\n" for n in range(256)))["level"]) == 256
    assert "level" not in _labels("".join(f"Level: {n}\n" for n in range(257)))


def test_labels_and_property_names_match_ignoring_case_and_what_is_neither_letter_nor_digit() -> None:
    assert normalized_name("Requires-Python") == normalized_name("requires_python") == "requirespython"
    assert normalized_name("Author E-mail") == normalized_name("authorEmail")
    assert normalized_name("Größe") == normalized_name("GRÖSSE")


def test_a_label_typed_decomposed_names_the_composed_property() -> None:
    """macOS writes `é` as `e` and a combining accent (NFD): the label still names `référence`."""
    decomposed = "Re\u0301fe\u0301rence"
    assert normalized_name(decomposed) == normalized_name("référence") == "référence"
    assert normalized_name("ΐ".upper()) == normalized_name("ΐ")  # folding decomposes it: composed again after
    document = f"{decomposed}: A-1042\nNote: see B-7 and C-99"
    assert _labels(document) == {"référence": ["A-1042"], "note": ["see B-7 and C-99"]}


@pytest.mark.parametrize(
    ("pointer", "name"),
    [
        ("/properties/requires_python", "requires_python"),
        ("/properties/names/items", "names"),
        ("/properties/authors/items/properties/name", "name"),
        ("/$defs/Person/properties/full~1name", "full/name"),
        ("/properties/properties/properties/type", "type"),  # a property named `properties`
        ("/anyOf/0/properties/city", "city"),
        ("/items/0", None),
        ("/properties/meta/additionalProperties", None),  # a member the schema does not name
        ("/properties/meta/patternProperties/^x-", None),
        ("", None),
    ],
)
def test_the_property_a_pointer_names(pointer: str, name: str | None) -> None:
    assert property_name(pointer) == name


VERSION = {"type": "object", "properties": {"version": {"type": "string", "minLength": 1}}, "required": ["version"]}
DOCUMENT = "Name: demo\nVersion: 2.0.1\nThe old version was 1.9 and the next is 3.0, see ann@example.org today."


def test_a_labeled_property_is_always_one_of_its_labeled_values(vocab: Vocabulary) -> None:
    free = set()
    for seed in SEEDS:
        text, evidence = run(vocab, VERSION, DOCUMENT, seed)
        assert json.loads(text)["version"] == "2.0.1", seed
        assert evidence["/version"].grounded and evidence["/version"].span == (
            DOCUMENT.index("2.0.1"),
            DOCUMENT.index("2.0.1") + 5,
        )
        unlabeled = DOCUMENT.replace("Version: ", "Release ")
        free.add(json.loads(run(vocab, VERSION, unlabeled, seed)[0])["version"])
    assert len(free) > 3  # the control: without the label any span is open


def test_a_decomposed_label_holds_the_composed_property_to_its_value(vocab: Vocabulary) -> None:
    schema = {"type": "object", "properties": {"référence": {"type": "string", "minLength": 1}}, "required": ["référence"]}
    document = "Re\u0301fe\u0301rence: A-1042\nNote: see B-7 and C-99 too"
    for seed in SEEDS:
        text, evidence = run(vocab, schema, document, seed)
        assert json.loads(text)["référence"] == "A-1042", seed
        assert evidence["/référence"].span == (document.index("A-1042"), document.index("A-1042") + 6)


def test_a_labeled_value_ends_with_its_line(vocab: Vocabulary) -> None:
    schema = {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}
    document = "Summary: Ann Lee wrote it\nAuthor: the demo team\nSummary: Ann Lee    2024-06-14    page 1"
    written = set()
    for seed in SEEDS:
        text, evidence = run(vocab, schema, document, seed)
        written.add(json.loads(text)["summary"])
        assert evidence["/summary"].grounded, seed  # the empty string too
    # A gap between columns ends a value as the end of its line does.
    assert written <= {"Ann", "Ann Lee", "Ann Lee wrote", "Ann Lee wrote it", ""}
    assert written - {""}, written


def test_several_lines_under_one_label_are_each_a_choice(vocab: Vocabulary) -> None:
    schema = {"type": "object", "properties": {"classifier": {"type": "string", "minLength": 1}}, "required": ["classifier"]}
    document = "Classifier: alpha\nClassifier: beta gamma\nalpha and delta are elsewhere"
    written = {json.loads(run(vocab, schema, document, seed)[0])["classifier"] for seed in SEEDS}
    assert written <= {"alpha", "beta", "beta gamma"} and len(written) > 1


def test_a_schema_that_takes_no_labeled_value_is_grounded_on_any_span(vocab: Vocabulary) -> None:
    """`2.0.1` is too long: held to it, every value would be released at its third character."""
    schema = {"type": "object", "properties": {"version": {"type": "string", "maxLength": 3}}, "required": ["version"]}
    grounded = 0
    for seed in SEEDS:
        text, evidence = run(vocab, schema, DOCUMENT, seed)
        jsonschema.validate(json.loads(text), schema)
        grounded += bool(evidence["/version"].grounded)  # else released where a span met the maxLength inside a word
    assert grounded > len(SEEDS) // 2


def test_a_property_no_label_names_is_grounded_as_before(vocab: Vocabulary) -> None:
    """`Name:` labels the `name` property only: `title` is open to any span, `Name: demo` included."""
    schema: Any = {"type": "object", "properties": {"title": {"type": "string", "minLength": 1}}, "required": ["title"]}
    written = {json.loads(run(vocab, schema, DOCUMENT, seed)[0])["title"] for seed in SEEDS}
    assert len(written) > 3


def test_labeled_values_are_held_in_array_items_and_nested_objects(vocab: Vocabulary) -> None:
    schema = {
        "type": "object",
        "properties": {
            "release": {"type": "object", "properties": {"version": {"type": "string"}}, "required": ["version"]},
            "names": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1, "maxItems": 2},
        },
        "required": ["release", "names"],
    }
    document = "Names: demo-tool\nVersion: 2.0.1\nThe old version was 1.9."
    for seed in SEEDS:
        value = json.loads(run(vocab, schema, document, seed)[0])
        assert value["release"]["version"] == "2.0.1"
        assert set(value["names"]) <= {"demo", "demo-tool"}, value


def test_a_labeled_value_s_confidence_is_the_model_s_choice_among_what_the_labels_allow(vocab: Vocabulary) -> None:
    """Held to its one labeled value, the model's choices are among the few tokens that write
    it: its confidence is their share there (the fake model spreads its unmasked probability
    over the whole vocabulary, where the value's tokens get under 0.05)."""
    for seed in SEEDS:
        _, evidence = run(vocab, VERSION, DOCUMENT, seed)
        confidence = evidence["/version"].confidence
        assert confidence is not None and confidence > 0.3, (seed, confidence)


def test_a_gap_between_columns_ends_a_labeled_value(vocab: Vocabulary) -> None:
    schema = {"type": "object", "properties": {"source": {"type": "string", "minLength": 1}}, "required": ["source"]}
    document = "Source: GNU grep 3.8      2019-12-29      GREP(1)\nSee also the GNU pages for grep and its date."
    written = {json.loads(run(vocab, schema, document, seed)[0])["source"] for seed in SEEDS}
    assert written <= {"GNU", "GNU grep", "GNU grep 3.8"} and len(written) > 1, written


def test_a_choice_beside_a_labeled_string_is_scored_as_without_labels(vocab: Vocabulary) -> None:
    """`null` in place of a labeled string is no choice among labeled values: its confidence is
    the model's unmasked probability, as where the document has no label (greedy: the fake
    model's logits do not depend on the document)."""
    schema = {"type": "object", "properties": {"version": {"type": ["string", "null"]}}, "required": ["version"]}
    compiled = compile_schema(schema, vocab, grounded=True)

    def greedy(document: str, seed: int) -> tuple[bytes, list[TokenChoice]]:
        settings = SamplingSettings(max_tokens=100, temperature=1e-9, seed=seed)
        decoder = Decoder(FakeModel(vocab, seed), compiled, settings, grounding=compiled.grounding(document))
        return b"".join(decoder.run()), decoder.choices

    nulls = 0
    for seed in range(60):
        labeled, unlabeled = greedy(DOCUMENT, seed), greedy(DOCUMENT.replace("Version: ", "Release "), seed)
        if json.loads(labeled[0])["version"] is None and unlabeled[0] == labeled[0]:  # (else a string was the best)
            nulls += 1
            assert unlabeled[1] == labeled[1], seed
    assert nulls > 3


def test_greedy_decoding_equals_the_full_choice_beside_labeled_values(vocab: Vocabulary) -> None:
    """The greedy shortcut (no list of the allowed tokens) and the full choice at a near-zero
    temperature write the same text with the same confidences where labels hold strings."""
    schema = {
        "type": "object",
        "properties": {"version": {"type": ["string", "null"]}, "name": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
        "required": ["version", "name"],
    }
    compiled = compile_schema(schema, vocab, grounded=True)
    for seed in range(40):
        runs = []
        for temperature in (0.0, 1e-9):
            grounding = compiled.grounding(DOCUMENT)
            settings = SamplingSettings(max_tokens=100, temperature=temperature, seed=seed, draft_tokens=4)
            decoder = Decoder(FakeModel(vocab, seed), compiled, settings, grounding=grounding)
            runs.append((b"".join(decoder.run()), decoder.choices))
        assert runs[0] == runs[1], seed


def test_what_is_kept_inside_a_labeled_value_does_not_depend_on_an_earlier_unlabeled_one(vocab: Vocabulary) -> None:
    """The candidates read one by one (after an escape) are remembered per labeled values too:
    an unlabeled body that met the same place first must not lend the labeled one its answer."""
    strings = {"other": {"type": "string"}, "note": {"type": "string"}}
    schema = {"type": "object", "properties": strings, "required": ["other", "note"]}
    document = 'Note: say ":\nx y'
    compiled = compile_schema(schema, vocab, grounded=True)
    ids = np.array([vocab.pieces.index(piece) for piece in [b'"', b'": ', b'":', b"\\"]], dtype=np.int32)
    fresh = compiled.grounding(document)
    assert fresh is not None
    fresh.feed(b'{"other": "x", "note": "say \\')
    after_another = compiled.grounding(document)
    assert after_another is not None
    after_another.feed(b'{"other": "say \\')
    after_another.restrict(b"", ids)  # the unlabeled body may go on past the line: `": ` kept
    after_another.feed(b'"", "note": "say \\')
    assert fresh.restrict(b"", ids).tolist() == after_another.restrict(b"", ids).tolist() == [ids[0], ids[2]]


@pytest.mark.parametrize(
    ("schema", "document", "labeled", "unlabeled"),
    [
        (
            {"type": "string", "format": "date"},
            "Ordered: 2024-01-02, shipped 5 May 2024\nValue: 2024-03-05, due 1 April 2024",
            {"2024-03-05", "2024-04-01"},
            "Day: ",
        ),
        ({"type": "number"}, "Quantity: 3 boxes of 12 at 9.5\nValue: 559.40 EUR (was 600)", {559.4, 600}, "Price "),
        (
            {"type": "string", "format": "uri"},
            "Format: https://a.example/x\nValue: https://b.example/y\nSee https://c.example/z",
            {"https://b.example/y"},
            "Link ",
        ),
    ],
)
def test_a_held_date_number_or_term_is_one_its_label_states(
    vocab: Vocabulary, schema: Any, document: str, labeled: set[Any], unlabeled: str
) -> None:
    """Of the dates, numbers or terms a document states, those under a label naming the
    property are the ones the value may be, where it states any there."""
    wrapped = {"type": "object", "properties": {"value": schema}, "required": ["value"]}
    written, free = set(), set()
    for seed in SEEDS:
        text, evidence = run(vocab, wrapped, document, seed)
        written.add(json.loads(text)["value"])
        assert evidence["/value"].grounded, seed
        free.add(json.loads(run(vocab, wrapped, document.replace("Value: ", unlabeled), seed)[0])["value"])
    assert written <= labeled, written
    assert free - labeled, free  # the control: without the label, the others are open too


def test_a_label_stating_no_value_of_the_kind_leaves_every_one_open(vocab: Vocabulary) -> None:
    wrapped = {"type": "object", "properties": {"date": {"type": "string", "format": "date"}}, "required": ["date"]}
    document = "Date: to be agreed\nWritten 2024-03-05, signed 1 April 2024."
    written = {json.loads(run(vocab, wrapped, document, seed)[0])["date"] for seed in SEEDS}
    assert written == {"2024-03-05", "2024-04-01"}


def test_two_held_values_of_one_kind_keep_to_their_own_labels(vocab: Vocabulary) -> None:
    """Two dates (or numbers), each under its own label: the second is not filtered with what was
    worked out for the first (a cache of the allowed tokens per set of choices)."""
    cases = [
        (
            {"start": "date", "due_date": "date"},
            "Start: 2024-03-05\nDue date: 1999-06-09",
            {"start": "2024-03-05", "due_date": "1999-06-09"},
        ),
        ({"price": "number", "quantity": "number"}, "Price: 42\nQuantity: 17", {"price": 42, "quantity": 17}),
    ]
    for kinds, document, expected in cases:
        properties = {
            name: {"type": "string", "format": "date"} if kind == "date" else {"type": kind} for name, kind in kinds.items()
        }
        schema = {"type": "object", "properties": properties, "required": list(kinds)}
        for seed in SEEDS:
            text, evidence = run(vocab, schema, document, seed)
            assert json.loads(text) == expected, (seed, text)
            assert all(evidence["/" + name].grounded for name in kinds), seed


@pytest.mark.parametrize(
    ("schema", "labeled_line"),
    [
        ({"type": "integer"}, "Value: 559.40"),  # no integer there
        ({"type": "integer", "maximum": 100}, "Value: 600"),  # none the schema takes
        ({"type": "string", "format": "email"}, "Value: to be agreed"),  # words, no address
        ({"type": "string", "format": "uri"}, "Value: coming soon"),
    ],
)
def test_a_label_stating_no_value_the_schema_takes_leaves_every_one_open(
    vocab: Vocabulary, schema: Any, labeled_line: str
) -> None:
    wrapped = {"type": "object", "properties": {"value": schema}, "required": ["value"]}
    document = f"{labeled_line}\nSee 12 or 3, https://c.example/z or ann@example.org."
    for seed in SEEDS[:12]:
        text, evidence = run(vocab, wrapped, document, seed)
        assert evidence["/value"].grounded, (seed, text)
        assert json.loads(text)["value"] in {12, 3, "https://c.example/z", "ann@example.org"}, (seed, text)


@pytest.mark.parametrize(
    ("schema", "document", "value"),
    [
        ({"type": "string", "format": "date"}, "Ordered 2024-03-05, shipped 5 May 2024.\nValue: 5 March 2024\n", "5 March 2024"),
        ({"type": "number"}, "3 items at 600 each, 600 shipped.\nValue: 600\n", "600"),
        (
            {"type": "string", "format": "email"},
            "cc ann@example.org and bob@example.org\nValue: ann@example.org\n",
            "ann@example.org",
        ),
    ],
)
def test_a_held_value_s_evidence_is_its_labeled_line(vocab: Vocabulary, schema: Any, document: str, value: str) -> None:
    """The value was held to what its label states: its span is there, not an earlier
    occurrence of the same value elsewhere."""
    wrapped = {"type": "object", "properties": {"value": schema}, "required": ["value"]}
    labeled_start = document.index("Value: ") + len("Value: ")
    for seed in SEEDS[:6]:
        _, evidence = run(vocab, wrapped, document, seed)
        assert evidence["/value"].span == (labeled_start, labeled_start + len(value)), seed


def test_a_label_of_a_log_s_column_narrows_nothing(vocab: Vocabulary) -> None:
    """257 `Date:` lines of a log, then an invoice issued on another date: the label is not read,
    so that date is open too."""
    schema = {"type": "object", "properties": {"date": {"type": "string", "format": "date"}}, "required": ["date"]}
    document = "".join(f"Date: 2020-01-{1 + n % 28:02d} job ok\n" for n in range(257)) + "Invoice issued 2024-03-05\n"
    written = {json.loads(run(vocab, schema, document, seed)[0])["date"] for seed in SEEDS}
    assert "2024-03-05" in written and len(written) > 1
