"""Listed values (enum, const) as regex trees: each value's JSON text, after the validator
has filtered them by every keyword beside them (so the filter is exact)."""

from __future__ import annotations

from typing import Any

from ...automaton.regex import Node, alt, json_literal
from ...errors import SchemaError
from ...jsontext import distinct_values, keep_values
from ..lexical.scalars import json_text, listed_number
from ..nodes.schema_node import SchemaNode, Sub
from ..read.validation import Validator
from .numbers import integer_readings_agree
from .protocol import Build


def enum_tree(build: Build, node: SchemaNode) -> Node:
    """The listed values' JSON texts; a number in every form read as the same value that the
    keywords beside the list accept too (`2`, `2.0`, `2.00` for a listed 2 where a float is
    accepted: see lexical/scalars.py's listed_number)."""
    values = listed_values(build, node)
    if not any(_is_number(value) for value in values):
        return alt(*(json_literal(json_text(value)) for value in values))
    checker = build.validator(node.without(values=None, excluded=()))
    floats = integer_readings_agree(build.document)
    return alt(*(_listed_tree(value, checker, floats) for value in values))


def _listed_tree(value: Any, checker: Validator, floats: bool) -> Node:
    """One listed value's texts; `floats`: a whole number may be written as a float (see
    numbers.integer_readings_agree)."""
    if not _is_number(value):
        return json_literal(json_text(value))
    whole = float(value).is_integer()
    as_int = whole and checker.is_valid(int(value))
    as_float = whole and floats and checker.is_valid(float(value))
    return listed_number(value, as_int, as_float)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def listed_values(build: Build, node: SchemaNode) -> list[Any]:
    """The enum/const values (JSON-distinct) that also satisfy the keywords beside them
    (type, minLength, not, ...) and are not excluded."""
    assert node.values is not None
    build.fuel.burn(node.pointer, "value", len(node.values.items))
    checker = build.validator(node.without(values=None, excluded=()))
    allowed = [value for value in node.values.items if checker.is_valid(value)]
    kept = keep_values(distinct_values(allowed), node.excluded, keep=False)
    if not kept:
        raise SchemaError(f"no value listed by enum/const at {node.pointer or '/'} satisfies its schema")
    return kept


def finite_texts(build: Build, items: Sub) -> list[str] | None:
    """Every JSON text `items` allows, when that is a short list (enum, const, boolean,
    null); None otherwise."""
    node = build.conjunction(items.pointer).resolve(items)
    if not isinstance(node, SchemaNode):
        return None
    if node.values is not None:
        return [json_text(value) for value in listed_values(build, node)]
    names = node.types
    if names and set(names) <= {"boolean", "null"} and node.keywords() == {"type"}:
        return [text for name in names for text in (("true", "false") if name == "boolean" else ("null",))]
    return None
