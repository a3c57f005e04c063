"""Whether an array item copies earlier ones: JSON values compared as values, not as text.

The repetition guard (core.decode.repetition) judges a previewed or finished item by these: the
same value however spaced or ordered, `true` never `1`; an object each of whose fields equals
the same field of one earlier item (the item again, or with fewer fields); a partly written
object by the fields it has completed.
"""

from __future__ import annotations

import json

MISSING = object()  # what `parsed` gives for text that is not one whole JSON value


def parsed(item: bytes) -> object:
    """An item's JSON value (`MISSING` where its text is not one whole value)."""
    try:
        return json.loads(item)
    except ValueError:
        return MISSING


def same_value(a: object, b: object) -> bool:
    """JSON equality: as `==`, but `true` is not `1`, nor `1` `"1"`, and key order is ignored."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def copies_fields(fields: dict[str, object], earlier: list[object]) -> bool:
    """Whether each of `fields` equals the same field of one earlier item (an object): the
    item again, or with fewer fields (`{"name": "john"}` after `{"name": "john", "email": "j@x.org"}`).
    Fields taken from several items (`Bob, maintainer` after `Alice, maintainer` and `Bob,
    reviewer`) are no copy: a record pairing values met before is often what the document says."""
    return any(
        isinstance(item, dict) and all(key in item and same_value(value, item[key]) for key, value in fields.items())
        for item in earlier
    )


def copies_items(item: object, earlier: list[object]) -> bool:
    """Whether `item` copies an item already written: it equals one, or it is an object with at
    least one field, each equal to the same field of one of them (`copies_fields`)."""
    if item is MISSING:
        return False
    if any(same_value(item, other) for other in earlier):
        return True
    return isinstance(item, dict) and bool(item) and copies_fields(item, earlier)


def closed_item(text: bytes) -> object:
    """An object item written up to a complete value of its last field, as closing it there
    would make it (`{"a": "x"` gives {"a": "x"}); `MISSING` where no `}` would close it so."""
    return parsed(text + b"}") if text[:1] == b"{" else MISSING


def written_fields(text: bytes) -> dict[str, object]:
    """The fields of a partly written object item whose values are complete: those before the
    last comma at the object's own level (`{"a": "x", "b": [1, 2], "c": "ab` gives a and b).
    Empty where `text` is no object, or holds no complete field yet."""
    if text[:1] != b"{":
        return {}
    depth, in_string, escaped, last_comma = 0, False, False, -1
    for at, byte in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in b"{[":
            depth += 1
        elif byte in b"}]":
            depth -= 1
        elif byte == 0x2C and depth == 1:
            last_comma = at
    if last_comma < 0:
        return {}
    found = parsed(text[:last_comma] + b"}")
    return found if isinstance(found, dict) else {}
