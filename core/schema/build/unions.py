"""anyOf and oneOf as regex trees: each branch merged with the keywords beside it, the
branches that can be built joined; oneOf once its branches are made exclusive
(nodes/disjoint.py, and `not` of the branches no argument separates: negation.py)."""

from __future__ import annotations

from collections.abc import Callable

from ...automaton.regex import Node, alt
from ...errors import SchemaError, UnsupportedSchema
from ...jsontext import join_pointer
from ..nodes.conjunction import Resolved
from ..nodes.disjoint import exclusions
from ..nodes.schema_node import Reference, SchemaNode, Sub, excluding, forbidding
from .complement import negated_node
from .protocol import Build


def any_of_tree(build: Build, node: SchemaNode) -> Node:
    assert node.any_of is not None
    build.fuel.burn(node.pointer, "branch", len(node.any_of.branches))
    rest = node.without(any_of=None)
    if rest.keywords():
        branches = [Sub((rest, *branch.parts), branch.pointer) for branch in node.any_of.branches]
    else:
        branches = list(node.any_of.branches)
    return alt(*build.surviving([build.builder(branch) for branch in branches]))


def one_of_tree(build: Build, node: SchemaNode) -> Node:
    """Exactly one branch must match: compiled as anyOf once the branches are made
    exclusive (see nodes/disjoint.py): a branch that no argument separates from another is
    given `not` of it, folded when built (refused there, naming the oneOf, where it cannot be)."""
    assert node.one_of is not None
    build.fuel.burn(node.pointer, "branch", len(node.one_of.branches) ** 2)  # made exclusive pair by pair
    keyword_pointer = node.one_of.pointer
    rest = node.without(one_of=None)
    merged = [_merged(build, rest, branch) for branch in node.one_of.branches]
    kept = [(index, found) for index, found in enumerate(merged) if found is not None]
    separation = exclusions(build.document, [branch for _, (branch, _) in kept], build.accepts)
    builders: list[Callable[[], Node]] = []
    # Each branch is built inside the references of the branches merged before it too: a
    # recursive oneOf stops sooner (fewer documents, never invalid ones), as it always has.
    counted: list[Reference] = []
    for position, (index, (branch, refs)) in enumerate(kept):
        counted += refs
        names, values = separation.properties[position], separation.values[position]
        conjunction = build.conjunction(node.pointer)
        if names:
            branch = conjunction.pair(branch, forbidding(node.pointer, tuple(names)))
        if values:
            branch = conjunction.pair(branch, excluding(node.pointer, tuple(values)))
        for other in separation.negated[position]:
            written = kept[other][0]
            where = join_pointer(keyword_pointer, str(written))
            branch = conjunction.pair(branch, negated_node(where, Sub(node.one_of.branches[written].parts, where)))
        builders.append(build.resolved_builder(branch, join_pointer(keyword_pointer, index), list(counted)))
    return alt(*build.surviving(builders))


def _merged(build: Build, rest: SchemaNode, branch: Sub) -> tuple[Resolved, list[Reference]] | None:
    """The branch merged with the keywords beside it, and the references that took; None
    when no value satisfies it (it can never be the one branch that matches)."""
    conjunction = build.conjunction(branch.pointer)
    try:
        merged = conjunction.resolve(Sub((rest, *branch.parts), branch.pointer))
    except UnsupportedSchema:
        raise
    except SchemaError:
        return None
    return None if merged is False else (merged, conjunction.refs)
