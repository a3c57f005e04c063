"""Whether the values generated for one schema meet another's: all of them (within), none
(apart), or unknown. Answers are sound either way: a schema said to be within or apart from
another is so for every value the compiler generates for it (judged by a superset of the kinds
it generates, or of the values it lists), and "unknown" is said as False. The complement of a
negated schema (complement.py) leaves out the property values within it, and a schema apart
from the one it negates is left whole.
"""

from __future__ import annotations

from typing import Any

from ...errors import SchemaError, UnsupportedSchema
from ..nodes.conjunction import Conjunction, Resolved
from ..nodes.disjoint import generated_kinds, value_kinds
from ..nodes.schema_node import SchemaNode, Sub
from .protocol import Build
from .strings_overlap import strings_apart, strings_within

APART_DEPTH = 3  # subschemas looked into, through properties and branches


def accepts_all(conjunction: Conjunction, sub: Sub) -> bool:
    """Whether `sub` accepts every value (true, or keywords that assert nothing)."""
    if sub.is_true():
        return True
    node = conjunction.resolve(sub)
    return node is True or (isinstance(node, SchemaNode) and not node.keywords())


def within(build: Build, conjunction: Conjunction, mine: Sub, theirs: Sub) -> bool:
    """Whether every value generated for `mine` meets `theirs`."""
    if mine.is_false() or accepts_all(conjunction, theirs):
        return True
    node, judge = conjunction.resolve(mine), conjunction.resolve(theirs)
    if node is False:
        return True
    if node is True or isinstance(judge, bool):
        return judge is True
    listed = finite(build, node)
    if listed is not None:
        return all(build.accepts(judge, value) is True for value in listed)
    kinds = generated_kinds(node, build.document)
    if not kinds <= value_kinds(judge):
        return False
    if judge.keywords() <= {"type"}:
        return True
    # Strings only, judged by string keywords alone (and a type that takes them).
    string_keywords = judge.string.keywords if judge.string is not None else frozenset()
    return (
        kinds == {"string"}
        and judge.string is not None
        and judge.keywords() <= string_keywords | {"type"}
        and strings_within(node, judge.string)
    )


def apart(build: Build, conjunction: Conjunction, mine: Sub, theirs: Sub, depth: int = 0) -> bool:
    """Whether no value generated for `mine` meets `theirs`."""
    return nodes_apart(build, conjunction, conjunction.resolve(mine), conjunction.resolve(theirs), depth)


def nodes_apart(build: Build, conjunction: Conjunction, node: Resolved, judge: Resolved, depth: int = 0) -> bool:
    """Whether no value generated for `node` meets `judge`: their kinds apart, each listed value
    rejected, every branch of the judge's anyOf or oneOf apart, or an object property that one
    requires and whose values the other never accepts (an object without it fails a `required`,
    one with it that property's schema)."""
    if node is False or judge is False:
        return True
    if node is True or judge is True:
        return False
    listed = finite(build, node)
    if listed is not None:
        return all(build.accepts(judge, value) is False for value in listed)
    shared = generated_kinds(node, build.document) & value_kinds(judge)
    if not shared:
        return True
    if shared == {"string"} and judge.string is not None and strings_apart(node, judge.string):
        return True
    if depth >= APART_DEPTH:
        return False
    if _branches_apart(build, conjunction, node, judge, depth):
        return True
    for union in (judge.any_of, judge.one_of):
        if union is not None and all(
            apart(build, conjunction, Sub((node,), judge.pointer), branch, depth + 1) for branch in union.branches
        ):
            return True  # no branch matches: the union fails (its other keywords aside)
    return shared == {"object"} and _objects_apart(build, conjunction, node, judge, depth)


def _branches_apart(build: Build, conjunction: Conjunction, node: SchemaNode, judge: SchemaNode, depth: int) -> bool:
    """Whether `node` has an anyOf or oneOf whose every branch, merged with the rest of it, is
    apart from `judge` (every value generated for it is one of a branch's)."""
    for union, rest in ((node.any_of, node.without(any_of=None)), (node.one_of, node.without(one_of=None))):
        if union is None:
            continue
        merged: list[Resolved] = []
        for branch in union.branches:
            try:
                merged.append(conjunction.resolve(Sub((rest, *branch.parts), branch.pointer)))
            except UnsupportedSchema:
                raise
            except SchemaError:
                continue  # no value meets the branch
        if all(nodes_apart(build, conjunction, branch, judge, depth + 1) for branch in merged):
            return True
    return False


def _objects_apart(build: Build, conjunction: Conjunction, node: SchemaNode, judge: SchemaNode, depth: int) -> bool:
    mine, theirs = node.object, judge.object
    if theirs is None:
        return False
    for name in theirs.required:  # `node`'s objects lack it, or hold a value the judge rejects
        value = conjunction.constraint(mine, name) if mine is not None else None
        if value is not None and (
            value.is_false() or apart(build, conjunction, value, conjunction.constraint(theirs, name), depth + 1)
        ):
            return True
    if mine is None:
        return False
    for name in mine.required:  # `node`'s objects hold a value the judge rejects
        if apart(build, conjunction, conjunction.constraint(mine, name), conjunction.constraint(theirs, name), depth + 1):
            return True
    return False


def finite(build: Build, node: Resolved) -> list[Any] | None:
    """Every value generated for `node` (or more), where that is a short list."""
    if not isinstance(node, SchemaNode):
        return None
    if node.values is not None:
        return list(node.values.items)
    kinds = generated_kinds(node, build.document)
    if kinds <= {"boolean", "null"}:
        return [value for kind in sorted(kinds) for value in ((True, False) if kind == "boolean" else (None,))]
    return None
