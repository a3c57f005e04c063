"""Listed values (enum, const) as regex trees: each value's JSON text, after the validator
has filtered them by every keyword beside them (so the filter is exact)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..automaton.regex import Node, alt, lit
from ..errors import SchemaError
from .json_values import distinct_values, keep_values
from .lexical import json_text
from .nodes import SchemaNode, Sub

if TYPE_CHECKING:
    from .build import Build


def enum_tree(build: Build, node: SchemaNode) -> Node:
    return alt(*(lit(json_text(value)) for value in listed_values(build, node)))


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
