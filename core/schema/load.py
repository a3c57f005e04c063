"""Reading a schema: JSON parsing, the meta-schema check and local `$ref` resolution."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ..errors import SchemaError, UnsupportedSchema
from .json_values import escape_pointer_part, join_pointer, unescape_pointer_part
from .validation import draft_name, meta_schema_error, ref_ignores_siblings

Schema = dict[str, Any] | bool
# JSON nesting (objects and arrays) a schema may have. Real schemas stay under 30 levels (27
# in the 9,557 of JSONSchemaBench); the bound keeps every recursive walk over a schema, the
# meta-schema check and validation included, far inside Python's recursion limit.
MAX_SCHEMA_DEPTH = 64
# Digits of an integer written in a schema: Python refuses to convert longer ones to or from
# text (its int-string limit is 4,300 digits), and no bound or value needs that many.
MAX_SCHEMA_INTEGER_DIGITS = 4000


def load_schema_file(path: Path) -> Schema:
    """Parse and check the schema at `path`. Raises SchemaError with the file named."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SchemaError(f"schema file not found: {path}", hint="check the schema's path") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SchemaError(f"cannot read schema file {path}: {error}") from None
    return check_schema(_parse(text, path), source=str(path))


def _parse(text: str, path: Path) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise SchemaError(
            f"schema file {path} is not valid JSON: {error.msg} at line {error.lineno} column {error.colno}",
            hint="fix the JSON syntax",
        ) from None
    except RecursionError:
        raise SchemaError(
            f"schema file {path} nests objects and arrays more deeply than JSON parsing allows",
            hint=f"a schema may nest at most {MAX_SCHEMA_DEPTH} levels; flatten it with $defs and $ref",
        ) from None
    except ValueError:  # Python's int-string conversion limit (4,300 digits by default)
        raise SchemaError(
            f"schema file {path} holds an integer with more digits than Python reads",
            hint=f"write integers with at most {MAX_SCHEMA_INTEGER_DIGITS} digits",
        ) from None


def _reject_constant(name: str) -> Any:
    """Python's json reads NaN and Infinity, which JSON does not have."""
    raise json.JSONDecodeError(f"{name} is not a JSON value", name, 0)


def check_schema(schema: Any, source: str = "schema") -> Schema:
    """Check `schema` against its draft's meta-schema (2020-12 when `$schema` is absent)."""
    if not isinstance(schema, dict | bool):
        raise SchemaError(f"{source} must be a JSON object or boolean, not {type(schema).__name__}")
    _check_values(schema, source)
    error = meta_schema_error(schema)
    if error is not None:
        where = "/" + "/".join(str(p) for p in error.absolute_path)
        raise SchemaError(
            f"{source} fails the JSON Schema meta-schema at {where}: {error.message}",
            hint="fix the schema so that it is valid JSON Schema",
        )
    return schema  # type: ignore[no-any-return]


def _check_values(schema: Any, source: str) -> None:
    """Refuse what no later step could handle: nesting beyond MAX_SCHEMA_DEPTH, NaN or
    infinity, integers beyond MAX_SCHEMA_INTEGER_DIGITS digits (checked iteratively, before
    anything recursive reads the schema)."""
    for item, where, depth in _walk(schema):
        if depth > MAX_SCHEMA_DEPTH:
            raise SchemaError(
                f"{source} nests objects and arrays more than {MAX_SCHEMA_DEPTH} levels deep (at {_shortened(where)})",
                hint="flatten deeply nested sub-schemas with $defs and $ref",
            )
        if isinstance(item, float) and not math.isfinite(item):
            raise SchemaError(
                f"{source} holds a number JSON cannot write (NaN or infinity) at {where or '/'}", hint="use a finite number"
            )
        if isinstance(item, int) and not isinstance(item, bool) and _too_many_digits(item):
            raise SchemaError(
                f"{source} holds an integer of more than {MAX_SCHEMA_INTEGER_DIGITS} digits at {where or '/'}",
                hint="use a shorter number",
            )


def _shortened(pointer: str, keep: int = 60) -> str:
    return pointer if len(pointer) <= keep else pointer[:keep] + "..."


def _too_many_digits(number: int) -> bool:
    # 10**k has about k / log10(2) bits: compare bit lengths, never convert the number to text.
    return abs(number).bit_length() > MAX_SCHEMA_INTEGER_DIGITS * 3.3219280948873626


def _walk(value: Any) -> Iterator[tuple[Any, str, int]]:
    """Every value inside `value` with its JSON pointer and nesting depth (objects and
    arrays count one level each), without recursion."""
    stack = [(value, "", 0)]
    while stack:
        item, where, depth = stack.pop()
        yield item, where, depth
        if isinstance(item, dict):
            stack.extend((child, f"{where}/{escape_pointer_part(str(key))}", depth + 1) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, f"{where}/{index}", depth + 1) for index, child in enumerate(item))


def resolve_ref(root: Schema, ref: Any, pointer: str) -> tuple[Any, str]:
    """The sub-schema a local `$ref` names, and its JSON pointer inside the root.

    Raises UnsupportedSchema for references that are not JSON pointers into the root (never
    retrieved; see refuse_remote_references), SchemaError when the pointer leads nowhere or
    to something that is not a schema (`#/required`)."""
    if not isinstance(ref, str):
        raise SchemaError(f"$ref at {pointer or '/'} must be a string, not {type(ref).__name__}")
    if not ref.startswith("#"):
        raise UnsupportedSchema("$ref", pointer, f"only local references ('#/...') are supported, not {ref!r}")
    fragment = unquote(ref[1:])
    target: Any = root
    if fragment:
        if not fragment.startswith("/"):
            raise UnsupportedSchema("$ref", pointer, f"anchor references are not supported: {ref!r}")
        for raw in fragment[1:].split("/"):
            part = unescape_pointer_part(raw)
            target = _step(target, part, ref, pointer)
    if not isinstance(target, dict | bool):
        raise UnresolvableReference(pointer, f"{ref!r} names {_kind(target)}, not a schema")
    return target, fragment or ""


class UnresolvableReference(UnsupportedSchema):
    """A local `$ref` that leads nowhere. Never left out with the branch or optional property
    that holds it, nor ignored by lenient compilation: the final validation would fail on it."""

    def __init__(self, pointer: str, reason: str) -> None:
        super().__init__("$ref", pointer, reason, relaxable=False)
        self.hint = "point $ref at a schema inside this one, e.g. '#/$defs/name'"


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    return "null" if value is None else "a number"


def _step(target: Any, part: str, ref: str, pointer: str) -> Any:
    if isinstance(target, dict) and part in target:
        return target[part]
    if isinstance(target, list) and part.isdigit() and int(part) < len(target):
        return target[int(part)]
    raise UnresolvableReference(pointer, f"{ref!r} does not resolve inside the schema")


# Keywords whose value is a schema, a list of schemas, or a map of names to schemas: where a
# validator finds references (values of other keywords are data, or mean nothing).
_ONE_SCHEMA = frozenset(
    {
        "additionalItems",
        "additionalProperties",
        "contains",
        "contentSchema",
        "else",
        "if",
        "items",
        "not",
        "propertyNames",
        "then",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_SCHEMA_MAPS_ALL = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"})
REFERENCE_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


def refuse_remote_references(schema: Schema) -> None:
    """Raise UnsupportedSchema (not relaxable) for the first reference that does not start
    with `#`: such a reference would be resolved by retrieving a URI, which never happens, so
    neither the compiler nor the final validation could check what it asks. A keyword that
    cannot be checked at all must not be ignored, even when refused keywords are."""
    for sub, pointer in _subschemas(schema):
        for keyword in REFERENCE_KEYWORDS:
            ref = sub.get(keyword)
            if isinstance(ref, str) and not ref.startswith("#"):
                raise UnsupportedSchema(
                    keyword,
                    f"{pointer}/{keyword}",
                    f"{ref!r} is not inside this schema; references are never retrieved over the network or"
                    " from files: copy the referenced schema under '$defs' and point at it with '#/$defs/...'",
                    relaxable=False,
                )


def _subschemas(schema: Schema) -> Iterator[tuple[dict[str, Any], str]]:
    """Every object in a schema position, with its JSON pointer (iterative)."""
    stack: list[tuple[Any, str]] = [(schema, "")]
    while stack:
        sub, pointer = stack.pop()
        if isinstance(sub, dict):
            yield sub, pointer
            stack.extend(_children(sub, pointer))


def _children(sub: dict[str, Any], pointer: str) -> Iterator[tuple[Any, str]]:
    """The values of `sub` in schema positions, with their JSON pointers."""
    for keyword, value in sub.items():
        here = join_pointer(pointer, keyword)
        if keyword in _ONE_SCHEMA and isinstance(value, dict):
            yield value, here
        elif keyword in _SCHEMA_LISTS and isinstance(value, list):
            yield from ((item, join_pointer(here, index)) for index, item in enumerate(value))
        elif keyword in _SCHEMA_MAPS_ALL and isinstance(value, dict):
            yield from ((item, join_pointer(here, name)) for name, item in value.items())


def refuse_embedded_fragment_references(schema: Schema) -> None:
    """Raise UnsupportedSchema for a `#...` reference inside an embedded resource (a
    subschema with its own `$id`, draft 4's `id`): validators resolve it against that
    resource, not the document root, and only the root is resolved here."""
    id_keyword = "id" if draft_name(schema) == "draft-04" else "$id"
    stack: list[tuple[Any, str, str | None]] = [(schema, "", None)]
    while stack:
        sub, pointer, resource = stack.pop()
        if not isinstance(sub, dict):
            continue
        if pointer and _embeds_resource(sub.get(id_keyword)):
            resource = pointer
        ref = sub.get("$ref")
        if resource is not None and isinstance(ref, str) and ref.startswith("#"):
            raise UnsupportedSchema(
                "$ref",
                join_pointer(pointer, "$ref"),
                f"{ref!r} lies inside the embedded resource at {resource} (its own {id_keyword!r}), so it names a"
                " part of that resource, not of the whole schema; move the definitions to the root's '$defs' and"
                f" remove the inner {id_keyword!r}",
            )
        stack.extend((child, where, resource) for child, where in _children(sub, pointer))


def _embeds_resource(identifier: Any) -> bool:
    """Whether an `$id` value starts a new resource: a URI, not only a fragment (`#name`)."""
    return isinstance(identifier, str) and bool(identifier.split("#", 1)[0])


# Keywords that apply their schemas to the value itself, not to a part of it.
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")


def refuse_reference_cycles(root: Schema) -> None:
    """Raise UnsupportedSchema (not relaxable) for a `$ref` that leads back to itself while
    staying on the same value (`$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`...): a validator
    follows such a cycle without end, so no document could ever be checked against it."""
    ref_only = ref_ignores_siblings(root)
    marks: dict[int, bool] = {}  # True while on the current path, False once finished
    for start, pointer in _subschemas(root):
        if "$ref" in start and id(start) not in marks:
            _walk_in_place(root, start, pointer, ref_only, marks)


def _walk_in_place(root: Schema, start: dict[str, Any], pointer: str, ref_only: bool, marks: dict[int, bool]) -> None:
    """Depth-first over the in-place edges from `start`, without recursion."""
    marks[id(start)] = True
    stack = [(start, _in_place(root, start, pointer, ref_only))]
    while stack:
        node, edges = stack[-1]
        edge = next(edges, None)
        if edge is None:
            marks[id(node)] = False
            stack.pop()
            continue
        sub, sub_pointer, via = edge
        if marks.get(id(sub)) is True:
            raise UnsupportedSchema(
                "$ref",
                via,
                f"leads back to {sub_pointer or '/'} without reaching a part of the value, so validators would follow it"
                " without end; make the cycle pass through properties or items",
                relaxable=False,
            )
        if id(sub) not in marks:
            marks[id(sub)] = True
            stack.append((sub, _in_place(root, sub, sub_pointer, ref_only)))


def _in_place(root: Schema, schema: dict[str, Any], pointer: str, ref_only: bool) -> Iterator[tuple[dict[str, Any], str, str]]:
    """(subschema, its pointer, the keyword's pointer) for each schema applied to the same value."""
    if isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#"):
        try:
            target, target_pointer = resolve_ref(root, schema["$ref"], join_pointer(pointer, "$ref"))
        except SchemaError:
            target = None  # refused where it is reached
        if isinstance(target, dict):
            yield target, target_pointer, join_pointer(pointer, "$ref")
        if ref_only:
            return
    for keyword in _IN_PLACE_ONE:
        if isinstance(schema.get(keyword), dict):
            yield schema[keyword], join_pointer(pointer, keyword), join_pointer(pointer, keyword)
    for keyword in _IN_PLACE_LISTS:
        for index, sub in enumerate(schema.get(keyword) or []):
            if isinstance(sub, dict):
                where = join_pointer(join_pointer(pointer, keyword), index)
                yield sub, where, where
