"""Abstaining: `null` written in place of a value the model was not sure of, where the schema
allows `null` there, so a caller who prefers no value to a doubtful one gets that.

    text, withheld = abstain(text, evidence, compiled, 0.5)

A leaf value (string, number, boolean) whose confidence is below the threshold becomes `null`
when the whole document still validates with it so (the schema's own validator, formats
included): `"type": ["string", "null"]` allows it, `"type": "string"` does not, and
a `required` property stays. The rest of the text is kept byte for byte, each number as the
model wrote it. Values with no confidence (no choice was made) are kept.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import GenerationError
from ..grounding.value_evidence import ValueEvidence, leaves
from ..index.compiled import CompiledSchema


def abstain(
    text: str, evidence: Mapping[str, ValueEvidence], compiled: CompiledSchema, min_confidence: float
) -> tuple[str, list[str]]:
    """`text` with `null` for each leaf below `min_confidence` that may be null, and the JSON
    pointers of those leaves, in document order. Leaves are tried from the last to the first
    (so the byte ranges before each stay put), each kept as `null` only where the document
    with it, and with those already withheld, is valid."""
    data = text.encode("utf-8")
    withheld: list[str] = []
    for leaf in reversed(leaves(data)):
        found = evidence.get(leaf.pointer)
        if leaf.value is None or found is None or found.confidence is None or found.confidence >= min_confidence:
            continue
        tried = data[: leaf.start] + b"null" + data[leaf.end :]
        try:
            compiled.validate(tried.decode("utf-8"))  # as the extraction's own text was: formats, deep nesting
        except GenerationError:
            continue
        data = tried
        withheld.append(leaf.pointer)
    withheld.reverse()
    return data.decode("utf-8"), withheld
