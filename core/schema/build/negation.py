"""`not` folded into positive constraints, where that is exact or a subset.

`not: {type: ...}` removes types; `not: {required: [...]}` leaves one of those properties out
(objects then never have them all); `not: {const/enum}` excludes the listed values the rest of
the negated schema accepts; `not: {anyOf: [...]}` applies each branch; `not: {properties: {k:
{const/enum}}}` (the `if` of a discriminated if/then/else, with `required: [k]` or not) keeps
objects whose `k` is another value (and, where the negated schema requires `k`, objects
without it). Anything else is refused by name. Beside enum/const, `not` is not folded: the listed values are filtered by the
validator instead (values.py).
"""

from __future__ import annotations

from ...errors import SchemaError
from ...jsontext import distinct_values
from ..nodes.schema_node import ObjectNode, SchemaNode, Sub, excluding, forbidding, generated_types
from .protocol import Build
from .values import listed_values

_ENFORCED = "only types, required properties, const or enum values, or one property's const or enum values"


def _keyword(pointer: str) -> str:
    """The keyword a user wrote for the negated schema at `pointer`: `not`, or the `if` of an
    if/then/else (whose `else` branch negates it)."""
    return "if" if pointer.endswith("/if") else "not"


def fold_not(build: Build, node: SchemaNode) -> SchemaNode:
    """`node` with its `not`s folded into positive keywords."""
    rest = node.without(nots=())
    for sub in node.nots:
        for negated in _negations(build, sub, sub.pointer):
            rest = _apply(build, rest, negated, sub.pointer)
    return rest


def _negations(build: Build, sub: Sub, pointer: str) -> list[SchemaNode]:
    """not(anyOf [A, B]) is not A and not B: the negated nodes to apply."""
    negated = build.conjunction(pointer).resolve(sub)
    if not isinstance(negated, SchemaNode):
        build.refuse(_keyword(pointer), pointer, "`not: true` matches nothing" if negated is True else "")
        return []
    keywords = negated.keywords()
    if not keywords:
        raise SchemaError(
            f"`not` at {pointer} excludes every value: the schema it negates has no keyword its draft defines",
            hint="remove the `not`, or negate a keyword of the schema's draft",
        )
    if keywords == {"anyOf"} and negated.any_of is not None:
        return [found for branch in negated.any_of.branches for found in _negations(build, branch, pointer)]
    return [negated]


def _apply(build: Build, rest: SchemaNode, negated: SchemaNode, pointer: str) -> SchemaNode:
    keywords = negated.keywords()
    if keywords == {"type"} and negated.types is not None:
        return _without_types(build, rest, frozenset(negated.types), pointer)
    required = negated.object.required if negated.object is not None else ()
    if keywords == {"required"} and required:
        # `required` holds for every value that is not an object: only objects are left.
        if "object" not in generated_types(rest):
            raise SchemaError(
                f"`not: {{required}}` at {rest.pointer or '/'} excludes every value: only objects can lack a property"
            )
        return _leave_out_one(build, rest.without(types=("object",)), required)
    if negated.object is not None and keywords <= {"properties", "required"}:
        return _other_value(build, rest, negated.object, pointer)
    if keywords & {"const", "enum"}:
        # Only the listed values that meet the rest of the negated schema are excluded.
        excluded = distinct_values([*rest.excluded, *listed_values(build, negated)])
        return rest.without(excluded=tuple(excluded))
    build.refuse(_keyword(pointer), pointer, _ENFORCED)
    return rest


def _other_value(build: Build, rest: SchemaNode, negated: ObjectNode, pointer: str) -> SchemaNode:
    """`rest` and not `{properties: {k: listed values}, required?: [k]}`: an object whose `k` is
    none of the listed values; `k` present unless the negated schema requires it (an object
    without `k` fails that `required`). The negated schema holds for every value that is not
    an object, so only objects are left."""
    if len(negated.properties) != 1 or not set(negated.required) <= {negated.properties[0][0]}:
        build.refuse(_keyword(pointer), pointer, _ENFORCED)
        return rest
    name, sub = negated.properties[0]
    value = build.conjunction(sub.pointer).resolve(sub)
    if not isinstance(value, SchemaNode) or value.values is None or not value.keywords() <= {"const", "enum", "type"}:
        build.refuse(_keyword(pointer), pointer, _ENFORCED)
        return rest
    if "object" not in generated_types(rest):
        raise SchemaError(f"`not` at {pointer} excludes every value the schema allows: it holds for every non-object")
    listed = tuple(listed_values(build, value))
    made = SchemaNode(
        pointer,
        types=("object",),
        object=ObjectNode(
            pointer,
            frozenset({"properties", "required"}),
            properties=((name, Sub((excluding(sub.pointer, listed),), sub.pointer)),),
            required=() if negated.required else (name,),
        ),
    )
    merged = build.conjunction(rest.pointer).pair(rest, made)
    assert isinstance(merged, SchemaNode)  # two plain nodes merge into one
    return merged


def _without_types(build: Build, rest: SchemaNode, banned: frozenset[str], pointer: str) -> SchemaNode:
    kept = [t for t in generated_types(rest) if t not in banned and not (t == "integer" and "number" in banned)]
    if "integer" in banned and "number" in kept:
        # The numbers left are the non-integral ones (1.0 and 1E2 are integers).
        build.refuse(_keyword(pointer), pointer, "excluding integers from numbers is not supported")
        return rest
    if not kept:
        raise SchemaError(f"`not` at {rest.pointer or '/'} excludes every type the schema allows")
    return rest.without(types=tuple(kept))


def _leave_out_one(build: Build, node: SchemaNode, names: tuple[str, ...]) -> SchemaNode:
    """Never write one of `names` (the first not required), so they are never all present."""
    required = set(node.object.required) if node.object is not None else set()
    optional = [name for name in names if name not in required]
    if not optional:
        raise SchemaError(f"`not` at {node.pointer or '/'} forbids properties the schema requires")
    merged = build.conjunction(node.pointer).pair(node, forbidding(node.pointer, (optional[0],)))
    assert isinstance(merged, SchemaNode)  # two plain nodes merge into one
    return merged
