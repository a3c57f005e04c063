"""--abstain (core.extract.abstain): null in place of a doubtful value, only where the schema
allows null there; the rest of the text byte for byte; jsonschema the judge of every result."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_extract.core.extract.abstain import abstain
from gguf_extract.core.grounding.value_evidence import ValueEvidence, leaves
from gguf_extract.core.index.compiled import compile_schema
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
    return {f"/{name.replace('_', '/')}": ValueEvidence(None, confidence) for name, confidence in confidences.items()}


def test_only_values_below_the_threshold_that_may_be_null_become_null(vocab: Vocabulary) -> None:
    compiled = compile_schema(SCHEMA, vocab)
    found = evidence(a=0.2, b=0.1, c=0.9, d=None, e_0=0.3, e_1=0.5, f=0.1, g=0.1)
    text, withheld, value = abstain(TEXT, found, compiled, 0.5)
    assert withheld == ["/a", "/e/0", "/f"]  # b is no null, c is sure, d had no choice, e/1 is at it, g may not be null
    assert text == '{"a": null, "b": "y", "c": 1.50, "d": "z", "e": [null, 2], "f": null, "g": "w"}'
    jsonschema.validate(json.loads(text), SCHEMA)
    assert value == json.loads(text)
    assert abstain(TEXT, found, compiled, 0.05) == (TEXT, [], None)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(0.0, 1.0)), min_size=9, max_size=9), st.floats(0.0, 1.0))
def test_whatever_the_confidences_the_result_validates_and_only_doubtful_values_change(
    vocab: Vocabulary, confidences: list[float | None], threshold: float
) -> None:
    compiled = compile_schema(SCHEMA, vocab)
    pointers = [leaf.pointer for leaf in leaves(TEXT.encode())]
    found = {pointer: ValueEvidence(None, confidence) for pointer, confidence in zip(pointers, confidences, strict=False)}
    text, withheld, value = abstain(TEXT, found, compiled, threshold)
    assert value == (json.loads(text) if withheld else None)
    value = json.loads(text)
    jsonschema.validate(value, SCHEMA)
    before = {leaf.pointer: leaf.value for leaf in leaves(TEXT.encode())}
    after = {leaf.pointer: leaf.value for leaf in leaves(text.encode())}
    for pointer in before:
        changed = after[pointer] != before[pointer]
        assert changed == (pointer in withheld)
        if changed:
            confidence = found[pointer].confidence
            assert after[pointer] is None and confidence is not None and confidence < threshold


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
