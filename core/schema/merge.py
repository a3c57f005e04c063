"""Conjunction of schemas: `allOf`, and keywords written beside `$ref`, `anyOf` or `oneOf`.

Two schemas are merged keyword by keyword into one schema that accepts exactly the values
both accept. Each keyword has an exact rule (types intersect, bounds tighten, `required`
unites, property schemas merge per name with `additionalProperties` standing in for names a
side does not declare, `anyOf` lists multiply out); a pair of keywords with no exact rule
raises UnsupportedSchema naming the keyword. The merged schema is only ever compiled, never
shown to a validator: final validation always uses the user's original schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ..errors import SchemaError, UnsupportedSchema
from .json_values import MAX_REF_HOPS, distinct_values, json_equal, keep_values
from .limits import Fuel
from .load import Schema, resolve_ref
from .validation import ref_ignores_siblings

# Internal keyword: the values a `not` excludes (never in user schemas, never validated).
EXCLUDED = "$gguf-extract:excluded"
MAX_BRANCHES = 64  # anyOf x anyOf products beyond this are refused, not enumerated
Merger = Callable[["Merge", Any, Any], Any]


class Merge:
    """Merges schemas of one root document; `asserting` is the draft's keyword set, `fuel`
    the compile work left (each pair merged spends a unit), `views` the filtered copies of
    schemas, shared across one compilation."""

    def __init__(
        self,
        root: Schema,
        asserting: frozenset[str],
        pointer: str,
        fuel: Fuel | None = None,
        views: dict[int, tuple[Any, Any]] | None = None,
    ) -> None:
        self.root = root
        self.fuel = fuel or Fuel()
        self.views = {} if views is None else views
        self.asserting = asserting
        self.pointer = pointer
        self.refs: list[str] = []  # references folded in, so callers can detect recursion
        self.ref_only = ref_ignores_siblings(root)

    def all_of(self, schemas: list[Any]) -> Any:
        merged: Any = True
        for schema in schemas:
            merged = self.pair(merged, schema)
        return merged

    def pair(self, first: Any, second: Any) -> Any:
        self.fuel.burn(self.pointer)
        if first is True or second is True:
            return second if first is True else first
        first, second = self.expand(first), self.expand(second)
        if first is False or second is False:
            return False
        if first is True:
            return second
        if second is True:
            return first
        result = {k: v for k, v in first.items() if self._meaningful(k)}
        for keyword, value in second.items():
            if not self._meaningful(keyword):
                continue
            if keyword not in result:
                result[keyword] = value
            elif keyword not in _OBJECT_KEYWORDS:
                result[keyword] = self._combine(keyword, result[keyword], value)
        if _OBJECT_KEYWORDS & (first.keys() | second.keys()):
            self._merge_objects(first, second, result)
        self._refuse_tuple_merge(first, second)
        return result

    def _refuse_tuple_merge(self, first: dict[str, Any], second: dict[str, Any]) -> None:
        # Positional item schemas would have to meet the other side's per-position schema.
        if _ARRAY_KEYWORDS & first.keys() and _ARRAY_KEYWORDS & second.keys() and (_is_tuple(first) or _is_tuple(second)):
            raise UnsupportedSchema(
                "prefixItems", self.pointer + "/prefixItems", "tuple arrays cannot be merged with other array schemas yet"
            )

    def expand(self, schema: Any) -> Any:
        """`schema` with its own `$ref` and `allOf` folded in, so only plain keywords remain."""
        for _ in range(MAX_REF_HOPS):
            if not isinstance(schema, dict):
                return schema
            if "$ref" in schema:
                target, _ = resolve_ref(self.root, schema["$ref"], self.pointer + "/$ref")
                self.refs.append(schema["$ref"])
                rest = {k: v for k, v in schema.items() if k != "$ref"}
                schema = self.pair(target, rest) if self._has_meaning(rest) and not self.ref_only else target
            elif "allOf" in schema:
                rest = {k: v for k, v in schema.items() if k != "allOf"}
                return self.all_of([rest, *schema["allOf"]])
            else:
                return _numeric_exclusive_bounds(self._plain(schema))
        raise UnsupportedSchema("$ref", self.pointer + "/$ref", "references nest too deeply to merge (recursive?)")

    def _plain(self, schema: dict[str, Any]) -> dict[str, Any]:
        """`schema` without the keywords its draft gives no meaning: the same object when it
        has none, else one copy per object (compiled trees are memoised per object, so a
        fresh copy each time would compile shared schemas again and again)."""
        if all(self._meaningful(k) for k in schema):
            return schema
        found = self.views.get(id(schema))
        if found is None:
            found = (schema, {k: v for k, v in schema.items() if self._meaningful(k)})  # the original keeps its id unique
            self.views[id(schema)] = found
        return found[1]  # type: ignore[no-any-return]

    def _meaningful(self, keyword: str) -> bool:
        return keyword in self.asserting or keyword in _EXTRA_KEYWORDS

    def _has_meaning(self, schema: dict[str, Any]) -> bool:
        return any(self._meaningful(k) for k in schema)

    def _combine(self, keyword: str, first: Any, second: Any) -> Any:
        rule = _RULES.get(keyword)
        if rule is None:
            if first == second:
                return first
            raise UnsupportedSchema(
                keyword, f"{self.pointer}/{keyword}", f"two different '{keyword}' values cannot be merged exactly"
            )
        return rule(self, first, second)

    def _merge_objects(self, first: dict[str, Any], second: dict[str, Any], result: dict[str, Any]) -> None:
        """A name declared on one side meets the other side's schema for it: its own property
        schema and the patternProperties matching it, or else its `additionalProperties`
        (true when absent). Pattern schemas stay patterns when the other side's
        additionalProperties is true (exact then); otherwise the merge is refused."""
        for side, other in ((first, second), (second, first)):
            if side.get("patternProperties") and other.get("additionalProperties", True) is not True:
                raise UnsupportedSchema(
                    "patternProperties",
                    self.pointer + "/patternProperties",
                    "cannot be merged with a schema whose additionalProperties is not true",
                )
        merged: dict[str, Any] = {}
        for name in dict.fromkeys([*first.get("properties", {}), *second.get("properties", {})]):
            merged[name] = lazy_all_of(self._constraint(first, name), self._constraint(second, name))
        for keyword in ("properties", "additionalProperties", "patternProperties"):
            result.pop(keyword, None)
        if merged:
            result["properties"] = merged
        patterns: dict[str, Any] = dict(first.get("patternProperties", {}))
        for pattern, sub in second.get("patternProperties", {}).items():
            patterns[pattern] = lazy_all_of(patterns[pattern], sub) if pattern in patterns else sub
        if patterns:
            result["patternProperties"] = patterns
        extra = lazy_all_of(first.get("additionalProperties", True), second.get("additionalProperties", True))
        if extra is not True:
            result["additionalProperties"] = extra

    def _constraint(self, schema: dict[str, Any], name: str) -> Any:
        """What `schema` requires of property `name`'s value (validators match patterns with
        Python's re.search, so this does too)."""
        matching = []
        for pattern, sub in schema.get("patternProperties", {}).items():
            try:
                found = re.search(pattern, name) is not None
            except re.error as error:
                raise UnsupportedSchema(
                    "patternProperties", self.pointer + "/patternProperties", f"{pattern!r}: {error}"
                ) from None
            if found:
                matching.append(sub)
        declared = schema.get("properties", {})
        if name not in declared and not matching:
            return schema.get("additionalProperties", True)
        parts = ([declared[name]] if name in declared else []) + matching
        return parts[0] if len(parts) == 1 else {"allOf": parts}


def _is_tuple(schema: dict[str, Any]) -> bool:
    return "prefixItems" in schema or isinstance(schema.get("items"), list)


def _numeric_exclusive_bounds(schema: dict[str, Any]) -> dict[str, Any]:
    """Draft 4's `exclusiveMinimum: true` (which modifies `minimum`) in the numeric form,
    so bounds from different sides can be tightened independently."""
    if not any(isinstance(schema.get(k), bool) for k in ("exclusiveMinimum", "exclusiveMaximum")):
        return schema
    result = dict(schema)
    for exclusive, inclusive in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = result.get(exclusive)
        if isinstance(flag, bool):
            del result[exclusive]
            if flag and inclusive in result:
                result[exclusive] = result.pop(inclusive)
    return result


def _types(value: Any) -> set[str]:
    return {value} if isinstance(value, str) else set(value)


def _merge_type(merge: Merge, first: Any, second: Any) -> Any:
    a, b = _types(first), _types(second)
    both = a & b
    if ("integer" in a and "number" in b) or ("number" in a and "integer" in b):
        both.add("integer")
    if not both:
        raise SchemaError(f"allOf at {merge.pointer or '/'} requires types {sorted(a)} and {sorted(b)} at once: nothing matches")
    return sorted(both)


def _merge_enum(merge: Merge, first: Any, second: Any) -> Any:
    return keep_values(first, second)


def _merge_const(merge: Merge, first: Any, second: Any) -> Any:
    if not json_equal(first, second):
        raise SchemaError(f"allOf at {merge.pointer or '/'} requires two different constants: nothing matches")
    return first


def _larger(merge: Merge, first: Any, second: Any) -> Any:
    return max(first, second)


def _smaller(merge: Merge, first: Any, second: Any) -> Any:
    return min(first, second)


def _union(merge: Merge, first: Any, second: Any) -> Any:
    return list(dict.fromkeys([*first, *second]))


def _union_values(merge: Merge, first: Any, second: Any) -> Any:
    return distinct_values([*first, *second])


def lazy_all_of(first: Any, second: Any) -> Any:
    """Both schemas, merged only when compiled: sub-schemas (properties, items) of recursive
    schemas would otherwise be merged without end."""
    if first is True or second is True:
        return second if first is True else first
    if first is False or second is False:
        return False
    return {"allOf": [first, second]}


def _merge_schemas(merge: Merge, first: Any, second: Any) -> Any:
    return lazy_all_of(first, second)


def _merge_any_of(merge: Merge, first: Any, second: Any) -> Any:
    if len(first) * len(second) > MAX_BRANCHES:
        raise UnsupportedSchema("anyOf", merge.pointer + "/anyOf", f"merging would need more than {MAX_BRANCHES} branches")
    return [merge.pair(a, b) for a in first for b in second]


def _merge_pattern(merge: Merge, first: Any, second: Any) -> Any:
    patterns = [first] if isinstance(first, str) else list(first)
    patterns += [second] if isinstance(second, str) else list(second)
    return list(dict.fromkeys(patterns))  # a list means: every pattern must match


def _merge_items(merge: Merge, first: Any, second: Any) -> Any:
    if isinstance(first, list) or isinstance(second, list):
        raise UnsupportedSchema("items", merge.pointer + "/items", "tuple-form items cannot be merged yet")
    return lazy_all_of(first, second)


def _merge_not(merge: Merge, first: Any, second: Any) -> Any:
    return {"anyOf": [first, second]}


def _merge_unique(merge: Merge, first: Any, second: Any) -> Any:
    return bool(first) or bool(second)


_RULES: dict[str, Merger] = {
    "type": _merge_type,
    "enum": _merge_enum,
    "const": _merge_const,
    "minimum": _larger,
    "maximum": _smaller,
    "exclusiveMinimum": _larger,
    "exclusiveMaximum": _smaller,
    "minLength": _larger,
    "maxLength": _smaller,
    "minItems": _larger,
    "maxItems": _smaller,
    "minProperties": _larger,
    "maxProperties": _smaller,
    "required": _union,
    "items": _merge_items,
    "additionalItems": _merge_schemas,
    "propertyNames": _merge_schemas,
    "anyOf": _merge_any_of,
    "pattern": _merge_pattern,
    "uniqueItems": _merge_unique,
    "not": _merge_not,
    EXCLUDED: _union_values,
}
_OBJECT_KEYWORDS = frozenset({"properties", "additionalProperties", "patternProperties"})
# Not a draft keyword, but a constraint the compiler adds and so must keep.
_EXTRA_KEYWORDS = frozenset({EXCLUDED})
_ARRAY_KEYWORDS = frozenset({"items", "prefixItems", "additionalItems"})


def describe(schema: Any) -> str:
    """A short rendering of a schema for messages."""
    text = json.dumps(schema)
    return text if len(text) <= 80 else text[:77] + "..."
