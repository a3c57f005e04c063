"""Withholding doubtful values: `null` in place of a value the model was not sure of, or of one
the document does not state, where the schema allows `null` there; an array item the model was
not sure of removed from its array, where the schema allows the array without it. A caller who
prefers no value to a doubtful one gets that, and is told of each doubtful value kept.

    result = withhold(text, evidence, compiled, min_confidence=0.5, abstain=True, null_unstated=True)
    result.text, result.value, result.evidence, result.flagged

Two kinds of doubt, each leaf value's evidence (core.results.evidence) telling it:
- doubtful: a value whose confidence is below `min_confidence` (values with no confidence, no
  choice made, never are);
- unstated: a value written under grounding that was released from it (`grounded` false) and
  has no span in the document: the document does not state it, the model wrote it.

What is done, each step kept only where the whole document still validates (the schema's own
validator, formats included: `"type": ["string", "null"]` allows a null, `"type": "string"` does
not, a `required` property stays, `minItems` keeps an item):
1. `null_unstated` (the default): each unstated array item (a string, number or other leaf item
   the document does not state: an invented identifier in a list of them) is removed from its
   array, the least sure first, and each unstated value left becomes `null`.
2. `abstain`: each doubtful array item is removed from its array, the least sure first. A leaf
   item is doubtful as a leaf is; an object or array item goes by its first leaf with a
   confidence (what names a record, as a dependency's name does: the model unsure of it was
   unsure of the record; a record whose name it was sure of stays, its doubtful leaves null
   where they may be).
3. `abstain`: each doubtful leaf left becomes `null`.
Every doubtful or unstated value that stays is flagged as kept, so the caller can say so.

The rest of the text is kept byte for byte, each number as the model wrote it; a removed item
takes one separator with it (`[a, b, c]` without `b` is `[a, c]`). The evidence is re-keyed to
the pointers of the new text (an item after a removed one moves up), and a value written as
`null` has no span, confidence or grounding left: nothing of the model's value is claimed there.
Flagged values keep the pointers they had in the text as the model wrote it.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import GenerationError
from ..index.compiled import CompiledSchema
from ..json_reader import Item, Leaf, read_leaves
from .evidence import ValueEvidence

Reason = Literal["doubtful", "unstated"]
Disposition = Literal["null", "dropped", "kept"]  # what became of a flagged value


@dataclass(frozen=True)
class FlaggedValue:
    """A value the model was not sure of (`doubtful`: its confidence below the threshold) or
    that the document does not state (`unstated`: released from grounding, no span), and what
    became of it: written as `null`, `dropped` from its array, or `kept` (the schema allows
    neither there, or withholding was not asked for). `pointer` is where the model wrote it,
    before any item was dropped; `value` what it wrote there."""

    pointer: str
    value: Any
    confidence: float | None
    reason: Reason
    outcome: Disposition
    item: bool = False  # the value is an array item itself (kept: its array may not lose it)


@dataclass(frozen=True)
class Withholding:
    """The result of `withhold`: the text and its evidence after it, the validated value where
    anything changed (None where nothing did), and the flagged values in document order."""

    text: str
    value: Any
    evidence: dict[str, ValueEvidence]
    flagged: list[FlaggedValue]

    @property
    def changed(self) -> bool:
        return any(flag.outcome != "kept" for flag in self.flagged)


def unstated(found: ValueEvidence | None) -> bool:
    """Whether a value's evidence says the document does not state it: written under grounding,
    released from it (`grounded` false), and found nowhere in the document (no span)."""
    return found is not None and found.grounded is False and found.span is None


def withhold(
    text: str,
    evidence: Mapping[str, ValueEvidence],
    compiled: CompiledSchema,
    *,
    min_confidence: float | None = None,
    abstain: bool = False,
    null_unstated: bool = True,
) -> Withholding:
    """`text` with the doubtful and unstated values withheld as asked (see the module's
    docstring): `null_unstated` writes `null` for the unstated ones, `abstain` (with
    `min_confidence`) drops the doubtful array items and writes `null` for the doubtful leaves,
    each where the document still validates. Every unstated value, and with `min_confidence`
    every doubtful one, is flagged with what became of it."""
    data = text.encode("utf-8")
    read = read_leaves(data)
    all_leaves, items = read.leaves, read.items
    plan = _Plan(data, items, compiled)
    flags: dict[str, tuple[int, FlaggedValue]] = {}  # by pointer: (its start, its flag)

    whole_items = {(item.start, item.end) for item in items}

    def flag(leaf: Leaf | Item, value: Any, confidence: float | None, reason: Reason, outcome: Disposition) -> None:
        item = isinstance(leaf, Item) or (leaf.start, leaf.end) in whole_items
        flags[leaf.pointer] = (leaf.start, FlaggedValue(leaf.pointer, value, confidence, reason, outcome, item))

    def confidence_of(leaf: Leaf) -> float | None:
        found = evidence.get(leaf.pointer)
        return None if found is None else found.confidence

    written = [leaf for leaf in all_leaves if leaf.value is not None]
    not_stated = [leaf for leaf in written if unstated(evidence.get(leaf.pointer))]
    stated_null: set[Leaf] = set()
    if null_unstated:
        for item, confidence in plan.drop(_unstated_items(items, not_stated, confidence_of)):
            flag(item, _value(data, item), confidence, "unstated", "dropped")
        not_stated = [leaf for leaf in not_stated if not plan.inside_dropped(leaf)]
        stated_null = plan.null(not_stated)
    for leaf in not_stated:
        flag(leaf, leaf.value, confidence_of(leaf), "unstated", "null" if leaf in stated_null else "kept")
    if min_confidence is not None:
        threshold = min_confidence
        doubtful = [
            leaf
            for leaf in written
            if leaf not in stated_null
            and not plan.inside_dropped(leaf)
            and (confidence := confidence_of(leaf)) is not None
            and confidence < threshold
        ]
        doubtful_null: set[Leaf] = set()
        if abstain:
            for item, confidence in plan.drop(_doubtful_items(items, written, evidence, threshold)):
                for pointer in [pointer for pointer, (start, _) in flags.items() if item.start <= start < item.end]:
                    del flags[pointer]  # the item's removal says it all
                flag(item, _value(data, item), confidence, "doubtful", "dropped")
            doubtful = [leaf for leaf in doubtful if not plan.inside_dropped(leaf)]
            doubtful_null = plan.null(doubtful)
        for leaf in doubtful:
            if leaf in doubtful_null:
                flag(leaf, leaf.value, confidence_of(leaf), "doubtful", "null")
            elif leaf.pointer not in flags:  # one kept that the document does not state is named so
                flag(leaf, leaf.value, confidence_of(leaf), "doubtful", "kept")
    flagged = [found for _, found in sorted(flags.values(), key=lambda pair: pair[0])]
    if not plan.changed:
        return Withholding(text, None, dict(evidence), flagged)
    new_text = plan.text()
    return Withholding(new_text, compiled.validate(new_text), plan.evidence(all_leaves, evidence), flagged)


def _unstated_items(
    items: list[Item], not_stated: list[Leaf], confidence_of: Callable[[Leaf], float | None]
) -> list[tuple[Item, float | None]]:
    """The array items that are unstated values themselves (a string item the document does not
    state, as an invented identifier in a list of them), the least sure first: such an item is
    dropped from its array rather than written as `null` in it."""
    whole = {(item.start, item.end): item for item in items}
    found = [(whole[leaf.start, leaf.end], confidence_of(leaf)) for leaf in not_stated if (leaf.start, leaf.end) in whole]
    return [(item, confidence) for item, confidence in sorted(found, key=lambda pair: (pair[1] or 0.0, -pair[0].start))]


def _doubtful_items(
    items: list[Item], written: list[Leaf], evidence: Mapping[str, ValueEvidence], threshold: float
) -> list[tuple[Item, float]]:
    """The array items below `threshold` (see the module's docstring) with their confidence,
    the least sure first (of equals, the later first)."""
    starts = [leaf.start for leaf in written]  # in order
    found: list[tuple[Item, float]] = []
    for item in items:
        inside = written[bisect.bisect_left(starts, item.start) : bisect.bisect_left(starts, item.end)]
        confidences = [
            confidence
            for leaf in inside
            if (known := evidence.get(leaf.pointer)) is not None and (confidence := known.confidence) is not None
        ][:1]
        if confidences and confidences[0] < threshold:
            found.append((item, confidences[0]))
    return sorted(found, key=lambda pair: (pair[1], -pair[0].start))


def _value(data: bytes, item: Item) -> Any:
    return json.loads(data[item.start : item.end])


class _Plan:
    """The changes to the text decided so far (leaves written as `null`, items dropped), each
    tried on the text as the model wrote it with those before it, and kept where the schema
    still holds."""

    def __init__(self, data: bytes, items: list[Item], compiled: CompiledSchema) -> None:
        self._data = data
        self._compiled = compiled
        self._siblings: dict[str, list[Item]] = {}
        for item in items:
            self._siblings.setdefault(item.array, []).append(item)
        for siblings in self._siblings.values():
            siblings.sort(key=lambda item: item.index)
        self._nulls: set[Leaf] = set()
        self._drops: set[Item] = set()

    @property
    def changed(self) -> bool:
        return bool(self._nulls or self._drops)

    def inside_dropped(self, part: Leaf | Item) -> bool:
        """Whether `part` is a dropped item or lies inside one."""
        return any(item.start <= part.start and part.end <= item.end for item in self._drops)

    def null(self, candidates: list[Leaf]) -> set[Leaf]:
        """Of `candidates`, those now written as `null`: all at once where the document then
        validates (one validation: where no keyword ties values together, as in most schemas,
        that is the answer); else one by one from the last to the first, each kept where the
        document with it, and with those before it, validates."""
        if not candidates:
            return set()
        if self._valid(self._nulls | set(candidates), self._drops):
            self._nulls |= set(candidates)
            return set(candidates)
        kept: set[Leaf] = set()
        for leaf in reversed(candidates):
            if self._valid(self._nulls | {leaf}, self._drops):
                self._nulls.add(leaf)
                kept.add(leaf)
        return kept

    def drop(self, candidates: Sequence[tuple[Item, float | None]]) -> list[tuple[Item, float | None]]:
        """Of `candidates` (items with their confidence, the least sure first), those now
        dropped, none inside another: all at once where the document then validates (one
        validation); else one by one in their order, each kept where the document without it,
        and without those before it, validates."""
        outermost = [(item, confidence) for item, confidence in candidates if not _within(item, (i for i, _ in candidates))]
        if not outermost:
            return []
        if self._valid(self._nulls, self._drops | {item for item, _ in outermost}):
            self._drops |= {item for item, _ in outermost}
            return outermost
        dropped: list[tuple[Item, float | None]] = []
        for item, confidence in candidates:
            if not self.inside_dropped(item) and self._valid(self._nulls, self._drops | {item}):
                dropped = [(kept, c) for kept, c in dropped if not _within(kept, [item])]
                self._drops = {kept for kept in self._drops if not _within(kept, [item])} | {item}
                dropped.append((item, confidence))
        return dropped

    def _valid(self, nulls: set[Leaf], drops: set[Item]) -> bool:
        try:
            self._compiled.validate(self._text(nulls, drops))  # as the extraction's own text was: formats, deep nesting
        except GenerationError:
            return False
        return True

    def text(self) -> str:
        return self._text(self._nulls, self._drops)

    def _text(self, nulls: set[Leaf], drops: set[Item]) -> str:
        cuts = [(leaf.start, leaf.end, b"null") for leaf in nulls]
        for array in {item.array for item in drops}:
            cuts += [(start, end, b"") for start, end in _removed(self._siblings[array], drops)]
        pieces, at = [], 0
        for start, end, replacement in sorted(cuts, key=lambda cut: (cut[0], -cut[1], len(cut[2]))):
            if start < at:
                continue  # inside a removed item (a removal sorts before a null where they start together)
            pieces += [self._data[at:start], replacement]
            at = end
        pieces.append(self._data[at:])
        return b"".join(pieces).decode("utf-8")

    def evidence(self, old_leaves: list[Leaf], evidence: Mapping[str, ValueEvidence]) -> dict[str, ValueEvidence]:
        """`evidence` by the pointers of the new text: each leaf left keeps its own (one written
        as `null` none of it), in order; those of dropped items are gone."""
        left = [leaf for leaf in old_leaves if not self.inside_dropped(leaf)]
        new_leaves = read_leaves(self.text().encode("utf-8")).leaves
        moved: dict[str, ValueEvidence] = {}
        for old, new in zip(left, new_leaves, strict=True):
            if old in self._nulls:
                moved[new.pointer] = ValueEvidence(None, None, None)
            elif (found := evidence.get(old.pointer)) is not None:
                moved[new.pointer] = found
        return moved


def _within(part: Leaf | Item, items: Iterable[Item]) -> bool:
    """Whether `part` lies inside one of `items` (other than itself)."""
    return any(item.start <= part.start and part.end <= item.end and part != item for item in items)


def _removed(siblings: list[Item], drops: Iterable[Item]) -> list[tuple[int, int]]:
    """The byte ranges to cut to remove the `drops` among an array's items `siblings` (in
    order), each with one separator: an item before the last kept one with the separator after
    it, those after the last kept one with the separator before them, all of them whole."""
    dropped = {item.index for item in drops if item.array == siblings[0].array}
    kept = [item for item in siblings if item.index not in dropped]
    if not kept:
        return [(siblings[0].start, siblings[-1].end)]
    last = kept[-1].index
    cuts = [(item.start, siblings[item.index + 1].start) for item in siblings if item.index in dropped and item.index < last]
    if siblings[-1].index > last:
        cuts.append((kept[-1].end, siblings[-1].end))
    return cuts
