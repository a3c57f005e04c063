"""Scoring extractions of the development set (bench/devset) against its gold values.

Used by bench/accuracy.py; no model here. Definitions:
- a field is right when its value equals the gold value: strings after Unicode NFC, whitespace
  runs as one space, ends stripped of whitespace and of one final period, case counting;
  numbers as numbers; arrays item by item, in order.
- a value is a span of the document when it occurs there, a space of the value matching a run
  of whitespace (what grounding allows); nothing else is forgiven.
- AUROC: the chance that a right value's confidence is above a wrong one's, ties counting half.
- a looping string ends in at least 3 copies (and 12 characters) of a unit of at most 20
  characters (`18.11.18.11.18.11`); a repeated item equals an earlier item of its array.
"""

from __future__ import annotations

import json
import re
import unicodedata
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

DEVSET = Path(__file__).resolve().parent / "devset"


@dataclass(frozen=True)
class Case:
    id: str
    schema: str
    text: str
    gold: dict[str, Any]


def load_devset(folder: Path = DEVSET) -> tuple[list[Case], dict[str, dict[str, Any]]]:
    """The documents with their gold values, and the schemas by name."""
    schemas = {path.stem: json.loads(path.read_text()) for path in sorted((folder / "schemas").glob("*.json"))}
    cases = []
    for line in (folder / "gold.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        text = (folder / record["file"]).read_text(encoding="utf-8")
        cases.append(Case(record["id"], record["schema"], text, record["gold"]))
    return interleave(cases), schemas


def interleave(cases: list[Case]) -> list[Case]:
    """The cases with the schemas taking turns, so the first N of them (--limit) mix all kinds."""
    by_schema: dict[str, list[Case]] = {}
    for case in cases:
        by_schema.setdefault(case.schema, []).append(case)
    queues = list(by_schema.values())
    return [queue[i] for i in range(max(map(len, queues), default=0)) for queue in queues if i < len(queue)]


# ---- comparing values -------------------------------------------------------------------


def normalise(value: Any) -> Any:
    if isinstance(value, str):
        text = " ".join(unicodedata.normalize("NFC", value).split())
        return text[:-1] if text.endswith(".") else text
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, list):
        return [normalise(item) for item in value]
    return value


def same(found: Any, gold: Any) -> bool:
    return type(normalise(found)) is type(normalise(gold)) and normalise(found) == normalise(gold)


def is_span(value: str, document: str) -> bool:
    """Whether `value` occurs in `document`, a space of the value matching a whitespace run."""
    pattern = r"\s+".join(re.escape(part) for part in value.split(" "))
    return re.search(pattern, document) is not None


def plain_string(schema: dict[str, Any]) -> bool:
    """Type string with no format, pattern, enum or const: what grounding holds to the document."""
    return schema.get("type") == "string" and not any(key in schema for key in ("format", "pattern", "enum", "const"))


def leaf_schemas(schema: dict[str, Any], value: Any, pointer: str = "") -> list[tuple[str, Any, dict[str, Any]]]:
    """(pointer, value, schema) of each leaf of `value` (objects by properties, arrays by items)."""
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        return [leaf for key, item in value.items() for leaf in leaf_schemas(properties.get(key, {}), item, f"{pointer}/{key}")]
    if isinstance(value, list):
        items = schema.get("items", {})
        return [leaf for index, item in enumerate(value) for leaf in leaf_schemas(items, item, f"{pointer}/{index}")]
    return [(pointer, value, schema)]


def gold_at(gold: dict[str, Any], pointer: str) -> Any:
    """The gold value at a leaf's pointer (`/names/1`), or a marker that never compares equal."""
    found: Any = gold
    for part in pointer.strip("/").split("/"):
        if isinstance(found, dict) and part in found:
            found = found[part]
        elif isinstance(found, list) and part.isdigit() and int(part) < len(found):
            found = found[int(part)]
        else:
            return Missing
    return found


class Missing:
    """No gold value at that pointer."""


# ---- runaway values ---------------------------------------------------------------------


def looping_tail(text: str, longest_period: int = 20, repeats: int = 3, least_chars: int = 12) -> str | None:
    """The repeating unit if `text` ends in at least `repeats` copies (and `least_chars`
    characters) of a unit of at most `longest_period` characters, else None."""
    n = len(text)
    for period in range(1, min(longest_period, n // repeats) + 1):
        length = period  # the longest suffix in which every character equals the one `period` later
        while length < n and text[n - length - 1] == text[n - length - 1 + period]:
            length += 1
        if length >= repeats * period and length >= least_chars:
            return text[n - period :]
    return None


def repeated_items(value: Any) -> list[Any]:
    """Items of any array in `value` equal to an earlier item of the same array."""
    found: list[Any] = []
    if isinstance(value, dict):
        for item in value.values():
            found += repeated_items(item)
    elif isinstance(value, list):
        seen: list[Any] = []
        for item in value:
            (found if item in seen else seen).append(item)
            found += repeated_items(item)
    return found


def strings_and_items(value: Any) -> tuple[list[str], int]:
    """The string leaves of `value`, and how many array items it has."""
    if isinstance(value, str):
        return [value], 0
    children = list(value.values()) if isinstance(value, dict) else value if isinstance(value, list) else []
    strings, items = [], len(value) if isinstance(value, list) else 0
    for child in children:
        more, count = strings_and_items(child)
        strings += more
        items += count
    return strings, items


# ---- one model, one mode ----------------------------------------------------------------


@dataclass
class Tally:
    documents: int = 0
    failed: int = 0
    fields: int = 0
    right: int = 0
    seconds: list[float] = field(default_factory=list)
    plain_strings: int = 0
    verbatim: int = 0
    spans: int = 0
    spans_exact: int = 0
    released: int = 0  # strings the library says were released from grounding
    confidences: list[tuple[float, bool]] = field(default_factory=list)
    confidences_by_kind: dict[str, list[tuple[float, bool]]] = field(default_factory=dict)  # leaf_kind -> pairs
    runaways: list[tuple[str, float | None]] = field(default_factory=list)  # near-repeat values over 200 characters
    no_confidence: int = 0
    strings: int = 0
    loops: list[str] = field(default_factory=list)
    items: int = 0
    duplicates: list[str] = field(default_factory=list)
    budget_closed: int = 0
    documents_looping: int = 0  # documents with at least one looping string
    documents_repeating: int = 0  # documents with at least one repeated array item
    by_field: dict[str, list[int]] = field(default_factory=dict)  # "schema/field" -> [right, total]
    not_verbatim: list[str] = field(default_factory=list)
    guard: dict[str, int] = field(default_factory=dict)  # the decoder's counts (bench/accuracy.py GUARD_STATS), summed
    kept: int = 0  # leaf values written (not null)
    kept_right: int = 0  # of those, right by the gold at their pointer
    # (reason, outcome) of values flagged by `withhold` (bench/accuracy.py --abstain) -> [right, total]
    flagged: dict[tuple[str, str], list[int]] = field(default_factory=dict)

    @property
    def accuracy(self) -> float:
        return self.right / max(self.fields, 1)

    @property
    def per_document(self) -> float:
        return float(np.mean(self.seconds)) if self.seconds else float("nan")


def auroc(pairs: list[tuple[float, bool]]) -> float | None:
    """P(a right value's confidence > a wrong one's), ties counting half; None without both."""
    scores = np.array([score for score, _ in pairs], dtype=float)
    right = np.array([ok for _, ok in pairs], dtype=bool)
    positive, negative = scores[right], scores[~right]
    if not len(positive) or not len(negative):
        return None
    above = (positive[:, None] > negative[None, :]).sum()
    ties = (positive[:, None] == negative[None, :]).sum()
    return float((above + 0.5 * ties) / (len(positive) * len(negative)))


def score(tally: Tally, case: Case, schema: dict[str, Any], value: Any, evidence: dict[str, Any], closed: bool) -> list[str]:
    """Add one extraction's figures to `tally`; returns notes on its wrong fields."""
    notes = []
    for name, gold in case.gold.items():
        ok = isinstance(value, dict) and name in value and same(value[name], gold)
        counts = tally.by_field.setdefault(f"{case.schema}/{name}", [0, 0])
        counts[0] += ok
        counts[1] += 1
        tally.fields += 1
        tally.right += ok
        if not ok:
            notes.append(f"{name}={json.dumps(value.get(name) if isinstance(value, dict) else None, ensure_ascii=False)[:60]}")
    for pointer, leaf, sub in leaf_schemas(schema, value):
        score_leaf(tally, case, pointer, leaf, sub, evidence.get(pointer))
    strings, items = strings_and_items(value)
    loops = [f"{case.id}: ...{text[-40:]!r}" for text in strings if looping_tail(text)]
    duplicates = [f"{case.id}: {item!r}" for item in repeated_items(value)]
    tally.strings += len(strings)
    tally.loops += loops
    tally.items += items
    tally.duplicates += duplicates
    tally.documents_looping += bool(loops)
    tally.documents_repeating += bool(duplicates)
    tally.budget_closed += closed
    return notes


def score_leaf(tally: Tally, case: Case, pointer: str, leaf: Any, sub: dict[str, Any], found: Any) -> None:
    if plain_string(sub) and isinstance(leaf, str):
        tally.plain_strings += 1
        if is_span(leaf, case.text):
            tally.verbatim += 1
        else:
            tally.not_verbatim.append(f"{case.id}{pointer}: {leaf[:50]!r}")
        tally.released += getattr(found, "grounded", None) is False
    span = getattr(found, "span", None)
    if span is not None:
        tally.spans += 1
        tally.spans_exact += " ".join(case.text[span[0] : span[1]].split()) == " ".join(str(leaf).split())
    confidence = getattr(found, "confidence", None)
    if isinstance(leaf, str) and near_repeat_value(leaf):
        tally.runaways.append((f"{case.id}{pointer}: {leaf[:40]!r}... ({len(leaf)} characters)", confidence))
    if confidence is None:
        tally.no_confidence += 1
    else:
        pair = (float(confidence), same(leaf, gold_at(case.gold, pointer)))
        tally.confidences.append(pair)
        tally.confidences_by_kind.setdefault(leaf_kind(sub, leaf), []).append(pair)


def right_value(gold: dict[str, Any], pointer: str, value: Any) -> bool:
    """Whether `value`, written at `pointer`, is right by the gold: an array item when the gold
    array holds it anywhere (an item dropped before it moves it up, and a list missing its first
    name still holds the others right), any other value when it equals the gold there."""
    holder = gold_at(gold, pointer.rsplit("/", 1)[0])
    if isinstance(holder, list):
        return any(same(value, item) for item in holder)
    return same(value, gold_at(gold, pointer))


def score_kept(tally: Tally, case: Case, schema: dict[str, Any], value: Any) -> None:
    """Count the leaf values written (not null: not withheld) and those of them right by the
    gold (right_value)."""
    for pointer, leaf, _ in leaf_schemas(schema, value):
        if leaf is not None:
            tally.kept += 1
            tally.kept_right += right_value(case.gold, pointer, leaf)


def score_flagged(tally: Tally, case: Case, flagged: list[dict[str, Any]]) -> None:
    """Count the values `withhold` flagged (`FlaggedValue`s as dicts), per reason and outcome,
    and how many of them were right by the gold (right_value, at the pointer the model wrote
    them at): a value withheld that was right is what withholding cost."""
    for found in flagged:
        counts = tally.flagged.setdefault((found["reason"], found["outcome"]), [0, 0])
        counts[0] += right_value(case.gold, found["pointer"], found["value"])
        counts[1] += 1


def near_repeat_value(text: str) -> bool:
    """A runaway value no exact period catches (`KDE/KDE/KDF/KDE/...`): over 200 characters
    that compress to 40% of their size or less (zlib)."""
    data = text.encode()
    return len(text) > 200 and len(zlib.compress(data, 9)) <= 0.4 * len(data)


def leaf_kind(schema: dict[str, Any], leaf: Any) -> str:
    """What a leaf value is, for the confidence figures per kind: an enum (or const), a date
    (format date or date-time), a boolean, a number, a string, or null."""
    if "enum" in schema or "const" in schema:
        return "enum"
    if schema.get("format") in ("date", "date-time"):
        return "date"
    if isinstance(leaf, bool):
        return "boolean"
    if isinstance(leaf, (int, float)):
        return "number"
    return "string" if isinstance(leaf, str) else "null"


Reliability = list[tuple[float, float, int, float, float]]  # (low, high, values, mean confidence, fraction right)


def calibration(pairs: list[tuple[float, bool]], bins: int = 10) -> tuple[float | None, Reliability]:
    """Expected calibration error of (confidence, right) pairs over `bins` equal-width bins of
    confidence, and the reliability diagram's data: (low, high, values, mean confidence,
    fraction right) of each non-empty bin. The error is the values' weighted mean distance
    between a bin's mean confidence and its fraction right; None without pairs."""
    if not pairs:
        return None, []
    rows = []
    error = 0.0
    for index in range(bins):
        low, high = index / bins, (index + 1) / bins
        inside = [(c, ok) for c, ok in pairs if low <= c < high or (index == bins - 1 and c == 1.0)]
        if not inside:
            continue
        mean = float(np.mean([c for c, _ in inside]))
        right = float(np.mean([ok for _, ok in inside]))
        rows.append((low, high, len(inside), mean, right))
        error += len(inside) / len(pairs) * abs(mean - right)
    return error, rows
