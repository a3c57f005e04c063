"""Fit the exponent that turns a value's confidence into a probability, on extractions saved
from a labelled set kept apart from the development set (bench/calibset, built by
`bench/build_devset.py --exclude`), and show what it gives on any saved set.

A value's raw confidence is the product of the model's probabilities for its chosen tokens,
which understates how often the value is right (the more tokens, the lower). The library
reports that product raised to CONFIDENCE_EXPONENT (core/results/evidence.py): one
number, so the ranking of values (AUROC) is unchanged. Here each exponent from 0.05 to 1 is
scored by log loss (a proper scoring rule) over every leaf value with a confidence, all modes
pooled; the best is printed, with the expected calibration error (ECE, 10 bins) per mode and
kind of value at the exponent the library uses now and at the best. Then what `--abstain`
would keep at each `--min-confidence` P (every value taken as nullable): of the values whose
confidence is P or more, how many are right (precision), and how many of all right values they
are (recall).

    python bench/accuracy.py --models smollm2 --devset bench/calibset --save calib.jsonl
    python bench/calibrate.py calib.jsonl --devset bench/calibset          # fit
    python bench/accuracy.py --models smollm2 --save dev.jsonl
    python bench/calibrate.py dev.jsonl                                    # check on the development set
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from types import SimpleNamespace

from accuracy_scoring import DEVSET, Tally, auroc, calibration, load_devset, score

from gguf_extract.core.results.evidence import CONFIDENCE_EXPONENT


def raw_pairs(saved: Path, devset: Path) -> dict[str, dict[str, list[tuple[float, bool]]]]:
    """Per mode, per kind of value (and "all"): (raw confidence, right) of each leaf value."""
    cases, schemas = load_devset(devset)
    by_id = {case.id: case for case in cases}
    tallies: dict[str, Tally] = {}
    for line in saved.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        case = by_id[record["id"]]
        exponent = record.get("confidence_exponent")
        if exponent is None:  # saved before the exponent was recorded: 1 or 0.35, which cannot be told
            raise SystemExit(f"{saved}: no confidence_exponent in its records; save it again with bench/accuracy.py --save")
        evidence = {
            pointer: SimpleNamespace(
                span=found["span"],
                grounded=found.get("grounded"),
                confidence=None if found["confidence"] is None else found["confidence"] ** (1 / exponent),
            )
            for pointer, found in record.get("evidence", {}).items()
        }
        tally = tallies.setdefault(record["mode"], Tally())
        score(tally, case, schemas[case.schema], record["value"], evidence, False)
    return {mode: {**tally.confidences_by_kind, "all": tally.confidences} for mode, tally in tallies.items()}


def log_loss(pairs: list[tuple[float, bool]], exponent: float) -> float:
    total = 0.0
    for raw, right in pairs:
        confidence = min(max(raw**exponent, 1e-6), 1 - 1e-6)
        total -= math.log(confidence if right else 1 - confidence)
    return total / len(pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("saved", type=Path, help="extractions saved by bench/accuracy.py --save")
    parser.add_argument("--devset", type=Path, default=DEVSET, help="the labelled set they were made from")
    args = parser.parse_args()
    by_mode = raw_pairs(args.saved, args.devset)
    pooled = [pair for kinds in by_mode.values() for pair in kinds["all"]]
    exponents = [round(0.05 * step, 2) for step in range(1, 21)]
    losses = {exponent: log_loss(pooled, exponent) for exponent in exponents}
    best = min(losses, key=lambda exponent: losses[exponent])
    print(f"{len(pooled)} values with a confidence; log loss by exponent:")
    print("  " + "  ".join(f"{exponent:.2f}:{loss:.3f}" for exponent, loss in losses.items()))
    print(f"best exponent {best:.2f} (log loss {losses[best]:.3f}); the library's {CONFIDENCE_EXPONENT:.2f}")
    for mode, kinds in by_mode.items():
        print(f"{mode}: values, right, AUROC, ECE at exponent 1 | {CONFIDENCE_EXPONENT:.2f} | {best:.2f}")
        for kind, pairs in sorted(kinds.items(), key=lambda item: (item[0] == "all", item[0])):
            area = auroc(pairs)
            errors = [_ece(pairs, exponent) for exponent in (1, CONFIDENCE_EXPONENT, best)]
            right = sum(ok for _, ok in pairs)
            shown = "-" if area is None else f"{area:.3f}"
            print(f"  {kind:8} {len(pairs):5d} {right:5d}  AUROC {shown:>5}  ECE {' | '.join(errors)}")
    print(f"values kept with --abstain at --min-confidence P (confidence at exponent {CONFIDENCE_EXPONENT:.2f}):")
    for mode, kinds in by_mode.items():
        pairs = kinds["all"]
        right = sum(ok for _, ok in pairs)
        cells = []
        for threshold in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
            kept = [ok for raw, ok in pairs if raw**CONFIDENCE_EXPONENT >= threshold]
            precision = sum(kept) / len(kept) if kept else 1.0
            cells.append(f"{threshold:.1f}: kept {len(kept)} precision {precision:.2f} recall {sum(kept) / right:.2f}")
        print(f"  {mode}: of {len(pairs)} values, {right} right (precision {right / len(pairs):.2f} keeping all)")
        for cell in cells:
            print(f"    {cell}")


def _ece(pairs: list[tuple[float, bool]], exponent: float) -> str:
    error, _ = calibration([(raw**exponent, right) for raw, right in pairs])
    return "-" if error is None else f"{error:.3f}"


if __name__ == "__main__":
    main()
