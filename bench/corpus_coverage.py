"""Schema coverage and soundness over the JSONSchemaBench corpus.

For each schema: compile it (no model needed), record compiled / refused (with the keyword)
/ invalid, the time taken, and for compiled ones validate `--walks` random documents from
each of its automata (the generator's, and the one accepting every valid text, undeclared
properties too) with jsonschema and the draft's format checker (install `jsonschema[format]`
so formats are really checked). Prints the compile rate per category, refusal reasons per
keyword, unsound documents and compile times.

    python bench/corpus_coverage.py                      # the whole corpus
    python bench/corpus_coverage.py --every 10           # every 10th schema
    python bench/corpus_coverage.py --check-baseline     # fail on any regression
    python bench/corpus_coverage.py --update-baseline    # record improvements

The baseline (tests/data/corpus_baseline.jsonl) holds one line per schema: its id and
status. A test re-runs a fixed sample of it.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import multiprocessing
import random
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "jsonschemabench.jsonl.gz"
BASELINE = ROOT / "tests" / "data" / "corpus_baseline.jsonl"
HARD_TIMEOUT_S = 60  # a schema still compiling after this is recorded as a hang


class _Hang(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Hang()


def load_corpus(path: Path = CORPUS, every: int = 1) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            if number % every == 0:
                yield json.loads(line)


def measure(entry: dict[str, Any], walks: int = 20) -> dict[str, Any]:
    """Compile one corpus entry and check `walks` documents sampled from each of its automata
    (the generator's, the one accepting every valid text) against jsonschema."""
    import jsonschema

    from gguf_extract.core.automaton.sample import sample_accepted
    from gguf_extract.core.errors import SchemaError, UnsupportedSchema
    from gguf_extract.core.index.compiled import accepting_automaton, compile_automaton
    from gguf_extract.core.schema.read.validation import validator_for_schema
    from gguf_extract.core.schema.work_limits import CompileWorkExceeded

    result: dict[str, Any] = {"id": entry["id"], "category": entry["category"]}
    started = time.perf_counter()
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HARD_TIMEOUT_S)
    try:
        automaton = compile_automaton(entry["schema"])
        result["status"] = "compiled"
    except UnsupportedSchema as error:
        result.update(status="refused", keyword=error.keyword, reason=error.message)
        if isinstance(error, CompileWorkExceeded):
            result.update(keyword="compile work")
    except SchemaError as error:
        result.update(status="invalid", reason=error.message)
    except _Hang:
        result.update(status="hang", reason=f"still compiling after {HARD_TIMEOUT_S} s")
    except Exception as error:
        result.update(status="crash", reason=f"{type(error).__name__}: {error}")
    finally:
        signal.alarm(0)
    result["seconds"] = round(time.perf_counter() - started, 4)
    if result["status"] != "compiled":
        return result
    validator = validator_for_schema(entry["schema"])  # the schema as written, under its own draft
    rng = random.Random(entry["id"])
    unsound = []
    # The generator's automaton, then the one accepting every valid text (undeclared
    # properties too): both must accept only valid documents.
    accepting = accepting_automaton(automaton.dfa)
    for dfa in [automaton.dfa] * walks + [accepting] * walks:
        text = sample_accepted(dfa, rng).decode("utf-8")
        try:
            problem = jsonschema.exceptions.best_match(validator.iter_errors(json.loads(text)))
        except Exception as error:
            result.update(status="oracle-error", reason=f"jsonschema failed: {type(error).__name__}: {error}"[:300])
            return result
        if problem is not None:
            unsound.append({"document": text[:500], "error": problem.message[:300]})
    result.update(walks=2 * walks, unsound=len(unsound), dfa_states=automaton.dfa.state_count, work=automaton.work)
    if unsound:
        result["example"] = unsound[0]
    return result


def _measure_star(arguments: tuple[dict[str, Any], int]) -> dict[str, Any]:
    return measure(*arguments)


def run(entries: list[dict[str, Any]], walks: int, jobs: int) -> list[dict[str, Any]]:
    work = [(entry, walks) for entry in entries]
    if jobs <= 1:
        return [measure(*item) for item in work]
    with multiprocessing.Pool(jobs, maxtasksperchild=200) as pool:
        return list(pool.imap(_measure_star, work, chunksize=4))


def report(results: list[dict[str, Any]]) -> None:
    by_category: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for result in results:
        by_category[result["category"]][result["status"]] += 1
    print(f"{'category':16} {'schemas':>8} {'compiled':>9} {'rate':>7} {'refused':>8} {'invalid':>8} {'other':>6}")
    total: collections.Counter[str] = collections.Counter()
    for category in sorted(by_category):
        counts = by_category[category]
        total.update(counts)
        _row(category, counts)
    _row("all", total)
    refusals = collections.Counter(r["keyword"] for r in results if r["status"] == "refused")
    print("\nrefusals by keyword:", ", ".join(f"{k} {n}" for k, n in refusals.most_common(25)))
    invalid = collections.Counter(r["reason"].split(":")[0][:60] for r in results if r["status"] == "invalid")
    print("invalid or unsatisfiable:", ", ".join(f"{k!r} {n}" for k, n in invalid.most_common(8)))
    for result in results:
        if result["status"] in ("crash", "hang"):
            print(f"{result['status'].upper()}: {result['id']}: {result['reason']}")
    compiled = [r for r in results if r["status"] == "compiled"]
    documents = sum(r["walks"] for r in compiled)
    unsound = [r for r in compiled if r["unsound"]]
    print(
        f"\nsoundness: {documents} sampled documents from {len(compiled)} compiled schemas, "
        f"{sum(r['unsound'] for r in unsound)} unsound in {len(unsound)} schemas"
    )
    for result in unsound[:10]:
        print(f"  UNSOUND {result['id']}: {result['example']}")
    _work_report(results)
    seconds = sorted(r["seconds"] for r in results)
    if seconds:
        print(
            f"compile or refuse time: p50 {_pct(seconds, 50):.4f} s, p90 {_pct(seconds, 90):.4f} s, "
            f"p99 {_pct(seconds, 99):.4f} s, max {seconds[-1]:.3f} s"
        )


def _work_report(results: list[dict[str, Any]]) -> None:
    """The compile work compiled schemas took, against the limit, and how long refusals by the
    limit took to come."""
    from gguf_extract.core.schema.work_limits import MAX_COMPILE_FUEL

    work = sorted((r["work"], r["id"]) for r in results if r["status"] == "compiled")
    if work:
        print(
            f"compile work of compiled schemas: p50 {work[len(work) // 2][0]}, p99 {work[len(work) * 99 // 100][0]},"
            f" max {work[-1][0]} ({work[-1][1]}) units; limit {MAX_COMPILE_FUEL}"
        )
    limited = sorted(r["seconds"] for r in results if r.get("keyword") == "compile work")
    if limited:
        print(f"refused by the compile-work limit: {len(limited)} schemas, after {limited[0]:.2f} to {limited[-1]:.2f} s")


def _row(name: str, counts: collections.Counter[str]) -> None:
    schemas = sum(counts.values())
    other = schemas - counts["compiled"] - counts["refused"] - counts["invalid"]
    rate = 100 * counts["compiled"] / schemas if schemas else 0.0
    print(f"{name:16} {schemas:8} {counts['compiled']:9} {rate:6.1f}% {counts['refused']:8} {counts['invalid']:8} {other:6}")


def _pct(ordered: list[float], percent: float) -> float:
    return ordered[min(len(ordered) - 1, int(len(ordered) * percent / 100))]


STATUS_RANK = {"crash": 0, "hang": 0, "refused": 1, "invalid": 1, "oracle-error": 2, "compiled": 2}


def load_baseline(path: Path = BASELINE) -> dict[str, dict[str, Any]]:
    if not path.exists():
        return {}
    return {line["id"]: line for line in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def regressions(results: list[dict[str, Any]], baseline: dict[str, dict[str, Any]]) -> list[str]:
    """Schemas doing worse than recorded: compiled before and not now, or any unsound."""
    found = []
    for result in results:
        before = baseline.get(result["id"])
        if result.get("unsound"):
            found.append(f"{result['id']}: {result['unsound']} unsound documents, e.g. {result['example']}")
        if before and STATUS_RANK[result["status"]] < STATUS_RANK[before["status"]]:
            found.append(f"{result['id']}: was {before['status']}, now {result['status']}: {result.get('reason', '')}")
    return found


def write_baseline(results: list[dict[str, Any]], path: Path = BASELINE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"id": r["id"], "status": r["status"], **({"keyword": r["keyword"]} if "keyword" in r else {})})
        for r in sorted(results, key=lambda r: r["id"])
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--every", type=int, default=1, help="take every Nth schema")
    parser.add_argument("--walks", type=int, default=20, help="sampled documents validated per compiled schema")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, help="write per-schema results (JSON Lines)")
    parser.add_argument("--check-baseline", action="store_true", help="exit 1 on any regression against the baseline")
    parser.add_argument("--update-baseline", action="store_true", help="record these results as the baseline")
    args = parser.parse_args()
    started = time.perf_counter()
    results = run(list(load_corpus(args.corpus, args.every)), args.walks, args.jobs)
    report(results)
    print(f"({len(results)} schemas in {time.perf_counter() - started:.0f} s with {args.jobs} processes)")
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in results), encoding="utf-8")
    if args.update_baseline:
        write_baseline(results)
    if args.check_baseline:
        found = regressions(results, load_baseline())
        for line in found:
            print("REGRESSION", line)
        return 1 if found else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
