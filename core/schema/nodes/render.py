"""A typed node written back as a JSON Schema, for the validator to judge values with.

The compiler asks the validator (jsonschema, with formats) whether a listed value meets the
rest of a merged schema, whether another oneOf branch accepts a value, whether a name meets
propertyNames. The node is written in the root's own draft; each subschema that came from the
root is written as a `$ref` to its pointer, so the validator reads it exactly as written (with
its draft's meaning), never as the compiler did. Nothing compiled is ever validated against a
rendering alone: final validation always uses the user's schema.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from .schema_node import ArrayNode, Bound, NumberNode, ObjectNode, SchemaNode, StringNode, Sub

# Characters a pointer keeps in a URI fragment (RFC 3986's pchar without percent-encoding).
_FRAGMENT_SAFE = "/~!$&'()*+,;=:@-._"


def reference(pointer: str) -> dict[str, Any]:
    """A `$ref` to the subschema at `pointer` of the root."""
    return {"$ref": "#" + quote(pointer, safe=_FRAGMENT_SAFE)}


def render_sub(sub: Sub, dialect: Dialect) -> Any:
    parts = [render_part(part, dialect) for part in sub.parts]
    if not parts:
        return True
    return parts[0] if len(parts) == 1 else {"allOf": parts}


def render_part(part: str | bool | SchemaNode, dialect: Dialect) -> Any:
    if isinstance(part, bool):
        return part
    if isinstance(part, str):
        return reference(part)
    return render(part, dialect)


class Dialect:
    """How the root's draft writes what the nodes hold: draft 4's boolean exclusive bounds,
    draft 2019-09's dependentRequired/dependentSchemas or the older `dependencies`."""

    def __init__(self, draft4: bool, dependent_keywords: bool) -> None:
        self.draft4 = draft4
        self.dependent_keywords = dependent_keywords


def render(node: SchemaNode, dialect: Dialect) -> dict[str, Any]:
    out: dict[str, Any] = {}
    conjuncts: list[Any] = []
    if node.types is not None:
        out["type"] = list(node.types)
    if node.values is not None:
        out["enum"] = list(node.values.items)
    if node.string is not None:
        _string(node.string, out, conjuncts)
    if node.number is not None:
        _number(node.number, out, dialect)
        conjuncts += [{"not": {"type": "integer"}}] if node.number.fraction else []
    if node.array is not None:
        _array(node.array, out, conjuncts, dialect)
    if node.object is not None:
        _object(node.object, out, conjuncts, dialect)
    for union in (node.any_of, node.one_of):
        if union is not None:
            out[union.keyword] = [render_sub(branch, dialect) for branch in union.branches]
    conjuncts += [{"not": render_sub(sub, dialect)} for sub in node.nots]
    if node.excluded:
        conjuncts.append({"not": {"enum": list(node.excluded)}})
    if node.ref is not None:
        conjuncts.append(reference(node.ref.target))
    conjuncts += [render_sub(sub, dialect) for sub in node.all_of]
    if conjuncts:
        out["allOf"] = conjuncts
    return out


def _string(string: StringNode, out: dict[str, Any], conjuncts: list[Any]) -> None:
    if string.min_length:
        out["minLength"] = string.min_length
    if string.max_length is not None:
        out["maxLength"] = string.max_length
    conjuncts += [{"pattern": pattern.source} for pattern in string.patterns]
    conjuncts += [{"not": {"pattern": pattern.source}} for pattern in string.unmatched]
    if string.format is not None:
        out["format"] = string.format


def _number(number: NumberNode, out: dict[str, Any], dialect: Dialect) -> None:
    _bound(number.minimum, "minimum", "exclusiveMinimum", out, dialect)
    _bound(number.maximum, "maximum", "exclusiveMaximum", out, dialect)
    if number.multiple_of is not None:
        out["multipleOf"] = number.multiple_of


def _bound(bound: Bound | None, inclusive: str, exclusive: str, out: dict[str, Any], dialect: Dialect) -> None:
    if bound is None:
        return
    if dialect.draft4:
        out[inclusive] = bound.value
        out[exclusive] = bound.exclusive
    else:
        out[exclusive if bound.exclusive else inclusive] = bound.value


def _array(array: ArrayNode, out: dict[str, Any], conjuncts: list[Any], dialect: Dialect) -> None:
    if array.prefix is not None:
        out[array.prefix_keyword] = [render_sub(sub, dialect) for sub in array.prefix]
    if array.rest is not None:
        out[array.rest_keyword] = render_sub(array.rest, dialect)
    if array.min_items:
        out["minItems"] = array.min_items
    if array.max_items is not None:
        out["maxItems"] = array.max_items
    if array.unique:
        out["uniqueItems"] = True
    for sub in array.contains:  # as every draft reads it (draft 4 has no `contains`)
        conjuncts.append({"not": {"items": {"not": render_sub(sub, dialect)}}})


def _object(node: ObjectNode, out: dict[str, Any], conjuncts: list[Any], dialect: Dialect) -> None:
    if node.properties:
        out["properties"] = {name: render_sub(sub, dialect) for name, sub in node.properties}
    if node.required:
        out["required"] = list(node.required)
    if node.additional is not None:
        out["additionalProperties"] = render_sub(node.additional, dialect)
    if node.patterns:
        out["patternProperties"] = {pattern: render_sub(sub, dialect) for pattern, sub in node.patterns}
    if node.names is not None:
        out["propertyNames"] = render_sub(node.names, dialect)
    if node.min_properties:
        out["minProperties"] = node.min_properties
    if node.max_properties is not None:
        out["maxProperties"] = node.max_properties
    for trigger, names in node.dependent_names:
        keyword = "dependentRequired" if dialect.dependent_keywords else "dependencies"
        conjuncts.append({keyword: {trigger: list(names)}})
    for trigger, sub in node.dependent_schemas:
        keyword = "dependentSchemas" if dialect.dependent_keywords else "dependencies"
        conjuncts.append({keyword: {trigger: render_sub(sub, dialect)}})
