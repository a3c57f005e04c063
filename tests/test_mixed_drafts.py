"""Subschemas that declare their own `$schema`: jsonschema validates them, and whatever
validation reaches from them (their subschemas, the targets of their references), under the
draft they name. The compiler reads one draft per schema, so a keyword the two drafts read
differently is refused there by name; one read alike compiles, and its documents validate."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.errors import UnsupportedSchema
from gguf_extract.core.index.compiled import compile_automaton
from gguf_extract.core.schema.read.validation import validator_for_schema

DRAFT_04 = "http://json-schema.org/draft-04/schema#"
DRAFT_07 = "http://json-schema.org/draft-07/schema#"
DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema"


def sound_documents(schema: Any, count: int = 40) -> list[Any]:
    dfa, validator, rng = compile_automaton(schema).dfa, validator_for_schema(schema), random.Random(0)
    documents = [json.loads(sample_accepted(dfa, rng, soft_limit=200)) for _ in range(count)]
    assert all(validator.is_valid(document) for document in documents)
    return documents


@pytest.mark.parametrize(
    ("schema", "keyword", "pointer"),
    [
        # prefixItems means nothing under the root's draft 7, and bounds the items under 2020-12
        (
            {
                "$schema": DRAFT_07,
                "definitions": {"x": {"$schema": DRAFT_2020, "type": "array", "prefixItems": [{"type": "string"}]}},
                "$ref": "#/definitions/x",
            },
            "prefixItems",
            "/definitions/x/prefixItems",
        ),
        # draft 4 has no const: `not {const: 1}` there excludes every value
        (
            {"properties": {"a": {"$schema": DRAFT_04, "type": "integer", "not": {"const": 1}}}},
            "const",
            "/properties/a/not/const",
        ),
        # read under draft 4 when reached from a draft-4 subschema, wherever it is written
        (
            {
                "definitions": {"a": {"$schema": DRAFT_04, "properties": {"x": {"$ref": "#/definitions/c"}}}, "c": {"const": 1}},
                "$ref": "#/definitions/a",
            },
            "const",
            "/definitions/c/const",
        ),
        # a draft-4 boolean bound beside a draft-4 subschema's minimum (where the root's
        # meta-schema does not look: a part reached through a $ref alone)
        (
            {"$schema": DRAFT_2020, "x": {"$schema": DRAFT_04, "minimum": 1, "exclusiveMinimum": True}, "items": {"$ref": "#/x"}},
            "exclusiveMinimum",
            "/x/exclusiveMinimum",
        ),
        # reached only through a $ref, a $schema that is not a string escapes the meta-schema
        ({"x": {"$schema": 4, "type": "string"}, "$ref": "#/x"}, "$schema", "/x/$schema"),
        # a draft-4 resource named by `$id` (draft 4 reads `id`): the resolver walks into it
        # under the root's draft and registers it under its own, so `#/...` inside leads nowhere
        (
            {
                "$schema": "http://json-schema.org/draft-06/schema#",
                "definitions": {
                    "in": {
                        "$schema": DRAFT_04,
                        "$id": "inner.json",
                        "definitions": {"n": {"type": "integer"}},
                        "properties": {"y": {"$ref": "#/definitions/n"}},
                    }
                },
                "properties": {"x": {"$ref": "#/definitions/in"}},
            },
            "$id",
            "/definitions/in/$id",
        ),
    ],
)
def test_a_keyword_read_differently_under_a_subschemas_own_draft_is_refused(schema: Any, keyword: str, pointer: str) -> None:
    for lenient in (False, True):
        with pytest.raises(UnsupportedSchema) as refusal:
            compile_automaton(schema, lenient=lenient)
        assert (refusal.value.keyword, refusal.value.pointer, refusal.value.relaxable) == (keyword, pointer, False)


def test_the_refused_reading_was_unsound() -> None:
    """The first case above, read under the root's draft alone, writes numbers where the
    validator wants strings."""
    inner = {"$schema": DRAFT_2020, "type": "array", "prefixItems": [{"type": "string"}], "minItems": 1, "maxItems": 1}
    schema = {"$schema": DRAFT_07, "definitions": {"x": inner}, "$ref": "#/definitions/x"}
    assert not validator_for_schema(schema).is_valid([1])
    assert validator_for_schema({**inner, "$schema": DRAFT_07}).is_valid([1])


def test_keywords_read_alike_compile_and_validate() -> None:
    person = {
        "$schema": DRAFT_04,
        "id": "person",  # read under the root's draft, where it names nothing
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 9}, "s": {"type": "string", "maxLength": 2}},
        "required": ["n"],
    }
    schema = {"$defs": {"person": person}, "type": "array", "items": {"$ref": "#/$defs/person"}, "minItems": 1, "maxItems": 2}
    assert all(1 <= item["n"] <= 9 for document in sound_documents(schema) for item in document)


def test_a_subschema_validation_never_reaches_is_not_checked() -> None:
    schema = {"definitions": {"unused": {"$schema": DRAFT_04, "not": {"const": 1}}}, "type": "integer", "maximum": 3}
    assert all(document <= 3 for document in sound_documents(schema))
