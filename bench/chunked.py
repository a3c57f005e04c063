"""`--chunk` on a document several times longer than the context: the whole run through the
command, each piece's seconds in it, and each piece's text extracted alone by the command
(a fresh process, as a user would run a piece-sized document), interleaved on one machine.
Also counts how many of the merged array's items carry a span in each piece, to show that
later pieces contribute, and checks every string span against the whole document.

    python bench/chunked.py                        # 60 members, --ctx 1024, --max-tokens 384
    python bench/chunked.py --members 90 --ctx 1024
    python bench/chunked.py --parallel 1 4 --rounds 2   # the chunked run with --parallel 1 and 4, in turn

With --parallel, only the chunked run is made, once per N and round (rounds alternated, so
every N sees the same machine): wall seconds (median), peak resident memory, the pieces'
figures, and whether the output equals the first N's (pieces alone are not run).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# Through the library's facade first, which loads llama.cpp before numpy (a CUDA build crashes
# loading a model otherwise, core/model.py).
from gguf_extract import Extractor, ModelOptions, SamplingSettings
from gguf_extract.core.extract.chunked import plan_pieces

FIRST = ["Maria", "John", "Aiko", "Pedro", "Fatima", "Lars", "Chen", "Olga", "Samuel", "Priya"]
LAST = ["Gonzales", "Smith", "Tanaka", "Alves", "Haddad", "Nilsson", "Wei", "Petrova", "Okafor", "Raman"]
ROLES = ["architect", "accountant", "engineer", "designer", "lawyer", "nurse", "teacher", "chemist", "pilot", "editor"]
CITIES = ["Lisbon", "Porto", "Berlin", "Osaka", "Accra", "Oslo", "Lyon", "Quito", "Cairo", "Pune"]
FILLER = (
    "The committee reviewed the quarterly figures, discussed the renovation of the north wing and agreed to"
    " revisit the travel policy at the next meeting. Several members asked for the minutes to be shared earlier."
)
SCHEMA = {
    "type": "object",
    "properties": {
        "meeting_date": {"type": "string", "format": "date"},
        "chair": {"type": "string", "maxLength": 40},
        "new_members": {
            "type": "array",
            "maxItems": 100,
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "maxLength": 40},
                    "role": {"type": "string", "maxLength": 30},
                    "city": {"type": "string", "maxLength": 30},
                },
                "required": ["name", "role", "city"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["meeting_date", "chair", "new_members"],
    "additionalProperties": False,
}


def minutes(members: int) -> str:
    paragraphs = ["MINUTES OF THE ANNUAL MEETING OF THE NORTHWIND COOPERATIVE"]
    paragraphs.append("Held on 4 May 2024 in Porto. Chair: Ingrid Berg.")
    for n in range(members):
        name, role, city = f"{FIRST[n % 10]} {LAST[(n * 7) % 10]}", ROLES[n % 10], CITIES[(n * 3) % 10]
        paragraphs.append(f"{n + 1}. {name}, {role} from {city}, joined the cooperative this year. {FILLER}")
    paragraphs.append("The meeting closed at 18:30. Next meeting: 2 November 2024.")
    return "\n\n".join(paragraphs) + "\n"


def extract(*args: str) -> tuple[float, dict[str, Any], list[dict[str, Any]]]:
    """Wall seconds, the --stats line, and the stdout records of one command."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "gguf_extract", *args, "--stats"], capture_output=True, check=True)
    seconds = time.perf_counter() - started
    stats = json.loads(done.stderr.decode().strip().splitlines()[-1])
    return seconds, stats, [json.loads(line) for line in done.stdout.decode().splitlines()]


def extract_measured(*args: str) -> tuple[float, int, dict[str, Any], str]:
    """Wall seconds, peak resident KiB, the --stats line and stdout of one command."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        command = [sys.executable, "-m", "gguf_extract", *args, "--stats"]
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"extract failed: {err.read().decode()}")
        out.seek(0)
        err.seek(0)
        stats = json.loads(err.read().decode().strip().splitlines()[-1])
        return seconds, usage.ru_maxrss, stats, out.read().decode()


def compare_parallel(command: list[str], parallel: list[int], rounds: int) -> None:
    """The chunked run with each --parallel N, rounds alternated."""
    times: dict[int, list[float]] = {n: [] for n in parallel}
    memory: dict[int, int] = {}
    outputs: dict[int, tuple[dict[str, Any], str]] = {}
    for _ in range(rounds):
        for n in parallel:
            seconds, peak, stats, output = extract_measured(*command, "--chunk", "--evidence", "--parallel", str(n))
            times[n].append(seconds)
            memory[n] = max(memory.get(n, 0), peak)
            outputs[n] = (stats, output)
    base = statistics.median(times[parallel[0]])
    for n in parallel:
        median = statistics.median(times[n])
        stats, output = outputs[n]
        same = "the same as" if output == outputs[parallel[0]][1] else "differs from"
        members = len(json.loads(output)["data"]["new_members"])
        print(
            f"--parallel {n}: {median:6.1f} s  x{base / median:4.2f}  peak RSS {memory[n] / 1024:5.0f} MiB"
            f"  {stats['pieces']} pieces, {stats['prompt_tokens']} prompt tokens ({stats['prompt_tokens_reused']} reused),"
            f" {stats['output_tokens']} output tokens, {members} members; output {same} --parallel {parallel[0]}"
            f"   (runs: {', '.join(f'{t:.1f}' for t in times[n])})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=60)
    parser.add_argument("--ctx", type=int, default=1024)
    parser.add_argument("--max-tokens", type=int, default=384)
    parser.add_argument("--parallel", type=int, nargs="+", help="compare the chunked run with these --parallel N")
    parser.add_argument("--rounds", type=int, default=1, help="with --parallel: runs of each N")
    options = parser.parse_args()
    text = minutes(options.members)
    extractor = Extractor.open(None, ModelOptions(n_ctx=options.ctx))
    compiled = extractor.compile(SCHEMA)
    pieces = plan_pieces(extractor, compiled, text, SamplingSettings(options.max_tokens), None)
    tokens = len(extractor.tokenizer.tokenize(text.encode()))
    times = f"{tokens / options.ctx:.1f}x --ctx {options.ctx}"
    print(f"document: {len(text)} characters, {tokens} tokens ({times}); {len(pieces)} pieces")
    settings = ["--ctx", str(options.ctx), "--max-tokens", str(options.max_tokens)]
    with tempfile.TemporaryDirectory() as folder:
        document, schema = Path(folder) / "minutes.txt", Path(folder) / "members.json"
        document.write_text(text)
        schema.write_text(json.dumps(SCHEMA))
        command = ["--schema", str(schema), str(document), *settings]
        shown = f"extract --schema members.json minutes.txt {' '.join(settings)} --chunk --evidence --stats"
        if options.parallel:
            print(f"command: {shown} --parallel N")
            compare_parallel(command, options.parallel, options.rounds)
            return
        print(f"command: {shown}")
        seconds, stats, records = extract(*command, "--chunk", "--evidence")
        print(f"chunked run: {seconds:.1f} s wall, {stats['pieces']} pieces, seconds per piece {stats['piece_seconds']}")
        reused = stats["prompt_tokens_reused"]
        print(f"  prompt tokens {stats['prompt_tokens']} ({reused} reused), output tokens {stats['output_tokens']}")
        alone = []
        for number, piece in enumerate(pieces):
            path = Path(folder) / f"piece{number}.txt"
            path.write_text(piece.text)
            wall, piece_stats, _ = extract("--schema", str(schema), str(path), *settings)
            alone.append((wall, piece_stats["prompt_seconds"] + piece_stats["generate_seconds"]))
        print("piece | in the chunked run (s) | alone: wall (s), prompt + generation (s)")
        for number, (wall, work) in enumerate(alone):
            print(f"{number + 1} | {stats['piece_seconds'][number]:.1f} | {wall:.1f}, {work:.1f}")
        report_spans(records[0], text, pieces)


def report_spans(record: dict[str, Any], text: str, pieces: list[Any]) -> None:
    members, evidence = record["data"]["new_members"], record["evidence"]
    by_piece = [0] * len(pieces)
    unlocated = 0
    for index in range(len(members)):
        span = (evidence.get(f"/new_members/{index}/name") or {}).get("span")
        if span is None:
            unlocated += 1
            continue
        start, end = span
        assert re.sub(r"\s+", " ", text[start:end]) == members[index]["name"], (index, span)
        by_piece[max(n for n, piece in enumerate(pieces) if piece.start <= start)] += 1
    print(f"merged: {len(members)} members; by the piece their name's span starts in: {by_piece}; {unlocated} without a span")


if __name__ == "__main__":
    main()
