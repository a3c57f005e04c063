"""What a builder of one kind of value asks of the compilation it works in: the `Build` protocol.

The builders (arrays.py, numbers.py, objects.py, strings.py, unions.py, values.py, negation.py)
take the compilation as a `Build` and call back through it for every subschema, so none of them
imports compilation.py, which dispatches to them; compilation.py's Compilation is the one
implementation.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, Protocol

from ...automaton.regex import Node
from ..nodes.conjunction import Conjunction, Resolved
from ..nodes.schema_document import SchemaDocument
from ..nodes.schema_node import Reference, SchemaNode, Sub
from ..read.validation import Validator
from ..work_limits import Floor, Fuel


class Build(Protocol):
    """One compilation as its builders see it: the document's nodes, the work counted, the
    floors measured, string and number trees shared by their keywords, and the calls that build subschemas."""

    document: SchemaDocument
    fuel: Fuel
    floor: Floor
    strings: dict[Hashable, Node]  # string trees by their keywords' contents
    numbers: dict[Hashable, Node]  # integer and number trees by their keywords' contents

    def refuse(self, keyword: str, pointer: str, reason: str = "") -> None:
        """Refuse `keyword` written at `pointer` (its own pointer); returns when lenient."""

    def conjunction(self, pointer: str) -> Conjunction:
        """A merge of nodes for the schema at `pointer`, counting its work in `fuel`."""

    def validator(self, schema: SchemaNode | Sub | bool) -> Validator:
        """A validator for a node (written as a schema); none ever retrieves a reference."""

    def accepts(self, schema: SchemaNode | bool, value: Any) -> bool | None:
        """Whether `schema` accepts `value`; None when the validator cannot say."""

    def value(self, sub: Sub) -> Node:
        """The tree of `sub`."""

    def resolved(self, node: Resolved, pointer: str) -> Node:
        """The tree of a merged node."""

    def builder(self, sub: Sub) -> Callable[[], Node]:
        """A deferred `value` call."""

    def resolved_builder(self, node: Resolved, pointer: str, refs: list[Reference]) -> Callable[[], Node]:
        """A deferred `resolved` call inside `refs`."""

    def surviving(self, builders: Sequence[Callable[[], Node]]) -> list[Node]:
        """The branches that can be built: within the recursion depth and satisfiable (at least one must be)."""
