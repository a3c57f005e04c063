"""Coverage baseline over a fixed sample of the JSONSchemaBench corpus.

Every 20th corpus schema is compiled again and compared with tests/data/corpus_baseline.jsonl:
a schema that compiled before must still compile, and sampled documents from every compiled
schema must validate with jsonschema (formats checked). Improvements are recorded with
`python bench/corpus_coverage.py --update-baseline`. Skipped when the shared corpus is absent.
"""

from __future__ import annotations

import pytest
from bench_modules import bench_module

SAMPLE_EVERY = 20
WALKS = 5


coverage = bench_module("corpus_coverage")


@pytest.mark.skipif(not coverage.CORPUS.exists(), reason="the shared JSONSchemaBench corpus is not present")
def test_sample_of_corpus_does_not_regress_and_stays_sound() -> None:
    baseline = coverage.load_baseline()
    assert baseline, "tests/data/corpus_baseline.jsonl is missing: run bench/corpus_coverage.py --update-baseline"
    entries = list(coverage.load_corpus(coverage.CORPUS, SAMPLE_EVERY))
    results = coverage.run(entries, WALKS, jobs=1)
    compiled = [r for r in results if r["status"] == "compiled"]
    assert len(entries) > 400 and len(compiled) > len(entries) // 2
    assert not [r for r in results if r["status"] in ("crash", "hang")]
    assert coverage.regressions(results, baseline) == []
