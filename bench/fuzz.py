"""The differential fuzzer at a larger count than the test suite runs it.

Draws schemas from tests/test_fuzz.py's strategies (by default the drafted ones: every draft
read, `$ref` with siblings, embedded resources with their own `$id`, `prefixItems`, `const`,
`nullable`, `propertyNames`, `patternProperties`, `not` of structured values), its regression
seeds first. Each schema compiles or is refused; a refusal must be a SchemaError. From each
compiled one, `--walks` documents are walked through the automaton and validated with
jsonschema under the schema's own draft (formats checked). Prints schemas tried, compiled and
refused (by keyword), documents walked, and every disagreement with jsonschema by kind; exits 1
when there is any.

    python bench/fuzz.py                          # 3,000 drafted schemas, 5 walks each
    python bench/fuzz.py --schemas 10000 --seed 7
    python bench/fuzz.py --strategy plain         # the single-draft strategy
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import test_fuzz  # the strategies and seeds live with the test

from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.errors import SchemaError, UnsupportedSchema
from gguf_extract.core.index.compiled import accepting_automaton, compile_automaton
from gguf_extract.core.schema.read.validation import validator_for_schema

SOFT_LIMIT = 200  # bytes after which a walk heads for the nearest end


class Tally:
    """Counts over one run, and the first example of each disagreement kind."""

    def __init__(self) -> None:
        self.outcomes: collections.Counter[str] = collections.Counter()
        self.refusals: collections.Counter[str] = collections.Counter()
        self.disagreements: collections.Counter[str] = collections.Counter()
        self.examples: dict[str, str] = {}
        self.documents = 0

    def disagree(self, kind: str, example: str) -> None:
        self.disagreements[kind] += 1
        self.examples.setdefault(kind, example[:800])

    def check(self, schema: Any, walk_seed: int, walks: int) -> None:
        try:
            dfa = compile_automaton(schema).dfa
        except UnsupportedSchema as refusal:
            self.outcomes["refused"] += 1
            self.refusals[refusal.keyword] += 1
            return
        except SchemaError:
            self.outcomes["invalid or unsatisfiable"] += 1
            return
        except Exception as error:  # a refusal must be a SchemaError: anything else is a bug
            self.outcomes["crashed"] += 1
            self.disagree(f"compile crashed ({type(error).__name__})", f"{error} for {json.dumps(schema)}")
            return
        self.outcomes["compiled"] += 1
        validator = validator_for_schema(schema)
        rng = random.Random(walk_seed)
        # The generator's automaton, then the one accepting every valid text (any member order,
        # undeclared properties): both must accept only valid documents.
        accepting = accepting_automaton(dfa)
        for automaton in [dfa] * walks + [accepting] * walks:
            text = sample_accepted(automaton, rng, soft_limit=SOFT_LIMIT).decode("utf-8")
            self.documents += 1
            try:
                errors = list(validator.iter_errors(json.loads(text)))
            except Exception as error:
                self.disagree(f"jsonschema failed ({type(error).__name__})", f"{text} for {json.dumps(schema)}")
                continue
            for kind in sorted({f"rejected by `{error.validator}`" for error in errors}):
                self.disagree(kind, f"{text} for {json.dumps(schema)}")

    def report(self, strategy: str, walks: int, seconds: float) -> None:
        tried = sum(self.outcomes.values())
        print(f"strategy: {strategy}; schemas tried: {tried} ({len(test_fuzz.REGRESSIONS)} regression seeds first)")
        print("outcomes:", ", ".join(f"{kind} {count}" for kind, count in self.outcomes.most_common()))
        print("refusals by keyword:", ", ".join(f"{kind} {count}" for kind, count in self.refusals.most_common()))
        print(f"documents walked: {self.documents} ({walks} per compiled schema from each automaton), validated with jsonschema")
        total = sum(self.disagreements.values())
        print(f"disagreements with jsonschema: {total}")
        for kind, count in self.disagreements.most_common():
            print(f"  {kind}: {count}, e.g. {self.examples[kind]}")
        print(f"({seconds:.0f} s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--schemas", type=int, default=3000, help="schemas drawn (after the regression seeds)")
    parser.add_argument("--walks", type=int, default=5, help="documents walked per compiled schema")
    parser.add_argument("--seed", type=int, default=0, help="the draw's seed (the same seed draws the same schemas)")
    parser.add_argument("--strategy", choices=("drafted", "plain"), default="drafted")
    args = parser.parse_args()
    strategy = test_fuzz.drafted_schemas if args.strategy == "drafted" else test_fuzz.schemas
    tally = Tally()
    started = time.perf_counter()
    for schema in test_fuzz.REGRESSIONS:
        tally.check(schema, 0, args.walks)

    @settings(
        max_examples=args.schemas, deadline=None, database=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck)
    )
    @seed(args.seed)
    @given(strategy, st.integers(0, 2**16))
    def draw(schema: Any, walk_seed: int) -> None:
        tally.check(schema, walk_seed, args.walks)

    draw()
    tally.report(args.strategy, args.walks, time.perf_counter() - started)
    return 1 if tally.disagreements else 0


if __name__ == "__main__":
    raise SystemExit(main())
