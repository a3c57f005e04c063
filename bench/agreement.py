"""Agreement across samples: does a vote over K extractions of one document (the greedy one
and K - 1 sampled at a temperature) give right values more often than the greedy one alone,
and does the share of votes tell right values from wrong ones better than the confidence?

For each development-set document the greedy extraction and K - 1 samples (seeds 1 to K - 1)
run as K sequences of one parallel run (Extractor.run_parallel: the instructions and schema
outline are shared, the document is evaluated once per sequence). Per top-level field the value
most of the first k extractions give wins (strings compared with whitespace runs as one space,
numbers by value; a tie goes to the greedy value), for k = 1 (greedy), 3, 5, ... up to K, and K; its
share of the votes is its agreement. Printed per k: field accuracy, AUROC and expected
calibration error of the agreement (k > 1) and of the greedy value's confidence (k = 1), and
the seconds per document of the whole run of K. A field the confidence does not cover (a
top-level array's confidence is its items') is scored for the agreement twice: over every
field, and over the fields the confidence covers, so the two are compared on the same values.

    python bench/agreement.py --samples 5 --temperature 0.8 --limit 30
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from typing import Any

from accuracy_scoring import auroc, calibration, load_devset, same

from gguf_extract import Extractor, SamplingSettings


def key(value: Any) -> str:
    """What counts as the same value in a vote."""
    if isinstance(value, str):
        return json.dumps(" ".join(value.split()))
    return json.dumps(value, sort_keys=True)


def vote(values: list[Any]) -> tuple[Any, float]:
    """The value most of `values` give (a tie: the first's, the greedy one), and its share."""
    counts = Counter(key(value) for value in values)
    best = max(counts.values())
    winner = next(value for value in values if counts[key(value)] == best)
    return winner, best / len(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=5, help="K: the greedy extraction and K - 1 samples")
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--limit", type=int, help="only the first N documents")
    args = parser.parse_args()
    cases, schemas = load_devset()
    cases = cases[: args.limit]
    extractor = Extractor.open()
    compiled = {name: extractor.compile(schema) for name, schema in schemas.items()}
    extractor.model_for(4096)
    settings = [SamplingSettings()] + [
        SamplingSettings(temperature=args.temperature, seed=seed) for seed in range(1, args.samples)
    ]
    ks = sorted({*range(1, args.samples + 1, 2), args.samples})  # odd k, and K itself (a tie: the greedy value)
    right = dict.fromkeys(ks, 0)
    pairs: dict[int, list[tuple[float, bool]]] = {k: [] for k in ks}
    covered: dict[int, list[tuple[float, bool]]] = {k: [] for k in ks}  # where the greedy run has a confidence
    fields = 0
    seconds = 0.0
    for case in cases:
        started = time.perf_counter()
        jobs = [
            lambda s=s: extractor.extract(compiled[case.schema], case.text, s)  # noqa: B023 (run at once, below)
            for s in settings
        ]
        together = [lambda job=job: _steps(job()) for job in jobs]
        runs = [outcome.value for outcome in extractor.run_parallel(together, compiled[case.schema], None, len(jobs))]
        seconds += time.perf_counter() - started
        for name, gold in case.gold.items():
            fields += 1
            for k in ks:
                values = [run[0].get(name) if run is not None and isinstance(run[0], dict) else None for run in runs[:k]]
                winner, share = vote(values)
                ok = same(winner, gold)
                right[k] += ok
                confidence = runs[0][1].get(f"/{name}") if runs[0] is not None else None
                if k == 1:
                    if confidence is not None:
                        pairs[k].append((confidence, ok))
                else:
                    pairs[k].append((share, ok))
                    if confidence is not None:
                        covered[k].append((share, ok))
        print(f"{case.id:40} {time.perf_counter() - started:6.2f} s", flush=True)
    print(f"{len(cases)} documents, {fields} fields, K = {args.samples}, temperature {args.temperature}")
    print(f"seconds per document for the K extractions together: {seconds / len(cases):.2f}")
    for k in ks:
        measure = "confidence" if k == 1 else "agreement"
        print(f"k={k}: accuracy {right[k]}/{fields} {100 * right[k] / fields:5.1f}%   {measure}: {_scored(pairs[k])}")
        if k > 1:
            print(f"{'':33}agreement where the confidence is: {_scored(covered[k])}")


def _scored(pairs: list[tuple[float, bool]]) -> str:
    area = auroc(pairs)
    error, _ = calibration(pairs)
    return f"AUROC {'-' if area is None else f'{area:.3f}'}  ECE {'-' if error is None else f'{error:.3f}'} ({len(pairs)} values)"


def _steps(extraction: Any) -> Any:
    """An extraction, stepped by the parallel run; its value and each top-level field's confidence."""
    yield from extraction.steps()
    confidences = {pointer: found.confidence for pointer, found in extraction.evidence.items() if pointer.count("/") == 1}
    return extraction.value, confidences


if __name__ == "__main__":
    main()
