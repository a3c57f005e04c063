"""Refusals in one pass: strict compilation raises the first; lenient compilation records each
keyword it cannot enforce and goes on as if that keyword were absent.

Every place that refuses a keyword calls `refuse` and, when it returns, continues without the
keyword, so a schema check and lenient compilation collect every refusal in one compilation. A
refusal that is not relaxable (a reference that does not resolve, the compile-work limit) is
raised in both modes: the final validation could not check it, or the compilation would not
end in time. A place with valid values of which none is generated (a departure) is no refusal
but a SchemaError (`departure`), as for an unsatisfiable place.
"""

from __future__ import annotations

from ..errors import SchemaError, UnsupportedSchema


class Refusals:
    """The refusals of one compilation; `found` lists them in the order met, each once."""

    def __init__(self, lenient: bool = False) -> None:
        self.lenient = lenient
        self.found: list[UnsupportedSchema] = []
        self._seen: set[tuple[str, str]] = set()

    def refuse(self, refusal: UnsupportedSchema) -> None:
        """Raise `refusal`, or (lenient, relaxable) record it and return so the caller goes
        on without the keyword it names."""
        if not self.lenient or not refusal.relaxable:
            try:
                raise refusal
            finally:
                # This frame is in the refusal's traceback: holding the refusal too would make a
                # cycle keeping every frame of the compilation, and all they hold, alive until
                # the cyclic collector found it (megabytes, and a pause, after a refused schema).
                del refusal
        key = (refusal.keyword, refusal.pointer)
        if key not in self._seen:
            self._seen.add(key)
            self.found.append(refusal)


class DepthCut(Exception):
    """A recursive `$ref` reached the depth limit; the nearest optional place drops it (and
    where none does, the schema is refused naming the `$ref`)."""

    def __init__(self, ref: str, pointer: str) -> None:
        super().__init__(ref)
        self.ref, self.pointer = ref, pointer


def departure(keyword: str, pointer: str, why: str) -> SchemaError:
    """The error for a place where the schema has valid values but none of those generated
    (see the departures in docs/schema-support.md). A SchemaError, as for an unsatisfiable place: where the
    value is optional (a property, an anyOf branch) it is simply not generated."""
    return SchemaError(
        f"'{keyword}' at {pointer}: {why}",
        hint="the schema has valid values here, but none of the ones generated; widen the bounds or drop the keyword",
    )
