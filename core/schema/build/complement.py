"""The complement of a schema within another: `rest` and `not negated` as a union of plain nodes.

A value fails a schema when it fails one of its keywords, so `not N` is the union of one made
node per keyword of N, each the values that fail that keyword alone (each keyword applies to
one kind of value, so the made node carries that kind's type):
- `type`: the other types; listed values (`not` of enum/const folded into N) themselves;
- `minLength`/`maxLength`, `minItems`/`maxItems`, `minProperties`/`maxProperties`, `minimum`/
  `maximum` (exclusive or not): the bound turned over (`minLength: 3` fails below 3 characters);
- `required`: an object without one of the names;
- a property's schema (declared, patternProperties, additionalProperties): an object with that
  property, whose value fails it (a `not` of the property's schema, folded in turn when that
  value is built). The names considered are those `rest` declares or requires: the generator
  writes no others (docs/schema-support.md's departures), so this is exact for what is
  generated; where that leaves no value and `rest` allows other properties, also those the
  negated schema declares. Where `rest` generates keys of its own (no declared properties),
  those the negated schema declares, each written alone, and a schema for the names it does
  not declare cannot be negated;
- `items`: arrays holding an item that fails it (any item, where the items `rest` generates are
  all of kinds the negated items reject);
- `anyOf`: a made node with a `not` of each branch; `oneOf`: that, or two branches at once;
  `not X`: X itself.
Each made node is merged with `rest`, and those no value meets (types or listed values apart, a
property `rest` requires left out, a property whose generated values all meet the negated
schema) are dropped. A `pattern` is negated as the strings it does not match (of characters from the Basic
Multilingual Plane: lexical/pattern.py's pattern_unmatched); a `format` only where every string
`rest` generates has it (strings_overlap.py), as formats are generated from subsets. What cannot
be negated exactly (other formats, `multipleOf`, `uniqueItems`, `propertyNames`, dependencies,
tuples) raises Inexpressible.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import Any

from ...errors import SchemaError, UnsupportedSchema
from ..nodes.conjunction import Conjunction
from ..nodes.disjoint import generated_kinds, kind_of, value_kinds
from ..nodes.schema_node import (
    ArrayNode,
    Bound,
    NumberNode,
    ObjectNode,
    SchemaNode,
    StringNode,
    Sub,
    Values,
    false_sub,
)
from .overlap import accepts_all, apart, nodes_apart, within
from .protocol import Build
from .strings_overlap import strings_within
from .values import listed_values

MAX_DISJUNCTS = 64  # branches a negation may leave; more are refused, not enumerated


class Inexpressible(Exception):
    """`not` of this schema has no exact form here; the message says which keyword."""


def negated_node(pointer: str, negated: Sub) -> SchemaNode:
    """A made node: not `negated`."""
    return SchemaNode(pointer, nots=(negated,))


Part = tuple[Hashable, Sub]  # a made node, and what tells it from the other parts of one negation


def complement(
    build: Build, conjunction: Conjunction, rest: SchemaNode, negated: SchemaNode, origin: str
) -> list[tuple[Hashable, SchemaNode]]:
    """`rest` and not `negated` as the plain nodes of a union (each merged with `rest`), each
    with a key naming the keyword it fails (equal keys, equal constraints); empty when no
    value is left. `origin` is where the negation was written (made nodes carry it)."""
    if nodes_apart(build, conjunction, rest, negated):
        return [(("apart",), rest)]  # every value generated for `rest` fails `negated`
    kept = _kept(build, conjunction, rest, negated, origin, wide=False)
    if kept or negated.object is None or (rest.object is not None and rest.object.extra.is_false()):
        return kept
    # Only objects with a property `rest` does not declare are left: written where it allows them.
    return _kept(build, conjunction, rest, negated, origin, wide=True)


def _kept(
    build: Build, conjunction: Conjunction, rest: SchemaNode, negated: SchemaNode, origin: str, wide: bool
) -> list[tuple[Hashable, SchemaNode]]:
    """The parts of the complement no value is shut out of; `wide`: properties the negated
    schema declares are considered, not only those `rest` declares or requires."""
    kept: list[tuple[Hashable, SchemaNode]] = []
    # Each kind's keywords hold for every value of another kind: only the types `rest` generates
    # matter, and the made nodes stay within them (as oneOf branches are told apart by their kinds).
    allowed = _types_of(generated_kinds(rest, build.document))
    within = () if rest.types is not None else (SchemaNode(origin, types=allowed),)
    for key, part in _disjuncts(build, conjunction, rest, negated, origin, allowed, wide):
        try:
            merged = conjunction.resolve(Sub((rest, *within, *part.parts), origin))
        except UnsupportedSchema:
            raise
        except SchemaError:
            continue  # no value meets both
        if isinstance(merged, SchemaNode):
            kept.append((key, merged))
        elif merged is True:
            kept.append((key, SchemaNode(origin)))
    return kept


def _disjuncts(
    build: Build,
    conjunction: Conjunction,
    rest: SchemaNode,
    negated: SchemaNode,
    origin: str,
    allowed: tuple[str, ...],
    wide: bool,
) -> Iterator[Part]:
    yield from _type_parts(allowed, negated, origin)
    if negated.values is not None:
        listed = tuple(_listed(build, negated))
        yield ("values", origin, id(negated)), _made(SchemaNode(origin, excluded=listed), origin)
    kinds = set(allowed)
    typed = kinds | ({"integer"} if "number" in kinds else set())
    excluded = tuple(value for value in negated.excluded if _KIND_TYPES.get(kind_of(value), kind_of(value)) in typed)
    if excluded:
        values = Values(origin, excluded, frozenset({"enum"}))
        yield ("excluded", origin, id(negated)), _made(SchemaNode(origin, values=values), origin)
    if negated.string is not None and "string" in kinds:
        yield from _string_parts(rest, negated.string, origin)
    if negated.number is not None and kinds & {"integer", "number"}:
        yield from _number_parts(negated.number, origin)
    if negated.array is not None and "array" in kinds:
        yield from _array_parts(conjunction, rest, negated.array, origin)
    if negated.object is not None and "object" in kinds:
        yield from _object_parts(build, conjunction, rest, negated.object, origin, wide)
    if negated.any_of is not None:
        branches = tuple(Sub(branch.parts, origin) for branch in negated.any_of.branches)
        yield ("anyOf", origin, id(negated)), _made(SchemaNode(origin, nots=branches), origin)
    if negated.one_of is not None:
        yield from _one_of_parts(negated, origin)
    for sub in negated.nots:
        yield ("not", origin, sub.key), Sub(sub.parts, origin)


def _listed(build: Build, negated: SchemaNode) -> list[Any]:
    """The listed values `negated` accepts (none when none meets the keywords beside them)."""
    try:
        return listed_values(build, negated)
    except UnsupportedSchema:
        raise
    except SchemaError:
        return []


MAX_NEGATED_BRANCHES = 8  # a oneOf negated: one part per pair of its branches


def _one_of_parts(negated: SchemaNode, origin: str) -> Iterator[Part]:
    """A value fails a oneOf when it matches none of its branches, or two."""
    assert negated.one_of is not None
    branches = negated.one_of.branches
    if len(branches) > MAX_NEGATED_BRANCHES:
        raise Inexpressible(f"a `oneOf` of more than {MAX_NEGATED_BRANCHES} branches cannot be negated")
    none = tuple(Sub(branch.parts, origin) for branch in branches)
    yield ("oneOf", origin, id(negated)), _made(SchemaNode(origin, nots=none), origin)
    for first in range(len(branches)):
        for second in range(first + 1, len(branches)):
            both = Sub((*branches[first].parts, *branches[second].parts), origin)
            yield ("oneOf", origin, id(negated), first, second), both


def _made(node: SchemaNode, origin: str) -> Sub:
    return Sub((node,), origin)


def _type_parts(allowed: tuple[str, ...], negated: SchemaNode, origin: str) -> Iterator[Part]:
    """The values of the `allowed` types (those generated) that `negated` does not allow."""
    if negated.types is None:
        return
    banned = set(negated.types)
    if "integer" in banned and "number" not in banned:
        if "number" in allowed:  # the numbers left are those that are no integer
            fractions = NumberNode(origin, frozenset({"not"}), fraction=True)
            yield ("fraction",), _made(SchemaNode(origin, types=("number",), number=fractions), origin)
        banned.add("number")
    kept = tuple(name for name in allowed if name not in banned and not (name == "integer" and "number" in banned))
    if kept:
        yield ("type", kept), _made(SchemaNode(origin, types=kept), origin)


def _string_parts(rest: SchemaNode, string: StringNode, origin: str) -> Iterator[Part]:
    if string.format is not None and not strings_within(rest, StringNode(origin, frozenset({"format"}), format=string.format)):
        # Formats are generated from subsets: what they leave out is no string a checker rejects.
        raise Inexpressible(f"format {string.format!r} cannot be negated")
    for keyword, low, high in _turned_counts(string.min_length, string.max_length, "Length"):
        counted = StringNode(origin, frozenset({keyword}), min_length=low, max_length=high)
        yield (keyword, low, high), _typed(origin, "string", string=counted)
    for pattern in string.patterns:
        unmatched = StringNode(origin, frozenset({"pattern"}), unmatched=(pattern,))
        yield ("unmatched", pattern.source), _typed(origin, "string", string=unmatched)
    for pattern in string.unmatched:  # not (not pattern): strings it matches
        matched = StringNode(origin, frozenset({"pattern"}), patterns=(pattern,))
        yield ("pattern", pattern.source), _typed(origin, "string", string=matched)


def _number_parts(number: NumberNode, origin: str) -> Iterator[Part]:
    if number.multiple_of is not None:
        raise Inexpressible("`multipleOf` cannot be negated")
    if number.minimum is not None:
        below = _turned(number.minimum, "maximum", origin)
        numbers = NumberNode(origin, frozenset({below.keyword}), maximum=below)
        yield ("maximum", below.value, below.exclusive), _typed(origin, "number", number=numbers)
    if number.maximum is not None:
        above = _turned(number.maximum, "minimum", origin)
        numbers = NumberNode(origin, frozenset({above.keyword}), minimum=above)
        yield ("minimum", above.value, above.exclusive), _typed(origin, "number", number=numbers)


def _turned_counts(low: int, high: int | None, noun: str) -> Iterator[tuple[str, int, int | None]]:
    """The counts on the other side of `low` and `high` (of lengths, items, properties), each
    as the keyword and the counts it leaves: a value fails `minItems: 2` with 0 to 1 items."""
    if low > 0:
        yield "max" + noun, 0, low - 1
    if high is not None:
        yield "min" + noun, high + 1, None


def _turned(bound: Bound, side: str, origin: str) -> Bound:
    """The bound on the other side of `bound`'s value: a value fails `minimum: 2` when below 2."""
    exclusive = not bound.exclusive
    keyword = "exclusive" + side[0].upper() + side[1:] if exclusive else side
    return Bound(bound.value, exclusive, keyword, origin)


def _array_parts(conjunction: Conjunction, rest: SchemaNode, array: ArrayNode, origin: str) -> Iterator[Part]:
    if array.unique:
        raise Inexpressible("`uniqueItems` cannot be negated")
    if array.prefix is not None:
        raise Inexpressible(f"`{array.prefix_keyword}` cannot be negated")
    for keyword, low, high in _turned_counts(array.min_items, array.max_items, "Items"):
        counted = ArrayNode(origin, frozenset({keyword}), min_items=low, max_items=high)
        yield (keyword, low, high), _typed(origin, "array", array=counted)
    if array.rest is not None and not accepts_all(conjunction, array.rest):
        # Some item fails `items`: where every item `rest` generates is of a kind `items`
        # rejects, any item does; otherwise one item at least is made to.
        own = rest.array.items if rest.array is not None and rest.array.prefix is None else None
        mine = None if own is None else conjunction.resolve(own)
        if mine is not None and mine is not False and not generated_kinds(mine) & value_kinds(conjunction.resolve(array.rest)):
            yield ("minItems", 1), _typed(origin, "array", array=ArrayNode(origin, frozenset({"minItems"}), min_items=1))
            return
        failing = _made(negated_node(origin, Sub(array.rest.parts, origin)), origin)
        holding = ArrayNode(origin, frozenset({"items"}), contains=(failing,))
        yield ("contains", array.rest.key), _typed(origin, "array", array=holding)


def _object_parts(
    build: Build, conjunction: Conjunction, rest: SchemaNode, obj: ObjectNode, origin: str, wide: bool
) -> Iterator[Part]:
    if obj.names is not None:
        raise Inexpressible("`propertyNames` cannot be negated")
    if obj.dependent_names or obj.dependent_schemas:
        raise Inexpressible("dependencies cannot be negated")
    own = rest.object
    required = own.required if own is not None else ()
    declared = [name for name, _ in own.properties] if own is not None else []
    keyed = not declared and not required  # `rest` generates keys of its own (objects.py's _map)
    for name in obj.required:
        if name not in required:
            yield ("absent", name), _typed(origin, "object", object=_without(origin, name, keyed))
    if keyed and (obj.patterns or not obj.extra.is_true()):
        # A generated key the negated schema does not declare may be any.
        raise Inexpressible("a schema for undeclared properties cannot be negated where keys are generated")
    # The names `rest` writes (where its keys are generated, or `wide`, those the negated schema declares).
    theirs = [name for name, _ in obj.properties]
    names = theirs if keyed else [*declared, *required, *(theirs if wide else ())]
    for name in dict.fromkeys(names):
        constraint = conjunction.constraint(obj, name)
        if accepts_all(conjunction, constraint):
            continue
        mine = conjunction.constraint(own, name) if own is not None else None
        if mine is not None and (mine.is_false() or within(build, conjunction, mine, constraint)):
            continue  # `rest` never writes it, or writes only values the negated schema accepts
        if constraint.is_false() or (mine is not None and apart(build, conjunction, mine, constraint)):
            # Any value `rest` writes for it fails the negated schema: only its presence matters.
            yield ("present", name), _typed(origin, "object", object=_object(origin, required=(name,)))
            continue
        value = _made(negated_node(origin, Sub(constraint.parts, origin)), origin)
        present = _object(origin, properties=((name, value),), required=(name,))
        yield ("value", name, constraint.key), _typed(origin, "object", object=present)
    for keyword, low, high in _turned_counts(obj.min_properties, obj.max_properties, "Properties"):
        counted = _object(origin, min_properties=low, max_properties=high)
        yield (keyword, low, high), _typed(origin, "object", object=counted)


def _without(origin: str, name: str, keyed: bool) -> ObjectNode:
    """Objects without `name`: a key generated as any other name, or a declared one not written."""
    if keyed:
        return _object(origin, names=Sub((SchemaNode(origin, excluded=(name,)),), origin))
    return _object(origin, properties=((name, false_sub(origin)),))


def _object(origin: str, **fields: Any) -> ObjectNode:
    keywords = {
        "properties": "properties",
        "required": "required",
        "min_properties": "minProperties",
        "names": "propertyNames",
        "max_properties": "maxProperties",
    }
    return ObjectNode(origin, frozenset(keywords[name] for name in fields), **fields)


def _typed(origin: str, name: str, **fields: Any) -> Sub:
    return _made(SchemaNode(origin, types=(name,), **fields), origin)


_KIND_TYPES = {"fraction": "number"}  # the type of a kind of value, where its name differs


def _types_of(kinds: frozenset[str]) -> tuple[str, ...]:
    """The types naming the values of `kinds` (integers and fractions: number)."""
    found = {_KIND_TYPES.get(kind, kind) for kind in kinds}
    return tuple(
        name
        for name in ("null", "boolean", "integer", "number", "string", "array", "object")
        if name in found and not (name == "integer" and "number" in found)
    )
