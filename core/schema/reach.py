"""Which references can be met below a subschema, so that a compiled tree can be shared
between every place where the references being expanded agree on those.

A recursive `$ref` is unrolled a limited number of times along a path, so the tree of a
subschema depends on how often each reference has been expanded above it, but only for the
references it can meet below. Read from the schema as written (every `$ref` string anywhere
below, followed through their targets): a superset, so sharing is never wrong, only rarer.
"""

from __future__ import annotations

from typing import Any

from ..errors import SchemaError
from .load import Schema, resolve_ref


class References:
    """The references reachable from each subschema of one root (memoised per object)."""

    def __init__(self, root: Schema) -> None:
        self.root = root
        self._direct: dict[int, tuple[Any, frozenset[str]]] = {}
        self._closure: dict[str, frozenset[str]] = {}
        self._below: dict[int, tuple[Any, frozenset[str]]] = {}

    def below(self, raw: Any) -> frozenset[str]:
        """Every reference that a walk from `raw` may expand, following references."""
        found = self._below.get(id(raw))
        if found is None:
            direct = self._direct_refs(raw)
            found = (raw, direct.union(*(self.of_ref(ref) for ref in direct)))
            self._below[id(raw)] = found
        return found[1]

    def of_ref(self, ref: str) -> frozenset[str]:
        """`ref` and every reference reachable from its target."""
        found = self._closure.get(ref)
        if found is None:
            seen, queue = {ref}, [ref]
            while queue:
                for reached in self._direct_refs(self._target(queue.pop())):
                    if reached not in seen:
                        seen.add(reached)
                        queue.append(reached)
            found = self._closure[ref] = frozenset(seen)
        return found

    def _target(self, ref: str) -> Any:
        try:
            return resolve_ref(self.root, ref, "")[0]
        except SchemaError:
            return None  # refused where it is reached

    def _direct_refs(self, raw: Any) -> frozenset[str]:
        """The `$ref` strings written anywhere inside `raw`."""
        if not isinstance(raw, dict | list):
            return frozenset()
        found = self._direct.get(id(raw))
        if found is None:
            values = raw.values() if isinstance(raw, dict) else raw
            refs = frozenset().union(*(self._direct_refs(value) for value in values))
            ref = raw.get("$ref") if isinstance(raw, dict) else None
            found = (raw, refs | {ref} if isinstance(ref, str) else refs)
            self._direct[id(raw)] = found
        return found[1]
