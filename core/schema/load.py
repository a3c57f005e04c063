"""Reading a schema: JSON parsing, the meta-schema check and local `$ref` resolution."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import jsonschema
import jsonschema.exceptions

from ..errors import SchemaError, UnsupportedSchema

Schema = dict[str, Any] | bool


def load_schema_file(path: Path) -> Schema:
    """Parse and check the schema at `path`. Raises SchemaError with the file named."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SchemaError(f"schema file not found: {path}", hint="check the --schema path") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SchemaError(f"cannot read schema file {path}: {error}") from None
    try:
        schema = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise SchemaError(
            f"schema file {path} is not valid JSON: {error.msg} at line {error.lineno} column {error.colno}",
            hint="fix the JSON syntax",
        ) from None
    return check_schema(schema, source=str(path))


def _reject_constant(name: str) -> Any:
    """Python's json reads NaN and Infinity, which JSON does not have."""
    raise json.JSONDecodeError(f"{name} is not a JSON value", name, 0)


def check_schema(schema: Any, source: str = "schema") -> Schema:
    """Check `schema` against its draft's meta-schema (2020-12 when `$schema` is absent)."""
    if not isinstance(schema, dict | bool):
        raise SchemaError(f"{source} must be a JSON object or boolean, not {type(schema).__name__}")
    where = _non_finite_number(schema, "")
    if where is not None:
        raise SchemaError(
            f"{source} holds a number JSON cannot write (NaN or infinity) at {where or '/'}", hint="use a finite number"
        )
    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        validator.check_schema(schema)  # type: ignore[arg-type]  # booleans are valid schemas too
    except jsonschema.exceptions.SchemaError as error:
        where = "/" + "/".join(str(p) for p in error.absolute_path)
        raise SchemaError(
            f"{source} fails the JSON Schema meta-schema at {where}: {error.message}",
            hint="fix the schema so that it is valid JSON Schema",
        ) from None
    return schema  # type: ignore[no-any-return]


def _non_finite_number(value: Any, pointer: str) -> str | None:
    """The pointer to the first NaN or infinity in `value`, else None (iterative: schemas nest deeply)."""
    stack = [(value, pointer)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return where
        if isinstance(item, dict):
            stack.extend((child, f"{where}/{str(key).replace('~', '~0').replace('/', '~1')}") for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, f"{where}/{index}") for index, child in enumerate(item))
    return None


def resolve_ref(root: Schema, ref: str, pointer: str) -> tuple[Any, str]:
    """The sub-schema a local `$ref` names, and its JSON pointer inside the root."""
    if not ref.startswith("#"):
        raise UnsupportedSchema("$ref", pointer, f"only local references ('#/...') are supported, not {ref!r}")
    fragment = unquote(ref[1:])
    target: Any = root
    if fragment:
        if not fragment.startswith("/"):
            raise UnsupportedSchema("$ref", pointer, f"anchor references are not supported: {ref!r}")
        for raw in fragment[1:].split("/"):
            part = raw.replace("~1", "/").replace("~0", "~")
            target = _step(target, part, ref, pointer)
    return target, fragment or ""


def _step(target: Any, part: str, ref: str, pointer: str) -> Any:
    if isinstance(target, dict) and part in target:
        return target[part]
    if isinstance(target, list) and part.isdigit() and int(part) < len(target):
        return target[int(part)]
    raise SchemaError(f"$ref {ref!r} at {pointer or '/'} does not resolve inside the schema")


_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples", "example"})


def validation_schema(schema: Schema) -> Schema:
    """`schema` as validators should see it: OpenAPI 3.0's `nullable: true`, which JSON Schema
    validators ignore, becomes `anyOf: [{type: null}, rest]`, matching what the compiler allows."""
    if not isinstance(schema, dict):
        return schema
    rewritten: dict[str, Any] = {}
    for keyword, value in schema.items():
        if keyword in _DATA_KEYWORDS:
            rewritten[keyword] = value
        elif keyword in _SCHEMA_MAPS and isinstance(value, dict):
            rewritten[keyword] = {name: validation_schema(sub) for name, sub in value.items()}
        elif isinstance(value, dict):
            rewritten[keyword] = validation_schema(value)
        elif isinstance(value, list):
            rewritten[keyword] = [validation_schema(item) if isinstance(item, dict) else item for item in value]
        else:
            rewritten[keyword] = value
    if rewritten.get("nullable") is True:
        return _allow_null(rewritten)
    return rewritten


_ROOT_KEYWORDS = ("$schema", "$id", "id", "$defs", "definitions")


def _allow_null(schema: dict[str, Any]) -> dict[str, Any]:
    # Widen `type`/`enum` in place where that is enough, so JSON pointers into the schema
    # still resolve; wrap in anyOf only when an applicator or const would still reject null.
    rest = {k: v for k, v in schema.items() if k != "nullable"}
    if not {"$ref", "allOf", "anyOf", "oneOf", "not", "const"} & rest.keys():
        if "type" in rest:
            types = [rest["type"]] if isinstance(rest["type"], str) else list(rest["type"])
            rest["type"] = [*types, "null"]
        if "enum" in rest:
            rest["enum"] = [*rest["enum"], None]
        return rest
    kept = {k: rest.pop(k) for k in _ROOT_KEYWORDS if k in rest}
    return {**kept, "anyOf": [{"type": "null"}, rest]}
