"""Subschemas that declare their own `$schema`: jsonschema validates such a subschema, and
every schema validation reaches from it (its subschemas and the targets of its references),
with the validator of the draft it names, while the compiler reads the whole schema under the
root's draft. That is sound only where both drafts read the keywords alike, so a keyword whose
meaning differs between them (`const` or `prefixItems` in one draft only, draft 4's boolean
exclusive bounds, `$ref` siblings, ids, array-form `items`) is refused there, by name.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import jsonschema

from ...errors import UnsupportedSchema
from ...jsontext import join_pointer
from .resources import Resources, inside
from .validation import Validator, asserting_keywords, ignores_ref_siblings, name_of, validator_class

Draft = type[Validator]
# Where schemas are kept for references only: validation reaches them through a `$ref` alone.
_STORES = frozenset({"$defs", "definitions"})


def refuse_mixed_drafts(resources: Resources) -> None:
    """Raise UnsupportedSchema (not relaxable: the final validation reads the other draft) for
    the first keyword read differently under a subschema's own draft than under the root's,
    in the schemas validation reaches from the root (through subschemas and references)."""
    root = resources.root
    if not isinstance(root, dict) or not _declares_inside(root):
        return
    root_draft = validator_class(root)
    stack: list[tuple[Any, str, Draft, str]] = [(root, "", root_draft, "")]
    seen: set[tuple[str, Draft]] = set()
    while stack:
        schema, pointer, draft, marker = stack.pop()
        if not isinstance(schema, dict) or (pointer, draft) in seen:
            continue
        seen.add((pointer, draft))
        enclosing = draft  # a subschema's own id is read under the draft around it
        if pointer and "$schema" in schema:
            draft, marker = _declared(schema, pointer, draft), join_pointer(pointer, "$schema")
        if draft is not root_draft or enclosing is not root_draft:
            _refuse_differences(schema, pointer, root_draft, (draft, enclosing), marker)
        children = inside({k: v for k, v in schema.items() if k not in _STORES}, pointer)
        stack.extend((child, where, draft, marker) for child, where in children)
        ref = schema.get("$ref")
        if isinstance(ref, str):
            try:
                target, target_pointer = resources.resolve(ref, join_pointer(pointer, "$ref"))
            except UnsupportedSchema:
                continue  # refused where the compiler reaches it
            stack.append((target, target_pointer, draft, marker))


def _declares_inside(root: dict[str, Any]) -> bool:
    """Whether any object below the root has a `$schema` member (iterative)."""
    stack: list[Any] = list(root.values())
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if "$schema" in value:
                return True
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


def _declared(schema: dict[str, Any], pointer: str, in_use: Draft) -> Draft:
    """The draft jsonschema validates `schema` with (one it does not know keeps `in_use`)."""
    if not isinstance(schema["$schema"], str):
        reason = "must be a string naming a draft; the validator fails on any other value"
        raise UnsupportedSchema("$schema", join_pointer(pointer, "$schema"), reason, relaxable=False)
    found: Draft = jsonschema.validators.validator_for(schema, default=in_use)
    return found


def _refuse_differences(
    schema: dict[str, Any], pointer: str, root_draft: Draft, drafts: tuple[Draft, Draft], marker: str
) -> None:
    """`drafts`: the one validators read `schema` under, and the one they read its id under."""
    draft, id_draft = drafts
    keyword = _read_differently(schema, root_draft, draft, id_draft)
    if keyword is not None:
        raise UnsupportedSchema(
            keyword,
            join_pointer(pointer, keyword),
            f"validators read this subschema under {name_of(draft)} (the '$schema' at {marker}), where {keyword!r} does not"
            f" mean what it means under the root's {name_of(root_draft)}; one draft per schema is supported: declare the"
            " root's draft there, or rewrite the keyword",
            relaxable=False,
        )


def _read_differently(schema: dict[str, Any], first: Draft, second: Draft, second_ids: Draft) -> str | None:
    """A keyword of `schema` that `first` reads differently from `second` (its id: from
    `second_ids`), or None."""
    one, other, ids = _reading(first), _reading(second), _reading(second_ids)
    only_one = one.asserting ^ other.asserting
    for keyword, value in schema.items():
        if keyword in only_one:
            return keyword
        if keyword in ("exclusiveMinimum", "exclusiveMaximum") and one.draft4 != other.draft4:
            return keyword  # draft 4: a boolean modifying minimum/maximum; later: a bound
        if keyword in ("id", "$id") and (one.draft4, one.ref_only) != (ids.draft4, ids.ref_only):
            return keyword  # which keyword names a resource, and whether it counts beside $ref
        if keyword == ("id" if ids.draft4 else "$id") and other.draft4 != ids.draft4:
            # The resolver reads the id under the draft around the subschema while walking
            # into it, and under the subschema's own draft when it registers resources: this
            # one then moves the base URI to a resource that is never registered, and every
            # reference inside fails to resolve.
            return keyword
        if keyword == "items" and isinstance(value, list) and "prefixItems" in only_one:
            return keyword  # a tuple before 2020-12
    if "$ref" in schema and one.ref_only != other.ref_only and len((one.asserting | other.asserting) & schema.keys()) > 1:
        return "$ref"  # its siblings apply from 2019-09 only
    return None


@dataclass(frozen=True)
class _Reading:
    asserting: frozenset[str]
    draft4: bool
    ref_only: bool


@functools.cache
def _reading(draft: Draft) -> _Reading:
    return _Reading(asserting_keywords(draft), draft.__name__ == "Draft4Validator", ignores_ref_siblings(draft))
