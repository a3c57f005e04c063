"""Reading a schema: JSON parsing, the meta-schema check, and the refusal of references that
cycle without reaching a part of the value (where a reference leads: resources.py)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ...errors import SchemaError, UnsupportedSchema
from ...jsontext import Place, join_pointer, place_pointer
from .meta_hint import meta_schema_hint
from .resources import Resources
from .validation import meta_schema_error, ref_ignores_siblings

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
            hint=meta_schema_hint(schema, error),
        )
    return schema  # type: ignore[no-any-return]


def _check_values(schema: Any, source: str) -> None:
    """Refuse what no later step could handle: nesting beyond MAX_SCHEMA_DEPTH, NaN or
    infinity, integers beyond MAX_SCHEMA_INTEGER_DIGITS digits (checked iteratively, before
    anything recursive reads the schema). Each value's place is kept as a link to its
    parent's, and written out as a JSON pointer only for the value refused."""
    stack: list[tuple[Any, Place, int]] = [(schema, None, 0)]
    while stack:
        item, place, depth = stack.pop()
        if depth > MAX_SCHEMA_DEPTH:
            raise SchemaError(
                f"{source} nests objects and arrays more than {MAX_SCHEMA_DEPTH} levels deep"
                f" (at {_shortened(place_pointer(place))})",
                hint="flatten deeply nested sub-schemas with $defs and $ref",
            )
        if isinstance(item, dict | list):
            pairs: Iterable[tuple[str | int, Any]] = item.items() if isinstance(item, dict) else enumerate(item)
            if depth >= MAX_SCHEMA_DEPTH:  # any child is too deep: each is checked as it comes
                stack.extend((child, (place, key), depth + 1) for key, child in pairs)
            else:  # most values are strings and small numbers, which pass: only the others are checked
                stack.extend((child, (place, key), depth + 1) for key, child in pairs if _to_check(child))
        elif isinstance(item, float) and not math.isfinite(item):
            raise SchemaError(
                f"{source} holds a number JSON cannot write (NaN or infinity) at {place_pointer(place) or '/'}",
                hint="use a finite number",
            )
        elif isinstance(item, int) and not isinstance(item, bool) and _too_many_digits(item):
            raise SchemaError(
                f"{source} holds an integer of more than {MAX_SCHEMA_INTEGER_DIGITS} digits at {place_pointer(place) or '/'}",
                hint="use a shorter number",
            )


def _shortened(pointer: str, keep: int = 60) -> str:
    return pointer if len(pointer) <= keep else pointer[:keep] + "..."


def _to_check(value: Any) -> bool:
    """Whether `value` is one _check_values must look at (or into), within the depth: an object,
    an array, a float, or an integer that may be too long."""
    if isinstance(value, str | bool) or value is None:
        return False
    return not isinstance(value, int) or _too_many_digits(value)


def _too_many_digits(number: int) -> bool:
    # 10**k has about k / log10(2) bits: compare bit lengths, never convert the number to text.
    return abs(number).bit_length() > MAX_SCHEMA_INTEGER_DIGITS * 3.3219280948873626


# Keywords that apply their schemas to the value itself, not to a part of it.
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")


def refuse_reference_cycles(root: Schema, resources: Resources | None = None) -> None:
    """Raise UnsupportedSchema (not relaxable) for a `$ref` that leads back to itself while
    staying on the same value (`$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`...): a validator
    follows such a cycle without end, so no document could ever be checked against it.
    `resources`: the root's, when already read."""
    resources = Resources(root) if resources is None else resources
    if not resources.references_written:
        return
    ref_only = ref_ignores_siblings(root)
    marks: dict[int, bool] = {}  # True while on the current path, False once finished
    for start, pointer in resources.every_subschema():
        if "$ref" in start and id(start) not in marks:
            _walk_in_place(resources, start, pointer, ref_only, marks)


def _walk_in_place(resources: Resources, start: dict[str, Any], pointer: str, ref_only: bool, marks: dict[int, bool]) -> None:
    """Depth-first over the in-place edges from `start`, without recursion."""
    marks[id(start)] = True
    stack = [(start, _in_place(resources, start, pointer, ref_only))]
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
            stack.append((sub, _in_place(resources, sub, sub_pointer, ref_only)))


def _in_place(
    resources: Resources, schema: dict[str, Any], pointer: str, ref_only: bool
) -> Iterator[tuple[dict[str, Any], str, str]]:
    """(subschema, its pointer, the keyword's pointer) for each schema applied to the same value."""
    if "$ref" in schema:
        try:
            target, target_pointer = resources.resolve(schema["$ref"], join_pointer(pointer, "$ref"))
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
