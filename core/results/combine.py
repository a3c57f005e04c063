"""The values extracted from the pieces of a long document, merged into one.

Pieces are merged in document order into the first piece's value, one addition at a time:
- an array gets the next piece's items appended, except exact duplicates of an item it holds
  (the same value with the same evidence spans: the same item read twice where pieces overlap);
- an object gets the next piece's properties it lacks (placed where that piece has them), and
  for a property both have, the two values are merged by these same rules;
- a null is replaced by the next piece's value; any other value stays (the first piece that
  gives a non-null value wins).
An addition after which the merged value would no longer validate against the whole schema
is left out, so the result always validates: with `maxItems` the first items are kept, with
`uniqueItems` the first of equal items, with `maxProperties` the first properties.

Each leaf keeps the exact JSON text the model wrote (`189.00` stays `189.00`) and its
evidence, its span moved by its piece's offset into the whole document.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Union

from jsonschema.protocols import Validator

from ..json_reader import read_leaves
from ..jsontext import json_leaves
from .evidence import ValueEvidence


@dataclass
class AnnotatedLeaf:
    """A leaf of a piece's value (a string, number, boolean or null): its value, its JSON text as
    the model wrote it, its evidence."""

    value: Any
    text: str
    evidence: ValueEvidence | None


AnnotatedValue = Union[AnnotatedLeaf, list["AnnotatedValue"], dict[str, "AnnotatedValue"]]  # noqa: UP007 - a runtime alias, read on Python 3.10


def annotate(output: str, evidence: dict[str, ValueEvidence], offset: int) -> AnnotatedValue:
    """The JSON text `output` as a tree whose leaves carry their text and evidence, spans
    moved by `offset` (the piece's start in the whole document)."""
    data = output.encode("utf-8")
    texts = {leaf.pointer: data[leaf.start : leaf.end].decode("utf-8") for leaf in read_leaves(data).leaves}
    moved = {p: _moved(e, offset) for p, e in evidence.items()}
    value = json.loads(output)
    return _tree(value, (AnnotatedLeaf(item, texts[where], moved.get(where)) for where, item in json_leaves(value)))


def _moved(found: ValueEvidence, offset: int) -> ValueEvidence:
    if found.span is None:
        return found
    return replace(found, span=(found.span[0] + offset, found.span[1] + offset))


def _tree(value: Any, annotated: Iterator[AnnotatedLeaf]) -> AnnotatedValue:
    """`value` with its leaves replaced, in order, by those of `annotated` (json_leaves order)."""
    if isinstance(value, dict):
        return {key: _tree(item, annotated) for key, item in value.items()}
    if isinstance(value, list):
        return [_tree(item, annotated) for item in value]
    return next(annotated)


def plain(node: AnnotatedValue) -> Any:
    """The JSON value of `node`."""
    if isinstance(node, dict):
        return {key: plain(item) for key, item in node.items()}
    if isinstance(node, list):
        return [plain(item) for item in node]
    return node.value


def dump(node: AnnotatedValue) -> str:
    """`node` as JSON text in the generator's layout, each leaf as the model wrote it."""
    if isinstance(node, dict):
        return "{" + ", ".join(f"{json.dumps(key, ensure_ascii=False)}: {dump(item)}" for key, item in node.items()) + "}"
    if isinstance(node, list):
        return "[" + ", ".join(dump(item) for item in node) + "]"
    return node.text


def evidence_of(node: AnnotatedValue, pointer: str = "") -> dict[str, ValueEvidence]:
    """Each leaf's evidence, by its JSON pointer in `node`."""
    return {where: leaf.evidence for where, leaf in json_leaves(node, pointer) if leaf.evidence is not None}


class Combiner:
    """The merged value so far; `add` each piece's value in document order."""

    def __init__(self, validator: Validator) -> None:
        self._validator = validator
        self._root: list[AnnotatedValue] = []  # the merged value, once the first piece has given one
        self.additions_left_out = 0  # additions that would have broken the schema

    @property
    def result(self) -> AnnotatedValue:
        return self._root[0]

    def add(self, node: AnnotatedValue) -> None:
        """Merge the next piece's value (which validates on its own) into the result."""
        if not self._root:
            self._root.append(node)
            return
        self._merge(self._root, 0, node)

    def _merge(self, parent: Any, slot: Any, incoming: AnnotatedValue) -> None:
        """Merge `incoming` into `parent[slot]` (a list's index or an object's key)."""
        current = parent[slot]
        if isinstance(current, AnnotatedLeaf) and current.value is None:
            if not (isinstance(incoming, AnnotatedLeaf) and incoming.value is None):
                self._try(partial(parent.__setitem__, slot, incoming), partial(parent.__setitem__, slot, current))
        elif isinstance(current, dict) and isinstance(incoming, dict):
            self._merge_objects(current, incoming)
        elif isinstance(current, list) and isinstance(incoming, list):
            for item in incoming:
                if not any(_same(item, held) for held in current):
                    self._try(partial(current.append, item), current.pop)

    def _merge_objects(self, current: dict[str, AnnotatedValue], incoming: dict[str, AnnotatedValue]) -> None:
        order = list(incoming)
        for index, (key, item) in enumerate(incoming.items()):
            if key in current:
                self._merge(current, key, item)
                continue
            before = [name for name in order[:index] if name in current]  # placed after these, as `incoming` has it
            position = list(current).index(before[-1]) + 1 if before else 0
            self._try(partial(_insert, current, key, item, position), partial(current.pop, key))

    def _try(self, apply: Callable[[], object], undo: Callable[[], object]) -> None:
        """Make one addition, and undo it if the merged value no longer validates."""
        apply()
        if not self._validator.is_valid(plain(self._root[0])):
            undo()
            self.additions_left_out += 1


def _insert(mapping: dict[str, AnnotatedValue], key: str, item: AnnotatedValue, position: int) -> None:
    """Put `key` at `position` in `mapping`'s order."""
    entries = list(mapping.items())
    entries.insert(position, (key, item))
    mapping.clear()
    mapping.update(entries)


def _same(first: AnnotatedValue, second: AnnotatedValue) -> bool:
    """Exact duplicates: equal JSON values whose leaves have the same spans."""
    return _identity(first) == _identity(second)


def _identity(node: AnnotatedValue) -> tuple[str, tuple[Any, ...]]:
    spans = tuple(found.span for found in evidence_of(node).values())
    return json.dumps(plain(node), sort_keys=True), spans
