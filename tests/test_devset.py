"""The labelled development set (bench/devset), the calibration set kept apart from it
(bench/calibset), and the scoring helpers of bench/accuracy.py.

Gold values must follow mechanically from each committed document: they are derived again
here from the text itself wherever the document keeps its structure (METADATA as written, the
rendered manual page's header, NAME line and footer, the license file), and every quoted
value must occur in its document. No model is loaded.
"""

from __future__ import annotations

import email.parser
import json
import random
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from bench_modules import bench_module
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
DEVSET = ROOT / "bench" / "devset"
CALIBSET = ROOT / "bench" / "calibset"


sys.path.insert(0, str(ROOT / "bench"))  # bench/accuracy.py imports its sibling accuracy_scoring
build = bench_module("build_devset")
accuracy = bench_module("accuracy_scoring")


def records(folder: Path) -> list[dict[str, Any]]:
    found = [json.loads(line) for line in (folder / "gold.jsonl").read_text(encoding="utf-8").splitlines()]
    return [{**record, "folder": str(folder)} for record in found]


RECORDS = records(DEVSET)
CALIBRATION = records(CALIBSET)
BOTH = RECORDS + CALIBRATION
SCHEMAS = {path.stem: json.loads(path.read_text()) for path in (DEVSET / "schemas").glob("*.json")}


def text_of(record: dict[str, Any]) -> str:
    return (Path(record["folder"]) / record["file"]).read_text(encoding="utf-8")


def test_the_set_has_at_least_40_documents_of_every_kind_with_their_sources() -> None:
    assert len(RECORDS) >= 40
    assert len({record["id"] for record in RECORDS}) == len(RECORDS)
    assert {record["schema"] for record in RECORDS} == set(SCHEMAS) == {"package", "manpage", "license"}
    assert sorted(path.name for path in (DEVSET / "docs").iterdir()) == sorted(Path(r["file"]).name for r in RECORDS)
    for record in RECORDS:
        assert record["source"]["package"] and record["source"]["version"], record["id"]
        assert 0 < len(text_of(record)) <= build.MAX_CHARS, record["id"]


def test_the_calibration_set_shares_no_document_source_or_author_with_the_development_set() -> None:
    """Confidence is fitted on bench/calibset (bench/calibrate.py) and checked on bench/devset:
    the two must be apart for the check to mean anything."""
    assert len(CALIBRATION) >= 40
    assert sorted(path.name for path in (CALIBSET / "docs").iterdir()) == sorted(Path(r["file"]).name for r in CALIBRATION)
    assert {path.name: path.read_text() for path in (CALIBSET / "schemas").glob("*.json")} == {
        path.name: path.read_text() for path in (DEVSET / "schemas").glob("*.json")
    }
    assert not {r["id"] for r in RECORDS} & {r["id"] for r in CALIBRATION}
    assert not {r["source"]["package"] for r in RECORDS} & {r["source"]["package"] for r in CALIBRATION}
    authors = {r["gold"].get("author") for r in RECORDS if r["schema"] == "package"}
    assert not authors & {r["gold"].get("author") for r in CALIBRATION if r["schema"] == "package"}


@pytest.mark.parametrize("record", BOTH, ids=[f"{Path(r['folder']).name}-{r['id']}" for r in BOTH])
def test_gold_values_are_valid_and_occur_in_their_document(record: dict[str, Any]) -> None:
    schema = SCHEMAS[record["schema"]]
    validator = jsonschema.Draft202012Validator
    validator(schema, format_checker=validator.FORMAT_CHECKER).validate(record["gold"])
    text = build.squash(text_of(record))
    for key, value in record["gold"].items():
        for item in value if isinstance(value, list) else [value]:
            if key not in build.NAMED_NOT_QUOTED:
                assert build.squash(str(item)) in text, (key, item)


@pytest.mark.parametrize("record", BOTH, ids=[f"{Path(r['folder']).name}-{r['id']}" for r in BOTH])
def test_gold_values_follow_from_the_document_itself(record: dict[str, Any]) -> None:
    text = text_of(record)
    if record["form"] == "metadata":
        assert build.package_gold(email.parser.Parser().parsestr(text)) == record["gold"]
    elif record["schema"] == "manpage":
        assert build.man_gold(text) == record["gold"]
    elif record["schema"] == "license":
        assert build.license_gold(text) == record["gold"]
    else:  # prose: rendered from the METADATA headers; the values stand in it verbatim (above)
        assert record["form"].startswith("prose")


def test_the_bench_loads_every_case_with_its_schema() -> None:
    cases, schemas = accuracy.load_devset()
    assert sorted(case.id for case in cases) == sorted(record["id"] for record in RECORDS)
    assert {case.schema for case in cases[:3]} == set(schemas)  # --limit 3 sees every kind


def test_values_compare_after_trivial_normalisation_only() -> None:
    assert accuracy.same("Fast  iterable\nJSON parser", "Fast iterable JSON parser.")
    assert not accuracy.same("fast iterable JSON parser", "Fast iterable JSON parser")
    assert accuracy.same(2019, 2019) and not accuracy.same("2019", 2019)
    assert accuracy.same(["gzip", "zcat"], ["gzip", "zcat"]) and not accuracy.same(["zcat", "gzip"], ["gzip", "zcat"])


def test_spans_allow_a_whitespace_run_as_one_space_and_nothing_else() -> None:
    document = "print the number of\n       processing units (a+b)"
    assert accuracy.is_span("number of processing units", document)
    assert accuracy.is_span("(a+b)", document)
    assert not accuracy.is_span("Number of processing", document)
    assert not accuracy.is_span("number ofprocessing", document)


def test_looping_tails_are_found_and_real_values_are_not() -> None:
    assert accuracy.looping_tail("Senior Backend Engineer 18.11.18.11.18.11.18.11") == ".18.11"
    assert accuracy.looping_tail("10.00000000000000000") == "0"
    assert accuracy.looping_tail("GNU coreutils 9.1") is None
    assert accuracy.looping_tail(">=2.7, !=3.0.*, !=3.1.*, !=3.2.*") is None  # three copies, but under 12 characters
    every_gold_string = [s for r in RECORDS for s in accuracy.strings_and_items(r["gold"])[0]]
    assert [s for s in every_gold_string if accuracy.looping_tail(s)] == []


def test_repeated_array_items_are_counted_once_per_repeat() -> None:
    assert accuracy.repeated_items({"names": ["a", "b", "a", "a"], "x": [1, 2]}) == ["a", "a"]
    assert accuracy.strings_and_items({"names": ["a", "b"], "section": 1, "s": "c"}) == (["a", "b", "c"], 2)


def rank_auroc(pairs: list[tuple[float, bool]]) -> float:
    """The Mann-Whitney statistic from average ranks: another route to the same number."""
    ordered = sorted(score for score, _ in pairs)
    rank = {score: sum(i + 1 for i, s in enumerate(ordered) if s == score) / ordered.count(score) for score in ordered}
    positives = [score for score, ok in pairs if ok]
    negatives = len(pairs) - len(positives)
    return (sum(rank[s] for s in positives) - len(positives) * (len(positives) + 1) / 2) / (len(positives) * negatives)


@given(st.lists(st.tuples(st.sampled_from([0.1, 0.2, 0.5, 0.9, 1.0]), st.booleans()), min_size=2, max_size=30))
def test_auroc_agrees_with_the_rank_sum_statistic(pairs: list[tuple[float, bool]]) -> None:
    found = accuracy.auroc(pairs)
    if all(ok for _, ok in pairs) or not any(ok for _, ok in pairs):
        assert found is None
    else:
        assert found == pytest.approx(rank_auroc(pairs))


def test_auroc_is_one_when_confidence_separates_right_from_wrong() -> None:
    pairs = [(random.Random(i).uniform(0.6, 1.0), True) for i in range(10)] + [(0.1 * i / 10, False) for i in range(10)]
    assert accuracy.auroc(pairs) == 1.0
    assert accuracy.auroc([(1 - score, not ok) for score, ok in pairs]) == 1.0
    assert accuracy.auroc([(score, not ok) for score, ok in pairs]) == 0.0


def test_near_repeat_values_are_long_runaways_not_prose() -> None:
    assert accuracy.near_repeat_value("KDE/KDF/" * 26)
    assert not accuracy.near_repeat_value("KDE/KDF/" * 25)  # 200 characters: not over
    prose = (ROOT / "bench" / "devset" / "docs" / "license-six-license.txt").read_text()[:400]
    assert not accuracy.near_repeat_value(prose)


def test_calibration_error_is_zero_when_each_bin_is_right_as_often_as_it_says() -> None:
    # 0.25 right one time in four, 0.95 right 19 times in 20: each bin's fraction right is its confidence
    pairs = [(0.25, i == 0) for i in range(4)] + [(0.95, i != 0) for i in range(20)]
    error, rows = accuracy.calibration(pairs)
    assert error == pytest.approx(0.0)
    assert rows == [(0.2, 0.3, 4, pytest.approx(0.25), 0.25), (0.9, 1.0, 20, pytest.approx(0.95), 0.95)]


def test_calibration_error_weighs_each_bins_gap_by_its_values() -> None:
    # always 0.9 sure, right half the time: a gap of 0.4 over every value; 1.0 falls in the last bin
    error, rows = accuracy.calibration([(0.9, True), (0.9, False), (1.0, True), (1.0, False)])
    assert error == pytest.approx(0.45)
    assert [row[2] for row in rows] == [4]
    assert accuracy.calibration([]) == (None, [])


@pytest.mark.parametrize(
    ("schema", "leaf", "kind"),
    [
        ({"enum": ["a", "b"]}, "a", "enum"),
        ({"type": "string", "format": "date"}, "2024-01-01", "date"),
        ({"type": "boolean"}, True, "boolean"),
        ({"type": "integer"}, 3, "number"),
        ({"type": "string"}, "x", "string"),
        ({}, None, "null"),
    ],
)
def test_leaves_are_told_apart_by_kind_for_the_confidence_figures(schema: dict[str, Any], leaf: Any, kind: str) -> None:
    assert accuracy.leaf_kind(schema, leaf) == kind


def test_rescoring_gold_values_as_extractions_finds_every_field_right_and_verbatim(tmp_path: Path) -> None:
    runner = bench_module("accuracy")
    cases, schemas = accuracy.load_devset()
    saved = tmp_path / "saved.jsonl"
    records = [{"model": "m", "mode": "grounded", "id": case.id, "seconds": 1.0, "value": case.gold} for case in cases]
    saved.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    tally = runner.rescore(saved, cases, schemas)["m"]["grounded"]
    assert tally.documents == len(cases)
    assert tally.right == tally.fields == sum(len(case.gold) for case in cases)
    assert tally.verbatim == tally.plain_strings > 0
    assert tally.loops == tally.duplicates == []
