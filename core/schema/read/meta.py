"""The 2020-12 meta-schema in one piece, for checking schemas fast.

The published 2020-12 meta-schema is eight documents tied together by `$dynamicRef: "#meta"`,
which lets a meta-schema extending them stand in for the whole. A schema checked against
the published meta-schema itself never extends it, so every `#meta` lands on that same
root: replacing each `$dynamicRef: "#meta"` by `$ref: "#"`, and inlining the vocabularies
into the root, describes exactly the same schemas. jsonschema resolves a dynamic reference
by walking its dynamic scope at every step, which made the meta-schema check the largest
single cost of compiling a small schema; the inlined one is about five times faster to
check against (tests/test_schema_errors.py holds the two to the same verdicts).
"""

from __future__ import annotations

import functools
from typing import Any

from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]  # no stubs or py.typed

_ROOT = "https://json-schema.org/draft/2020-12/schema"
_BASE = "https://json-schema.org/draft/2020-12/"
# What only identifies a document or declares its vocabularies: meaningless once inlined.
_IDENTITY = frozenset({"$id", "$schema", "$vocabulary", "$dynamicAnchor", "title", "$comment"})


@functools.cache
def inlined_2020_12() -> dict[str, Any]:
    """The 2020-12 meta-schema as one document without dynamic references (see above)."""
    root: dict[str, Any] = REGISTRY.contents(_ROOT)
    merged: dict[str, Any] = {key: value for key, value in root.items() if key not in _IDENTITY | {"allOf"}}
    properties: dict[str, Any] = dict(merged.pop("properties", {}))
    definitions: dict[str, Any] = dict(merged.pop("$defs", {}))
    checks: list[Any] = []
    for part in root["allOf"]:
        vocabulary: dict[str, Any] = REGISTRY.contents(_BASE + part["$ref"])
        for key, value in vocabulary.items():
            if key in _IDENTITY:
                continue
            if key == "properties":
                properties.update(value)
            elif key == "$defs":
                definitions.update(value)  # no two vocabularies name a definition alike
            elif key in ("type", "default") and key in merged:
                continue  # every vocabulary says the same: ["object", "boolean"], true
            else:
                checks.append({key: value})
    merged.update(properties=properties, allOf=checks)
    merged["$defs"] = definitions
    return _static(merged)  # type: ignore[no-any-return]


def _static(node: Any) -> Any:
    """`node` with each `$dynamicRef: "#meta"` made `$ref: "#"`, and each reference into a
    vocabulary's definitions (`meta/validation#/$defs/...`) pointed at the root's."""
    if isinstance(node, list):
        return [_static(item) for item in node]
    if not isinstance(node, dict):
        return node
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$dynamicRef" and value == "#meta":
            result["$ref"] = "#"
        elif key == "$ref" and isinstance(value, str) and value.startswith("meta/") and "#" in value:
            result["$ref"] = "#" + value.split("#", 1)[1]
        else:
            result[key] = _static(value)
    return result
