"""Proofs that two schemas share no valid value, so `oneOf` can be compiled as `anyOf`.

Only two sound arguments are used: the branches accept disjoint kinds of JSON value, or
they are objects that require the same property with different constant values (a
discriminator). Anything else is not proven, and the caller refuses the `oneOf`.
"""

from __future__ import annotations

from typing import Any

from .load import Schema, resolve_ref

ALL_KINDS = frozenset({"null", "boolean", "integer", "fraction", "string", "array", "object"})
_TYPE_KINDS = {
    "null": {"null"},
    "boolean": {"boolean"},
    "integer": {"integer"},
    "number": {"integer", "fraction"},
    "string": {"string"},
    "array": {"array"},
    "object": {"object"},
}
_MAX_REF_HOPS = 32


def provably_disjoint(root: Schema, first: Any, second: Any) -> bool:
    first, second = _deref(root, first), _deref(root, second)
    shared = value_kinds(first) & value_kinds(second)
    if not shared:
        return True
    if shared != {"object"}:
        return False
    tags_first, tags_second = _discriminators(root, first), _discriminators(root, second)
    return any(name in tags_second and tags_second[name] != value for name, value in tags_first.items())


def value_kinds(schema: Any) -> frozenset[str]:
    """Kinds of JSON value `schema` may accept (an over-approximation)."""
    if schema is False:
        return frozenset()
    if not isinstance(schema, dict):
        return ALL_KINDS
    kinds = set(ALL_KINDS)
    if "type" in schema:
        names = [schema["type"]] if isinstance(schema["type"], str) else schema["type"]
        kinds &= set().union(*(_TYPE_KINDS[n] for n in names))
    if "const" in schema:
        kinds &= {_kind_of(schema["const"])}
    if "enum" in schema:
        kinds &= {_kind_of(v) for v in schema["enum"]}
    return frozenset(kinds)


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "fraction"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _discriminators(root: Schema, schema: dict[str, Any]) -> dict[str, Any]:
    """Required properties whose value is a single constant."""
    tags: dict[str, Any] = {}
    properties = schema.get("properties", {})
    for name in schema.get("required", []):
        sub = _deref(root, properties.get(name))
        if isinstance(sub, dict) and "const" in sub:
            tags[name] = sub["const"]
        elif isinstance(sub, dict) and isinstance(sub.get("enum"), list) and len(sub["enum"]) == 1:
            tags[name] = sub["enum"][0]
    return tags


def _deref(root: Schema, schema: Any) -> Any:
    for _ in range(_MAX_REF_HOPS):
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
            return schema
        schema, _pointer = resolve_ref(root, schema["$ref"], "")
    return schema
