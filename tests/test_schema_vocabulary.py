"""Nothing in a schema is ignored silently: a keyword that looks misspelled is refused (with the
keyword meant), a keyword of another draft or an unknown one gets a note naming it (and the
`$schema` that gives it meaning), through the compile API; and a lone surrogate in a schema
reaches the prompt as an escape, which UTF-8 can encode."""

from __future__ import annotations

from typing import Any

import pytest

from gguf_extract.core.errors import MisspelledKeyword, SchemaError, UnsupportedSchema
from gguf_extract.core.extract.prompt import build_messages
from gguf_extract.core.index.compiled import SchemaAutomaton, compile_automaton
from gguf_extract.core.schema.read.unknown_keywords import KeywordNote, summarized

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
REPORTED = {
    "properties": {"name": {"type": "string", "maxLenght": 20}, "age": {"tpye": "integer"}},
    "requried": ["name"],
}


def notes(schema: Any) -> dict[str, str]:
    automaton = compile_automaton(schema)
    assert not automaton.relaxed
    return {note.pointer: note.reason for note in automaton.notes}


# -- misspelled keywords ----------------------------------------------------------------------


def test_a_misspelled_keyword_is_refused_naming_the_keyword_meant() -> None:
    with pytest.raises(MisspelledKeyword) as refused:
        compile_automaton(REPORTED)
    error = refused.value
    assert (error.keyword, error.pointer, error.meant) == ("requried", "/requried", "required")
    assert error.message == "unknown keyword 'requried' at /requried: did you mean 'required'?"
    assert "rename it 'required'" in error.hint and "lenient=True" in error.hint
    assert isinstance(error, UnsupportedSchema) and error.relaxable


def test_lenient_compilation_finds_every_misspelling_and_leaves_them_out() -> None:
    automaton = compile_automaton(REPORTED, lenient=True)
    found = {(r.keyword, r.pointer, r.meant) for r in automaton.relaxed if isinstance(r, MisspelledKeyword)}
    assert found == {
        ("requried", "/requried", "required"),
        ("maxLenght", "/properties/name/maxLenght", "maxLength"),
        ("tpye", "/properties/age/tpye", "type"),
    }
    assert automaton.ignored == [] and automaton.notes == []  # refused, so not listed twice


@pytest.mark.parametrize(
    ("schema", "keyword", "meant"),
    [
        ({"type": "string", "maxlength": 3}, "maxlength", "maxLength"),  # case
        ({"anyof": [{"type": "null"}]}, "anyof", "anyOf"),
        ({"type:": "string"}, "type:", "type"),  # a trailing colon
        ({"type": "object", "additonalProperties": False}, "additonalProperties", "additionalProperties"),
        ({"type": "array", "itens": {"type": "null"}}, "itens", "items"),
        ({"type": "array", "item": {"type": "null"}}, "item", "items"),
        ({"$defs": {"a": {"type": "null"}}, "$rel": "#/$defs/a"}, "$rel", "$ref"),
        ({"$defs": {"a": {"type": "null"}}, "#ref": "#/$defs/a"}, "#ref", "$ref"),
        ({"type": "object", "requires": ["a"]}, "requires", "required"),
        ({"type": "integer", "exclusiveMinimumm": 1}, "exclusiveMinimumm", "exclusiveMinimum"),
        ({"type": "integer", "inclusiveMinimum": 1}, "inclusiveMinimum", "minimum"),  # another tool's name
        ({"type": "object", "additional_properties": False}, "additional_properties", "additionalProperties"),
        ({"$schema": DRAFT_07, "type": "array", "aditionalItems": False}, "aditionalItems", "additionalItems"),
    ],
)
def test_near_misses_of_asserting_keywords_are_refused(schema: dict[str, Any], keyword: str, meant: str) -> None:
    with pytest.raises(MisspelledKeyword) as refused:
        compile_automaton(schema)
    assert (refused.value.keyword, refused.value.meant) == (keyword, meant)


@pytest.mark.parametrize(
    ("schema", "keyword", "meant"),
    [
        ({"type": "object", "additionalProperty": False}, "additionalProperty", "additionalProperties"),
        ({"type": "object", "unevaluatedProperty": False}, "unevaluatedProperty", "unevaluatedProperties"),
        ({"type": "object", "patternProperty": {"^x": {"type": "integer"}}}, "patternProperty", "patternProperties"),
        ({"type": "object", "minProperty": 1}, "minProperty", "minProperties"),
        ({"type": "object", "maxProperty": 1}, "maxProperty", "maxProperties"),
        ({"type": "object", "additionalProps": False}, "additionalProps", "additionalProperties"),
        ({"type": "object", "maxProps": 1}, "maxProps", "maxProperties"),
        ({"type": "object", "Property": {"a": {"type": "integer"}}}, "Property", "properties"),
        ({"$schema": DRAFT_07, "type": "object", "dependency": {"a": ["b"]}}, "dependency", "dependencies"),
        ({"type": "object", "dependentSchema": {"a": {"required": ["b"]}}}, "dependentSchema", "dependentSchemas"),
        ({"type": "object", "dependentRequire": {"a": ["b"]}}, "dependentRequire", "dependentRequired"),
        ({"type": "array", "prefixItem": [{"type": "null"}]}, "prefixItem", "prefixItems"),
        ({"type": "array", "unevaluatedItem": False}, "unevaluatedItem", "unevaluatedItems"),
        ({"type": "array", "minItem": 1}, "minItem", "minItems"),
        ({"type": "array", "uniqueItem": True}, "uniqueItem", "uniqueItems"),
        ({"type": "array", "contains": {"type": "null"}, "maxContain": 1}, "maxContain", "maxContains"),
        ({"type": "object", "requireds": ["a"]}, "requireds", "required"),
    ],
)
def test_singular_and_shortened_forms_of_plural_keywords_are_refused(schema: dict[str, Any], keyword: str, meant: str) -> None:
    with pytest.raises(MisspelledKeyword) as refused:
        compile_automaton(schema)
    assert (refused.value.keyword, refused.value.meant) == (keyword, meant)


def test_singular_forms_are_noted_not_refused_where_the_keyword_would_not_take_the_value() -> None:
    # The value decides, as for any near miss: a string is no `properties`, and `maxContains`
    # asserts nothing without `contains`.
    assert notes({"type": "object", "property": "id"}) == {
        "/property": "not a JSON Schema keyword; it looks like 'properties', but holds no value 'properties' takes"
    }
    assert notes({"type": "array", "maxContain": 1}) == {
        "/maxContain": "not a JSON Schema keyword; it looks like 'maxContains', which has no meaning without 'contains' beside it"
    }


def test_names_that_are_data_or_other_vocabularies_are_not_taken_for_misspellings() -> None:
    schema = {
        "type": "object",
        "properties": {"maxLenght": {"type": "integer", "example": 3}, "tpye": {"enum": [{"requried": 1}]}},
        "patternProperties": {"^requried$": {"type": "null"}},
        "dependentSchemas": {"maxLenght": {"required": ["tpye"]}},
        "$defs": {"tpye": {"const": {"maxLenght": 1}}},
        "default": {"tpye": 1},
        "examples": [{"requried": 2}],
        "discriminator": {"propertyName": "tpye"},
        "x-requried": True,
        "readonly": True,
        "_format": "date",
        "@type": "Thing",
        "multiple": True,  # not a multipleOf: a boolean is no divisor
        "note": ["a list of remarks, not a schema for `not`"],
        "form": ["a layout, not a format"],
        "info": {"version": 1},
        "typeof": "function",
        "deprecated": True,
        "contentMediaType": "text/plain",
        "$comment": "",
    }
    assert notes(schema) == {
        "/readonly": "not a JSON Schema keyword; did you mean 'readOnly'?",
        "/_format": "not a JSON Schema keyword",
        "/@type": "not a JSON Schema keyword",
        "/multiple": "not a JSON Schema keyword; it looks like 'multipleOf', but holds no value 'multipleOf' takes",
        "/note": "not a JSON Schema keyword",
        "/form": "not a JSON Schema keyword",
        "/info": "not a JSON Schema keyword",
        "/typeof": "not a JSON Schema keyword",
    }


# -- keywords of another draft, and unknown ones ----------------------------------------------


def test_keywords_of_another_draft_are_noted_with_the_schema_that_gives_them_meaning() -> None:
    found = notes(
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "t": {"type": "array", "items": False, "additionalItems": False}},
            "dependencies": {"a": ["b"]},
            "definitions": {"unused": {}},
        }
    )
    assert found == {
        "/dependencies": 'a draft-07 keyword, which 2020-12 (the draft of a schema without "$schema") does not read;'
        ' declare "$schema": "http://json-schema.org/draft-07/schema#" to give it meaning',
        "/properties/t/additionalItems": 'a 2019-09 keyword, which 2020-12 (the draft of a schema without "$schema")'
        ' does not read; declare "$schema": "https://json-schema.org/draft/2019-09/schema" to give it meaning',
    }
    older = notes({"$schema": DRAFT_07, "$defs": {}, "prefixItems": [{"type": "null"}], "dependentRequired": {"a": ["b"]}})
    assert older == {
        "/prefixItems": 'a 2020-12 keyword, which draft-07 (the draft its "$schema" names) does not read;'
        ' declare "$schema": "https://json-schema.org/draft/2020-12/schema" to give it meaning',
        "/dependentRequired": 'a 2019-09 keyword, which draft-07 (the draft its "$schema" names) does not read;'
        ' declare "$schema": "https://json-schema.org/draft/2019-09/schema" to give it meaning',
    }


def test_keywords_read_only_beside_another_are_noted() -> None:
    found = notes(
        {
            "$schema": DRAFT_07,
            "definitions": {"s": {"type": "string"}},
            "properties": {"r": {"$ref": "#/definitions/s", "maxLength": 2, "description": "kept"}, "t": {"then": {}}},
        }
    )
    assert found == {
        "/properties/r/maxLength": "draft-07 validators ignore every keyword beside '$ref'; make the '$ref' and it two"
        " schemas of an 'allOf', or declare 2019-09 or later",
        "/properties/t/then": "no meaning without 'if' beside it",
    }


def test_unknown_keywords_are_noted_and_annotations_are_not() -> None:
    found = notes({"type": "object", "nullable": True, "javaType": "Person", "decription": "a person", "title": "t"})
    assert found == {
        "/nullable": "OpenAPI's 'nullable' is not JSON Schema: null is allowed only where 'type' or 'enum' allows it",
        "/javaType": "not a JSON Schema keyword",
        "/decription": "not a JSON Schema keyword; did you mean 'description'?",
    }


def test_warnings_give_one_line_per_keyword_and_reason() -> None:
    automaton: SchemaAutomaton = compile_automaton(
        {"type": "object", "properties": {k: {"type": "null", "javaType": "N"} for k in "abc"}, "javaType": "P"}
    )
    assert summarized(automaton.notes) == [
        "ignoring 'javaType' at /javaType (and 3 more places): not a JSON Schema keyword"
    ]
    note = KeywordNote("dependencies", "", "why")
    assert note.message == "ignoring 'dependencies' at /: why"


# -- lone surrogates --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "shown"),
    [
        ({"const": "\ud800"}, '"\\ud800"'),
        ({"enum": ["a", "\udfff"]}, '"a" | "\\udfff"'),
        ({"type": "object", "properties": {"\ud800": {"type": "integer"}}, "required": ["\ud800"]}, "\\ud800: integer"),
        ({"properties": {"a": {"type": "string", "description": "half \ud83d a pair"}}}, "// half \\ud83d a pair"),
    ],
)
def test_a_lone_surrogate_reaches_the_prompt_escaped(schema: dict[str, Any], shown: str) -> None:
    compile_automaton(schema)  # written as a \\u escape in a document (docs/schema-support.md: departures)
    system = build_messages(schema, "text")[0]["content"]
    assert shown in system
    system.encode("utf-8")  # what tokenizing the prompt does first


# -- other vocabularies' keywords and ordinary words --------------------------------------------


def test_keywords_of_other_vocabularies_and_ordinary_words_are_noted_not_refused() -> None:
    hyper = "a JSON Hyper-Schema keyword, which JSON Schema validators ignore"
    found = notes(
        {
            "type": "object",
            "href": "/things/x",  # one edit from `$ref`, but Hyper-Schema's link target
            "rel": "self",
            "hrefSchema": {"type": "string"},
            "targetSchema": {"type": "object"},
            "submissionMediaType": "application/json",
            "method": "get",
            "when": {"required": ["a"]},  # a word of its own, one first letter from `then`
            "nullable": True,
            "readOnly": True,
            "discriminator": {"propertyName": "kind"},
        }
    )
    assert found == {
        "/href": hyper,
        "/rel": hyper,
        "/hrefSchema": hyper,
        "/targetSchema": hyper,
        "/submissionMediaType": hyper,
        "/method": hyper,
        "/when": "not a JSON Schema keyword",
        "/nullable": "OpenAPI's 'nullable' is not JSON Schema: null is allowed only where 'type' or 'enum' allows it",
    }


@pytest.mark.parametrize(
    ("keyword", "value", "meant"),
    [
        ("#ref", "#/$defs/a", "$ref"),  # the key beside `$`
        ("$rel", "#/$defs/a", "$ref"),  # the first letter kept
        ("tyoe", "null", "type"),
        ("emum", ["a"], "enum"),
    ],
)
def test_short_misspellings_keep_the_first_letter_or_type_the_key_beside(keyword: str, value: Any, meant: str) -> None:
    with pytest.raises(MisspelledKeyword) as refused:
        compile_automaton({"$defs": {"a": {"type": "null"}}, keyword: value})
    assert refused.value.meant == meant


@pytest.mark.parametrize(
    ("schema", "keyword", "meant"),
    [
        ({"$defs": {"x": {"type": "null"}}, "properties": {"a": {"$rf": "#/$defs/x"}}}, "$rf", "$ref"),
        ({"$defs": {"x": {"type": "null"}}, "ref": "#/$defs/x"}, "ref", "$ref"),  # the sigil left out
        ({"typ": "string"}, "typ", "type"),
        ({"tpe": ["string", "null"]}, "tpe", "type"),
        ({"enm": ["x", "y"]}, "enm", "enum"),
        ({"if": {"type": "string"}, "hen": {"minLength": 2}}, "hen", "then"),  # a first letter left out, beside `if`
        ({"if": {"type": "string"}, "then": {"minLength": 2}, "els": False}, "els", "else"),
        ({"nto": {"type": "null"}}, "nto", "not"),  # neighbours swapped
    ],
)
def test_three_letter_slips_of_keywords_are_refused(schema: dict[str, Any], keyword: str, meant: str) -> None:
    with pytest.raises(MisspelledKeyword) as refused:
        compile_automaton(schema)
    assert (refused.value.keyword, refused.value.meant) == (keyword, meant)
    assert [r.keyword for r in compile_automaton(schema, lenient=True).relaxed] == [keyword]


def test_three_letter_words_that_are_no_slip_are_noted_not_refused() -> None:
    found = notes(
        {
            "type": "object",
            "url": "https://example.com",  # a letter changed or added in a name this short makes another word
            "key": "id",
            "doc": "a remark",
            "max": 3,
            "min": 1,
            "len": 2,
            "tag": "v1",
            "ont": 3,  # `not`'s letters, but no schema `not` takes
            "num": 3,  # `enum` less its first letter, but no list
            "hen": {"minLength": 2},  # `then` less its first letter, but no `if` beside it to read it
            "$def": {"x": {"type": "null"}},
            "properties": {"tag": {"type": "string", "ref": "#/$def/x"}},  # a foreign key, beside `type`
        }
    )
    assert found == {
        "/url": "not a JSON Schema keyword",
        "/key": "not a JSON Schema keyword",
        "/doc": "not a JSON Schema keyword",
        "/max": "not a JSON Schema keyword",
        "/min": "not a JSON Schema keyword",
        "/len": "not a JSON Schema keyword",
        "/tag": "not a JSON Schema keyword",
        "/ont": "not a JSON Schema keyword; it looks like 'not', but holds no value 'not' takes",
        "/num": "not a JSON Schema keyword; it looks like 'enum', but holds no value 'enum' takes",
        "/hen": "not a JSON Schema keyword; it looks like 'then', which has no meaning without 'if' beside it",
        "/$def": "not a JSON Schema keyword; did you mean '$defs'?",
        "/properties/tag/ref": "not a JSON Schema keyword; it looks like '$ref', but stands beside keywords that assert,"
        " as an annotation would; write '$ref' if meant",
    }


# -- formats and required names that are likely typos --------------------------------------------


MISTYPED_FORMATS = [("a", "emial", "email"), ("b", "datetime", "date-time"), ("c", "Date", "date"), ("d", "url", "uri")]


def test_a_format_name_near_one_json_schema_defines_is_noted_with_the_name_meant() -> None:
    schema = {
        "type": "object",
        "properties": {
            name: {"type": "string", "format": value}
            for name, value in [("a", "emial"), ("b", "datetime"), ("c", "Date"), ("d", "url"), ("e", "int32"), ("f", "byte")]
        },
    }
    automaton = compile_automaton(schema)
    assert {note.pointer: note.reason for note in automaton.notes} == {
        f"/properties/{name}/format": f"'{value}' is not a format JSON Schema defines, so validators ignore it;"
        f" did you mean '{meant}'?"
        for name, value, meant in MISTYPED_FORMATS
    }
    assert set(automaton.ignored) == {f"/properties/{name}/format" for name in "abcdef"}  # int32 and byte: silently
    assert summarized(automaton.notes)[0] == (
        "ignoring 'format' at /properties/a/format: 'emial' is not a format JSON Schema defines, so validators ignore"
        " it; did you mean 'email'?"
    )


UNDECLARED = "names '{}', which 'properties' does not declare: any value is allowed for it"


def test_a_required_name_no_property_declares_is_noted() -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
        "required": ["name", "emali", "phone"],
    }
    automaton = compile_automaton(schema)
    assert automaton.notes == [
        KeywordNote(
            "required",
            "/required/1",
            "names 'emali', which 'properties' does not declare: any value is allowed for it; did you mean 'email'?",
            ignored=False,
        ),
        KeywordNote("required", "/required/2", UNDECLARED.format("phone"), ignored=False),
    ]
    assert automaton.ignored == []
    assert summarized(automaton.notes)[0] == (
        "'required' at /required/1: names 'emali', which 'properties' does not declare: any value is allowed for it;"
        " did you mean 'email'?"
    )


@pytest.mark.parametrize(
    ("schema", "hint"),
    [
        (
            {"type": "object", "properties": {"name": {"type": "string"}}, "additionalProperties": False, "required": ["nmae"]},
            "'properties' does not declare 'nmae' (did you mean 'name'?) and the object allows no other name a value:"
            " rename it in 'required', or declare it in 'properties'",
        ),
        (
            {"type": "object", "properties": {"name": {}}, "additionalProperties": False, "required": ["phone"]},
            "'properties' does not declare 'phone' and the object allows no other name a value:"
            " rename it in 'required', or declare it in 'properties'",
        ),
        (
            {"type": "object", "properties": {"name": False}, "required": ["name"]},
            "the schema 'properties' gives 'name' allows no value: give it one that does, or drop it from 'required'",
        ),
    ],
)
def test_a_required_name_that_can_have_no_value_is_refused_with_what_to_do(schema: dict[str, Any], hint: str) -> None:
    with pytest.raises(SchemaError) as refused:
        compile_automaton(schema)
    assert refused.value.message.startswith(f"required property '{schema['required'][0]}' cannot have any value at /")
    assert refused.value.hint == hint


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "required": ["a"]},  # no properties: the name is all there is
        {"type": "object", "properties": {"a": {}}, "patternProperties": {"^x-": {"type": "string"}}, "required": ["x-a"]},
        {"type": "object", "properties": {"a": {}}, "allOf": [{"properties": {"b": {}}}], "required": ["b"]},
        {"type": "object", "properties": {"a": {}}, "allOf": [{"properties": {"c": {}}, "required": ["a"]}]},
        {"type": "object", "properties": {"a": {"type": "null"}}, "additionalProperties": {"type": "null"}, "required": ["a"]},
    ],
)
def test_required_names_declared_somewhere_or_by_pattern_are_not_noted(schema: dict[str, Any]) -> None:
    assert compile_automaton(schema).notes == []


def test_a_refusal_s_hint_names_lenient_where_lenient_compilation_would_leave_it_out() -> None:
    with pytest.raises(UnsupportedSchema) as refused:
        compile_automaton({"type": "array", "contains": {"type": "null"}})
    assert refused.value.hint == (
        "remove or rewrite that keyword; the schema is refused rather than weakened, unless you pass lenient=True,"
        " which leaves it out with a warning"
    )
    assert refused.value.remedy("--lenient").endswith("unless you pass --lenient, which leaves it out with a warning")
    with pytest.raises(UnsupportedSchema) as refused:
        compile_automaton({"$ref": "https://example.com/a.json"}, lenient=True)
    assert not refused.value.relaxable and "lenient" not in refused.value.hint


def test_guesses_at_undeclared_required_names_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A schema with thousands of undeclared `required` names is untrusted input: each gets its
    warning, only the first few a search for the name meant, each among a bounded number."""
    from gguf_extract.core.index.check import check_schema_support
    from gguf_extract.core.schema.build import objects as build_objects
    from gguf_extract.core.schema.nodes import schema_document
    from gguf_extract.core.schema.read import unknown_keywords

    searches: list[str] = []
    real = unknown_keywords.nearest
    monkeypatch.setattr(build_objects, "nearest", lambda name, names: searches.append(name) or real(name, names))
    count = schema_document.GUESSES * 4
    schema = {
        "type": "object",
        "properties": {f"field_number_{i:04d}": {"type": "string"} for i in range(count)},
        "required": [f"field_numbr_{i:04d}" for i in range(count)],
    }
    report = check_schema_support(schema)
    assert len([note for note in report.notes if note.keyword == "required"]) == count
    assert len(searches) == schema_document.GUESSES
    names = [f"name_{i:05d}" for i in range(unknown_keywords._MOST_MEASURED)]
    assert unknown_keywords.nearest("nmae_target", [*names, "name_target"]) is None  # past the names measured
    assert unknown_keywords.nearest("nmae_target", ["name_target", *names]) == "name_target"
