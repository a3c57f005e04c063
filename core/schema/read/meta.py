"""The 2020-12 and 2019-09 meta-schemas in one piece, for checking schemas fast.

The published 2020-12 meta-schema is eight documents tied together by `$dynamicRef: "#meta"`
(2019-09's seven, by `$recursiveRef: "#"` under `$recursiveAnchor: true`), which lets a
meta-schema extending them stand in for the whole. A schema checked against the published
meta-schema itself never extends it, so every such reference lands on that same root:
replacing each by `$ref: "#"`, and inlining the vocabularies into the root, describes exactly
the same schemas. jsonschema resolves a dynamic reference by walking its dynamic scope at
every step, which made the meta-schema check the largest single cost of compiling a small
schema; the inlined one is about five times faster to check against, and the fast check
(core.schema.read.meta_check) reads it (tests/test_meta_schema.py holds the two to the same
verdicts).
"""

from __future__ import annotations

import functools
from typing import Any

from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]  # no stubs or py.typed

# The drafts whose meta-schemas are inlined: each one's base URI (the root is `schema` in it).
BASES = {"2020-12": "https://json-schema.org/draft/2020-12/", "2019-09": "https://json-schema.org/draft/2019-09/"}
# What only identifies a document or declares its vocabularies: meaningless once inlined.
_IDENTITY = frozenset({"$id", "$schema", "$vocabulary", "$dynamicAnchor", "$recursiveAnchor", "title", "$comment"})


@functools.cache
def inlined(draft: str) -> dict[str, Any]:
    """The meta-schema of `draft` (a key of BASES) as one document without dynamic references."""
    base = BASES[draft]
    root: dict[str, Any] = REGISTRY.contents(base + "schema")
    merged: dict[str, Any] = {key: value for key, value in root.items() if key not in _IDENTITY | {"allOf"}}
    properties: dict[str, Any] = dict(merged.pop("properties", {}))
    definitions: dict[str, Any] = dict(merged.pop("$defs", {}))
    checks: list[Any] = []
    for part in root["allOf"]:
        vocabulary: dict[str, Any] = REGISTRY.contents(base + part["$ref"])
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
    """`node` with each `$dynamicRef: "#meta"` (2019-09: `$recursiveRef: "#"`) made `$ref: "#"`,
    and each reference into a vocabulary's definitions (`meta/validation#/$defs/...`) pointed
    at the root's."""
    if isinstance(node, list):
        return [_static(item) for item in node]
    if not isinstance(node, dict):
        return node
    result: dict[str, Any] = {}
    for key, value in node.items():
        if (key, value) in (("$dynamicRef", "#meta"), ("$recursiveRef", "#")):
            result["$ref"] = "#"
        elif key == "$ref" and isinstance(value, str) and value.startswith("meta/") and "#" in value:
            result["$ref"] = "#" + value.split("#", 1)[1]
        else:
            result[key] = _static(value)
    return result
