"""Conjunction of typed nodes: `allOf`, keywords beside `$ref` (from 2019-09), and the
branches of `anyOf`/`oneOf` with the keywords beside them.

Two nodes are merged kind by kind into one node that accepts exactly the values both accept:
types intersect, bounds and counts tighten, patterns and required names add up, property
schemas conjoin per name (a side's patternProperties and additionalProperties standing in
for names it does not declare), anyOf unions multiply out, dependencies and `not`s add up.
Subschemas are conjoined as Subs and merged only when compiled, so recursive schemas stay
finite. Two different oneOf: the second as the anyOf it means (each branch and not the others).
A pair with no exact merge (two formats, two multipleOf, tuples) is refused naming the keyword;
a pair that no value satisfies is a SchemaError.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

from ...errors import SchemaError, UnsupportedSchema
from ...jsontext import MAX_REF_HOPS, distinct_values, join_pointer, json_key, keep_values
from ..work_limits import Fuel
from .schema_document import SchemaDocument, tighter
from .schema_node import ArrayNode, NumberNode, ObjectNode, Reference, SchemaNode, StringNode, Sub, UnionNode, Values, conjoin

MAX_BRANCHES = 64  # anyOf x anyOf products beyond this are refused, not enumerated
Resolved = SchemaNode | bool
Kind = TypeVar("Kind", StringNode, NumberNode, ArrayNode, ObjectNode, Values)


class Conjunction:
    """Merges nodes of one document at `pointer` (where a refusal is reported), spending
    one unit of `fuel` per pair; `refs` lists the references followed, so the caller can
    count recursion."""

    def __init__(self, document: SchemaDocument, fuel: Fuel, pointer: str) -> None:
        self.document = document
        self.fuel = fuel
        self.pointer = pointer
        self.refs: list[Reference] = []

    def refuse(self, keyword: str, reason: str) -> None:
        self.document.refusals.refuse(UnsupportedSchema(keyword, join_pointer(self.pointer, keyword), reason))

    def resolve(self, sub: Sub) -> Resolved:
        """The one plain node (no `$ref`, no `allOf`) that `sub` amounts to."""
        return self.expand(self.all_of(sub.parts))

    def all_of(self, parts: Iterable[str | bool | SchemaNode]) -> Resolved:
        merged: Resolved = True
        for part in parts:
            merged = self.pair(merged, part)
        return merged

    def part(self, part: str | bool | SchemaNode) -> Resolved:
        return self.document.node(part) if isinstance(part, str) else part

    def pair(self, first: str | bool | SchemaNode, second: str | bool | SchemaNode) -> Resolved:
        one, other = self.part(first), self.part(second)
        if one is True or other is True:
            return other if one is True else one
        one, other = self.expand(one), self.expand(other)
        if one is False or other is False:
            return False
        if one is True or other is True or one is other:  # a schema and itself is that schema
            return other if one is True else one
        return self.merge(one, other)

    def expand(self, node: Resolved) -> Resolved:
        """`node` with its own `$ref` and `allOf` folded in, so only plain keywords remain."""
        for _ in range(MAX_REF_HOPS):
            if isinstance(node, bool) or node.is_plain():
                return node
            if node.ref is not None:
                self.refs.append(node.ref)
                target = self.document.node(node.ref.target)
                rest = node.without(ref=None)
                node = self.pair(target, rest) if rest.keywords() else target
            else:
                rest = node.without(all_of=())
                return self.all_of((rest, *(part for sub in node.all_of for part in sub.parts)))
        self.refuse("$ref", "references nest too deeply to merge (recursive?)")
        return node.without(ref=None, all_of=()) if isinstance(node, SchemaNode) else node

    def merge(self, first: SchemaNode, second: SchemaNode) -> SchemaNode:
        """Two plain nodes as one (a unit of compile work)."""
        self.fuel.burn(self.pointer, "merge")
        if first.object is not None and second.object is not None:
            self.fuel.burn(self.pointer, "member", len(first.object.properties) + len(second.object.properties))
        return SchemaNode(
            self.pointer,
            types=self._types(first.types, second.types),
            string=_both(first.string, second.string, self._strings),
            number=_both(first.number, second.number, self._numbers),
            array=_both(first.array, second.array, self._arrays),
            object=_both(first.object, second.object, self._objects),
            values=_both(first.values, second.values, self._values),
            excluded=tuple(distinct_values([*first.excluded, *second.excluded])),
            any_of=self._any_of(self._any_of(first.any_of, second.any_of), self._exclusive(first.one_of, second.one_of)),
            one_of=first.one_of or second.one_of,
            nots=(*first.nots, *second.nots),
            grounded=_grounded(first.grounded, second.grounded),
        )

    def _types(self, first: tuple[str, ...] | None, second: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if first is None or second is None:
            return second if first is None else first
        both = set(first) & set(second)
        if ("integer" in first and "number" in second) or ("number" in first and "integer" in second):
            both.add("integer")
        if not both:
            raise SchemaError(
                f"allOf at {self.pointer or '/'} requires types {sorted(first)} and {sorted(second)} at once: nothing matches"
            )
        return tuple(sorted(both))

    def _values(self, first: Values, second: Values) -> Values:
        kept = keep_values(first.items, second.items)
        if not kept:
            raise SchemaError(f"allOf at {self.pointer or '/'} requires enum/const values no list shares: nothing matches")
        return Values(first.pointer, tuple(kept), first.keywords | second.keywords)

    def _strings(self, first: StringNode, second: StringNode) -> StringNode:
        form = first.format or second.format
        if first.format is not None and second.format is not None and first.format != second.format:
            self.refuse("format", "two different 'format' values cannot be merged exactly")
            form = None
        patterns = {pattern.source: pattern for pattern in (*first.patterns, *second.patterns)}
        unmatched = {pattern.source: pattern for pattern in (*first.unmatched, *second.unmatched)}
        return StringNode(
            self.pointer,
            first.keywords | second.keywords,
            max(first.min_length, second.min_length),
            _smaller(first.max_length, second.max_length),
            tuple(patterns.values()),
            form,
            tuple(unmatched.values()),
        )

    def _numbers(self, first: NumberNode, second: NumberNode) -> NumberNode:
        divisor = first.multiple_of if second.multiple_of is None else second.multiple_of
        if first.multiple_of is not None and second.multiple_of is not None and first.multiple_of != second.multiple_of:
            self.refuse("multipleOf", "two different 'multipleOf' values cannot be merged exactly")
            divisor = None
        return NumberNode(
            self.pointer,
            first.keywords | second.keywords,
            tighter(first.minimum, second.minimum, True),
            tighter(first.maximum, second.maximum, False),
            divisor,
            first.fraction or second.fraction,
        )

    def _arrays(self, first: ArrayNode, second: ArrayNode) -> ArrayNode:
        item_keywords = {"items", "prefixItems", "additionalItems"}
        tuple_side = first if first.prefix is not None else second
        prefix, prefix_keyword, rest_keyword = tuple_side.prefix, tuple_side.prefix_keyword, tuple_side.rest_keyword
        rest = _conjoined(first.rest, second.rest)
        if item_keywords & first.keywords and item_keywords & second.keywords and prefix is not None:
            # Positional item schemas would have to meet the other side's per-position schema.
            self.refuse("prefixItems", "tuple arrays cannot be merged with other array schemas yet")
            prefix, prefix_keyword, rest, rest_keyword = None, "", None, "items"
        contains = tuple({sub.key: sub for sub in (*first.contains, *second.contains)}.values())
        return ArrayNode(
            self.pointer,
            first.keywords | second.keywords,
            prefix,
            prefix_keyword,
            rest,
            rest_keyword,
            max(first.min_items, second.min_items),
            _smaller(first.max_items, second.max_items),
            first.unique or second.unique,
            contains,
        )

    def _objects(self, first: ObjectNode, second: ObjectNode) -> ObjectNode:
        """A name declared on one side meets the other side's schema for it (see
        constraint). Pattern schemas stay patterns when the other side's
        additionalProperties is true (exact then); otherwise that merge is refused."""
        first_patterns, second_patterns = first.patterns, second.patterns
        if first_patterns and not second.extra.is_true():
            self.refuse("patternProperties", "cannot be merged with a schema whose additionalProperties is not true")
            first_patterns = ()
        if second_patterns and not first.extra.is_true():
            self.refuse("patternProperties", "cannot be merged with a schema whose additionalProperties is not true")
            second_patterns = ()
        names = dict.fromkeys([name for name, _ in (*first.properties, *second.properties)])
        properties = tuple((name, conjoin(self.constraint(first, name), self.constraint(second, name))) for name in names)
        patterns: dict[str, Sub] = dict(first_patterns)
        for pattern, sub in second_patterns:
            patterns[pattern] = conjoin(patterns[pattern], sub) if pattern in patterns else sub
        extra = conjoin(first.extra, second.extra)
        return ObjectNode(
            self.pointer,
            first.keywords | second.keywords,
            properties=properties,
            required=tuple(dict.fromkeys((*first.required, *second.required))),
            additional=None if extra.is_true() else extra,
            patterns=tuple(patterns.items()),
            names=_conjoined(first.names, second.names),
            min_properties=max(first.min_properties, second.min_properties),
            max_properties=_smaller(first.max_properties, second.max_properties),
            dependent_names=(*first.dependent_names, *second.dependent_names),
            dependent_schemas=(*first.dependent_schemas, *second.dependent_schemas),
        )

    def constraint(self, node: ObjectNode, name: str) -> Sub:
        """What `node` requires of property `name`'s value: its declared schema and every
        patternProperties schema whose pattern finds the name (validators use re.search),
        else additionalProperties."""
        declared = node.declared(name)
        matching = [sub for pattern, sub in node.patterns if self._finds(pattern, name)]
        if declared is None and not matching:
            return node.extra
        parts = ([declared] if declared is not None else []) + matching
        merged = parts[0]
        for sub in parts[1:]:
            merged = conjoin(merged, sub)
        return merged

    def _finds(self, pattern: str, name: str) -> bool:
        try:
            return re.search(pattern, name) is not None
        except re.error as error:
            self.refuse("patternProperties", f"{pattern!r}: {error}")
            return False

    def _any_of(self, first: UnionNode | None, second: UnionNode | None) -> UnionNode | None:
        if first is None or second is None:
            return second if first is None else first
        if self._content(first) == self._content(second):
            return first  # (A or B) and (A or B) is A or B
        if len(first.branches) * len(second.branches) > MAX_BRANCHES:
            self.refuse("anyOf", f"merging would need more than {MAX_BRANCHES} branches")
            return None
        branches = tuple(branch for a in first.branches for b in second.branches if (branch := self._both(a, b)) is not None)
        if not branches:
            raise SchemaError(f"allOf at {self.pointer or '/'} requires two anyOf that no value meets at once: nothing matches")
        return UnionNode(first.pointer, branches, exclusive=False)

    def _both(self, first: Sub, second: Sub) -> Sub | None:
        """One branch of an anyOf product, merged now (the references it follows count for
        the whole merge, so a recursive product stops within the recursion depth); None when
        no value meets both."""
        try:
            merged = self.resolve(conjoin(first, second, first.pointer))
        except UnsupportedSchema:
            raise
        except SchemaError:
            return None
        if merged is False:
            return None
        return Sub(() if merged is True else (merged,), first.pointer)

    def _exclusive(self, first: UnionNode | None, second: UnionNode | None) -> UnionNode | None:
        """Where both sides hold a oneOf, and they differ, the second as the anyOf it means:
        each branch with `not` of every other (the first stays the node's oneOf)."""
        if first is None or second is None or self._content(first) == self._content(second):
            return None
        branches = second.branches
        return UnionNode(
            second.pointer,
            tuple(
                Sub((*branch.parts, _none_of(second.pointer, branches, index)), branch.pointer)
                for index, branch in enumerate(branches)
            ),
            exclusive=False,
        )

    def _content(self, union: UnionNode) -> Hashable:
        """Equal for branches written alike (wherever they are written: references are to
        the one root), and for the same made nodes."""
        return tuple(
            tuple(
                json_key(self.document.raw(part)) if isinstance(part, str) else part if isinstance(part, bool) else id(part)
                for part in branch.parts
            )
            for branch in union.branches
        )


def _none_of(pointer: str, branches: tuple[Sub, ...], index: int) -> SchemaNode:
    """A made node: none of the oneOf `branches` but the one at `index` (each negated as a oneOf
    branch, so a refusal names the oneOf: core/schema/build/negation.py)."""
    others = [Sub(branch.parts, join_pointer(pointer, str(other))) for other, branch in enumerate(branches) if other != index]
    return SchemaNode(pointer, nots=tuple(others))


def _both(first: Kind | None, second: Kind | None, merge: Callable[[Kind, Kind], Kind]) -> Kind | None:
    if first is None or second is None:
        return second if first is None else first
    return merge(first, second)


def _grounded(first: bool | None, second: bool | None) -> bool | None:
    """`x-grounded` of a merge: an opt-out on either side holds, else an opt-in."""
    if first is False or second is False:
        return False
    return True if first or second else None


def _smaller(first: int | None, second: int | None) -> int | None:
    if first is None or second is None:
        return second if first is None else first
    return min(first, second)


def _conjoined(first: Sub | None, second: Sub | None) -> Sub | None:
    if first is None or second is None:
        return second if first is None else first
    return conjoin(first, second)
