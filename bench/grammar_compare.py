"""Extraction with gguf-extract beside llama-cpp-python's own JSON-schema grammar.

Same model, same prompt text (the chat prompt gguf-extract builds), greedy decoding, same
token cap. For each bundled sample: wall time of the whole generation (prompt evaluation
included), output tokens, model calls, and whether the output validates (formats checked).
Prints the grammar/extract time ratio per sample and overall. Absolute times drift on a
shared machine; the ratios are measured in the same run.

    python bench/grammar_compare.py [--repeat 3] [--max-tokens 1024]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import jsonschema
from llama_cpp import Llama, LlamaGrammar

from gguf_extract import Extractor, SamplingSettings

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ("person", "invoice", "event")


def is_valid(text: str, schema: dict[str, Any]) -> bool:
    try:
        jsonschema.validate(json.loads(text), schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    except (json.JSONDecodeError, jsonschema.ValidationError):
        return False
    return True


def run_extract(extractor: Extractor, schema: dict[str, Any], prompt: str, max_tokens: int) -> dict[str, Any]:
    compiled = extractor.compile(schema)
    started = time.perf_counter()
    run = extractor.extract_prompt(compiled, prompt, SamplingSettings(max_tokens=max_tokens))
    run.run()
    seconds = time.perf_counter() - started
    stats = run.stats
    return {
        "seconds": seconds,
        "tokens": stats.output_tokens,
        "calls": stats.model_calls,
        "forced": stats.forced_tokens,
        "valid": is_valid(run.text, schema),
        "text": run.text,
    }


def run_grammar(llm: Llama, schema: dict[str, Any], prompt: str, max_tokens: int) -> dict[str, Any]:
    grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    llm.reset()
    started = time.perf_counter()
    out: Any = llm.create_completion(prompt, max_tokens=max_tokens, temperature=0.0, grammar=grammar)
    seconds = time.perf_counter() - started
    text = out["choices"][0]["text"]
    tokens = out["usage"]["completion_tokens"]
    return {"seconds": seconds, "tokens": tokens, "calls": tokens, "forced": 0, "valid": is_valid(text, schema), "text": text}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=1024)
    args = parser.parse_args()
    extractor = Extractor.open()
    llm = Llama(str(extractor.model_path), n_ctx=2048, verbose=False, logits_all=False)
    extractor.model_for(2048)  # load the weights before timing, as the grammar side does
    totals = {"extract": 0.0, "grammar": 0.0}
    print(f"{'sample':8} {'system':8} {'median s':>9} {'tokens':>7} {'calls':>6} {'forced':>7} {'valid':>6}")
    for name in SAMPLES:
        schema = json.loads((ROOT / "schemas" / f"{name}.json").read_text())
        document = (ROOT / "samples" / f"{name}.txt").read_text()
        prompt = extractor.prompt_for(extractor.compile(schema), document).text
        medians = {}
        runners = {
            "extract": lambda: run_extract(extractor, schema, prompt, args.max_tokens),  # noqa: B023 - called in this iteration
            "grammar": lambda: run_grammar(llm, schema, prompt, args.max_tokens),  # noqa: B023
        }
        for system, runner in runners.items():
            results = [runner() for _ in range(args.repeat)]
            last = results[-1]
            medians[system] = statistics.median(r["seconds"] for r in results)
            totals[system] += medians[system]
            print(
                f"{name:8} {system:8} {medians[system]:9.3f} {last['tokens']:7d} {last['calls']:6d} "
                f"{last['forced']:7d} {last['valid']!s:>6}"
            )
        print(f"{name:8} ratio grammar/extract: {medians['grammar'] / medians['extract']:.2f}x")
    print(
        f"all      ratio grammar/extract: {totals['grammar'] / totals['extract']:.2f}x "
        f"({totals['grammar']:.2f} s vs {totals['extract']:.2f} s)"
    )


if __name__ == "__main__":
    main()
