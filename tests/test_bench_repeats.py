"""bench/repeats.py's count of repeated array items, and the list-heavy set it runs on
(bench/listset, built by bench/build_listset.py). No model is loaded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from bench_modules import bench_module
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
LISTSET = ROOT / "bench" / "listset"
repeats = bench_module("repeats")

JOHN = {"name": "john", "email": "john"}


def pointers(value: Any) -> list[str]:
    return [pointer for pointer, _ in repeats.repeated_items(value)]


def test_the_issues_three_identical_items_are_two_repeats() -> None:
    assert pointers({"people": [JOHN, dict(JOHN), dict(JOHN)]}) == ["/people/1", "/people/2"]


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        (["a", "b", "a", "a"], ["/x/2", "/x/3"]),
        ([1, 1.0], ["/x/1"]),  # JSON numbers compare by value
        ([{"a": 1, "b": "x"}, {"b": "x", "a": 1}], ["/x/1"]),  # members in another order
        ([[1, 2], [1, 2], [2, 1]], ["/x/1"]),
        ([None, None], ["/x/1"]),
    ],
)
def test_json_equal_items_repeat(items: list[Any], expected: list[str]) -> None:
    assert pointers({"x": items}) == expected


@pytest.mark.parametrize(
    "items",
    [
        [True, 1],  # a boolean is not the number 1
        [False, 0, None, ""],
        ["john", "John", "john "],
        [{"name": "john", "email": None}, {"name": "john", "email": "j@x.org"}],  # a field differs
        [{"name": "john"}, {"name": "john", "email": "j@x.org"}],  # a superset adds a field
        [{"a": 1}, {}],  # an empty object copies no field
        [{"a": [1, 2]}, {"a": [2, 1]}],
        [[1, 2], [1, 2, 3]],
    ],
)
def test_different_items_do_not_repeat(items: list[Any]) -> None:
    assert pointers({"x": items}) == []


def test_an_object_whose_every_field_matches_one_earlier_object_is_a_subset_copy() -> None:
    items = [
        {"name": "ann", "email": "a@x.org", "role": "chair"},
        {"name": "bo", "email": None},
        {"name": "ann", "role": "chair"},
    ]
    assert repeats.repeated_items({"people": items}) == [("/people/2", {"name": "ann", "role": "chair"})]
    # every field must match the same earlier object, not fields of two different ones
    assert (
        pointers({"people": [{"name": "ann", "role": "x"}, {"name": "bo", "role": "chair"}, {"name": "ann", "role": "chair"}]})
        == []
    )


def test_arrays_nested_in_objects_in_arrays_count_and_a_copy_is_not_searched_again() -> None:
    value = {"pages": [{"names": ["ls", "ls"], "see": []}, {"names": ["dir"], "see": ["a(1)", "b(1)", "a(1)"]}]}
    assert pointers(value) == ["/pages/0/names/1", "/pages/1/see/2"]
    copied = {"pages": [{"names": ["ls", "ls"]}, {"names": ["ls", "ls"]}]}
    assert pointers(copied) == ["/pages/0/names/1", "/pages/1"]
    assert pointers({"a/b": [[1, 1]]}) == ["/a~1b/0/1"]


@given(st.lists(st.integers(), unique=True), st.data())
def test_a_copy_of_any_earlier_item_adds_exactly_one_repeat(items: list[int], data: st.DataObject) -> None:
    assert pointers({"x": items}) == []
    if items:
        copy = data.draw(st.sampled_from(items))
        assert pointers({"x": [*items, copy]}) == [f"/x/{len(items)}"]


def test_strings_inside_arrays_are_checked_against_the_document_with_whitespace_runs_as_one_space() -> None:
    value = {"title": "t", "people": [{"name": "Ann Lee", "email": None, "tags": ["x", ""]}], "cves": ["CVE-2025-1"]}
    assert repeats.array_strings(value) == ["Ann Lee", "x", "CVE-2025-1"]
    assert repeats.verbatim("Ann Lee", "present: Ann\n   Lee (chair)")
    assert not repeats.verbatim("ann lee", "present: Ann Lee")


def saved(record_file: str, data: Any, stats: dict[str, Any] | None = None, tree: str = "A") -> dict[str, Any]:
    line = {"source": record_file, "data": data, "stats": stats or {}}
    return {
        "tree": tree,
        "root": "/r",
        "commit": "abc",
        "set": "listset",
        "schema": "people",
        "mode": "plain",
        "file": record_file,
        "line": line,
    }


def test_the_figures_count_outputs_repeats_guard_work_and_verbatim_strings(tmp_path: Path, capsys: Any) -> None:
    document = "listset/docs/people/own-meeting-steering.txt"
    good = {"people": [{"name": "Chen Wei", "email": "chenwei@pyrite.example", "role": "release manager"}]}
    bad = {"people": [JOHN, JOHN, {"name": "john"}]}
    stats = {
        "repeats_stopped": 2,
        "preview_tokens": 30,
        "prompt_seconds": 1.0,
        "generate_seconds": 2.0,
        "budget_closed_at": "/people",
    }
    records = [
        saved(document, good, {"repeats_stopped": 1, "prompt_seconds": 0.5, "generate_seconds": 0.5}),
        saved(document, bad, stats),
    ]
    records.append({**saved(document, None), "line": {"source": document, "error": {"type": "X", "message": "m"}}})
    tally = repeats.tallies(records)[("listset/people", "plain", "A")]
    assert (tally.outputs, tally.failed, tally.with_repeat, tally.repeated, tally.budget) == (2, 1, 1, 2, 1)
    assert tally.guard == {"repeats_stopped": 3, "preview_tokens": 30}
    assert (tally.verbatim, tally.strings) == (3, 8)  # Chen Wei's three fields; none of john's five
    assert tally.per_doc() == 2.0
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    repeats.report(repeats.saved_records([path, path]))  # two saved runs side by side, as trees A and B
    printed = capsys.readouterr().out
    assert "listset/people     plain     A          2          1         2       1        3       30" in printed
    assert "listset/people     plain     B          2          1         2       1        3       30" in printed
    assert "x1.00" in printed and "(1 failed" in printed


# ---- the list-heavy set ---------------------------------------------------------------

INDEX = [json.loads(line) for line in (LISTSET / "index.jsonl").read_text(encoding="utf-8").splitlines()]
SCHEMAS = {path.stem: json.loads(path.read_text()) for path in (LISTSET / "schemas").glob("*.json")}


def test_the_list_set_has_30_to_40_documents_one_folder_per_schema_and_all_indexed() -> None:
    assert 30 <= len(INDEX) <= 40
    assert {record["schema"] for record in INDEX} == set(SCHEMAS) == {"holders", "package", "manpage", "advisory", "people"}
    on_disk = sorted(str(path.relative_to(LISTSET)) for path in (LISTSET / "docs").glob("*/*"))
    assert on_disk == sorted(record["file"] for record in INDEX)
    for record in INDEX:
        assert record["file"].startswith(f"docs/{record['schema']}/"), record["id"]
        assert 0 < record["chars"] == len((LISTSET / record["file"]).read_text(encoding="utf-8")), record["id"]
        assert record["tokens"] <= 6000, record["id"]


def test_no_document_comes_from_the_files_kept_apart_to_check_the_work() -> None:
    for record in INDEX:
        name = Path(record["source"]["path"]).name.lower()
        assert name != "copyright" and not name.startswith("changelog"), record["source"]["path"]
        assert record["source"]["kind"] in {"license", "authors", "metadata", "manpage", "own"}
        assert (record["source"]["kind"] == "own") == Path(record["file"]).name.startswith("own-")


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_schemas_are_valid_2020_12_schemas_with_an_array(name: str) -> None:
    schema = SCHEMAS[name]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert any(part.get("type") == "array" for part in schema["properties"].values())


def test_the_bench_runs_one_batch_per_schema_of_each_set() -> None:
    plan = repeats.batches(["listset", "devset"], None)
    assert [batch.name for batch in plan][:5] == [f"listset/{name}" for name in dict.fromkeys(r["schema"] for r in INDEX)]
    assert sum(len(batch.files) for batch in plan if batch.set == "listset") == len(INDEX)
    assert {batch.name for batch in plan if batch.set == "devset"} == {"devset/package", "devset/manpage", "devset/license"}
    for batch in plan:
        assert (repeats.HERE / batch.schema_file).is_file()
        assert all((repeats.HERE / file).is_file() for file in batch.files)
    assert all(len(batch.files) <= 2 for batch in repeats.batches(["listset", "devset"], 2))
