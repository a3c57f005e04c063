"""Merging the values of a long document's pieces: arrays concatenated in document order with
exact duplicates dropped, objects merged property by property, the first non-null scalar,
and the result made to satisfy the whole schema, always validating."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_extract.core.json_reader import read_leaves
from gguf_extract.core.results.combine import Combiner, annotate, dump, evidence_of, plain
from gguf_extract.core.results.evidence import ValueEvidence
from gguf_extract.core.schema.read.validation import validator_for_schema

ITEMS = {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}, "qty": {"type": "integer"}}}}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"number": {"type": ["string", "null"]}, "date": {"type": ["string", "null"]}, "items": ITEMS},
}


def piece(value: Any, offset: int = 0, spans: dict[str, tuple[int, int]] | None = None) -> Any:
    """A piece's value as the extraction gives it: its JSON text, with evidence for the given leaves."""
    text = json.dumps(value)
    evidence = {pointer: ValueEvidence(span, 0.9) for pointer, span in (spans or {}).items()}
    return annotate(text, evidence, offset)


def merged(schema: dict[str, Any], *pieces: Any) -> Any:
    combiner = Combiner(validator_for_schema(schema))
    for node in pieces:
        combiner.add(node)
    return combiner


def test_arrays_concatenate_in_order_and_scalars_come_from_the_first_non_null() -> None:
    first = piece({"number": "INV-1", "date": None, "items": [{"name": "chair", "qty": 2}]})
    second = piece({"number": "INV-9", "date": "2024-03-05", "items": [{"name": "paper", "qty": 5}]})
    assert plain(merged(SCHEMA, first, second).result) == {
        "number": "INV-1",
        "date": "2024-03-05",
        "items": [{"name": "chair", "qty": 2}, {"name": "paper", "qty": 5}],
    }


def test_exact_duplicates_are_dropped_equal_values_elsewhere_are_kept() -> None:
    item = {"name": "chair", "qty": 2}
    # The same item read in the overlap of two pieces: the same spans in the whole document.
    first = piece({"items": [item]}, 0, {"/items/0/name": (100, 105)})
    again = piece({"items": [item]}, 80, {"/items/0/name": (20, 25)})
    elsewhere = piece({"items": [item]}, 500, {"/items/0/name": (20, 25)})
    result = merged(SCHEMA, first, again, elsewhere).result
    assert plain(result)["items"] == [item, item]
    assert [found.span for found in evidence_of(result).values()] == [(100, 105), (520, 525)]


def test_properties_a_piece_adds_keep_the_order_pieces_write_them_in() -> None:
    first = piece({"number": "INV-1", "items": []})
    second = piece({"number": None, "date": "2024-03-05", "items": []})
    assert list(plain(merged(SCHEMA, first, second).result)) == ["number", "date", "items"]


def test_the_whole_schema_holds_max_items_keeps_the_first_items() -> None:
    schema = {"type": "array", "maxItems": 3, "items": {"type": "integer"}}
    combiner = merged(schema, piece([1, 2]), piece([3, 4]), piece([5]))
    assert plain(combiner.result) == [1, 2, 3]
    assert combiner.additions_left_out == 2


def test_an_addition_that_breaks_one_of_is_left_out() -> None:
    schema = {
        "type": "object",
        "properties": {"card": {"type": "string"}, "iban": {"type": "string"}},
        "oneOf": [{"required": ["card"]}, {"required": ["iban"]}],
    }
    assert plain(merged(schema, piece({"card": "4111"}), piece({"iban": "PT50"})).result) == {"card": "4111"}


def test_leaves_keep_the_models_text_and_spans_move_by_the_pieces_offset() -> None:
    text = '{"total": 559.40, "note": "a\\u00e9"}'
    node = annotate(text, {"/total": ValueEvidence((10, 16), 0.5)}, 1000)
    assert dump(node) == '{"total": 559.40, "note": "a\\u00e9"}'
    assert evidence_of(node) == {"/total": ValueEvidence((1010, 1016), 0.5)}
    assert [leaf.pointer for leaf in read_leaves(dump(node).encode()).leaves] == ["/total", "/note"]


BOUNDED = {
    "type": "object",
    "properties": {
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c", "d"]}, "uniqueItems": True, "maxItems": 3},
        "title": {"type": ["string", "null"], "maxLength": 3},
        "meta": {"type": "object", "maxProperties": 2, "additionalProperties": {"type": "integer"}},
    },
}
VALUES = st.fixed_dictionaries(
    {},
    optional={
        "tags": st.lists(st.sampled_from("abcd"), unique=True, max_size=3),
        "title": st.none() | st.text(max_size=3),
        "meta": st.dictionaries(st.sampled_from("wxyz"), st.integers(0, 9), max_size=2),
    },
)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(VALUES, min_size=1, max_size=5))
def test_the_merged_value_always_validates_and_keeps_first_contributions(values: list[dict[str, Any]]) -> None:
    result = plain(merged(BOUNDED, *(piece(value) for value in values)).result)
    jsonschema.validate(result, BOUNDED)
    tags: list[str] = []
    meta: dict[str, int] = {}
    for value in values:
        tags += [tag for tag in value.get("tags", []) if tag not in tags]
        meta.update((key, count) for key, count in value.get("meta", {}).items() if key not in meta and len(meta) < 2)
    titles = [value["title"] for value in values if value.get("title") is not None]
    given = {key for value in values for key in value}
    assert result.get("tags") == (tags[:3] if "tags" in given else None)  # first unique items, in document order
    assert result.get("meta") == (meta if "meta" in given else None)  # first properties, first values
    assert result.get("title") == (titles[0] if titles else None)  # the first non-null
