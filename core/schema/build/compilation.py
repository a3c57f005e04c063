"""One compilation of typed nodes into a regex tree: the state it keeps (references being
expanded, trees built, work counted, the validator) and the dispatch of a merged node to the
builder of each part: `not` (negation.py), anyOf/oneOf (unions.py), enum/const (values.py),
and per type strings.py, numbers.py, arrays.py, objects.py. Compilation is the one
implementation of the `Build` protocol (protocol.py) those builders are written against.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from ...automaton.regex import Node, alt, lit
from ...errors import SchemaError, UnsupportedSchema
from ...jsontext import join_pointer, json_in
from ..lexical.scalars import json_text
from ..nodes.conjunction import Conjunction, Resolved
from ..nodes.render import Dialect, render, render_sub
from ..nodes.schema_document import SchemaDocument
from ..nodes.schema_node import Reference, SchemaNode, Sub, generated_types, subschemas
from ..read.validation import Validator, validator_for_schema
from ..refusals import DepthCut
from ..work_limits import Floor, Fuel
from .arrays import array_tree
from .negation import fold_not
from .numbers import integer_tree, number_tree
from .objects import object_tree
from .protocol import Build
from .reach import References
from .strings import string_tree
from .trees import GENERIC_DEPTH, free_value
from .unions import any_of_tree, one_of_tree
from .values import enum_tree


class Compilation:
    """One compilation: the document's nodes, the references being expanded (for the
    recursion depth), trees built so far, and the work counted."""

    def __init__(self, document: SchemaDocument, recursion_depth: int, fuel: Fuel) -> None:
        self.document = document
        self.recursion_depth = recursion_depth
        self.fuel = fuel
        self.floor = Floor()
        self.ref_counts: collections.Counter[str] = collections.Counter()  # by target pointer
        self.references = References(document.resources)
        # None written, or none recursive: no tree depends on the references being expanded.
        self._refs_written = document.resources.references_written and self.references.recursive()
        self.reaches: dict[int, tuple[SchemaNode, frozenset[str]]] = {}
        self.memo: dict[Hashable, tuple[object, Node]] = {}
        self.strings: dict[Hashable, Node] = {}  # string trees by their keywords' contents
        self.numbers: dict[Hashable, Node] = {}  # integer and number trees by their keywords' contents
        self.resolutions: dict[Hashable, tuple[Sub, Resolved, list[Reference]]] = {}
        self.dialect = Dialect(document.draft4, "dependentRequired" in document.asserting)
        self._root_validator: Validator | None = None

    def refuse(self, keyword: str, pointer: str, reason: str = "") -> None:
        """Refuse `keyword` written at `pointer` (its own pointer); returns when lenient."""
        self.document.refusals.refuse(UnsupportedSchema(keyword, pointer, reason))

    def conjunction(self, pointer: str) -> Conjunction:
        return Conjunction(self.document, self.fuel, pointer)

    def validator(self, schema: SchemaNode | Sub | bool) -> Validator:
        """A validator for a node (written as a schema; see nodes/render.py): its references resolve
        inside the root, and none is ever retrieved."""
        if self._root_validator is None:
            self._root_validator = validator_for_schema(self.document.root)
        if isinstance(schema, SchemaNode):
            written: Any = render(schema, self.dialect)
        else:
            written = render_sub(schema, self.dialect) if isinstance(schema, Sub) else schema
        return self._root_validator.evolve(schema=written)

    def accepts(self, schema: SchemaNode | bool, value: Any) -> bool | None:
        """Whether `schema` accepts `value`; None when the validator cannot say."""
        try:
            return bool(self.validator(schema).is_valid(value))
        except Exception:
            return None

    def value(self, sub: Sub) -> Node:
        """The tree of `sub`; memoised per (parts, references being expanded)."""
        if sub.is_true():
            return free_value(GENERIC_DEPTH)
        key = ("sub", sub.key, sub.pointer, self._expanding(self._sub_reach(sub)) if self._refs_written else ())
        found = self.memo.get(key)
        if found is None:
            resolved, refs = self.resolve(sub)
            found = (sub, self.inside_refs(refs, lambda: self.resolved(resolved, sub.pointer)))
            self.memo[key] = found
        return found[1]

    def resolve(self, sub: Sub) -> tuple[Resolved, list[Reference]]:
        """The one plain node `sub` amounts to and the references followed to it; merged once
        per subschema (a merge does not depend on the references being expanded)."""
        key = (sub.key, sub.pointer)
        found = self.resolutions.get(key)
        if found is None:
            conjunction = self.conjunction(sub.pointer)
            found = (sub, conjunction.resolve(sub), conjunction.refs)  # the sub is kept so its made parts' ids stay unique
            self.resolutions[key] = found
        return found[1], found[2]

    def resolved(self, node: Resolved, pointer: str) -> Node:
        """The tree of a merged node; memoised per (node, references being expanded)."""
        if node is True:
            return free_value(GENERIC_DEPTH)
        if node is False:
            raise SchemaError(f"the schema at {pointer or '/'} is `false`: no value can satisfy it")
        key = ("node", id(node), self._expanding(self._node_reach(node)) if self._refs_written else ())
        found = self.memo.get(key)
        if found is None:
            self.fuel.burn(node.pointer)
            found = (node, self._dispatch(node))  # the node is kept so its id stays unique
            self.memo[key] = found
        return found[1]

    def _expanding(self, reach: frozenset[str]) -> Hashable:
        """How often each reference in `reach` is being expanded (counts at the depth limit
        alike): all that the tree of a subschema that can meet only `reach` depends on."""
        depth = self.recursion_depth
        return tuple(sorted((ref, min(count, depth)) for ref, count in self.ref_counts.items() if ref in reach))

    def _sub_reach(self, sub: Sub) -> frozenset[str]:
        found: frozenset[str] = frozenset()
        for part in sub.parts:
            if isinstance(part, str):
                found |= self.references.below(part)
            elif isinstance(part, SchemaNode):
                found |= self._node_reach(part)
        return found

    def _node_reach(self, node: SchemaNode) -> frozenset[str]:
        """The references a walk from `node` may expand (see reach.py)."""
        found = self.reaches.get(id(node))
        if found is None:
            reach = frozenset().union(*(self._sub_reach(sub) for sub in subschemas(node)))
            if node.ref is not None:
                reach |= self.references.of_ref(node.ref.target)
            found = self.reaches[id(node)] = (node, reach)  # the node is kept so its id stays unique
        return found[1]

    def builder(self, sub: Sub) -> Callable[[], Node]:
        """A deferred `value` call (a Python closure: deep schemas recurse through it)."""

        def build() -> Node:
            return self.value(sub)

        return build

    def resolved_builder(self, node: Resolved, pointer: str, refs: list[Reference]) -> Callable[[], Node]:
        """A deferred `resolved` call inside `refs`."""

        def build() -> Node:
            return self.inside_refs(refs, lambda: self.resolved(node, pointer))

        return build

    def surviving(self, builders: Sequence[Callable[[], Node]]) -> list[Node]:
        """The branches that can be built: within the recursion depth and satisfiable (at
        least one must be)."""
        nodes: list[Node] = []
        failure: DepthCut | SchemaError | None = None
        try:
            for build in builders:
                try:
                    nodes.append(build())
                except UnsupportedSchema:
                    raise
                except (DepthCut, SchemaError) as error:  # an unsatisfiable branch is simply left out
                    failure = error
            if not nodes and failure is not None:
                raise failure
            return nodes
        finally:
            # This frame is in the traceback of whatever leaves it (the failure, or a refusal
            # raised by a later branch): holding the failure would make a cycle through every
            # frame and tree of the compilation, left for the cyclic collector.
            failure = None

    def inside_refs(self, refs: list[Reference], build: Callable[[], Node]) -> Node:
        """Run `build` with `refs` marked as being expanded, refusing recursion through them."""
        for ref in refs:
            if self.ref_counts[ref.target] >= self.recursion_depth:
                raise DepthCut(ref.ref, ref.pointer)
        counts = self.ref_counts
        counts.update(ref.target for ref in refs)
        try:
            return build()
        finally:
            for ref in refs:  # a reference no longer expanded leaves: _expanding reads only those being expanded
                counts[ref.target] -= 1
                if not counts[ref.target]:
                    del counts[ref.target]

    def _dispatch(self, node: SchemaNode) -> Node:
        if node.nots and node.values is None:
            # Beside enum/const, `not` is enforced exactly by filtering the listed values.
            folded, refs = fold_not(self, node)
            return self.inside_refs(refs, lambda: self.resolved(folded, node.pointer))
        if node.any_of is not None:
            return any_of_tree(self, node)
        if node.one_of is not None:
            return one_of_tree(self, node)
        if node.values is not None:
            return enum_tree(self, node)
        trees = [tree for name in generated_types(node) if (tree := self._typed(name, node)) is not None]
        if not trees:
            raise SchemaError(f"`not` at {node.pointer or '/'} excludes every value the schema allows")
        return alt(*trees)

    def _typed(self, name: str, node: SchemaNode) -> Node | None:
        """The values of one type; None when `not` excludes all of them."""
        excluded = node.excluded
        if name in ("null", "boolean"):
            kept = [v for v in ((None,) if name == "null" else (True, False)) if not json_in(v, excluded)]
            return alt(*(lit(json_text(v)) for v in kept)) if kept else None
        kind = {"integer": (int, float), "number": (int, float), "string": (str,), "array": (list,), "object": (dict,)}[name]
        if name in ("number", "array", "object") and any(isinstance(v, kind) and not isinstance(v, bool) for v in excluded):
            self.refuse("not", join_pointer(node.pointer, "not"), f"excluding {name} values is not supported")
        builders: dict[str, Callable[[Build, SchemaNode], Node]] = {
            "integer": integer_tree,
            "number": number_tree,
            "string": string_tree,
            "array": array_tree,
            "object": object_tree,
        }
        return builders[name](self, node)
