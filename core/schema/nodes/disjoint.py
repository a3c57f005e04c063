"""Making `oneOf` branches exclusive, so that `oneOf` can be compiled as `anyOf`.

`oneOf` needs every generated value to match exactly one branch. For each ordered pair of
branches (i, j) the values generated for i must fail j, by one of three sound arguments:
- kinds: i generates only kinds of JSON value that j rejects (e.g. strings vs objects);
- listed values: i generates listed values (enum/const), and the validator says which of
  them j accepts; i then leaves those out. Or j accepts only listed values, and the
  validator says which of them i accepts; i leaves those out;
- a discriminator: i requires a property whose allowed values j's schema for it rejects;
- a required property: j requires a property i does not, and i is told never to write it.
The last two change what i generates (fewer documents, never invalid ones). Where no argument
is found for a pair, i is given `not j` (folded as a complement when built, or refused naming
the `oneOf` where j cannot be negated: core/schema/build/negation.py). Branches are merged
typed nodes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...jsontext import MAX_REF_HOPS, keep_values
from .schema_document import SchemaDocument
from .schema_node import SchemaNode, Sub, generated_types

ALL_KINDS = frozenset({"null", "boolean", "integer", "fraction", "string", "array", "object"})
TYPE_KINDS = {
    "null": {"null"},
    "boolean": {"boolean"},
    "integer": {"integer"},
    "number": {"integer", "fraction"},
    "string": {"string"},
    "array": {"array"},
    "object": {"object"},
}
Branch = SchemaNode | bool
Accepts = Callable[[Branch, Any], "bool | None"]


@dataclass
class Separation:
    """What each oneOf branch must leave out: properties it must not write, listed values
    (enum/const) it must not produce because another branch accepts them too, and the other
    branches (by position) whose values it must not produce, where no argument above holds."""

    properties: list[list[str]]
    values: list[list[Any]]
    negated: list[list[int]]


def exclusions(document: SchemaDocument, branches: list[Branch], accepts: Accepts) -> Separation:
    """How to keep each generated value inside exactly one branch; `accepts(branch, value)`
    is the validator's verdict (None when it cannot tell)."""
    separation = Separation([[] for _ in branches], [[] for _ in branches], [[] for _ in branches])
    # What each branch generates and accepts is read once, not once for each pair: a oneOf of
    # n branches makes n * (n - 1) pairs.
    facts = [_BranchFacts(document, branch) for branch in branches]
    for i, first in enumerate(facts):
        for j, second in enumerate(facts):
            if i != j and not _separated(first, second, accepts, separation, i):
                separation.negated[i].append(j)
    return separation


class _BranchFacts:
    """One oneOf branch, with what the pairwise arguments read of it, each read once and
    when first asked for: in the order the pairs ask, so a reference that leads nowhere is
    met (and raised) exactly where reading each pair afresh met it, and never where no pair
    reads it."""

    def __init__(self, document: SchemaDocument, branch: Branch) -> None:
        self.document = document
        self.branch = branch
        self.listed = _listed(branch)
        self.required = _required(branch)
        self._generated: frozenset[str] | None = None
        self._accepted: frozenset[str] | None = None
        # A property's listed values, by name: as declared here, and as this branch allows them.
        self._declared: dict[str, list[Any] | None] = {}
        self._allowed: dict[str, list[Any] | None] = {}

    @property
    def generated(self) -> frozenset[str]:
        if self._generated is None:
            self._generated = generated_kinds(self.branch, self.document)
        return self._generated

    @property
    def accepted(self) -> frozenset[str]:
        if self._accepted is None:
            self._accepted = value_kinds(self.branch)
        return self._accepted

    def declared_values(self, name: str) -> list[Any] | None:
        """The values property `name`'s declared schema lists (None: it lists none)."""
        if name not in self._declared:
            obj = self.branch.object if isinstance(self.branch, SchemaNode) else None
            declared = None if obj is None else obj.declared(name)
            self._declared[name] = None if declared is None else sub_values(self.document, declared)
        return self._declared[name]

    def allowed_values(self, name: str) -> list[Any] | None:
        """The values this branch allows property `name` when it lists them (_property_schema)."""
        if name not in self._allowed:
            other = _property_schema(self.branch, name) if isinstance(self.branch, SchemaNode) else None
            self._allowed[name] = None if other is None else sub_values(self.document, other)
        return self._allowed[name]


def _separated(first: _BranchFacts, second: _BranchFacts, accepts: Accepts, separation: Separation, index: int) -> bool:
    """Whether what `first` generates can be kept from matching `second`, recording what
    branch `index` must leave out for that."""
    shared = first.generated & second.accepted
    if not shared or (shared == {"object"} and _discriminated(first, second)):
        return True
    # `first` generates only its listed values, or `second` accepts only its own: either way
    # `first` leaves out the listed values the other branch accepts.
    if _leaves_out(first.listed, second.branch, accepts, separation.values[index]):
        return True
    if _leaves_out(second.listed, first.branch, accepts, separation.values[index]):
        return True
    missing = [p for p in second.required if p not in first.required]
    if shared == {"object"} and missing:
        if missing[0] not in separation.properties[index]:
            separation.properties[index].append(missing[0])
        return True
    return False


def _leaves_out(listed: list[Any] | None, judge: Branch, accepts: Accepts, left_out: list[Any]) -> bool:
    """Whether the validator says, for each of the `listed` values, whether `judge` accepts
    it; if so, those it accepts join `left_out`."""
    if listed is None:
        return False
    verdicts = [accepts(judge, value) for value in listed]
    if None in verdicts:
        return False
    left_out.extend(value for value, valid in zip(listed, verdicts, strict=True) if valid)
    return True


def generated_kinds(branch: Branch, document: SchemaDocument | None = None) -> frozenset[str]:
    """Kinds of value compiled for `branch` (a superset): its types, or those implied by its
    keywords; listed values of any kind the keywords beside them accept (the validator filters
    them, whatever types the keywords imply); and where it has no types but anyOf or oneOf
    branches, each merged with it and built on its own, also the kinds each branch implies (read
    from `document`; without it, every kind the node accepts)."""
    if isinstance(branch, bool):
        return ALL_KINDS if branch else frozenset()
    if branch.values is not None:
        return value_kinds(branch)
    kinds = value_kinds(branch) & _type_kinds(generated_types(branch))
    if branch.types is None:
        for union in (branch.any_of, branch.one_of):
            for sub in union.branches if union is not None else ():
                kinds |= value_kinds(branch) & _implied_kinds(document, sub)
    return kinds


def _type_kinds(types: tuple[str, ...]) -> frozenset[str]:
    return frozenset().union(*(TYPE_KINDS[name] for name in types))


def _implied_kinds(document: SchemaDocument | None, sub: Sub) -> frozenset[str]:
    """The kinds a branch of one part generates merged with another node: its own types, or
    those its keywords imply (a superset; every kind where that is unknown)."""
    if document is None or len(sub.parts) != 1:
        return ALL_KINDS
    part = sub.parts[0]
    node = document.peek(part) if isinstance(part, str) else part
    if isinstance(node, bool):
        return ALL_KINDS if node else frozenset()
    if node.ref is not None or node.all_of or node.values is not None:
        return ALL_KINDS  # what the reference or the list brings is not read here
    return generated_kinds(node, document)


def value_kinds(branch: Branch) -> frozenset[str]:
    """Kinds of JSON value `branch` may accept (an over-approximation)."""
    if isinstance(branch, bool):
        return ALL_KINDS if branch else frozenset()
    kinds = set(ALL_KINDS)
    if branch.types is not None:
        kinds &= set().union(*(TYPE_KINDS[name] for name in branch.types))
    if branch.values is not None:
        kinds &= {kind_of(value) for value in branch.values.items}
    return frozenset(kinds)


def _listed(branch: Branch) -> list[Any] | None:
    if branch is False:
        return []
    if isinstance(branch, SchemaNode) and branch.values is not None:
        return list(branch.values.items)
    return None


def _required(branch: Branch) -> tuple[str, ...]:
    return branch.object.required if isinstance(branch, SchemaNode) and branch.object is not None else ()


def _discriminated(first: _BranchFacts, second: _BranchFacts) -> bool:
    """`first` requires a property with finitely many values, none allowed by `second`."""
    if not isinstance(first.branch, SchemaNode) or not isinstance(second.branch, SchemaNode) or first.branch.object is None:
        return False
    for name in first.required:
        values = first.declared_values(name)
        if values is None:
            continue
        allowed = second.allowed_values(name)
        if allowed is not None and not keep_values(values, allowed):
            return True
    return False


def _property_schema(schema: SchemaNode, name: str) -> Sub | None:
    """What `schema` requires of property `name`'s value: its declared schema and every
    patternProperties schema whose pattern finds the name (validators use re.search), or
    additionalProperties when neither applies; None when that is unknown or anything."""
    obj = schema.object
    if obj is None:
        return None
    declared = obj.declared(name)
    parts = list(declared.parts) if declared is not None else []
    found = declared is not None
    for pattern, sub in obj.patterns:
        try:
            if re.search(pattern, name) is not None:
                parts += sub.parts
                found = True
        except re.error:
            return None
    return Sub(tuple(parts), schema.pointer) if found else obj.extra


def sub_values(document: SchemaDocument, sub: Sub, hops: int = 0) -> list[Any] | None:
    """Values `sub` may accept when it lists them (a superset: a part that lists values
    bounds the whole); None when it does not."""
    if sub.is_false():
        return []
    lists = [found for part in sub.parts if (found := _part_values(document, part, hops)) is not None]
    if not lists:
        return None
    values = lists[0]
    for other in lists[1:]:
        values = keep_values(values, other)
    return values


def _part_values(document: SchemaDocument, part: str | bool | SchemaNode, hops: int) -> list[Any] | None:
    node = document.peek(part) if isinstance(part, str) else part
    if isinstance(node, bool):
        return None if node else []
    parts: list[str | bool | SchemaNode] = []
    if node.ref is not None and hops < MAX_REF_HOPS:
        parts.append(node.ref.target)
    parts += [part for sub in node.all_of for part in sub.parts]
    found = sub_values(document, Sub(tuple(parts), node.pointer), hops + 1) if parts else None
    own = list(node.values.items) if node.values is not None else None
    if own is None or found is None:
        return own if found is None else found
    return keep_values(own, found)


def kind_of(value: Any) -> str:
    """The kind of a JSON value: its type, whole numbers `integer`, others `fraction`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "fraction"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"
