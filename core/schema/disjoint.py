"""Making `oneOf` branches exclusive, so that `oneOf` can be compiled as `anyOf`.

`oneOf` needs every generated value to match exactly one branch. For each ordered pair of
branches (i, j) the values generated for i must fail j, by one of three sound arguments:
- kinds: i generates only kinds of JSON value that j rejects (e.g. strings vs objects);
- a discriminator: i requires a property whose allowed values j's schema for it rejects;
- a required property: j requires a property i does not, and i is told never to write it.
The third changes what i generates (fewer documents, never invalid ones). When no argument
is found for some pair, the caller refuses the `oneOf`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .json_values import MAX_REF_HOPS, keep_values
from .load import Schema, resolve_ref
from .validation import draft_keywords

ALL_KINDS = frozenset({"null", "boolean", "integer", "fraction", "string", "array", "object"})
TYPE_KINDS = {
    "null": {"null"},
    "boolean": {"boolean"},
    "integer": {"integer"},
    "number": {"integer", "fraction"},
    "string": {"string"},
    "array": {"array"},
    "object": {"object"},
}


class Overlap(Exception):
    """Branches `first` and `second` may both match one generated value."""

    def __init__(self, first: int, second: int) -> None:
        super().__init__(f"branches {first} and {second} may both match one value")
        self.first, self.second = first, second


@dataclass
class Separation:
    """What each oneOf branch must leave out: properties it must not write, and listed
    values (enum/const) it must not produce because another branch accepts them too."""

    properties: list[list[str]]
    values: list[list[Any]]


def exclusions(
    root: Schema,
    branches: list[Any],
    generated_kinds: Callable[[Any], frozenset[str]],
    accepts: Callable[[Any, Any], bool | None],
) -> Separation:
    """How to keep each generated value inside exactly one branch. `generated_kinds(schema)`
    over-approximates the kinds the compiler generates for a branch; `accepts(schema, value)`
    validates (None when it cannot tell). Raises Overlap for the first pair with no argument."""
    separation = Separation([[] for _ in branches], [[] for _ in branches])
    for i, first in enumerate(branches):
        for j, second in enumerate(branches):
            if i != j and not _separated(root, first, second, generated_kinds, accepts, separation, i):
                raise Overlap(min(i, j), max(i, j))
    return separation


def _separated(
    root: Schema,
    first: Any,
    second: Any,
    generated_kinds: Callable[[Any], frozenset[str]],
    accepts: Callable[[Any, Any], bool | None],
    separation: Separation,
    index: int,
) -> bool:
    """Whether what `first` generates can be kept from matching `second`, recording what
    branch `index` must leave out for that."""
    shared = generated_kinds(first) & value_kinds(second)
    if not shared or (shared == {"object"} and _discriminated(root, first, second)):
        return True
    listed = _finite_values(first, root)
    if listed is not None:
        verdicts = [accepts(second, value) for value in listed]
        if None not in verdicts:
            separation.values[index].extend(v for v, valid in zip(listed, verdicts, strict=True) if valid)
            return True
    missing = [p for p in _required(second) if p not in _required(first)]
    if shared == {"object"} and missing:
        if missing[0] not in separation.properties[index]:
            separation.properties[index].append(missing[0])
        return True
    return False


def _required(schema: Any) -> list[str]:
    return list(schema.get("required", [])) if isinstance(schema, dict) else []


def _discriminated(root: Schema, first: Any, second: Any) -> bool:
    """`first` requires a property with finitely many values, none allowed by `second`."""
    if not isinstance(first, dict) or not isinstance(second, dict):
        return False
    for name, values in _finite_properties(root, first).items():
        other = _deref(root, _property_schema(second, name))
        allowed = _finite_values(other, root)
        if allowed is not None and not keep_values(values, allowed):
            return True
    return False


def _property_schema(schema: dict[str, Any], name: str) -> Any:
    """What `schema` requires of property `name`'s value: its declared schema and every
    patternProperties schema whose pattern finds the name (validators use re.search), or
    additionalProperties when neither applies; true when a pattern cannot be read."""
    declared = schema.get("properties", {})
    parts = [declared[name]] if name in declared else []
    for pattern, sub in schema.get("patternProperties", {}).items():
        try:
            if re.search(pattern, name) is not None:
                parts.append(sub)
        except re.error:
            return True
    if not parts:
        return schema.get("additionalProperties", True)
    return parts[0] if len(parts) == 1 else {"allOf": parts}


def _finite_properties(root: Schema, schema: dict[str, Any]) -> dict[str, list[Any]]:
    """Required properties whose schema lists its values (const or enum)."""
    found: dict[str, list[Any]] = {}
    properties = schema.get("properties", {})
    for name in _required(schema):
        values = _finite_values(_deref(root, properties.get(name)), root)
        if values is not None:
            found[name] = values
    return found


def _finite_values(schema: Any, root: Schema | None = None) -> list[Any] | None:
    """Values `schema` may accept when it lists them (a superset is fine for the callers:
    a member of allOf that lists values bounds the whole); None when it does not."""
    if schema is False:
        return []
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        return [schema["const"]]
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    lists = [_finite_values(_deref(root, m) if root is not None else m, root) for m in schema.get("allOf", [])]
    known = [values for values in lists if values is not None]
    if not known:
        return None
    values = known[0]
    for other in known[1:]:
        values = keep_values(values, other)
    return values


def value_kinds(schema: Any) -> frozenset[str]:
    """Kinds of JSON value `schema` may accept (an over-approximation)."""
    if schema is False:
        return frozenset()
    if not isinstance(schema, dict):
        return ALL_KINDS
    kinds = set(ALL_KINDS)
    if "type" in schema:
        names = [schema["type"]] if isinstance(schema["type"], str) else schema["type"]
        kinds &= set().union(*(TYPE_KINDS[n] for n in names))
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


def _deref(root: Schema, schema: Any) -> Any:
    """`schema` with its `$ref` chain followed (keywords beside a `$ref` dropped: fewer
    constraints, so what is derived from it stays an over-approximation), without a `const`
    where the draft has none (draft 4)."""
    for _ in range(MAX_REF_HOPS):
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
            break
        schema, _pointer = resolve_ref(root, schema["$ref"], "")
    if isinstance(schema, dict) and "const" in schema and "const" not in draft_keywords(root):
        return {k: v for k, v in schema.items() if k != "const"}
    return schema
