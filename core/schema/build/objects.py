"""Objects as regex trees: declared properties in schema order (optional ones skippable),
property counts, dependencies, and objects whose keys are generated (patternProperties,
propertyNames, additionalProperties)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from ...automaton.charnfa import AutomatonTooLarge, intersect, machine_from_tree
from ...automaton.excluded_words import excluding_machine
from ...automaton.regex import Alt, AnyOrder, Either, Node, Seq, alt, json_literal, lit, seq
from ...errors import SchemaError, UnsupportedSchema
from ...jsontext import join_pointer
from ..lexical.pattern import UnsupportedPattern, pattern_tree, pattern_unmatched
from ..lexical.scalars import QUOTE, json_text, string_node
from ..nodes.schema_node import (
    ObjectNode,
    Pattern,
    SchemaNode,
    StringNode,
    Sub,
    conjoin,
    false_sub,
    forbidding,
    generated_types,
    requiring,
    true_sub,
)
from ..read.unknown_keywords import KeywordNote, nearest
from ..refusals import DepthCut
from ..work_limits import MAX_OBJECT_NODES
from .protocol import Build
from .strings import strings
from .trees import ACCEPTED_DEPTH, GENERIC_DEPTH, any_value, count_bounds, free_value, generic_object, object_nodes, object_of
from .values import listed_values

Member = tuple[Node, bool]  # a property's tree and whether it is required


def object_tree(build: Build, node: SchemaNode) -> Node:
    """The objects `node` allows."""
    obj = node.object or ObjectNode(node.pointer, frozenset())
    if obj.dependent_names or obj.dependent_schemas:
        # Through the builder's dispatch: a dependent schema may bring oneOf, anyOf, not or enum along.
        return build.value(_without_dependencies(build, node, obj))
    properties = _property_schemas(build, obj)
    if not properties and not obj.required:
        if obj.min_properties > 1:
            # Generated keys may repeat, and a repeated key counts once: not exact.
            where = join_pointer(obj.pointer, "minProperties")
            build.refuse("minProperties", where, "above 1 on an object without declared properties")
            obj = replace(obj, min_properties=0)
        return _map(build, obj)
    members, names = _members(build, obj, properties)
    low, high = _counts(build, obj, members)
    build.fuel.burn(obj.pointer, "member", object_nodes(members, low, high))
    undeclared = _undeclared_member(build, obj, properties)
    # Any other name with any value: the accepting automaton reads a key as one (core.automaton.keys).
    keyed = isinstance(undeclared, UndeclaredMember) and not undeclared.patterns and bool(undeclared.names)
    try:
        return object_of(members, low, high, undeclared=undeclared, names=names if keyed else None)
    except SchemaError:
        raise SchemaError(f"no object at {obj.pointer or '/'} can have between {low} and {high} of its properties") from None


def _members(build: Build, obj: ObjectNode, properties: dict[str, Sub]) -> tuple[list[Member], tuple[tuple[str, int], ...]]:
    """The members that may be written, and their names with the parts their literals take."""
    members: list[Member] = []
    names: list[tuple[str, int]] = []
    for name, sub in properties.items():
        required = name in obj.required
        if sub.is_false():
            if required:
                raise SchemaError(
                    f"required property {name!r} cannot have any value at {obj.pointer or '/'}", hint=_valueless_hint(obj, name)
                )
            continue
        key = member_key(name)
        try:
            members.append((seq(key, build.value(sub)), required))
            names.append((name, len(key.parts) - 1 if isinstance(key, Seq) else 1))
        except UnsupportedSchema:
            raise
        except (DepthCut, SchemaError):
            if required:
                raise  # an optional property past the recursion depth, or with no valid value, is not written
    return members, tuple(names)


@functools.lru_cache(maxsize=8192)
def member_key(name: str) -> Node:
    """A member's name as JSON writes it and the `": "` after it, one node per name (kept: an
    object unrolled under a recursive reference writes the same names again in every copy, and
    schema after schema names `id` and `name`)."""
    return seq(json_literal(json_text(name)), lit(": "))


def _valueless_hint(obj: ObjectNode, name: str) -> str:
    """What to do about `name`, which `required` lists and the object allows no value: most
    often a typo of a declared name (`nmae`) beside `"additionalProperties": false`, said as
    the warning says it where additionalProperties would let it pass."""
    declared = [known for known, _ in obj.properties]
    if name in declared:
        return f"the schema 'properties' gives '{name}' allows no value: give it one that does, or drop it from 'required'"
    meant = nearest(name, declared)
    guess = f" (did you mean '{meant}'?)" if meant is not None else ""
    return (
        f"'properties' does not declare '{name}'{guess} and the object allows no other name a value:"
        " rename it in 'required', or declare it in 'properties'"
    )


def _undeclared_member(build: Build, obj: ObjectNode, properties: dict[str, Sub]) -> Callable[[], Node] | None:
    """What makes a member whose name is none the object declares or requires (`properties`
    holds them all), with any value, which the automaton accepts but never generates, where
    additionalProperties is absent or true, or where only patternProperties that take any
    value allow it (`"^x-": {}`: names they find); None elsewhere (a schema there, or
    propertyNames, would decide the values or names: a departure, see docs/schema-support.md)."""
    if obj.names is not None or obj.max_properties is not None:
        return None  # (undeclared members would count towards maxProperties)
    free = all(_takes_any(build, sub) for _, sub in obj.patterns)
    if not free:
        return None
    if obj.extra.is_true():
        return UndeclaredMember(tuple(properties))
    return UndeclaredMember(tuple(properties), tuple(pattern for pattern, _ in obj.patterns)) if obj.patterns else None


def _takes_any(build: Build, sub: Sub) -> bool:
    """Whether `sub` asserts nothing (true, or no keyword its draft defines)."""
    node = build.conjunction(sub.pointer).resolve(sub)
    return node is True or (isinstance(node, SchemaNode) and not node.keywords())


@dataclass(frozen=True)
class UndeclaredMember:
    """Makes a member whose name is none of `names` (and, given `patterns`, one of them finds:
    both engines' search), with any value: only the accepting automaton needs it, so it is
    made then. A class, not a closure, so that an automaton holding it can be pickled."""

    names: tuple[str, ...]
    patterns: tuple[str, ...] = ()

    def __call__(self) -> Node:
        if self.patterns:
            try:
                found = machine_from_tree(alt(*(pattern_tree(pattern) for pattern in self.patterns)))
                key: Node = seq(QUOTE, intersect(found, excluding_machine(list(self.names))), QUOTE)
            except (UnsupportedPattern, AutomatonTooLarge):
                return Alt(())  # matches nothing: no name is taken
        else:
            key = seq(QUOTE, excluding_machine(list(self.names)), QUOTE) if self.names else string_node()
        return seq(key, lit(": "), any_value(ACCEPTED_DEPTH - 1))


def _counts(build: Build, obj: ObjectNode, members: list[Member]) -> tuple[int, int | None]:
    """minProperties and maxProperties; a binding count multiplies the object's nodes by the
    count, refused beyond MAX_OBJECT_NODES (naming whichever count binds)."""
    low, high = obj.min_properties, obj.max_properties
    nodes = object_nodes(members, low, high)
    if nodes <= MAX_OBJECT_NODES:
        return low, high
    binding = count_bounds(members, low, high)[1]
    keyword, bound = ("maxProperties", binding) if binding is not None else ("minProperties", low)
    build.refuse(
        keyword,
        join_pointer(obj.pointer, keyword),
        f"{keyword} {bound} over {len(members)} properties needs {nodes} automaton nodes, above the limit of"
        f" {MAX_OBJECT_NODES}; split the object or drop the count",
    )
    return (low, None) if keyword == "maxProperties" else (0, high)


def _without_dependencies(build: Build, node: SchemaNode, obj: ObjectNode) -> Sub:
    """Dependencies folded into plain keywords, exactly when the trigger property is
    required and as a subset otherwise: a dependent schema is merged in when its trigger
    is required and the trigger is never written when it is optional; dependent names
    become required outright (or the trigger is never written if they cannot be)."""
    pointer = node.pointer
    rest = node.without(types=("object",), object=replace(obj, dependent_names=(), dependent_schemas=()))
    conditions: list[str | bool | SchemaNode] = [rest]
    for trigger, dependent in obj.dependent_schemas:
        conditions += dependent.parts if trigger in obj.required else [forbidding(pointer, (trigger,))]
    for trigger, names in obj.dependent_names:
        if trigger in obj.required or all(_may_write(obj, name) for name in names):
            conditions.append(requiring(pointer, names))
        else:
            conditions.append(forbidding(pointer, (trigger,)))
    return Sub(tuple(conditions), pointer)  # merged when compiled, references tracked


def _may_write(obj: ObjectNode, name: str) -> bool:
    declared = obj.declared(name)
    return not declared.is_false() if declared is not None else not obj.extra.is_false()


def _property_schemas(build: Build, obj: ObjectNode) -> dict[str, Sub]:
    """Each property that may be written, with the schema its value must meet: its own
    schema (or additionalProperties for an undeclared required one) together with every
    patternProperties schema whose pattern finds the name; false where propertyNames
    rejects the name."""
    accepted = _name_checker(build, obj)
    result: dict[str, Sub] = {}
    for name in dict.fromkeys([*(name for name, _ in obj.properties), *obj.required]):
        declared = obj.declared(name)
        matching = [sub for pattern, sub in obj.patterns if _finds(build, obj, pattern, name)]
        if declared is not None:
            own = declared
        else:
            own = true_sub(join_pointer(obj.pointer, "additionalProperties")) if matching else obj.extra
        for sub in matching:
            own = conjoin(own, sub)
        result[name] = own if accepted(name) else false_sub(own.pointer)
        if declared is None and not matching and not own.is_false() and accepted(name):
            _note_undeclared_required(build, obj, name)
    return result


def _note_undeclared_required(build: Build, obj: ObjectNode, name: str) -> None:
    """Note a name that `required` lists beside `properties` but none of them declares (nor
    patternProperties): likely a typo (`emali`), whose value the schema leaves open. Only a
    name listed in the object written at `obj.pointer` is noted: one listed in a subschema
    merged in may be declared by a schema that is not."""
    place = build.document.required_beside_properties.get(obj.pointer, {}).get(name)
    if place is None:
        return
    reason = f"names '{name}', which 'properties' does not declare: any value is allowed for it"
    meant = None
    if build.document.guesses_left > 0:  # a guess for the first few only: each is a search
        build.document.guesses_left -= 1
        meant = nearest(name, [declared for declared, _ in obj.properties])
    reason += f"; did you mean '{meant}'?" if meant is not None else ""
    where = join_pointer(join_pointer(obj.pointer, "required"), place)
    build.document.notes.append(KeywordNote("required", where, reason, ignored=False))


def _finds(build: Build, obj: ObjectNode, pattern: str, name: str) -> bool:
    """Whether `pattern` matches `name` the way validators decide it (Python's re.search)."""
    try:
        return re.search(pattern, name) is not None
    except re.error as error:
        build.refuse("patternProperties", join_pointer(obj.pointer, "patternProperties"), f"pattern {pattern!r}: {error}")
        return False


def _name_checker(build: Build, obj: ObjectNode) -> Callable[[str], bool]:
    names = obj.names
    if names is None or names.is_true():
        return lambda name: True
    validator = build.validator(names)
    return lambda name: bool(validator.is_valid(name))


def _map(build: Build, obj: ObjectNode) -> Node:
    """An object with generated keys: from the first patternProperties pattern (values
    then meet every pattern's schema, whichever the key matches), else any key allowed
    by propertyNames with additionalProperties values."""
    low, high = obj.min_properties, obj.max_properties
    names = obj.names or true_sub(join_pointer(obj.pointer, "propertyNames"))
    if obj.patterns:
        first, _ = obj.patterns[0]
        pattern_pointer = join_pointer(join_pointer(obj.pointer, "patternProperties"), first)
        key_pattern = StringNode(pattern_pointer, frozenset({"pattern"}), patterns=(Pattern(first, pattern_pointer),))
        key_sub = conjoin(Sub((SchemaNode(pattern_pointer, types=("string",), string=key_pattern),), names.pointer), names)
        value = Sub(tuple(part for _, sub in obj.patterns for part in sub.parts), pattern_pointer)
        if any(sub.is_false() for _, sub in obj.patterns):
            value = false_sub(pattern_pointer)
    else:
        key_sub, value = names, obj.extra
    if value.is_false():
        if low == 0:
            return lit("{}")
        raise SchemaError(f"no object at {obj.pointer or '/'} satisfies minProperties with the allowed properties")
    key = _key_node(build, key_sub)
    if key is None:
        return _no_keys(obj, low)
    try:
        tree = free_value(GENERIC_DEPTH - 1) if value.is_true() else build.value(value)
    except DepthCut:
        if low:
            raise
        return lit("{}")
    generated = generic_object(tree, low, high, key)
    if not obj.patterns or obj.names is not None or not obj.extra.is_true() or low > 0 or high is not None:
        return generated
    # The automaton accepting every valid text also takes names no pattern finds, with any value.
    member = seq(key, lit(": "), tree)
    other = PatternMapMember(member, tuple(pattern for pattern, _ in obj.patterns))
    return Either(generated, seq(lit("{"), AnyOrder((), frozenset(), other), lit("}")))


UNMATCHED_STATES = 4_000  # the names no pattern finds, beyond which they are not taken


@dataclass(frozen=True)
class PatternMapMember:
    """Makes a member of an object whose names come from patterns (the generator's `member`), or
    one whose name no pattern finds (neither engine's search: lexical/pattern.py's
    pattern_unmatched, names of the Basic Multilingual Plane) with any value: only the accepting
    automaton needs it, so it is made then. A class, not a closure, so that an automaton holding
    it can be pickled."""

    member: Node
    patterns: tuple[str, ...]

    def __call__(self) -> Node:
        try:
            machines = [pattern_unmatched(pattern, UNMATCHED_STATES) for pattern in self.patterns]
            names = machines[0]
            for machine in machines[1:]:
                names = intersect(names, machine)
        except (UnsupportedPattern, AutomatonTooLarge):
            return self.member  # names the patterns leave out are not taken
        return alt(self.member, seq(QUOTE, names, QUOTE, lit(": "), any_value(ACCEPTED_DEPTH - 1)))


def _key_node(build: Build, key_sub: Sub) -> Node | None:
    """Generated property names: a JSON string meeting `key_sub` (string keywords or a
    list of values); None when no string meets it (a name is always a string)."""
    if key_sub.is_true():
        return string_node()
    node = build.conjunction(key_sub.pointer).resolve(key_sub)
    if node is True:
        return string_node()
    if node is False or "string" not in generated_types(node):
        return None
    if node.values is not None:
        names = [value for value in listed_values(build, node) if isinstance(value, str)]
        return alt(*(json_literal(json_text(name)) for name in names)) if names else None
    # Names left out by a folded `not` (excluded) are taken, not a `not` itself.
    if node.keywords() - {"type", "minLength", "maxLength", "format", "pattern", *(("not",) if not node.nots else ())}:
        build.refuse("propertyNames", key_sub.pointer, "only string keywords (pattern, lengths, format) or enum/const")
        return string_node()
    string = node.string or StringNode(node.pointer, frozenset())
    return strings(build, string, [value for value in node.excluded if isinstance(value, str)])


def _no_keys(obj: ObjectNode, low: int) -> Node:
    """Only the empty object, when propertyNames admits no string at all."""
    if low == 0:
        return lit("{}")
    raise SchemaError(
        f"propertyNames at {join_pointer(obj.pointer, 'propertyNames')} admits no string, so no object has a property,"
        f" but minProperties is {low}",
        hint="allow strings in propertyNames (property names are always strings), or drop minProperties",
    )
