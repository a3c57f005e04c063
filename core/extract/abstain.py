"""Abstaining: `null` written in place of a value the model was not sure of, where the schema
allows `null` there, so a caller who prefers no value to a doubtful one gets that.

    text, withheld, value = abstain(text, evidence, compiled, 0.5)

A leaf value (string, number, boolean) whose confidence is below the threshold becomes `null`
when the whole document still validates with it so (the schema's own validator, formats
included): `"type": ["string", "null"]` allows it, `"type": "string"` does not, and
a `required` property stays. The rest of the text is kept byte for byte, each number as the
model wrote it. Values with no confidence (no choice was made) are kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import GenerationError
from ..grounding.value_evidence import Leaf, ValueEvidence, leaves
from ..index.compiled import CompiledSchema


def abstain(
    text: str, evidence: Mapping[str, ValueEvidence], compiled: CompiledSchema, min_confidence: float
) -> tuple[str, list[str], Any]:
    """`text` with `null` for each leaf below `min_confidence` that may be null, the JSON
    pointers of those leaves, in document order, and the document's value where any was
    withheld (None otherwise). All such leaves are first tried as `null` at once (one
    validation: where no keyword ties values together, as in most schemas, that is the
    answer); where that fails, one by one from the last to the first (so the byte ranges
    before each stay put), each kept as `null` only where the document with it, and with
    those already withheld, is valid."""
    data = text.encode("utf-8")
    doubtful = [
        leaf
        for leaf in leaves(data)
        if leaf.value is not None
        and (found := evidence.get(leaf.pointer)) is not None
        and found.confidence is not None
        and found.confidence < min_confidence
    ]
    if not doubtful:
        return text, [], None
    tried = _nulled(data, doubtful)
    try:
        return tried, [leaf.pointer for leaf in doubtful], compiled.validate(tried)
    except GenerationError:
        pass
    withheld: list[str] = []
    value: Any = None
    for leaf in reversed(doubtful):
        one = data[: leaf.start] + b"null" + data[leaf.end :]
        try:
            value = compiled.validate(one.decode("utf-8"))  # as the extraction's own text was: formats, deep nesting
        except GenerationError:
            continue
        data = one
        withheld.append(leaf.pointer)
    withheld.reverse()
    return data.decode("utf-8"), withheld, value


def _nulled(data: bytes, doubtful: list[Leaf]) -> str:
    """`data` with `null` in place of each leaf of `doubtful` (in document order)."""
    pieces, at = [], 0
    for leaf in doubtful:
        pieces += [data[at : leaf.start], b"null"]
        at = leaf.end
    pieces.append(data[at:])
    return b"".join(pieces).decode("utf-8")
