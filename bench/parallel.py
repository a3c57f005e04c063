"""Batch throughput of `extract --parallel N`: documents per second of the public command over
development-set documents, N = 1, 2, 4, 8 by default, rounds alternated so every N sees the
same machine; medians, ratios to --parallel 1, each run's peak resident memory, and how many
output lines differ from --parallel 1's (every line is checked against the schema). With
--grammar, llama-cpp-python's own JSON-schema grammar looping over the same documents with the
same prompt text (bench/grammar_cli.py, one process) is timed in the same rounds.

    python bench/parallel.py                         # 16 documents, --max-tokens 160, 3 rounds
    python bench/parallel.py --documents 24 --parallel 1 8 --rounds 1 -- --grounded --evidence
    python bench/parallel.py --documents 60 --parallel 1 8 32 64 --rounds 1 --grammar
    python bench/parallel.py --parallel 1 8 --repeat 8   # and is --parallel 8's output the same twice?
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
    command = [sys.executable, "-m", "gguf_extract", "-s", str(schema), "--parallel", str(parallel), "-q", *extra]
    return timed(command, documents)


def run_grammar(documents: list[Path], schema: Path, max_tokens: str) -> tuple[float, int, list[str]]:
    """Seconds, peak resident KiB and stdout lines of llama-cpp-python's grammar over the batch."""
    command = [sys.executable, str(ROOT / "bench" / "grammar_cli.py"), "--schema", str(schema)]
    return timed([*command, "--max-tokens", max_tokens], documents)


def timed(command: list[str], documents: list[Path]) -> tuple[float, int, list[str]]:
    """Seconds, peak resident KiB and stdout lines of one process over the documents."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen([*command, *map(str, documents)], stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace").splitlines()[-5:]
            print(f"exit {os.waitstatus_to_exitcode(status)} from {' '.join(command[:4])} ...: {tail}", file=sys.stderr)
        out.seek(0)
        return seconds, usage.ru_maxrss, out.read().decode().splitlines()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=16)
    parser.add_argument("--schema", type=Path, default=DEVSET / "schemas" / "package.json")
    parser.add_argument("--parallel", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-tokens", default="160")
    parser.add_argument("--grammar", action="store_true", help="time llama-cpp-python's grammar too")
    parser.add_argument("--repeat", type=int, help="run this --parallel once more and count the lines that differ")
    parser.add_argument("extra", nargs="*", help="more options for extract (after --)")
    args = parser.parse_args()
    documents = pick_documents(args.documents)
    schema = json.loads(args.schema.read_text())
    extra = ["--max-tokens", args.max_tokens, *args.extra]
    times: dict[int, list[float]] = {n: [] for n in args.parallel}
    memory: dict[int, int] = {}
    lines: dict[int, list[str]] = {}
    grammar_times: list[float] = []
    grammar_memory = 0
    grammar_lines: list[str] = []
    for _ in range(args.rounds):
        for n in args.parallel:
            seconds, peak, output = run(documents, args.schema, n, extra)
            times[n].append(seconds)
            memory[n] = max(memory.get(n, 0), peak)
            lines[n] = output
        if args.grammar:
            seconds, peak, grammar_lines = run_grammar(documents, args.schema, args.max_tokens)
            grammar_times.append(seconds)
            grammar_memory = max(grammar_memory, peak)
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
    if grammar_times:
        median = statistics.median(grammar_times)
        valid = sum(_valid_text(line, schema) for line in grammar_lines)
        speedups = "  ".join(f"--parallel {n} x{median / statistics.median(times[n]):4.2f}" for n in args.parallel)
        print(
            f"llama-cpp-python grammar, one after another: {median:6.1f} s  {len(documents) / median:5.2f} documents/s"
            f"  peak RSS {grammar_memory / 1024:6.0f} MiB  valid {valid}/{len(grammar_lines)}"
            f"   (runs: {', '.join(f'{t:.1f}' for t in grammar_times)})"
        )
        print(f"extract against the grammar: {speedups}")
    if args.repeat is not None:
        _, _, again = run(documents, args.schema, args.repeat, extra)
        first = lines.get(args.repeat)
        if first is None:
            _, _, first = run(documents, args.schema, args.repeat, extra)
        differ = sum(a != b for a, b in zip(again, first, strict=True))
        print(f"--parallel {args.repeat} run again: lines differing from its first run: {differ} of {len(again)}")


def _valid(line: str, schema: object) -> bool:
    record = json.loads(line)
    return "data" in record and _validates(record["data"], schema)


def _valid_text(line: str, schema: object) -> bool:
    """Whether a line of raw generated text is JSON that validates (the grammar may stop short)."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return False
    return _validates(value, schema)


def _validates(value: object, schema: object) -> bool:
    try:
        jsonschema.validate(value, schema)  # type: ignore[arg-type]
    except jsonschema.ValidationError:
        return False
    return True


if __name__ == "__main__":
    main()
