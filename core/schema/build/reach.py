"""Which references can be met below a subschema, so that a compiled tree can be shared
between every place where the references being expanded agree on those.

A recursive `$ref` is unrolled a limited number of times along a path, so the tree of a
subschema depends on how often each reference has been expanded above it, but only for the
references it can meet below. A reference is known by the pointer of the schema it names (the
same text names different schemas inside different embedded resources). Read from the schema
as written (every `$ref` anywhere below, followed through their targets): a superset, so
sharing is never wrong, only rarer.
"""

from __future__ import annotations

import bisect
from typing import Any

from ...errors import SchemaError
from ...jsontext import Place, join_pointer, place_pointer
from ..read.resources import Resources


class References:
    """The references reachable from each subschema of one root (memoised per pointer)."""

    def __init__(self, resources: Resources) -> None:
        self.resources = resources
        self._direct: dict[str, frozenset[str]] = {}
        self._closure: dict[str, frozenset[str]] = {}
        self._below: dict[str, frozenset[str]] = {}
        self._sorted: tuple[list[str], list[str]] | None = None  # see _holders
        self._site_targets: dict[int, frozenset[str]] = {}

    def below(self, pointer: str) -> frozenset[str]:
        """Every reference (by target) that a walk from the schema at `pointer` may expand,
        following references."""
        found = self._below.get(pointer)
        if found is None:
            direct = self._direct_refs(self.resources.raw(pointer), pointer)
            found = self._below[pointer] = direct.union(*(self.of_ref(target) for target in direct))
        return found

    def recursive(self) -> bool:
        """Whether a reference written in the root can be met again below its own target (a
        recursion the depth limit unrolls; read as written, as `below` is: a superset). Where
        none can, a reference is never expanded inside itself, so the depth limit cuts the same
        everywhere: no tree depends on the references being expanded, and none needs its reach
        reckoned."""
        on_path: set[str] = set()
        done: set[str] = set()
        for start in self.below(""):
            if start in done:
                continue
            stack = [(start, iter(self._targets_below(start)))]
            on_path.add(start)
            while stack:
                target, following = stack[-1]
                for reached in following:
                    if reached in on_path:
                        return True
                    if reached not in done:
                        on_path.add(reached)
                        stack.append((reached, iter(self._targets_below(reached))))
                        break
                else:
                    stack.pop()
                    on_path.discard(target)
                    done.add(target)
        return False

    def _targets_below(self, target: str) -> frozenset[str]:
        """The targets of the `$ref`s written inside the schema at `target`."""
        return self._direct_refs(self.resources.raw(target), target)

    def of_ref(self, target: str) -> frozenset[str]:
        """`target` and every reference reachable from the schema there."""
        found = self._closure.get(target)
        if found is None:
            seen, queue = {target}, [target]
            while queue:
                reached_from = queue.pop()
                for reached in self._direct_refs(self.resources.raw(reached_from), reached_from):
                    if reached not in seen:
                        seen.add(reached)
                        queue.append(reached)
            found = self._closure[target] = frozenset(seen)
        return found

    def _direct_refs(self, raw: Any, pointer: str) -> frozenset[str]:
        """The targets of the `$ref`s written anywhere inside `raw` (at `pointer`): those of
        the objects holding one at `pointer` or below it, found by their pointers, sorted."""
        if not isinstance(raw, dict | list):
            return frozenset()
        found = self._direct.get(pointer)
        if found is None:
            holders = self._holders()[0]
            below = pointer + "/"  # (not every pointer between `pointer` and `below` is below it: "/a!")
            at = bisect.bisect_left(holders, pointer)
            inside = [at] if at < len(holders) and holders[at] == pointer else []
            at = bisect.bisect_left(holders, below, at)
            while at < len(holders) and holders[at].startswith(below):
                inside.append(at)
                at += 1
            found = frozenset().union(*(self._site_target(index) for index in inside))
            self._direct[pointer] = found
        return found

    def _site_target(self, index: int) -> frozenset[str]:
        """_target of the `$ref` the `index`th holder holds (each resolved once: an object deep
        in the root is inside many of the subschemas asked about)."""
        found = self._site_targets.get(index)
        if found is None:
            holders, refs = self._holders()
            found = self._site_targets[index] = self._target(refs[index], join_pointer(holders[index], "$ref"))
        return found

    def _holders(self) -> tuple[list[str], list[str]]:
        """The pointer of every object anywhere in the root that holds a `$ref` string, sorted,
        and that string: found in one walk, in which a value's place is a link to its parent's,
        written out as a pointer only for such an object."""
        if self._sorted is None:
            found: list[tuple[str, str]] = []
            stack: list[tuple[Any, Place]] = [(self.resources.root, None)]
            while stack:
                value, place = stack.pop()
                if isinstance(value, dict):
                    if isinstance(value.get("$ref"), str):
                        found.append((place_pointer(place), value["$ref"]))
                    stack.extend((child, (place, key)) for key, child in value.items() if isinstance(child, dict | list))
                elif isinstance(value, list):  # (the root may be neither: a boolean schema)
                    stack.extend((child, (place, index)) for index, child in enumerate(value) if isinstance(child, dict | list))
            found.sort()
            self._sorted = ([pointer for pointer, _ in found], [ref for _, ref in found])
        return self._sorted

    def _target(self, ref: str, where: str) -> frozenset[str]:
        try:
            return frozenset({self.resources.resolve(ref, where)[1]})
        except SchemaError:
            return frozenset()  # refused where it is reached
