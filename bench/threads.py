"""How the thread setting holds up when another process wants the CPU.

Runs the person sample through the real command with each thread setting, on an otherwise
idle machine and beside a CPU-bound process (one busy loop per core but one), interleaved,
and prints median wall times and ratios to the default measured in the same run. Outputs
are compared: every setting must write the same document.

    python bench/threads.py [--runs 3] [--busy 1]
    python bench/threads.py --runs 1 --devset 8    # 8 development-set documents in one run instead
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMAND = [sys.executable, "-m", "gguf_extract", "--schema", "person", str(ROOT / "samples" / "person.txt")]
SETTINGS: dict[str, tuple[list[str], dict[str, str]]] = {
    "default": ([], {}),
    "default, OpenMP passive wait": ([], {"OMP_WAIT_POLICY": "PASSIVE"}),
    "--threads 1": (["--threads", "1"], {}),
    f"--threads {os.cpu_count()}": (["--threads", str(os.cpu_count())], {}),
    f"--threads {os.cpu_count()}, OpenMP passive wait": (["--threads", str(os.cpu_count())], {"OMP_WAIT_POLICY": "PASSIVE"}),
}
SPIN = "while True: pass"


def run_once(extra: list[str], environment: dict[str, str]) -> tuple[float, bytes]:
    started = time.perf_counter()
    result = subprocess.run([*COMMAND, *extra], capture_output=True, env={**os.environ, **environment}, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(extra) or 'default'} failed: {result.stderr.decode(errors='replace')}")
    return time.perf_counter() - started, result.stdout


def measure(runs: int, busy: int) -> dict[tuple[str, str], list[float]]:
    times: dict[tuple[str, str], list[float]] = {}
    outputs: set[bytes] = set()
    for _ in range(runs):
        for condition in ("idle", "busy"):
            spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(busy if condition == "busy" else 0)]
            try:
                for name, (extra, environment) in SETTINGS.items():
                    seconds, out = run_once(extra, environment)
                    times.setdefault((name, condition), []).append(seconds)
                    outputs.add(out)
            finally:
                for spinner in spinners:
                    spinner.kill()
                    spinner.wait()
    print(f"outputs: {'all identical' if len(outputs) == 1 else f'{len(outputs)} different'}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--busy", type=int, default=max(1, (os.cpu_count() or 2) - 1), help="busy loops beside the run")
    parser.add_argument("--devset", type=int, metavar="N", help="run N development-set documents (package schema) instead")
    args = parser.parse_args()
    if args.devset:
        documents = sorted((ROOT / "bench" / "devset" / "docs").iterdir())
        documents = documents[:: max(1, len(documents) // 24)][: args.devset]
        schema = ROOT / "bench" / "devset" / "schemas" / "package.json"
        COMMAND[4:] = [str(schema), "--max-tokens", "160", "-q", *map(str, documents)]
    subprocess.run([*COMMAND], capture_output=True, check=True)  # warm the page cache and the vocabulary cache
    times = measure(args.runs, args.busy)
    base = statistics.median(times[("default", "idle")])
    print(f"{os.cpu_count()} cores; busy = {args.busy} CPU-bound process(es) beside the run; median of {args.runs} whole runs")
    print(f"{'setting':40} {'idle s':>8} {'busy s':>8} {'busy/idle':>10} {'idle/default idle':>18}")
    for name in SETTINGS:
        idle, busy = statistics.median(times[(name, "idle")]), statistics.median(times[(name, "busy")])
        print(f"{name:40} {idle:8.2f} {busy:8.2f} {busy / idle:9.2f}x {idle / base:17.2f}x")


if __name__ == "__main__":
    main()
