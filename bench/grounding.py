"""Grounding's per-document costs with the bundled model's vocabulary.

- build: laying out a document for grounding (its string-body bytes and the first-token set
  of a grounded string), for documents of 5, 20 and 80 KB of real text;
- masks: each filtering of the tokens inside a grounded string during real extractions with
  the bundled model (the grounded part of a mask: the schema's own part is what bench/masks.py
  measures), p50 and p99 over every call.

Run: python bench/grounding.py [--document FILE]   (default: a license text from the system)
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from gguf_extract import Extractor
from gguf_extract.core.grounding.follower import Grounding
from gguf_extract.core.grounding.tables import DocumentTokens, GroundingText, vocabulary_bodies

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 120},
        "holder": {"type": "string", "maxLength": 120},
        "terms": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 4},
    },
    "required": ["title", "holder", "terms"],
}
DEFAULT_DOCUMENT = Path("/usr/share/common-licenses/GPL-3")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--document", type=Path, default=DEFAULT_DOCUMENT)
    args = parser.parse_args()
    source = args.document.read_text()
    extractor = Extractor.open()
    vocab = extractor.vocabulary
    started = time.perf_counter()
    bodies = vocabulary_bodies(vocab)
    print(f"vocabulary tables (once per process): {time.perf_counter() - started:.3f} s, {len(bodies.prefixes)} prefixes")
    for size in (5_000, 20_000, 80_000):
        text = (source * (size // len(source) + 1))[:size]
        runs = []
        for _ in range(5):
            started = time.perf_counter()
            DocumentTokens(GroundingText.of(text), bodies, vocab.size).anywhere()
            runs.append(time.perf_counter() - started)
        print(f"build for a {size // 1000} KB document: median {statistics.median(runs) * 1000:.1f} ms (5 runs)")
    compiled = extractor.compile(SCHEMA, grounded=True)
    timings: dict[bool, list[float]] = {True: [], False: []}
    original = Grounding.restrict

    def timed(self: Grounding, *args: object) -> object:
        inside = self.inside_body
        began = time.perf_counter()
        try:
            return original(self, *args)  # type: ignore[arg-type]
        finally:
            timings[inside].append(time.perf_counter() - began)

    Grounding.restrict = timed  # type: ignore[assignment,method-assign]
    document = source[:6000]
    DocumentTokens(GroundingText.of(document), bodies, vocab.size).anywhere()  # build costs are measured above
    for _ in range(2):
        extraction = extractor.extract(compiled, document)
        value = extraction.run()
    print("output:", json.dumps(value)[:200])
    for inside, where in ((True, "inside grounded strings"), (False, "elsewhere")):
        micro = [t * 1e6 for t in timings[inside]]
        print(f"filtering {where}: {len(micro)} calls, p50 {percentile(micro, 0.5):.1f} us, p99 {percentile(micro, 0.99):.1f} us")


if __name__ == "__main__":
    main()
