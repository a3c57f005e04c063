"""What to do about a schema that fails its draft's meta-schema.

The keywords drafts write differently are the exclusive bounds (draft-04's `"exclusiveMinimum":
true` beside `minimum`, later drafts' number) and tuples (`"items": [...]` before 2020-12,
`prefixItems` since). A schema that writes one as another draft does fails its meta-schema,
most often for want of a `$schema` (read as 2020-12). Where that is the keyword that fails and
the schema passes another draft's meta-schema, the hint names the `$schema` that gives it that
meaning and the rewrite that keeps the schema's own draft. Any other failure is to be fixed in
the schema: that an older draft's meta-schema accepts it proves little, since older drafts
accept any value for the keywords they do not know (`"$defs": []`).
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema.exceptions import ValidationError

from .validation import Validator, meta_schema_error, name_of, validator_class
from .vocabulary import DRAFTS

FIX = "fix the schema so that it is valid JSON Schema"
# The drafts tried, most written first: draft-07 is the one tools most often write and read,
# and 2019-09 reads what it does and more; a draft-04 form is valid under draft-04 alone.
_PREFERRED = ("Draft7Validator", "Draft201909Validator", "Draft202012Validator", "Draft6Validator", "Draft4Validator")
_BOUNDS = {"exclusiveMinimum": "minimum", "exclusiveMaximum": "maximum"}


def meta_schema_hint(schema: Any, error: ValidationError) -> str:
    """The hint for `schema`, which fails its draft's meta-schema with `error`: where a keyword
    written as another draft writes it fails, the `$schema` of a draft whose meta-schema the
    schema passes and the rewrite (at most four more meta-schema checks, on a schema already
    refused); else FIX."""
    if not isinstance(schema, dict):
        return FIX
    path = list(error.absolute_path)
    rewrite = _rewrite(schema, path)
    found = None if rewrite is None else _draft_passing(schema)
    if rewrite is None or found is None:
        return FIX
    draft, uri = found
    written = schema.get("$schema")
    declare = f'add "$schema": "{uri}" to the root' if written is None else f'declare "$schema": "{uri}" instead of "{written}"'
    where = "/" + "/".join(str(part) for part in path)
    return f"{where} is written as {name_of(draft)} reads it: {declare}, or {rewrite}"


def _rewrite(schema: dict[str, Any], path: list[Any]) -> str | None:
    """How to write the keyword at `path` the way the schema's own draft reads it, where it is
    one that drafts write differently (the exclusive bounds, tuple `items`); else None."""
    if not path or not isinstance(path[-1], str):
        return None
    keyword, parent = path[-1], _value_at(schema, path[:-1])
    value = parent.get(keyword) if isinstance(parent, dict) else None
    if keyword == "items" and isinstance(value, list):
        return 'write the tuple as "prefixItems" (and "additionalItems" as "items")'
    bound = _BOUNDS.get(keyword)
    if bound is None or not isinstance(parent, dict):
        return None
    if value is True and bound in parent:
        return f'write the bound itself ("{keyword}": {json.dumps(parent[bound])}, without "{bound}")'
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f'write it as draft-04 does ("{bound}": {json.dumps(value)}, "{keyword}": true)'
    return None


def _draft_passing(schema: dict[str, Any]) -> tuple[type[Validator], str] | None:
    """The first draft (in _PREFERRED's order) other than the schema's own whose meta-schema
    `schema` passes when it declares that draft."""
    own, drafts = validator_class(schema), {draft.__name__: (draft, uri) for draft, uri in DRAFTS}
    for name in _PREFERRED:
        draft, uri = drafts[name]
        if draft is not own and meta_schema_error({**schema, "$schema": uri}) is None:
            return draft, uri
    return None


def _value_at(schema: Any, path: list[Any]) -> Any:
    for part in path:
        schema = schema[part]
    return schema
