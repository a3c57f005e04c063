"""End-to-end extraction speed: gguf-extract beside llama-cpp-python's grammar and free text.

The same model with the same threads, the same prompt text (the chat prompt gguf-extract
builds), greedy decoding, over the 21 documents of bench/e2e_documents.json (7 each for the
person, invoice and event schemas). Systems, each starting every document from an empty context:
  (a) this library's extraction;
  (b) llama-cpp-python's own JSON-schema grammar (`LlamaGrammar.from_json_schema`), capped at
      --max-tokens;
  (c) unconstrained generation capped at (b)'s token count for that document;
  (d) (a)'s output text, tokenized by the model, evaluated one token per call after the prompt:
      what unconstrained decoding of the same text costs (its generation time only).
For each: total wall time, prompt time, output tokens, model calls after the prompt (one per
token for llama-cpp-python), generation time per output
byte, and the share of outputs that validate against the schema (formats checked); then the
ratios b/a and c/a, all from one run.

    python bench/e2e.py [--max-tokens 1024] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
from llama_cpp import Llama, LlamaGrammar

from gguf_extract import Extractor, SamplingSettings
from gguf_extract.core.schema.read.sources import load_schema

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = ROOT / "bench" / "e2e_documents.json"


@dataclass
class Totals:
    seconds: float = 0.0
    prompt_seconds: float = 0.0
    tokens: int = 0
    calls: int = 0
    output_bytes: int = 0
    valid: int = 0
    runs: int = 0
    rows: list[str] = field(default_factory=list)

    def add(self, seconds: float, prompt_seconds: float, tokens: int, calls: int, text: str, valid: bool) -> None:
        self.seconds += seconds
        self.prompt_seconds += prompt_seconds
        self.tokens += tokens
        self.calls += calls
        self.output_bytes += len(text.encode("utf-8"))
        self.valid += valid
        self.runs += 1

    def line(self, name: str) -> str:
        generation = self.seconds - self.prompt_seconds
        per_token = self.calls / max(self.tokens, 1)
        per_byte = 1e3 * generation / max(self.output_bytes, 1)
        return (
            f"{name:11} total {self.seconds:7.2f} s  prompt {self.prompt_seconds:6.2f} s  tokens {self.tokens:5d}"
            f"  calls {self.calls:5d}  calls/token {per_token:5.2f}  gen ms/byte {per_byte:6.3f}  valid {self.valid}/{self.runs}"
        )


def is_valid(text: str, schema: dict[str, Any]) -> bool:
    try:
        validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        jsonschema.validate(json.loads(text), schema, cls=validator, format_checker=validator.FORMAT_CHECKER)
    except (json.JSONDecodeError, jsonschema.ValidationError):
        return False
    return True


def prompt_seconds(llm: Llama, tokens: list[int]) -> float:
    """Time to evaluate the prompt from an empty context (the completions below do the same)."""
    llm.reset()
    started = time.perf_counter()
    llm.eval(tokens)
    seconds = time.perf_counter() - started
    llm.reset()
    return seconds


def completion(llm: Llama, prompt: str, max_tokens: int, grammar: LlamaGrammar | None) -> tuple[float, str, int]:
    llm.reset()
    started = time.perf_counter()
    out: Any = llm.create_completion(prompt, max_tokens=max_tokens, temperature=0.0, grammar=grammar)
    return time.perf_counter() - started, out["choices"][0]["text"], int(out["usage"]["completion_tokens"])


def replay_seconds(llm: Llama, prompt_tokens: list[int], output_tokens: list[int]) -> float:
    """Time to evaluate `output_tokens` one per call after the prompt, with the logits of each:
    what unconstrained decoding spends on that same text, sampling aside."""
    llm.reset()
    llm.eval(prompt_tokens)
    started = time.perf_counter()
    for token in output_tokens:
        llm.eval([token])
    seconds = time.perf_counter() - started
    llm.reset()
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--limit", type=int, help="only the first N documents")
    args = parser.parse_args()
    documents = json.loads(DOCUMENTS.read_text())[: args.limit]
    if not documents:
        parser.error("no documents")
    extractor = Extractor.open()
    # The same threads as this library's model (all cores, single tokens and batches alike):
    # llama-cpp-python's own default gives single tokens half the cores.
    threads = os.cpu_count() or 1
    llm = Llama(
        str(extractor.model_path),
        n_ctx=2048,
        n_batch=512,
        n_threads=threads,
        n_threads_batch=threads,
        verbose=False,
        logits_all=False,
    )
    ours, grammar_totals, free, same_text = Totals(), Totals(), Totals(), Totals()
    drafts = {"drafted": 0, "accepted": 0, "discarded": 0}
    compiled_by_name = {}
    for document in documents:
        name = document["schema"]
        schema = load_schema(name)
        compiled = compiled_by_name.setdefault(name, extractor.compile(schema))
        prompt = extractor.prompt_for(compiled, document["text"]).text
        tokens = extractor.tokenizer.tokenize(prompt.encode(), special=True)

        model = extractor.model_for(len(tokens) + args.max_tokens)
        model.rollback(0)  # every system starts from an empty context
        started = time.perf_counter()
        run = extractor.extract_prompt(compiled, prompt, SamplingSettings(max_tokens=args.max_tokens))
        run.run()
        seconds = time.perf_counter() - started
        ours.add(
            seconds,
            run.stats.prompt_seconds,
            run.stats.output_tokens,
            run.stats.model_calls,
            run.text,
            is_valid(run.text, schema),
        )

        output_tokens = llm.tokenize(run.text.encode(), add_bos=False, special=False)
        replayed = replay_seconds(llm, tokens, output_tokens)
        same_text.add(replayed, 0.0, len(output_tokens), len(output_tokens), run.text, is_valid(run.text, schema))

        drafts["drafted"] += run.stats.drafted_tokens
        drafts["accepted"] += run.stats.accepted_draft_tokens
        drafts["discarded"] += run.stats.discarded_tokens

        prompt_time = prompt_seconds(llm, tokens)
        grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
        seconds, text, produced = completion(llm, prompt, args.max_tokens, grammar)
        grammar_totals.add(seconds, prompt_time, produced, produced, text, is_valid(text, schema))

        seconds, text, free_tokens = completion(llm, prompt, max(produced, 1), None)
        free.add(seconds, prompt_time, free_tokens, free_tokens, text, is_valid(text, schema))
        print(f"{name:8} ours {run.stats.output_tokens:4d} tokens, grammar {produced:4d}, free {free_tokens:4d}", flush=True)
    print(f"\n{len(documents)} documents, greedy, --max-tokens {args.max_tokens}, each from an empty context")
    print(ours.line("(a) ours"))
    print(
        f"            guessed tokens {drafts['drafted']}, kept {drafts['accepted']},"
        f" evaluated then discarded {drafts['discarded']}"
    )
    print(grammar_totals.line("(b) grammar"))
    print(free.line("(c) free"))
    print(same_text.line("(d) replay").replace("prompt   0.00 s", "prompt    -   "))
    print(f"ratio b/a total time: {grammar_totals.seconds / ours.seconds:.2f}x")
    print(f"ratio c/a total time: {free.seconds / ours.seconds:.2f}x")
    ours_rate = (ours.seconds - ours.prompt_seconds) / max(ours.output_bytes, 1)
    free_rate = (free.seconds - free.prompt_seconds) / max(free.output_bytes, 1)
    print(f"generation time per output byte, c/a: {free_rate / ours_rate:.2f}x")
    same_rate = same_text.seconds / max(same_text.output_bytes, 1)
    print(f"generation time per output byte, d/a (the same text, one token per call): {same_rate / ours_rate:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
