"""Regex-tree shapes of JSON values in the canonical layout: arrays, tuples, objects with
declared or generated keys, and any value. Pure functions of their parts; the per-kind
builders decide what the parts are.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ...automaton.measure import keep_shortest_generated, shortest_generated
from ...automaton.regex import EMPTY, AnyOrder, Either, Node, Repeat, alt, lit, optional, seq
from ...errors import SchemaError
from ..lexical.scalars import number_node, string_node

GENERIC_DEPTH = 2  # nesting allowed inside objects or arrays whose contents are unconstrained
# Nesting accepted inside values only accepted, never generated (undeclared properties): a
# document from elsewhere nests deeper than a generator needs to, and an automaton needs a bound.
ACCEPTED_DEPTH = 8


def tuple_array(heads: list[Node], tail: Node | None, low: int, high: int | None) -> Node:
    """`[` positional items, then any number of `tail` items (None: no more), within the bounds.

    Built from the end: element i may be the last one only when i >= low."""
    count = len(heads)
    if tail is None:
        after: Node = EMPTY
    else:
        extra_high = None if high is None else max(high - count, 0)
        after = Repeat(seq(lit(", "), tail), max(low - count, 0), extra_high)
    for index in range(count - 1, -1, -1):
        separator = lit(", ") if index else EMPTY
        present = seq(separator, heads[index], after)
        after = present if index < low else alt(present, EMPTY)
    return seq(lit("["), after, lit("]"))


def array_of(item: Node, low: int, high: int | None) -> Node:
    """`[` items separated by `", "` `]`, between low and high items."""
    following = seq(lit(", "), item)
    if high == 0:
        return lit("[]")
    tail_high = None if high is None else high - 1
    non_empty = seq(item, Repeat(following, max(low - 1, 0), tail_high))
    body = non_empty if low > 0 else optional(non_empty)
    return seq(lit("["), body, lit("]"))


def object_of(
    members: list[tuple[Node, bool]],
    min_count: int = 0,
    max_count: int | None = None,
    brackets: tuple[str, str] = ("{", "}"),
    undeclared: Callable[[], Node] | None = None,
    names: tuple[tuple[str, int], ...] | None = None,
) -> Node:
    """`{` members in order, optional ones skippable, `", "` between those present, `}`,
    with between `min_count` and `max_count` members present. Where the counts do not bind,
    the members in any order too, with any number of undeclared ones (a member with a key no
    declared member has; `undeclared` makes it, when first needed) among them, accepted but never generated (Either, AnyOrder;
    `names`: the members' names, see AnyOrder.names).

    Built from the end, one shared tail per (member, members written so far), where the
    count saturates at the largest value that still matters; so the tree stays linear in
    the number of properties times that count. A missing tail means no way to finish."""
    min_count, max_count = count_bounds(members, min_count, max_count)
    if min_count > len(members):
        raise SchemaError("no object satisfies the property count bounds")
    cap = max(min_count, 1) if max_count is None else max_count
    tails: list[Node | None] = [
        EMPTY if min_count <= c <= (cap if max_count is not None else c) else None for c in range(cap + 1)
    ]
    for member, required in reversed(members):
        following: list[Node | None] = []
        for written in range(cap + 1):
            after = tails[min(written + 1, cap)] if written + 1 <= cap or max_count is None else None
            present = None if after is None else seq(lit(", ") if written else EMPTY, member, after)
            absent = None if required else tails[written]
            options = [o for o in (present, absent) if o is not None]
            following.append(alt(*options) if options else None)
        tails = following
    body = tails[0]
    if body is None:
        raise SchemaError("no object satisfies the property count bounds")
    if (min_count, max_count) == (0, None):  # counts that bind would need counting: a departure
        _keep_shortest(body, [member for member, required in members if required])
        needed = frozenset(index for index, (_, is_required) in enumerate(members) if is_required)
        body = Either(body, AnyOrder(tuple(member for member, _ in members), needed, undeclared, names))
    return seq(lit(brackets[0]), body, lit(brackets[1]))


def _keep_shortest(body: Node, required: list[Node]) -> None:
    """The fewest bytes of `body` (object_of's members, counts not binding), kept on it: the
    required members, `", "` between them, every optional one left out (each only adds bytes).
    So the generator's measure reads the members and not the tails between them."""
    fewest = [shortest_generated(member) for member in required]
    if all(value is not None for value in fewest):
        keep_shortest_generated(body, sum(value for value in fewest if value is not None) + 2 * max(len(fewest) - 1, 0))


def count_bounds(members: list[tuple[Node, bool]], min_count: int, max_count: int | None) -> tuple[int, int | None]:
    """The count bounds that bind: a minimum the required members meet anyway is 0, and a
    maximum no object can exceed (at least as many as the members) is None."""
    if min_count <= sum(required for _, required in members):
        min_count = 0
    if max_count is not None and max_count >= len(members):
        max_count = None
    return min_count, max_count


def object_nodes(members: list[tuple[Node, bool]], min_count: int = 0, max_count: int | None = None) -> int:
    """How many tails object_of builds: one per member and count that still matters."""
    min_count, max_count = count_bounds(members, min_count, max_count)
    cap = min(max(min_count, 1) if max_count is None else max_count, len(members) + 1)  # more is unsatisfiable
    return len(members) * (cap + 1)


def generic_object(value: Node, min_count: int = 0, max_count: int | None = None, key: Node | None = None) -> Node:
    """An object with string keys (any, or those `key` matches) whose values match `value`,
    at most `max_count` members (a repeated key only lowers the count, so the bound stays exact)."""
    member = seq(key or string_node(), lit(": "), value)
    if max_count == 0:
        return lit("{}")
    rest = Repeat(seq(lit(", "), member), 0, None if max_count is None else max_count - 1)
    body = seq(member, rest)
    return seq(lit("{"), body if min_count > 0 else optional(body), lit("}"))


@functools.cache
def free_value(depth: int) -> Node:
    """Any JSON value, generated nesting at most `depth` levels and accepted (by the automaton
    taking every valid text) nesting up to ACCEPTED_DEPTH."""
    return Either(any_value(depth), any_value(max(depth, ACCEPTED_DEPTH - 1)))


@functools.cache
def any_value(depth: int) -> Node:
    """Any JSON value, with objects and arrays nested at most `depth` levels."""
    scalars = [lit("null"), lit("true"), lit("false"), number_node(), string_node()]
    if depth <= 0:
        return alt(*scalars)
    inner = any_value(depth - 1)
    return alt(*scalars, array_of(inner, 0, None), generic_object(inner))


MAX_CONTAINING_COUNT = 32  # item counts a containing array spells out, one branch each


def containing_array(item: Node, contained: Node, low: int, high: int | None) -> Node:
    """`[` items separated by `", "` `]`, between low and high of them, one of which at least is
    a `contained` (an item too). One branch per count of items before the first `contained` one
    where the counts bind (the caller keeps them within MAX_CONTAINING_COUNT)."""
    if high is not None and (high < 1 or low > high):
        raise SchemaError("no array holds the item it must within its item counts")
    before = seq(item, lit(", "))
    after = seq(lit(", "), item)
    low = max(low, 1)
    if low == 1 and high is None:
        body = seq(Repeat(before, 0, None), contained, Repeat(after, 0, None))
    else:
        last = high if high is not None else low
        options = []
        for ahead in range(last):
            fewest = max(low - 1 - ahead, 0)
            most = None if high is None else high - 1 - ahead
            options.append(seq(Repeat(before, ahead, ahead), contained, Repeat(after, fewest, most)))
        if high is None:  # more than `low - 1` items ahead: any number after
            options.append(seq(Repeat(before, low, None), contained, Repeat(after, 0, None)))
        body = alt(*options)
    return seq(lit("["), body, lit("]"))


def holding_two(item: Node, first: Node, second: Node, both: Node | None) -> Node:
    """`[` items separated by `", "` `]`, one of which at least is a `first` and one a `second`
    (`both` is an item that is both; None: no item is): any number of items, one at least."""
    before = Repeat(seq(item, lit(", ")), 0, None)
    after = Repeat(seq(lit(", "), item), 0, None)
    apart = [seq(one, after, lit(", "), other) for one, other in ((first, second), (second, first))]
    return seq(lit("["), before, alt(*([both] if both is not None else []), *apart), after, lit("]"))
