"""Extraction with llama-cpp-python's own JSON-schema grammar, as a whole process.

Same prompt text as `extract` (built by gguf-extract) and same model; greedy; one line of
output per document, in input order, like `extract` prints them. Several documents are done
one after another with the model loaded once, as a user of llama-cpp-python would loop over a
batch. For whole-process timings beside `extract`:

    python bench/grammar_cli.py --schema schemas/person.json samples/person.txt
    python bench/grammar_cli.py --schema bench/devset/schemas/package.json --max-tokens 160 bench/devset/docs/*
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from llama_cpp import Llama, LlamaGrammar

from gguf_extract import Extractor


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--schema", type=Path, required=True)
    parser.add_argument("documents", type=Path, nargs="+")
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--gpu-layers", type=int, default=-1, help="layers on the GPU, as extract's --n-gpu-layers")
    args = parser.parse_args()
    schema = json.loads(args.schema.read_text())
    extractor = Extractor.open()
    compiled = extractor.compile(schema)
    prompts = [extractor.prompt_for(compiled, document.read_text()).text for document in args.documents]
    longest = max(len(extractor.tokenizer.tokenize(prompt.encode(), special=True)) for prompt in prompts)
    llm = Llama(str(extractor.model_path), n_ctx=longest + args.max_tokens, n_gpu_layers=args.gpu_layers, verbose=False)
    grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    for prompt in prompts:
        out = llm.create_completion(prompt, max_tokens=args.max_tokens, temperature=0.0, grammar=grammar)
        sys.stdout.write(out["choices"][0]["text"].replace("\n", " ") + "\n")  # type: ignore[index]
        sys.stdout.flush()


if __name__ == "__main__":
    main()
