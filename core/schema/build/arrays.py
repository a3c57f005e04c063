"""Arrays as regex trees: items (or positional items and the rest) within minItems and
maxItems, uniqueItems over a finite set of item values, and arrays that must hold an item of
a schema (a `not` of `items` folded as a complement)."""

from __future__ import annotations

from dataclasses import replace

from ...automaton.regex import Node, json_literal, lit
from ...errors import SchemaError, UnsupportedSchema
from ...jsontext import join_pointer
from ..nodes.schema_node import ArrayNode, SchemaNode, conjoin
from ..refusals import DepthCut
from ..work_limits import MAX_OBJECT_NODES
from .protocol import Build
from .trees import MAX_CONTAINING_COUNT, array_of, containing_array, holding_two, object_nodes, object_of, tuple_array
from .values import finite_texts


def array_tree(build: Build, node: SchemaNode) -> Node:
    """The arrays `node` allows."""
    array = node.array or ArrayNode(node.pointer, frozenset())
    while True:
        tree = _array_node(build, array)
        problem = build.floor.problem(tree)
        if problem is None:
            return tree
        build.refuse("minItems", join_pointer(array.pointer, "minItems"), f"{problem}; lower minItems")
        array = replace(array, min_items=0)


def _array_node(build: Build, array: ArrayNode) -> Node:
    low, high = array.min_items, array.max_items
    pointer = array.pointer
    if high is not None and low > high:
        raise SchemaError(f"minItems exceeds maxItems at {pointer or '/'}")
    if array.unique and array.contains:
        # Distinct values are built from the item values alone: an item the array must also hold
        # (a negated items schema's) would be left out. Refused by name; lenient: left out.
        where = join_pointer(array.pointer, array.rest_keyword)
        reason = "an array that must hold an item failing an items schema, beside uniqueItems, cannot be built"
        build.refuse("items", where, reason)
        array = replace(array, contains=())
    if array.unique:
        tree = _unique_array(build, array)
        if tree is not None:
            return tree
        array = replace(array, unique=False)  # refused, and lenient: left out
    if array.contains:
        tree = _containing(build, array)
        if tree is not None:
            return tree
        array = replace(array, contains=())  # refused, and lenient: left out
    rest = array.items
    if array.prefix is not None:
        heads = [build.value(sub) for sub in array.prefix[:high]]
        tail = None if rest.is_false() else build.value(rest)
        if tail is None and low > len(heads):
            raise SchemaError(f"minItems {low} exceeds the {len(heads)} items allowed at {pointer or '/'}")
        return tuple_array(heads, tail, low, high)
    if rest.is_false():
        if low > 0:
            raise SchemaError(f"items is false but minItems > 0 at {pointer or '/'}")
        return lit("[]")
    try:
        item = build.value(rest)
    except UnsupportedSchema:
        raise
    except (DepthCut, SchemaError):
        if low > 0:
            raise
        return lit("[]")  # items past the recursion depth, or with no valid value: only the empty array
    return array_of(item, low, high)


def _containing(build: Build, array: ArrayNode) -> Node | None:
    """Arrays of `items` holding, for each `contains` schema, an item that meets it too (one item
    may meet both of two). None when refused (lenient): beside positional items or uniqueItems,
    with counts that bind beyond MAX_CONTAINING_COUNT, or (for two) that bind at all, or more
    than two."""
    low, high = array.min_items, array.max_items
    binding = high if high is not None else low
    two = len(array.contains) == 2 and high is None and low <= 1
    built = len(array.contains) == 1 or two
    if array.prefix is not None or array.unique or binding > MAX_CONTAINING_COUNT or not built:
        where = join_pointer(array.pointer, array.rest_keyword)
        reason = "an array that must hold items failing items schemas, beside positional items or uniqueItems, with"
        counted = f"more than {MAX_CONTAINING_COUNT} items counted, or more than one binding"
        build.refuse("items", where, f"{reason} {counted}, cannot be built")
        return None
    item = build.value(array.items)
    contained = [build.value(conjoin(array.items, sub, array.pointer)) for sub in array.contains]
    if len(contained) == 1:
        return containing_array(item, contained[0], low, high)
    both = conjoin(conjoin(array.items, array.contains[0], array.pointer), array.contains[1], array.pointer)
    try:
        one_for_both: Node | None = build.value(both)
    except UnsupportedSchema:
        raise
    except SchemaError:  # no item meets both: each is held by an item of its own
        one_for_both = None
    return holding_two(item, contained[0], contained[1], one_for_both)


def _unique_array(build: Build, array: ArrayNode) -> Node | None:
    """uniqueItems over a finite item set: each value at most once, in the listed order
    (a subset of the valid arrays, all of them unique). None when refused (lenient)."""
    low, high = array.min_items, array.max_items
    where = join_pointer(array.pointer, "uniqueItems")
    values = None if array.prefix is not None else finite_texts(build, array.items)
    if values is None:
        build.refuse("uniqueItems", where, "only arrays whose items are enum, const, boolean or null values")
        return None
    members: list[tuple[Node, bool]] = [(json_literal(text), False) for text in values]
    if object_nodes(members, low, high) > MAX_OBJECT_NODES:
        reason = f"{len(values)} distinct values with minItems/maxItems need more than {MAX_OBJECT_NODES} automaton nodes"
        build.refuse("uniqueItems", where, reason)
        return None
    build.fuel.burn(array.pointer, "member", object_nodes(members, low, high))
    try:
        return object_of(members, low, high, brackets=("[", "]"))
    except SchemaError:
        raise SchemaError(f"no array of distinct values at {array.pointer or '/'} has between {low} and {high} items") from None
