"""The supported-keyword table of docs/schema-support.md, generated from the examples checked here.

Each row names keywords, says how they are enforced and carries an example schema with a
document it must accept and one it must reject (every accepted one also validates with
jsonschema). The test fails when the documented table differs from the rendered rows;
`python tests/test_keyword_table.py --write` rewrites it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from gguf_extract.core.automaton.dfa import DEAD
from gguf_extract.core.index.compiled import compile_automaton
from gguf_extract.core.schema.read.validation import validator_for_schema

TABLE_PAGE = Path(__file__).resolve().parent.parent / "docs" / "schema-support.md"
START, END = "<!-- keyword-table:start -->", "<!-- keyword-table:end -->"


class Row(NamedTuple):
    keywords: str
    enforced: str
    schema: Any
    accepted: Any
    rejected: Any


NO = object()  # a row without a document to reject (annotations)

ROWS = [
    Row("`type` (all seven, and lists)", "exactly", {"type": ["integer", "null"]}, None, "1"),
    Row(
        "`properties`, `required`, `additionalProperties`",
        "exactly; properties in schema order, optional ones may be left out, no undeclared ones generated"
        " (`guide(every_valid_text=True)` accepts both: see the departures)",
        {"properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": False},
        {"a": 1},
        {"a": 1, "b": 2},
    ),
    Row(
        "`patternProperties`, `propertyNames`",
        "exactly (Python's `re.search` decides which patterns a name matches); generated keys come from the first pattern",
        {"patternProperties": {"^x-": {"type": "integer"}}, "additionalProperties": False},
        {"x-a": 1},
        {"y": 1},
    ),
    Row(
        "`minProperties`, `maxProperties`",
        "exactly over declared properties; above 1 on objects without declared properties: refused (generated keys"
        " may repeat, and objects of distinct keys are no regular language)",
        {"properties": {"a": {"type": "null"}, "b": {"type": "null"}}, "minProperties": 1},
        {"b": None},
        {},
    ),
    Row(
        "`dependentRequired`, `dependentSchemas`, `dependencies`",
        "exactly when the trigger property is required; otherwise the dependent names are always written, and a trigger"
        " with a dependent schema is never written",
        {"properties": {"a": {"type": "null"}, "b": {"type": "null"}}, "dependentRequired": {"a": ["b"]}},
        {"a": None, "b": None},
        {"a": None},
    ),
    Row("`enum`, `const`", "exactly, values filtered by the keywords beside them", {"enum": ["a", 1], "type": "string"}, "a", 1),
    Row(
        "`allOf`, and keywords beside `$ref`/`anyOf`/`oneOf`",
        "exactly, merged keyword by keyword; pairs with no exact merge (two formats, two tuples) are refused",
        {"allOf": [{"type": "integer", "minimum": 2}, {"maximum": 5}]},
        5,
        6,
    ),
    Row("`anyOf`", "exactly", {"anyOf": [{"type": "string", "maxLength": 1}, {"type": "boolean"}]}, True, "ab"),
    Row(
        "`oneOf`",
        "exactly: branches made exclusive by different kinds of value, listed values, a required property with disjoint"
        " values, or different required properties (a branch then never writes the others'); otherwise each branch"
        " with `not` of the others (below), refused where one cannot be negated",
        {"type": "object", "oneOf": [{"properties": {"a": {"type": "string"}}}, {"properties": {"b": {"type": "string"}}}]},
        {"a": 1},
        {"a": "x"},
    ),
    Row(
        "`not`",
        "exactly, as the values failing one keyword of the negated schema: types, `const`/`enum` (excluded from strings,"
        " integers, booleans, null), lengths, bounds, item and property counts, `required` (where `not` holds only"
        " `required`: one of the names is never written), property values, `items` (an array holding an item that fails"
        " them; refused beside `uniqueItems`), `pattern` (strings of the Basic Multilingual Plane it does not match),"
        " `anyOf`, `oneOf`, `not`; a"
        " `format` only where every string generated has it; `multipleOf`, `uniqueItems`, `propertyNames`,"
        " dependencies, tuples, other formats and non-integral numbers refused; any `not` beside `enum`/`const`",
        {"type": "string", "not": {"pattern": "^a", "maxLength": 3}},
        "abcd",
        "ab",
    ),
    Row(
        "`if`, `then`, `else`",
        "as `anyOf`: `if` and `then`, or `not: if` and `else`, so where `not` can take the `if` (an `if` of one"
        " property's `const`/`enum`: objects whose property is another value); others refused",
        {
            "properties": {"kind": {"enum": ["a", "b"]}, "n": {"type": "integer"}},
            "required": ["kind"],
            "if": {"properties": {"kind": {"const": "a"}}},
            "then": {"required": ["n"]},
            "else": {"not": {"required": ["n"]}},
        },
        {"kind": "a", "n": 1},
        {"kind": "b", "n": 1},
    ),
    Row(
        "`$ref` to `#/...` (`$defs`, `definitions`)",
        "exactly; recursive references unrolled `--recursion-depth` levels (default 3), refused when they cannot stop",
        {"$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}}}, "$ref": "#/$defs/n"},
        [[[]]],
        [[[[]]]],
    ),
    Row(
        "`$ref` inside or to an embedded resource (a subschema with its own `$id`; draft 4: `id`)",
        "as validators resolve it: a `#...` reference inside the resource names a part of that resource, a relative one"
        " (`item.json`) the resource whose `$id` it resolves to; any other URI is refused, never fetched",
        {
            "$defs": {"item": {"$id": "item.json", "$defs": {"n": {"type": "integer"}}, "items": {"$ref": "#/$defs/n"}}},
            "$ref": "item.json",
        },
        [1],
        ["a"],
    ),
    Row("`items`, `minItems`, `maxItems`", "exactly", {"items": {"type": "integer"}, "maxItems": 2}, [1, 2], [1, 2, 3]),
    Row(
        "`prefixItems` with `items`; draft-07 array `items` with `additionalItems`",
        "exactly",
        {"prefixItems": [{"type": "string"}], "items": False},
        ["a"],
        ["a", 1],
    ),
    Row(
        "`uniqueItems`",
        "when items are enum, const, boolean or null values: each at most once, in listed order; otherwise refused",
        {"items": {"enum": ["r", "g"]}, "uniqueItems": True},
        ["r", "g"],
        ["r", "r"],
    ),
    Row("`minLength`, `maxLength`", "exactly, in characters", {"type": "string", "minLength": 1, "maxLength": 2}, "é", "abc"),
    Row(
        "`pattern`",
        "ECMA-262 search semantics, intersected with lengths and format; only strings both ECMA-262 and Python accept"
        " (lookaround, backreferences and `\\b` refused)",
        {"type": "string", "pattern": "^[a-z]+-\\d{2}$", "maxLength": 6},
        "ab-12",
        "abcd-12",
    ),
    Row(
        "`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` (draft-04 boolean forms too)",
        "exactly for integers and for decimals; bounded numbers have at most 10 integer and 5 fraction digits",
        {"type": "number", "exclusiveMinimum": 0, "maximum": 99.95},
        99.95,
        99.96,
    ),
    Row(
        "`multipleOf`",
        "whole-number divisors (on numbers: whole multiples only); 1/n divisors such as 0.01 give integers (the"
        " validator's float division rejects many decimals); other fractional divisors refused",
        {"type": "integer", "multipleOf": 5},
        15,
        16,
    ),
    Row(
        "`format`: `date`, `date-time`, `time`, `duration`, `email`, `idn-email`, `hostname`, `idn-hostname`, `ipv4`,"
        " `ipv6`, `uri`, `uri-reference`, `iri`, `iri-reference`, `uuid`, `json-pointer`, `relative-json-pointer`,"
        " `regex`",
        "exactly against every draft's format checker and, where that checker is lenient, the format's RFC grammar (an"
        " email's local part is an RFC 5321 dot-atom), each from a conservative subset (calendar dates with leap years,"
        " RFC 3339 times, ASCII host names, integer durations, URIs for IRIs, regular expressions both ECMA-262 and"
        " Python compile); other formats JSON Schema defines are refused; names it"
        " does not define (`int32`, `byte`) are ignored, as validators do, with a warning where one is close to a name it"
        " defines (`emial`: `did you mean 'email'?`; `datetime`, `Date`, `url`)",
        {"type": "string", "format": "date"},
        "2024-02-29",
        "2023-02-29",
    ),
    Row(
        "OpenAPI 3.0 `nullable`",
        "ignored, as JSON Schema validators do (not a JSON Schema keyword): null is allowed only where `type` or"
        " `enum` allows it; `extract` warns of it and `extract check` lists it",
        {"type": ["string", "null"], "nullable": True, "maxLength": 1},
        None,
        "ab",
    ),
    Row(
        "another draft's keywords (`dependencies` under 2020-12, `prefixItems` under draft-07), keywords beside `$ref`"
        " before 2019-09, unknown keywords",
        "ignored, as validators do; `extract` warns of each (with the `$schema` that gives another draft's keyword"
        " meaning) and `extract check` lists them; one that looks like a misspelled keyword is refused (below)",
        {"type": "object", "properties": {"a": {"type": "null"}}, "dependencies": {"a": ["b"]}},
        {"a": None},
        1,
    ),
    Row(
        "annotations (`title`, `description`, `default`, `examples`, ...) and other vocabularies' (`x-*`, OpenAPI's"
        " `example` and `discriminator`, editors' `markdownDescription`)",
        "ignored, as validators do; `extract check` lists the ones the draft does not define",
        {"type": "integer", "title": "n", "x-unit": "cm"},
        1,
        NO,
    ),
]


def render() -> str:
    lines = ["| keyword | enforced | example schema |", "|---|---|---|"]
    for row in ROWS:
        lines.append(f"| {row.keywords} | {row.enforced} | `{json.dumps(row.schema, ensure_ascii=False)}` |")
    return "\n".join(lines)


def documented_table() -> str:
    text = TABLE_PAGE.read_text(encoding="utf-8")
    return text.split(START, 1)[1].split(END, 1)[0].strip()


def accepts(schema: Any, value: Any) -> bool:
    automaton = compile_automaton(schema)
    state = automaton.dfa.walk(automaton.dfa.start, json.dumps(value, ensure_ascii=False).encode("utf-8"))
    return state != DEAD and automaton.dfa.is_accepting(state)


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.keywords[:40])
def test_row_example_behaves_as_stated(row: Row) -> None:
    assert accepts(row.schema, row.accepted)
    assert validator_for_schema(row.schema).is_valid(row.accepted)
    if row.rejected is not NO:
        assert not accepts(row.schema, row.rejected)


def test_the_documented_table_is_generated_from_these_rows() -> None:
    assert documented_table() == render(), "run: python tests/test_keyword_table.py --write"


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    text = TABLE_PAGE.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    TABLE_PAGE.write_text(f"{head}{START}\n{render()}\n{END}{rest.split(END, 1)[1]}", encoding="utf-8")
