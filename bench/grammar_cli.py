"""One extraction with llama-cpp-python's own JSON-schema grammar, as a whole process.

Same prompt text as `extract` (built by gguf-extract) and same model; greedy; prints the
output like `extract` does. For whole-process timings beside `extract`:

    python bench/grammar_cli.py --schema schemas/person.json samples/person.txt
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
    parser.add_argument("document", type=Path)
    parser.add_argument("--max-tokens", type=int, default=1024)
    args = parser.parse_args()
    schema = json.loads(args.schema.read_text())
    extractor = Extractor.open()
    prompt = extractor.prompt_for(extractor.compile(schema), args.document.read_text()).text
    n_prompt = len(extractor.tokenizer.tokenize(prompt.encode(), special=True))
    llm = Llama(str(extractor.model_path), n_ctx=n_prompt + args.max_tokens, verbose=False)
    grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    out = llm.create_completion(prompt, max_tokens=args.max_tokens, temperature=0.0, grammar=grammar)
    sys.stdout.write(out["choices"][0]["text"] + "\n")  # type: ignore[index]


if __name__ == "__main__":
    main()
