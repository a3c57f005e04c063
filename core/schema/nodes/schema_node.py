"""The typed schema model: each schema object, as its draft reads it, becomes one frozen
SchemaNode whose keywords sit in typed fields, grouped per kind of value.

A SchemaNode is the conjunction of everything it holds: its declared `types`, the keywords of
each kind (StringNode, NumberNode for integers and numbers alike, ArrayNode, ObjectNode; a
kind without keywords has None), listed `values` (enum/const), `excluded` values (from a
folded `not`), `any_of`/`one_of` unions, `nots`, a `ref` and `all_of`. Subschemas are Sub
references: the conjunction of parts that are JSON pointers into the root (converted on first
use, once), boolean schemas, or nodes made by the compiler (merges, `not` folded into
positive keywords). Every node and keyword carries the JSON pointer it was written at, so a
refusal names it. Nodes are never changed: merging and folding make new ones.

Nothing here reads a raw schema (schema_document.py does) or builds a regex tree (build/ does).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from ..read.known_keywords import ALL_TYPES, TYPE_KEYWORDS


@dataclass(frozen=True, eq=False, slots=True)
class Sub:
    """A subschema: the conjunction of `parts` (pointers into the root, boolean schemas,
    compiler-made nodes); no parts is `true`. `pointer` is where it is reported."""

    parts: tuple[str | bool | SchemaNode, ...]
    pointer: str

    @property
    def key(self) -> Hashable:
        """Equal for the same parts: pointers by value, made nodes by identity."""
        return tuple(part if isinstance(part, str | bool) else id(part) for part in self.parts)

    def is_true(self) -> bool:
        return all(part is True for part in self.parts)

    def is_false(self) -> bool:
        return any(part is False for part in self.parts)


def conjoin(first: Sub, second: Sub, pointer: str | None = None) -> Sub:
    """Both subschemas at once (merged only when compiled, so recursive schemas stay finite);
    a part both hold is kept once (a schema and itself is that schema)."""
    parts = tuple(dict.fromkeys(part for part in (*first.parts, *second.parts) if part is not True))
    if any(part is False for part in parts):
        parts = (False,)
    return Sub(parts, first.pointer if pointer is None else pointer)


def true_sub(pointer: str) -> Sub:
    return Sub((), pointer)


def false_sub(pointer: str) -> Sub:
    return Sub((False,), pointer)


@dataclass(frozen=True, eq=False, slots=True)
class Bound:
    """One numeric bound as the validator reads it: `value`, exclusive or not, and the keyword
    (in the numeric form: draft 4's `exclusiveMinimum: true` makes `minimum` exclusive)."""

    value: int | float
    exclusive: bool
    keyword: str
    pointer: str


@dataclass(frozen=True, eq=False, slots=True)
class Pattern:
    source: str
    pointer: str


@dataclass(frozen=True, eq=False, slots=True)
class StringNode:
    """minLength, maxLength, every pattern that must match, format (None when absent or a
    name JSON Schema does not define, which validators ignore), and the patterns that must
    not match (from a `not` folded as a complement: core/schema/build/complement.py)."""

    pointer: str
    keywords: frozenset[str]
    min_length: int = 0
    max_length: int | None = None
    patterns: tuple[Pattern, ...] = ()
    format: str | None = None
    unmatched: tuple[Pattern, ...] = ()


@dataclass(frozen=True, eq=False, slots=True)
class NumberNode:
    """Bounds and multipleOf, for integers and numbers alike; `fraction`: no integer (a
    `not` of `type: integer` folded as a complement, core/schema/build/complement.py)."""

    pointer: str
    keywords: frozenset[str]
    minimum: Bound | None = None
    maximum: Bound | None = None
    multiple_of: int | float | None = None
    fraction: bool = False


@dataclass(frozen=True, eq=False, slots=True)
class ArrayNode:
    """Positional item schemas (`prefix`, None for the plain form) under `prefix_keyword`
    (2020-12 `prefixItems`, draft-07 array-valued `items`), the schema of the rest under
    `rest_keyword`, the item counts, uniqueItems, and schemas each met by one item at least
    (`contains`: made by a `not` of `items` folded as a complement, core/schema/build/complement.py)."""

    pointer: str
    keywords: frozenset[str]
    prefix: tuple[Sub, ...] | None = None
    prefix_keyword: str = ""
    rest: Sub | None = None
    rest_keyword: str = "items"
    min_items: int = 0
    max_items: int | None = None
    unique: bool = False
    contains: tuple[Sub, ...] = ()

    @property
    def items(self) -> Sub:
        return self.rest if self.rest is not None else true_sub(self.pointer + "/" + self.rest_keyword)


@dataclass(frozen=True, eq=False, slots=True)
class ObjectNode:
    """Declared properties (in schema order), required names, additionalProperties,
    patternProperties, propertyNames, property counts and dependencies (each trigger with
    the names it requires or the schema the object must then meet)."""

    pointer: str
    keywords: frozenset[str]
    properties: tuple[tuple[str, Sub], ...] = ()
    required: tuple[str, ...] = ()
    additional: Sub | None = None
    patterns: tuple[tuple[str, Sub], ...] = ()
    names: Sub | None = None
    min_properties: int = 0
    max_properties: int | None = None
    dependent_names: tuple[tuple[str, tuple[str, ...]], ...] = ()
    dependent_schemas: tuple[tuple[str, Sub], ...] = ()

    def declared(self, name: str) -> Sub | None:
        return next((sub for declared, sub in self.properties if declared == name), None)

    @property
    def extra(self) -> Sub:
        return self.additional if self.additional is not None else true_sub(self.pointer + "/additionalProperties")


@dataclass(frozen=True, eq=False, slots=True)
class Values:
    """The values enum and const list (const as one value): JSON values, JSON-distinct."""

    pointer: str
    items: tuple[Any, ...]
    keywords: frozenset[str]


@dataclass(frozen=True, eq=False, slots=True)
class UnionNode:
    """anyOf (`exclusive` False) or oneOf branches."""

    pointer: str
    branches: tuple[Sub, ...]
    exclusive: bool

    @property
    def keyword(self) -> str:
        return "oneOf" if self.exclusive else "anyOf"


@dataclass(frozen=True, eq=False, slots=True)
class Reference:
    """A local `$ref`: as written, at `pointer` (the keyword's own), naming `target`."""

    ref: str
    pointer: str
    target: str


@dataclass(frozen=True, eq=False, slots=True)
class SchemaNode:
    """One schema: the conjunction of every field (see the module docstring)."""

    pointer: str
    types: tuple[str, ...] | None = None
    string: StringNode | None = None
    number: NumberNode | None = None
    array: ArrayNode | None = None
    object: ObjectNode | None = None
    values: Values | None = None
    excluded: tuple[Any, ...] = ()
    any_of: UnionNode | None = None
    one_of: UnionNode | None = None
    nots: tuple[Sub, ...] = ()
    ref: Reference | None = None
    all_of: tuple[Sub, ...] = ()
    grounded: bool | None = None  # the `x-grounded` annotation (core.grounding), None: unset

    def keywords(self) -> frozenset[str]:
        """The asserting keywords this node holds (`not` also for excluded values)."""
        found: set[str] = set()
        for kind in (self.string, self.number, self.array, self.object):
            if kind is not None:
                found |= kind.keywords
        if self.values is not None:
            found |= self.values.keywords
        flags = {
            "type": self.types is not None,
            "anyOf": self.any_of is not None,
            "oneOf": self.one_of is not None,
            "not": bool(self.nots or self.excluded),
            "$ref": self.ref is not None,
            "allOf": bool(self.all_of),
        }
        return frozenset(found | {keyword for keyword, present in flags.items() if present})

    def without(self, **fields: Any) -> SchemaNode:
        """This node with the given fields replaced (a new node)."""
        return replace(self, **fields)

    def is_plain(self) -> bool:
        """No `$ref` or `allOf` left to fold in."""
        return self.ref is None and not self.all_of


def forbidding(pointer: str, names: tuple[str, ...]) -> SchemaNode:
    """A made node: none of `names` may be present (`properties: {name: false}`)."""
    properties = tuple((name, false_sub(f"{pointer}/properties")) for name in names)
    return SchemaNode(pointer, object=ObjectNode(pointer, frozenset({"properties"}), properties=properties))


def requiring(pointer: str, names: tuple[str, ...]) -> SchemaNode:
    """A made node: every one of `names` must be present."""
    return SchemaNode(pointer, object=ObjectNode(pointer, frozenset({"required"}), required=names))


def excluding(pointer: str, values: tuple[Any, ...]) -> SchemaNode:
    """A made node: none of `values`."""
    return SchemaNode(pointer, excluded=values)


def generated_types(node: SchemaNode) -> tuple[str, ...]:
    """The types generated for `node`: those declared, else those its keywords imply (a
    subset of the values it accepts), else all."""
    if node.types is not None:
        return node.types
    keywords = node.keywords()
    return tuple(name for name in ALL_TYPES if TYPE_KEYWORDS[name] & keywords) or ALL_TYPES


def subschemas(node: SchemaNode) -> Iterator[Sub]:
    """Every Sub `node` holds, in any field."""
    if node.array is not None:
        yield from node.array.prefix or ()
        yield from (sub for sub in (node.array.rest,) if sub is not None)
        yield from node.array.contains
    obj = node.object
    if obj is not None:
        yield from (sub for _, sub in (*obj.properties, *obj.patterns, *obj.dependent_schemas))
        yield from (sub for sub in (obj.additional, obj.names) if sub is not None)
    for union in (node.any_of, node.one_of):
        if union is not None:
            yield from union.branches
    yield from node.nots
    yield from node.all_of
