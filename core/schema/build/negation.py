"""`not` folded into positive constraints, where that is exact or a subset.

`not: {type: ...}` removes types; `not: {required: [...]}` leaves one of those properties out
(objects then never have them all); `not: {const/enum}` excludes the listed values the rest of
the negated schema accepts; `not: {anyOf: [...]}` applies each branch; `not: {properties: {k:
{const/enum}}}` (the `if` of a discriminated if/then/else, with `required: [k]` or not) keeps
objects whose `k` is another value (and, where the negated schema requires `k`, objects
without it). Any other negated schema is folded as its complement, a union of one positive
node per keyword (complement.py), where each keyword can be negated; the others are refused by
name. Beside enum/const, `not` is not folded: the listed values are filtered by the validator
instead (values.py). The `not`s that make oneOf branches exclusive (unions.py) are folded here
too, and refused naming the oneOf.
"""

from __future__ import annotations

import re
from collections.abc import Hashable

from ...errors import SchemaError, UnsupportedSchema
from ...jsontext import distinct_values
from ..nodes.conjunction import Conjunction
from ..nodes.schema_node import ObjectNode, Reference, SchemaNode, Sub, UnionNode, excluding, forbidding, generated_types
from .complement import MAX_DISJUNCTS, Inexpressible, complement
from .protocol import Build
from .values import listed_values

_ONE_OF_BRANCH = re.compile(r"/oneOf/[0-9]+$")


def _keyword(pointer: str) -> str:
    """The keyword a user wrote for the negated schema at `pointer`: `not`, the `if` of an
    if/then/else (whose `else` branch negates it), or a oneOf branch that the others exclude."""
    if _ONE_OF_BRANCH.search(pointer):
        return "oneOf"
    return "if" if pointer.endswith("/if") else "not"


def _refuse(build: Build, pointer: str, reason: str) -> None:
    """Refuse the negation written at `pointer` (for a oneOf branch, the oneOf)."""
    keyword = _keyword(pointer)
    if keyword != "oneOf":
        build.refuse(keyword, pointer, reason)
        return
    where, _, branch = pointer.rpartition("/")
    build.refuse(
        "oneOf",
        where,
        f"branch {branch} may match a value another branch matches, and cannot be left out of it ({reason}); use anyOf,"
        " or make them exclusive (different types, a required property with different const values, or different"
        " required properties)",
    )


def fold_not(build: Build, node: SchemaNode) -> tuple[SchemaNode, list[Reference]]:
    """`node` with its `not`s folded into positive keywords, and the references followed to
    schemas negated as complements (a recursive schema negated is built within the recursion
    depth, as its references count)."""
    rest = node.without(nots=())
    general: list[tuple[SchemaNode, str]] = []
    refs: list[Reference] = []
    for sub in node.nots:
        conjunction = build.conjunction(sub.pointer)
        negations = _negations(build, sub, sub.pointer, conjunction)
        for negated in negations:
            try:
                folded = _apply(build, rest, negated, sub.pointer)
            except UnsupportedSchema:
                raise
            except SchemaError:
                if _keyword(sub.pointer) != "oneOf":
                    raise
                raise SchemaError(_nothing_left(sub.pointer)) from None
            if folded is None:
                general.append((negated, sub.pointer))
            else:
                rest = folded
        if any(pointer == sub.pointer for _, pointer in general):
            refs += conjunction.refs
    return (_complements(build, rest, general) if general else rest), refs


def _complements(build: Build, rest: SchemaNode, negations: list[tuple[SchemaNode, str]]) -> SchemaNode:
    """`rest` and not each negated schema, as a union of plain nodes (see complement.py): one
    per choice of a keyword each negated schema fails, less the choices that hold all the
    keywords of another (their values are that one's too)."""
    branches: list[tuple[frozenset[Hashable], SchemaNode]] = [(frozenset(), rest)]
    for negated, pointer in negations:
        conjunction = build.conjunction(pointer)
        try:
            found = [
                (keys | {key}, node)
                for keys, branch in branches
                for key, node in complement(build, conjunction, branch, negated, pointer)
            ]
        except Inexpressible as error:
            _refuse(build, pointer, str(error))
            continue
        found = _unsubsumed(found)
        if len(found) > MAX_DISJUNCTS:
            _refuse(build, pointer, f"its complement would need more than {MAX_DISJUNCTS} branches")
            continue
        if not found:
            raise SchemaError(_nothing_left(pointer))
        branches = found
    if len(branches) == 1:
        return branches[0][1]
    union = UnionNode(rest.pointer, tuple(Sub((branch,), rest.pointer) for _, branch in branches), exclusive=False)
    return SchemaNode(rest.pointer, any_of=union)


def _unsubsumed(branches: list[tuple[frozenset[Hashable], SchemaNode]]) -> list[tuple[frozenset[Hashable], SchemaNode]]:
    """The branches whose keywords hold no other branch's all (those are within that one)."""
    kept: list[tuple[frozenset[Hashable], SchemaNode]] = []
    for keys, node in sorted(branches, key=lambda branch: len(branch[0])):
        if not any(other <= keys for other, _ in kept):
            kept.append((keys, node))
    return kept


def _nothing_left(pointer: str) -> str:
    if _keyword(pointer) == "oneOf":
        where, _, branch = pointer.rpartition("/")
        return f"oneOf at {where} leaves no value: each value of a branch matches branch {branch} too"
    return f"`not` at {pointer} excludes every value the schema allows"


def _negations(build: Build, sub: Sub, pointer: str, conjunction: Conjunction) -> list[SchemaNode]:
    """not(anyOf [A, B]) is not A and not B: the negated nodes to apply."""
    negated = conjunction.resolve(sub)
    if not isinstance(negated, SchemaNode):
        _refuse(build, pointer, "`not: true` matches nothing" if negated is True else "")
        return []
    keywords = negated.keywords()
    if not keywords:
        raise SchemaError(
            f"`not` at {pointer} excludes every value: the schema it negates has no keyword its draft defines",
            hint="remove the `not`, or negate a keyword of the schema's draft",
        )
    if keywords == {"anyOf"} and negated.any_of is not None:
        return [found for branch in negated.any_of.branches for found in _negations(build, branch, pointer, conjunction)]
    return [negated]


def _apply(build: Build, rest: SchemaNode, negated: SchemaNode, pointer: str) -> SchemaNode | None:
    """`rest` and not `negated` where the negated schema has one of the shapes folded here;
    None for the others (folded as complements)."""
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
    return None


def _other_value(build: Build, rest: SchemaNode, negated: ObjectNode, pointer: str) -> SchemaNode | None:
    """`rest` and not `{properties: {k: listed values}, required?: [k]}`: an object whose `k` is
    none of the listed values; `k` present unless the negated schema requires it (an object
    without `k` fails that `required`). The negated schema holds for every value that is not
    an object, so only objects are left."""
    if len(negated.properties) != 1 or not set(negated.required) <= {negated.properties[0][0]}:
        return None
    name, sub = negated.properties[0]
    value = build.conjunction(sub.pointer).resolve(sub)
    if not isinstance(value, SchemaNode) or value.values is None or not value.keywords() <= {"const", "enum", "type"}:
        return None
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


def _without_types(build: Build, rest: SchemaNode, banned: frozenset[str], pointer: str) -> SchemaNode | None:
    kept = [t for t in generated_types(rest) if t not in banned and not (t == "integer" and "number" in banned)]
    if "integer" in banned and "number" in kept:
        return None  # the numbers left are the non-integral ones (1.0 and 1E2 are integers): a complement
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
