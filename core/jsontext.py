"""JSON values as JSON Schema sees them: equality, JSON-pointer parts, unescaped string
characters, how far references are followed, and a value's leaves with their pointers.

The one place these rules live (JSON-pointer escaping included: the review page's pointers are
joined here too, and its leaves, like those of a long document's merged value, walked here;
the leaves of JSON text with their byte ranges are read by core.json_reader).
It does not parse or validate anything; it imports nothing, so every room of core/ may
import it, automaton/ and schema/ alike.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Iterator, Mapping
from typing import Any

# References followed in a row (`$ref` to a schema that is itself only a `$ref`) before a
# chain is treated as a cycle: real schemas chain a few; a cycle would never end.
MAX_REF_HOPS = 32

# Code points a JSON string holds as themselves: everything but the C0 controls, the quote
# and the backslash (RFC 8259 section 7), as inclusive ranges.
UNESCAPED_RANGES: tuple[tuple[int, int], ...] = ((0x20, 0x21), (0x23, 0x5B), (0x5D, 0x10FFFF))
MUST_ESCAPE: tuple[int, ...] = (*range(0x20), 0x22, 0x5C)


def json_equal(first: Any, second: Any) -> bool:
    """Equality as JSON Schema defines it (`const`, `enum`, `uniqueItems`): numbers by
    value (1 == 1.0), booleans apart from numbers (true != 1, [true] != [1]), arrays item
    by item, objects by their members whatever the order."""
    if isinstance(first, bool) or isinstance(second, bool):
        return isinstance(first, bool) and isinstance(second, bool) and first is second
    if _is_number(first) or _is_number(second):
        return _is_number(first) and _is_number(second) and bool(first == second)
    if isinstance(first, list) or isinstance(second, list):
        return _equal_lists(first, second)
    if isinstance(first, dict) or isinstance(second, dict):
        return _equal_objects(first, second)
    return type(first) is type(second) and bool(first == second)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _equal_lists(first: Any, second: Any) -> bool:
    if not (isinstance(first, list) and isinstance(second, list)) or len(first) != len(second):
        return False
    return all(json_equal(a, b) for a, b in zip(first, second, strict=True))


def _equal_objects(first: Any, second: Any) -> bool:
    if not (isinstance(first, dict) and isinstance(second, dict)) or first.keys() != second.keys():
        return False
    return all(json_equal(value, second[key]) for key, value in first.items())


def json_key(value: Any) -> Hashable:
    """A hashable key equal for JSON-equal values and only for them (json_equal in constant
    time per lookup: enums of thousands of values are compared by hashing, not pairwise)."""
    if isinstance(value, bool):
        return ("boolean", value)
    if _is_number(value):
        return ("number", value)  # Python's 1 and 1.0 are equal and hash alike
    if isinstance(value, list):
        return ("array", tuple(json_key(item) for item in value))
    if isinstance(value, dict):
        return ("object", frozenset((name, json_key(item)) for name, item in value.items()))
    return (type(value).__name__, value)


def json_in(value: Any, values: Iterable[Any]) -> bool:
    """Whether `values` holds a value JSON-equal to `value`."""
    key = json_key(value)
    return any(json_key(other) == key for other in values)


def distinct_values(values: Iterable[Any]) -> list[Any]:
    """`values` with later JSON-equal duplicates left out, in order."""
    seen: set[Hashable] = set()
    kept: list[Any] = []
    for value in values:
        key = json_key(value)
        if key not in seen:
            seen.add(key)
            kept.append(value)
    return kept


def keep_values(values: Iterable[Any], allowed: Iterable[Any], keep: bool = True) -> list[Any]:
    """The `values` JSON-equal to one of `allowed` (with keep=False: to none of them), in order."""
    keys = {json_key(value) for value in allowed}
    return [value for value in values if (json_key(value) in keys) == keep]


def escaped_surrogates(text: str) -> str:
    """`text` with each lone surrogate written as its JSON escape, `\\udXXX`, so that it can
    be encoded as UTF-8 (a schema's strings may hold one: JSON text can escape it, `"\\ud800"`)."""
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_pointer_part(part: str) -> str:
    """One reference token of a JSON pointer (RFC 6901): `~` as `~0`, `/` as `~1`."""
    if "~" not in part and "/" not in part:  # nearly every name: compiling a schema joins thousands
        return part
    return part.replace("~", "~0").replace("/", "~1")


def unescape_pointer_part(part: str) -> str:
    """The name a JSON-pointer reference token stands for (`~1` before `~0`, as RFC 6901 says)."""
    return part.replace("~1", "/").replace("~0", "~")


def join_pointer(pointer: str, part: str | int) -> str:
    """`pointer` extended by one object member name or array index."""
    return f"{pointer}/{escape_pointer_part(part if isinstance(part, str) else str(part))}"


# A value's place in a JSON document, kept while walking it without writing each pointer out:
# None for the root, else (its parent's place, its name or index).
Place = tuple[Any, str | int] | None


def place_pointer(place: Place) -> str:
    """The JSON pointer of `place`."""
    parts: list[str] = []
    while place is not None:
        place, part = place
        parts.append(escape_pointer_part(str(part)))
    return "".join(f"/{part}" for part in reversed(parts))


def json_leaves(value: Any, pointer: str = "") -> Iterator[tuple[str, Any]]:
    """Every leaf of a JSON value (all but objects and arrays: here a Mapping, a list or a tuple),
    with its JSON pointer below `pointer`, in document order. What a leaf is, is not checked:
    any other value is one (an annotated leaf, or something that is no JSON value at all)."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from json_leaves(item, join_pointer(pointer, str(key)))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from json_leaves(item, join_pointer(pointer, index))
    else:
        yield pointer, value
