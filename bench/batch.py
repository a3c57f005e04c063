"""Batch throughput: documents per second over 20 sample documents, with the shared prompt
prefix kept between documents (as `extract` does) and without (the context cleared before each
document, so every prompt is evaluated whole), in one process, alternating rounds so both see
the same machine.

    python bench/batch.py                 # person schema, 20 generated documents, 3 rounds
    python bench/batch.py --schema invoice --rounds 1
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from gguf_extract.core.decode.types import SamplingSettings
from gguf_extract.core.extract.extractor import Extractor
from gguf_extract.core.schema.read.sources import load_schema

ROOT = Path(__file__).resolve().parent.parent
PEOPLE = [
    ("Ada Lovelace", 36, "mathematician", "London"),
    ("Alan Turing", 41, "computer scientist", "Manchester"),
    ("Grace Hopper", 85, "rear admiral", "Arlington"),
    ("Edsger Dijkstra", 72, "professor", "Austin"),
    ("Barbara Liskov", 84, "professor", "Cambridge"),
    ("Donald Knuth", 86, "professor", "Stanford"),
    ("Margaret Hamilton", 88, "engineer", "Boston"),
    ("John McCarthy", 84, "researcher", "Palo Alto"),
    ("Frances Allen", 88, "researcher", "Schenectady"),
    ("Ken Thompson", 81, "engineer", "Murray Hill"),
    ("Radia Perlman", 73, "network engineer", "Seattle"),
    ("Tony Hoare", 90, "professor", "Oxford"),
    ("Niklaus Wirth", 89, "professor", "Zurich"),
    ("Adele Goldberg", 79, "programmer", "Palo Alto"),
    ("Leslie Lamport", 83, "researcher", "Mountain View"),
    ("Karen Jones", 46, "linguist", "Cambridge"),
    ("Dennis Ritchie", 70, "engineer", "Berkeley Heights"),
    ("Hedy Lamarr", 85, "inventor", "Vienna"),
    ("Alonzo Church", 92, "logician", "Princeton"),
    ("Kathleen Booth", 100, "computer scientist", "Sheffield"),
]


def documents() -> list[str]:
    return [
        f"{name}, {age}, works as a {job} in {city}. Contact: {name.split()[0].lower()}@example.org"
        for name, age, job, city in PEOPLE
    ]


def one_round(extractor: Extractor, schema_name: str, keep_prefix: bool) -> tuple[float, int]:
    schema = load_schema(schema_name)
    compiled = extractor.compile(schema)
    started = time.perf_counter()
    reused = 0
    for text in documents():
        if not keep_prefix and extractor.loaded_model is not None:
            extractor.loaded_model.rollback(0)  # forget the context: the whole prompt is evaluated again
        extraction = extractor.extract(compiled, text, SamplingSettings())
        extraction.run()
        reused += extraction.stats.prompt_tokens_reused
    return time.perf_counter() - started, reused


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--schema", default="person")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    extractor = Extractor.open()
    one_round(extractor, args.schema, True)  # warm-up: weights, caches
    seconds: dict[bool, list[float]] = {True: [], False: []}
    reused: dict[bool, int] = {}
    for _ in range(args.rounds):
        for keep in (False, True):
            elapsed, reused[keep] = one_round(extractor, args.schema, keep)
            seconds[keep].append(elapsed)
    count = len(documents())
    for keep, label in ((False, "without prefix reuse"), (True, "with prefix reuse")):
        median = statistics.median(seconds[keep])
        print(
            f"{label:22} {count} documents in {median:6.2f} s (median of {args.rounds}): {count / median:5.2f} documents/s,"
            f" {reused[keep]} prompt tokens reused"
        )
    print(f"speed-up: {statistics.median(seconds[False]) / statistics.median(seconds[True]):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
