"""Batch throughput of `extract --parallel N`: documents per second of the public command over
development-set documents, N = 1, 2, 4, 8 by default, rounds alternated so every N sees the
same machine; medians, ratios to --parallel 1, each run's peak resident memory, and how many
output lines differ from --parallel 1's (every line is checked against the schema).

    python bench/parallel.py                         # 16 documents, --max-tokens 160, 3 rounds
    python bench/parallel.py --documents 24 --parallel 1 8 --rounds 1 -- --grounded --evidence
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jsonschema

ROOT = Path(__file__).resolve().parent.parent
DEVSET = ROOT / "bench" / "devset"


def pick_documents(count: int) -> list[Path]:
    """`count` documents spread over the development set (licences, manual pages, package pages)."""
    every = sorted((DEVSET / "docs").iterdir())
    step = max(1, len(every) // count)
    return every[::step][:count]


def run(documents: list[Path], schema: Path, parallel: int, extra: list[str]) -> tuple[float, int, list[str]]:
    """Seconds, peak resident KiB and stdout lines of one batch run."""
    with tempfile.TemporaryFile() as out:
        command = [sys.executable, "-m", "gguf_extract", "-s", str(schema), "--parallel", str(parallel), "-q", *extra]
        started = time.perf_counter()
        process = subprocess.Popen([*command, *map(str, documents)], stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return seconds, usage.ru_maxrss, out.read().decode().splitlines()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=16)
    parser.add_argument("--schema", type=Path, default=DEVSET / "schemas" / "package.json")
    parser.add_argument("--parallel", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-tokens", default="160")
    parser.add_argument("extra", nargs="*", help="more options for extract (after --)")
    args = parser.parse_args()
    documents = pick_documents(args.documents)
    schema = json.loads(args.schema.read_text())
    extra = ["--max-tokens", args.max_tokens, *args.extra]
    times: dict[int, list[float]] = {n: [] for n in args.parallel}
    memory: dict[int, int] = {}
    lines: dict[int, list[str]] = {}
    for _ in range(args.rounds):
        for n in args.parallel:
            seconds, peak, output = run(documents, args.schema, n, extra)
            times[n].append(seconds)
            memory[n] = max(memory.get(n, 0), peak)
            lines[n] = output
    print(f"{len(documents)} documents, {args.schema.name}, {' '.join(extra)}, {args.rounds} rounds (median)")
    base = statistics.median(times[args.parallel[0]])
    reference = lines[args.parallel[0]]
    for n in args.parallel:
        median = statistics.median(times[n])
        valid = sum(_valid(line, schema) for line in lines[n])
        differ = sum(a != b for a, b in zip(lines[n], reference, strict=True))
        print(
            f"--parallel {n:2d}: {median:6.1f} s  {len(documents) / median:5.2f} documents/s  x{base / median:4.2f}"
            f"  peak RSS {memory[n] / 1024:6.0f} MiB  valid {valid}/{len(lines[n])}  lines differing from"
            f" --parallel {args.parallel[0]}: {differ}   (runs: {', '.join(f'{t:.1f}' for t in times[n])})"
        )


def _valid(line: str, schema: object) -> bool:
    record = json.loads(line)
    if "data" not in record:
        return False
    try:
        jsonschema.validate(record["data"], schema)  # type: ignore[arg-type]
    except jsonschema.ValidationError:
        return False
    return True


if __name__ == "__main__":
    main()
