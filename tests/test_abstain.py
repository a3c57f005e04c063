"""--abstain and unstated values (core.results.abstain): null in place of a doubtful value or
of one the document does not state, a doubtful array item dropped, each only where the schema
allows it; the rest of the text byte for byte; the evidence re-keyed with no stale span;
jsonschema the judge of every result."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import compile_for, hand_vocab
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_extract.core.index.compiled import compile_schema
from gguf_extract.core.json_reader import read_leaves
from gguf_extract.core.results.abstain import FlaggedValue, withhold
from gguf_extract.core.results.evidence import ValueEvidence
from gguf_extract.core.vocab.token_table import Vocabulary

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = {
    "type": "object",
    "properties": {
        "a": {"type": ["string", "null"]},
        "b": {"type": "string"},
        "c": {"type": ["number", "null"]},
        "d": {"type": ["string", "null"], "minLength": 1},
        "e": {"type": "array", "items": {"type": ["integer", "null"]}, "maxItems": 4},
        "f": {"anyOf": [{"type": "boolean"}, {"const": None}]},
        "g": {"type": ["string", "null"], "not": {"const": None}},
    },
    "required": ["a", "b", "c"],
}
TEXT = '{"a": "x", "b": "y", "c": 1.50, "d": "z", "e": [1, 2], "f": true, "g": "w"}'


def evidence(**confidences: float | None) -> dict[str, ValueEvidence]:
    return {f"/{name.replace('_', '/')}": ValueEvidence((0, 1), confidence) for name, confidence in confidences.items()}


def outcomes(flagged: list[FlaggedValue]) -> list[tuple[str, str, str]]:
    return [(found.pointer, found.reason, found.outcome) for found in flagged]


def test_only_values_below_the_threshold_that_may_be_withheld_are(vocab: Vocabulary) -> None:
    compiled = compile_schema(SCHEMA, vocab)
    found = evidence(a=0.2, b=0.1, c=0.9, d=None, e_0=0.3, e_1=0.5, f=0.1, g=0.1)
    result = withhold(TEXT, found, compiled, min_confidence=0.5, abstain=True)
    # b is no null, c is sure, d had no choice, e/1 is at it, g may not be null; e/0 is an item
    assert outcomes(result.flagged) == [
        ("/a", "doubtful", "null"),
        ("/b", "doubtful", "kept"),
        ("/e/0", "doubtful", "dropped"),
        ("/f", "doubtful", "null"),
        ("/g", "doubtful", "kept"),
    ]
    assert result.text == '{"a": null, "b": "y", "c": 1.50, "d": "z", "e": [2], "f": null, "g": "w"}'
    jsonschema.validate(json.loads(result.text), SCHEMA)
    assert result.value == json.loads(result.text)
    # the evidence follows the text: nothing left of a withheld value, the item after a dropped one moved up
    assert result.evidence["/a"] == ValueEvidence(None, None, None)
    assert result.evidence["/e/0"] == found["/e/1"] and "/e/1" not in result.evidence
    assert set(result.evidence) == {leaf.pointer for leaf in read_leaves(result.text.encode()).leaves}
    unchanged = withhold(TEXT, found, compiled, min_confidence=0.05, abstain=True)
    assert (unchanged.text, unchanged.value, unchanged.flagged) == (TEXT, None, [])
    named = withhold(TEXT, found, compiled, min_confidence=0.5)  # without abstain: named, nothing changed
    assert named.text == TEXT and {found.outcome for found in named.flagged} == {"kept"}
    assert len(named.flagged) == 5 and named.evidence == found


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(0.0, 1.0)), min_size=9, max_size=9), st.floats(0.0, 1.0))
def test_whatever_the_confidences_the_result_validates_and_only_doubtful_values_change(
    vocab: Vocabulary, confidences: list[float | None], threshold: float
) -> None:
    compiled = compile_schema(SCHEMA, vocab)
    pointers = [leaf.pointer for leaf in read_leaves(TEXT.encode()).leaves]
    found = {pointer: ValueEvidence(None, confidence) for pointer, confidence in zip(pointers, confidences, strict=False)}
    result = withhold(TEXT, found, compiled, min_confidence=threshold, abstain=True)
    assert result.value == (json.loads(result.text) if result.changed else None)
    value = json.loads(result.text)
    jsonschema.validate(value, SCHEMA)
    before = json.loads(TEXT)
    withheld = {found.pointer: found.outcome for found in result.flagged if found.outcome != "kept"}
    for name in before:
        if name == "e":
            kept = [item for index, item in enumerate(before["e"]) if withheld.get(f"/e/{index}") != "dropped"]
            assert value["e"] == [None if withheld.get(f"/e/{before['e'].index(item)}") == "null" else item for item in kept]
        else:
            assert (value[name] != before[name]) == (f"/{name}" in withheld)
    for pointer in withheld:
        confidence = found[pointer].confidence
        assert confidence is not None and confidence < threshold
    assert set(result.evidence) == {leaf.pointer for leaf in read_leaves(result.text.encode()).leaves}


UNSTATED = {
    "type": "object",
    "properties": {
        "email": {"type": ["string", "null"], "format": "email"},
        "name": {"type": "string"},
        "city": {"type": ["string", "null"]},
    },
    "required": ["email", "name", "city"],
}


def test_a_value_the_document_does_not_state_is_null_where_it_may_be_and_named_where_not(vocab: Vocabulary) -> None:
    compiled = compile_schema(UNSTATED, vocab)
    text = '{"email": "john_john@gmail.com", "name": "John", "city": "Oslo"}'
    found = {
        "/email": ValueEvidence(None, 0.8, False),  # released from grounding, found nowhere: invented
        "/name": ValueEvidence(None, 0.9, False),
        "/city": ValueEvidence((4, 8), 0.9, False),  # released, yet the document writes it: stated
    }
    result = withhold(text, found, compiled, null_unstated=True)
    assert result.text == '{"email": null, "name": "John", "city": "Oslo"}'
    assert outcomes(result.flagged) == [("/email", "unstated", "null"), ("/name", "unstated", "kept")]
    assert result.flagged[0].value == "john_john@gmail.com" and result.flagged[0].confidence == 0.8
    assert result.evidence == {"/email": ValueEvidence(None, None, None), "/name": found["/name"], "/city": found["/city"]}
    named = withhold(text, found, compiled, null_unstated=False)  # both named, nothing changed
    assert named.text == text and outcomes(named.flagged) == [("/email", "unstated", "kept"), ("/name", "unstated", "kept")]
    grounded = {pointer: ValueEvidence((0, 4), 0.9, True) for pointer in found}
    assert withhold(text, grounded, compiled, null_unstated=True).flagged == []


def test_an_unstated_value_below_the_threshold_is_named_once_and_abstain_nulls_it_unasked(vocab: Vocabulary) -> None:
    compiled = compile_schema(UNSTATED, vocab)
    text = '{"email": "john_john@gmail.com", "name": "John", "city": "Oslo"}'
    found = {
        "/email": ValueEvidence(None, 0.1, False),
        "/name": ValueEvidence(None, 0.1, False),
        "/city": ValueEvidence((4, 8), 0.9, True),
    }
    both = withhold(text, found, compiled, min_confidence=0.5, abstain=True)
    assert outcomes(both.flagged) == [("/email", "unstated", "null"), ("/name", "unstated", "kept")]
    doubt_only = withhold(text, found, compiled, min_confidence=0.5, abstain=True, null_unstated=False)
    assert doubt_only.text == both.text == '{"email": null, "name": "John", "city": "Oslo"}'
    assert outcomes(doubt_only.flagged) == [("/email", "doubtful", "null"), ("/name", "unstated", "kept")]


ITEMS = {
    "type": "object",
    "properties": {
        "deps": {"type": "array", "items": {"type": "string"}},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
        "ids": {"type": "array", "items": {"type": ["integer", "null"]}, "minItems": 1},
        "must": {"type": "array", "items": {"type": "string"}, "contains": {"const": "x"}},
        "people": {
            "type": "array",
            "items": {"type": "object", "properties": {"n": {"type": "string"}, "a": {"type": ["integer", "null"]}}},
        },
        "grid": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
    },
}


def itemised(vocab: Vocabulary, text: str, confidences: dict[str, float]) -> tuple[Any, dict[str, ValueEvidence]]:
    compiled = compile_schema(ITEMS, vocab, lenient=True)  # `contains` is not enforced while writing, yet validated
    leaves = read_leaves(text.encode()).leaves
    found = {leaf.pointer: ValueEvidence((0, 1), confidences.get(leaf.pointer, 0.9), True) for leaf in leaves}
    return withhold(text, found, compiled, min_confidence=0.3, abstain=True), found


def test_a_doubtful_item_is_dropped_where_the_array_allows_and_kept_where_it_does_not(vocab: Vocabulary) -> None:
    text = '{"deps": ["a", "boto3.svg", "c"], "tags": ["x", "y"], "ids": [7], "must": ["x", "w"]}'
    doubtful = {"/deps/1": 0.12, "/tags/1": 0.1, "/ids/0": 0.2, "/must/0": 0.1, "/must/1": 0.2}
    result, found = itemised(vocab, text, doubtful)
    # tags: minItems 2; ids: minItems 1, so its nullable item is written as null; must: its one "x" is what `contains` needs
    assert result.text == '{"deps": ["a", "c"], "tags": ["x", "y"], "ids": [null], "must": ["x"]}'
    assert outcomes(result.flagged) == [
        ("/deps/1", "doubtful", "dropped"),
        ("/tags/1", "doubtful", "kept"),
        ("/ids/0", "doubtful", "null"),
        ("/must/0", "doubtful", "kept"),
        ("/must/1", "doubtful", "dropped"),
    ]
    assert result.flagged[0].value == "boto3.svg" and result.flagged[0].confidence == 0.12
    jsonschema.validate(result.value, ITEMS)
    assert result.evidence["/deps/1"] == found["/deps/2"] and "/deps/2" not in result.evidence
    assert result.evidence["/ids/0"] == ValueEvidence(None, None, None)
    assert set(result.evidence) == {leaf.pointer for leaf in read_leaves(result.text.encode()).leaves}


def test_an_item_the_document_does_not_state_leaves_its_array_where_the_array_allows(vocab: Vocabulary) -> None:
    """An invented identifier in a list is dropped (not written as null in the list), the least
    sure first where `minItems` lets only some go; one in an object item is written as null
    where it may be, the record kept."""
    compiled = compile_schema(ITEMS, vocab, lenient=True)
    text = '{"deps": ["CVE-1", "CVE-2"], "tags": ["x", "y", "z"], "ids": [4], "people": [{"n": "P", "a": 3}]}'
    found = {leaf.pointer: ValueEvidence((0, 1), 0.9, True) for leaf in read_leaves(text.encode()).leaves}
    invented = {"/deps/0": 0.4, "/deps/1": 0.6, "/tags/0": 0.5, "/tags/2": 0.2, "/ids/0": 0.3, "/people/0/a": 0.5}
    found |= {pointer: ValueEvidence(None, confidence, False) for pointer, confidence in invented.items()}
    result = withhold(text, found, compiled)
    assert result.text == '{"deps": [], "tags": ["x", "y"], "ids": [null], "people": [{"n": "P", "a": null}]}'
    assert outcomes(result.flagged) == [
        ("/deps/0", "unstated", "dropped"),
        ("/deps/1", "unstated", "dropped"),
        ("/tags/0", "unstated", "kept"),
        ("/tags/2", "unstated", "dropped"),
        ("/ids/0", "unstated", "null"),
        ("/people/0/a", "unstated", "null"),
    ]
    assert [flag.item for flag in result.flagged] == [True, True, True, True, True, False]  # /tags/0 kept by minItems
    jsonschema.validate(result.value, ITEMS)
    assert result.evidence["/tags/1"] == found["/tags/1"] and result.evidence["/ids/0"] == ValueEvidence(None, None, None)
    kept = withhold(text, found, compiled, null_unstated=False)
    assert kept.text == text and {flag.outcome for flag in kept.flagged} == {"kept"}


def test_where_only_one_item_may_go_the_least_sure_goes(vocab: Vocabulary) -> None:
    text = '{"tags": ["x", "y", "z"]}'
    result, _ = itemised(vocab, text, {"/tags/0": 0.2, "/tags/2": 0.1})
    assert result.text == '{"tags": ["x", "y"]}'
    assert outcomes(result.flagged) == [("/tags/0", "doubtful", "kept"), ("/tags/2", "doubtful", "dropped")]


def test_an_object_item_goes_by_its_first_leaf(vocab: Vocabulary) -> None:
    text = '{"people": [{"n": "P", "a": 3}, {"n": "Q", "a": 4}, {"n": "R", "a": 5}]}'
    # P: its name is doubtful, so the record goes; Q: only its age is, so the age is written as null
    result, found = itemised(vocab, text, {"/people/0/n": 0.1, "/people/1/a": 0.1, "/people/2/n": 0.2})
    assert result.text == '{"people": [{"n": "Q", "a": null}]}'
    assert outcomes(result.flagged) == [
        ("/people/0", "doubtful", "dropped"),
        ("/people/1/a", "doubtful", "null"),
        ("/people/2", "doubtful", "dropped"),
    ]
    assert result.flagged[0].value == {"n": "P", "a": 3} and result.flagged[0].confidence == 0.1
    assert result.flagged[2].confidence == 0.2
    assert result.evidence == {"/people/0/n": found["/people/1/n"], "/people/0/a": ValueEvidence(None, None, None)}


def test_items_go_with_one_separator_each_and_the_rest_stays_byte_for_byte(vocab: Vocabulary) -> None:
    text = '{"deps" :[ "a" ,  "b",\n"c" , "d" ], "grid": [["p", "q"], ["r"]]}'
    for doubtful, expected in [
        (["/deps/0"], '{"deps" :[ "b",\n"c" , "d" ], "grid": [["p", "q"], ["r"]]}'),
        (["/deps/3"], '{"deps" :[ "a" ,  "b",\n"c" ], "grid": [["p", "q"], ["r"]]}'),
        (["/deps/1", "/deps/3"], '{"deps" :[ "a" ,  "c" ], "grid": [["p", "q"], ["r"]]}'),
        (["/deps/0", "/deps/1", "/deps/2", "/deps/3"], '{"deps" :[  ], "grid": [["p", "q"], ["r"]]}'),
        (["/grid/0/1"], '{"deps" :[ "a" ,  "b",\n"c" , "d" ], "grid": [["p"], ["r"]]}'),
        (["/grid/0/1", "/grid/1/0"], '{"deps" :[ "a" ,  "b",\n"c" , "d" ], "grid": [["p"]]}'),  # ["r"] goes by "r"
        (["/grid/0/0", "/grid/0/1"], '{"deps" :[ "a" ,  "b",\n"c" , "d" ], "grid": [["r"]]}'),
    ]:
        result, _ = itemised(vocab, text, dict.fromkeys(doubtful, 0.1))
        assert result.text == expected, doubtful
        assert json.loads(result.text) == result.value
        assert set(result.evidence) == {leaf.pointer for leaf in read_leaves(result.text.encode()).leaves}
    # an item that goes whole is named once, not for each of its items
    result, _ = itemised(vocab, text, {"/grid/0/0": 0.1, "/grid/0/1": 0.1})
    assert outcomes(result.flagged) == [("/grid/0", "doubtful", "dropped")]
    assert result.text == '{"deps" :[ "a" ,  "b",\n"c" , "d" ], "grid": [["r"]]}'
    # one by one (the tags' doubtful item cannot go, so not all at once): the inner item goes
    # first, the least sure, then the row holding it, which alone is named
    text = '{"tags": ["x", "y"], "grid": [["p", "q"], ["r"]]}'
    result, _ = itemised(vocab, text, {"/grid/0/1": 0.05, "/tags/1": 0.1, "/grid/0/0": 0.2})
    assert result.text == '{"tags": ["x", "y"], "grid": [["r"]]}'
    assert outcomes(result.flagged) == [("/tags/1", "doubtful", "kept"), ("/grid/0", "doubtful", "dropped")]


@pytest.mark.model
def test_the_command_writes_null_for_doubtful_values_that_may_be_null_and_says_so(tmp_path: Path) -> None:
    person = json.loads((ROOT / "schemas" / "person.json").read_text())
    for name, field in person["properties"].items():  # every value may be null
        if name != "name":
            field["type"] = [field["type"], "null"]
    schema = tmp_path / "person.json"
    schema.write_text(json.dumps(person))
    environment = {**os.environ, "EXTRACT_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "gguf_extract", "-s", str(schema), str(ROOT / "samples" / "person.txt")]
    asked = subprocess.run([*command, "--evidence"], capture_output=True, env=environment, timeout=600, check=False)
    assert asked.returncode == 0, asked.stderr.decode()
    plain = json.loads(asked.stdout)
    confidences = {pointer: found["confidence"] for pointer, found in plain["evidence"].items()}
    threshold = sorted(c for c in confidences.values() if c is not None)[2]  # the two least sure fall below it
    options = ["--evidence", "--min-confidence", str(threshold), "--abstain"]
    withheld = subprocess.run([*command, *options], capture_output=True, env=environment, timeout=600, check=False)
    assert withheld.returncode == 0, withheld.stderr.decode()
    result = json.loads(withheld.stdout)
    jsonschema.validate(result["data"], person)
    stderr = withheld.stderr.decode()
    for pointer, confidence in confidences.items():
        name = pointer.lstrip("/")
        doubtful = confidence is not None and confidence < threshold
        expected_null = doubtful and name != "name"
        assert (result["data"][name] is None) == expected_null or plain["data"][name] is None, pointer
        if expected_null:
            assert f"{pointer} has confidence" in stderr and "written as null (--abstain)" in stderr
    refused = subprocess.run([*command, "--abstain"], capture_output=True, env=environment, timeout=600, check=False)
    assert refused.returncode == 2 and "--abstain needs --min-confidence" in refused.stderr.decode()


@pytest.mark.model
def test_a_batch_into_an_output_directory_writes_each_file_as_its_single_run_does(tmp_path: Path) -> None:
    """The file a batch writes is the value --abstain left, as one document's run prints it."""
    person = json.loads((ROOT / "schemas" / "person.json").read_text())
    for name, field in person["properties"].items():
        if name != "name":
            field["type"] = [field["type"], "null"]
    schema = tmp_path / "person.json"
    schema.write_text(json.dumps(person))
    documents = tmp_path / "documents"
    documents.mkdir()
    (documents / "person.txt").write_bytes((ROOT / "samples" / "person.txt").read_bytes())
    (documents / "event.txt").write_bytes((ROOT / "samples" / "event.txt").read_bytes())
    environment = {**os.environ, "EXTRACT_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "gguf_extract", "-s", str(schema), "--threads", "1"]
    options = ["--min-confidence", "0.5", "--abstain"]
    batch = subprocess.run(
        [*command, *options, str(documents), "--output-dir", str(tmp_path / "out")],
        capture_output=True, env=environment, timeout=600, check=False,
    )  # fmt: skip
    assert batch.returncode == 0, batch.stderr.decode()
    withheld = 0
    for name in ("person", "event"):
        single = subprocess.run(
            [*command, *options, str(documents / f"{name}.txt")], capture_output=True, env=environment, timeout=600, check=False
        )
        assert single.returncode == 0, single.stderr.decode()
        written = json.loads((tmp_path / "out" / f"{name}.json").read_text())
        assert written == json.loads(single.stdout)
        jsonschema.validate(written, person)
        warned = r"(/\w+) has confidence [0-9.]+, below --min-confidence 0.5: written as null"
        pointers = re.findall(warned, single.stderr.decode())
        in_batch = re.findall(rf"{name}.txt: {warned}", batch.stderr.decode())
        assert pointers == in_batch and all(written[pointer[1:]] is None for pointer in pointers)
        withheld += len(pointers)
    assert withheld > 0  # the threshold withheld something, so the files show --abstain at work


@pytest.mark.parametrize(
    ("schema", "may"),
    [
        ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}, False),
        ({"type": "object", "properties": {"a": {"type": ["string", "null"]}}, "required": ["a"]}, True),
        ({"type": "object", "properties": {"a": {"enum": ["x", None]}}, "required": ["a"]}, True),
        ({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "null"}}}}, True),
        ({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}}, True),
        ({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"format": "email", "type": "string"}}}, False),
    ],
)
def test_the_output_waits_for_the_whole_document_only_where_a_value_may_be_withheld(schema: Any, may: bool) -> None:
    """Under grounding, a value the document does not state is written as null where the schema
    allows it, or dropped from its array, which needs the whole output; where neither null nor
    an array has a place the output streams."""
    assert compile_for(schema, hand_vocab()).may_withhold is may
