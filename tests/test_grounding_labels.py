"""Labeled values: a grounded plain string whose property a label of the document names is held
to the values stated under that label (core/grounding/labels.py), with the fake model over the
hand-made vocabulary (each seed a different model): what is written is always one of them, up to
the end of its line, and a schema that takes none of them falls back to any span."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from test_grounding import run

from gguf_extract.core.grounding.labels import labeled_values, normalized_name, property_name
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
    )
    assert _labels(document) == {
        "metadataversion": ["2.4"],
        "requirespython": [">=3.9"],
        "version": ["2.0"],
        "invoicenumber": ["1042"],
        "classifier": ["A :: B", "C"],
        "thereasonisthis": ["it works"],
    }


def test_labels_and_property_names_match_ignoring_case_and_what_is_neither_letter_nor_digit() -> None:
    assert normalized_name("Requires-Python") == normalized_name("requires_python") == "requirespython"
    assert normalized_name("Author E-mail") == normalized_name("authorEmail")
    assert normalized_name("Größe") == normalized_name("GRÖSSE")


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
