"""What to do about a schema that fails its draft's meta-schema.

The keywords drafts write differently are the exclusive bounds (draft-04's `"exclusiveMinimum":
true` beside `minimum`, later drafts' number) and tuples (`"items": [...]` before 2020-12,
`prefixItems` since). A schema that writes one as another draft does fails its meta-schema,
most often for want of a `$schema` (read as 2020-12). Where that is the keyword that fails and
the schema passes another draft's meta-schema, the hint names the `$schema` that gives it that
meaning and the rewrite that keeps the schema's own draft; where no draft's does (a boolean
bound without `minimum`, invalid in draft-04 too), the rewrite alone. The draft named must read
every such form the schema writes, wherever it is: draft-04 alone reads a boolean bound, so a
schema with one and a tuple is told draft-04, and never a draft whose meta-schema passes only
because it does not look where the bound is (draft-07 does not read `$defs`). Any other failure
is to be fixed in the schema: that an older draft's meta-schema accepts it proves little, since
older drafts accept any value for the keywords they do not know (`"$defs": []`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from jsonschema.exceptions import ValidationError

from .unknown_keywords import DRAFTS
from .validation import Validator, meta_schema_error, name_of, validator_class

FIX = "fix the schema so that it is valid JSON Schema"
# The drafts tried, most written first: draft-07 is the one tools most often write and read,
# and 2019-09 reads what it does and more; a draft-04 form is valid under draft-04 alone.
_PREFERRED = ("Draft7Validator", "Draft201909Validator", "Draft202012Validator", "Draft6Validator", "Draft4Validator")
_BOUNDS = {"exclusiveMinimum": "minimum", "exclusiveMaximum": "maximum"}
# The drafts that read each form: the boolean bound, the number bound, the tuple.
_BOOLEAN_BOUND = frozenset({"Draft4Validator"})
_NUMBER_BOUND = frozenset(_PREFERRED) - _BOOLEAN_BOUND
_TUPLE = frozenset(_PREFERRED) - {"Draft202012Validator"}
# Keywords whose values are data, not schemas: a form written in one is no form.
_DATA = frozenset({"const", "enum", "default", "examples", "example"})
# Keywords whose values map names to schemas.
_NAME_MAPS = frozenset({"properties", "patternProperties", "definitions", "$defs", "dependencies", "dependentSchemas"})


@dataclass(frozen=True)
class _Form:
    """A keyword written as another draft writes it: what it is, and its rewrite."""

    what: str
    rewrite: str


def meta_schema_hint(schema: Any, error: ValidationError) -> str:
    """The hint for `schema`, which fails its draft's meta-schema with `error`: where a keyword
    written as another draft writes it fails, the `$schema` of a draft that reads every such
    form and whose meta-schema the schema passes, and the rewrite (at most five more
    meta-schema checks and one walk of the schema, on a schema already refused); else FIX."""
    if not isinstance(schema, dict):
        return FIX
    path = list(error.absolute_path)
    form = _form(schema, path)
    if form is None:
        return FIX
    where = "/" + "/".join(str(part) for part in path)
    found = _draft_passing(schema)
    if found is None:
        return f"{where} is {form.what}: {form.rewrite}"
    draft, uri = found
    written = schema.get("$schema")
    declare = f'add "$schema": "{uri}" to the root' if written is None else f'declare "$schema": "{uri}" instead of "{written}"'
    return f"{where} is written as {name_of(draft)} reads it: {declare}, or {form.rewrite}"


def _form(schema: dict[str, Any], path: list[Any]) -> _Form | None:
    """The keyword at `path`, where it is one that drafts write differently (the exclusive
    bounds, tuple `items`), and how to write it the way the schema's own draft reads it."""
    if not path or not isinstance(path[-1], str):
        return None
    keyword, parent = path[-1], _value_at(schema, path[:-1])
    value = parent.get(keyword) if isinstance(parent, dict) else None
    if keyword == "required" and isinstance(value, bool) and _keywords_at(path)[-1]:
        return _draft_03_required(schema, path, value)
    if keyword == "items" and isinstance(value, list):
        tuple_rewrite = 'write the tuple as "prefixItems" (and "additionalItems" as "items")'
        return _Form("a tuple as drafts before 2020-12 write it", tuple_rewrite)
    bound = _BOUNDS.get(keyword)
    if bound is None or not isinstance(parent, dict):
        return None
    if isinstance(value, bool):
        return _boolean_bound(keyword, bound, value, parent)
    if isinstance(value, int | float):
        as_draft_04 = f'write it as draft-04 does ("{bound}": {json.dumps(value)}, "{keyword}": true)'
        return _Form("a bound as drafts after draft-04 write it", as_draft_04)
    return None


def _draft_03_required(schema: dict[str, Any], path: list[Any], value: bool) -> _Form:
    """Draft-03's `"required": true` (or false) on a property's own schema, which no later draft
    reads: the object lists its required properties by name. The rewrite names every property
    beside this one marked true, so that one edit fixes them all; outside `properties` draft-03
    gave the boolean no meaning either."""
    on_property = len(path) >= 3 and path[-3] == "properties" and _keywords_at(path)[-3]
    properties = _value_at(schema, path[:-2]) if on_property else None
    if not isinstance(properties, dict):
        what = f"draft-03's form ({json.dumps(value)}), which meant something only on a property's own schema"
        return _Form(what, 'drop it, and list the properties an object requires in its "required" (an array of names)')
    what = f"draft-03's form ({json.dumps(value)} on the property)"
    if not value:
        return _Form(what, 'drop it (a property is optional unless its object\'s "required" lists it)')
    names = [name for name, sub in properties.items() if isinstance(sub, dict) and sub.get("required") is True]
    listed = json.dumps({"required": names})[1:-1]
    return _Form(what, f'list the property in its object\'s "required" instead ({listed})')


def _boolean_bound(keyword: str, bound: str, value: bool, parent: dict[str, Any]) -> _Form:
    """Draft-04's `"exclusiveMinimum": true` (or false), which its meta-schema accepts only
    beside `minimum`: true makes that bound exclusive; false says what `minimum` alone says."""
    if bound not in parent:
        what = f'draft-04\'s boolean form, which needs "{bound}" beside it even in draft-04'
        if value:
            return _Form(what, f'write the bound itself ("{keyword}": the number it excludes)')
        return _Form(what, f'drop it ("{keyword}": false makes no bound)')
    if value:
        itself = f'write the bound itself ("{keyword}": {json.dumps(parent[bound])}, without "{bound}")'
        return _Form("draft-04's boolean form", itself)
    dropped = f'drop it ("{keyword}": false says what "{bound}" alone says: the bound is inclusive)'
    return _Form("draft-04's boolean form", dropped)


def _draft_passing(schema: dict[str, Any]) -> tuple[type[Validator], str] | None:
    """The first draft (in _PREFERRED's order) other than the schema's own that reads every
    form the schema writes and whose meta-schema `schema` passes when it declares that draft."""
    own, drafts = validator_class(schema), {draft.__name__: (draft, uri) for draft, uri in DRAFTS}
    readers = frozenset(_PREFERRED).intersection(*_forms_in(schema))
    for name in _PREFERRED:
        draft, uri = drafts[name]
        if name in readers and draft is not own and meta_schema_error({**schema, "$schema": uri}) is None:
            return draft, uri
    return None


def _forms_in(schema: Any) -> Iterator[frozenset[str]]:
    """For each form written anywhere in `schema` (data values aside), the drafts that read it
    (iterative: the schema's depth is bounded when it is loaded, but not small)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        for keyword, value in node.items():
            if keyword in _BOUNDS and isinstance(value, bool):
                yield _BOOLEAN_BOUND
            elif keyword in _BOUNDS and isinstance(value, int | float):
                yield _NUMBER_BOUND
            elif keyword == "items" and isinstance(value, list):
                yield _TUPLE
            if keyword not in _DATA:
                stack.append(value)


def _keywords_at(path: list[Any]) -> list[bool]:
    """For each part of `path`, whether it is a keyword (not a property's or definition's name,
    nor an index): `{"properties": {"required": true}}` names a property `required`."""
    keywords, named = [], False
    for part in path:
        keywords.append(not named and isinstance(part, str))
        named = keywords[-1] and part in _NAME_MAPS
    return keywords


def _value_at(schema: Any, path: list[Any]) -> Any:
    for part in path:
        schema = schema[part]
    return schema
