"""Where a batch's time goes: the public command run in this process with every llama_decode
timed (one-sequence evaluations and multi-sequence decodes alike), so the time in the model
is told from the time in this process's own Python (masks, drafts, grounding, output).

    python bench/decode_share.py --documents 16 --parallel 1 8
    python bench/decode_share.py --documents 60 --parallel 1 64 -- --grounded

Prints, for each --parallel: the whole run, the seconds inside llama_decode (and how many
decodes, and tokens in them), and the rest; then the decodes of 32 tokens or more (prompts,
mostly) apart from the smaller ones (chosen tokens, drafts). Runs each setting in a fresh
interpreter.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from parallel import DEVSET, pick_documents  # noqa: E402

# Run in the child: time the two ways the library calls llama_decode, then the command.
_CHILD = r"""
import json, sys, time
import gguf_extract.core.model as model
spent = {"seconds": 0.0, "decodes": 0, "tokens": 0, "large_seconds": 0.0, "large_decodes": 0, "large_tokens": 0}
def timed(method, count):
    def wrapper(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            return method(self, *args, **kwargs)
        finally:
            seconds, tokens = time.perf_counter() - started, count(args)
            for prefix in ("", "large_") if tokens >= 32 else ("",):
                spent[prefix + "seconds"] += seconds
                spent[prefix + "decodes"] += 1
                spent[prefix + "tokens"] += tokens
    return wrapper
model.SequenceContext.decode = timed(model.SequenceContext.decode, lambda a: sum(len(r[2]) for r in a[0]))
model.GGUFModel.eval = timed(model.GGUFModel.eval, lambda a: len(a[0]))
model.GGUFModel.eval_with_logits = timed(model.GGUFModel.eval_with_logits, lambda a: len(a[0]))
from gguf_extract.cli.app import main
sys.argv = ["extract", *sys.argv[1:]]
started = time.perf_counter()
try:
    main()
finally:
    spent["wall"] = time.perf_counter() - started
    print(json.dumps(spent), file=sys.stderr)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=16)
    parser.add_argument("--schema", type=Path, default=DEVSET / "schemas" / "package.json")
    parser.add_argument("--parallel", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--max-tokens", default="160")
    parser.add_argument("extra", nargs="*", help="more options for extract (after --)")
    args = parser.parse_args()
    documents = [str(path) for path in pick_documents(args.documents)]
    print(f"{len(documents)} documents, {args.schema.name}, --max-tokens {args.max_tokens} {' '.join(args.extra)}")
    for n in args.parallel:
        command = [sys.executable, "-c", _CHILD, "-s", str(args.schema), "--parallel", str(n), "-q"]
        command += ["--max-tokens", args.max_tokens, *args.extra, *documents]
        run = subprocess.run(command, capture_output=True, text=True, check=False)
        spent = json.loads(run.stderr.strip().splitlines()[-1])
        rest = spent["wall"] - spent["seconds"]
        print(
            f"--parallel {n:2d}: run {spent['wall']:6.1f} s  in llama_decode {spent['seconds']:6.1f} s"
            f" ({spent['decodes']} decodes, {spent['tokens']} tokens)  the rest {rest:6.1f} s"
            f" ({rest / spent['wall']:.0%})  exit {run.returncode}"
        )
        small = spent["seconds"] - spent["large_seconds"]
        print(
            f"             decodes of 32 tokens or more: {spent['large_seconds']:6.1f} s ({spent['large_decodes']} decodes,"
            f" {spent['large_tokens']} tokens); smaller: {small:6.1f} s ({spent['decodes'] - spent['large_decodes']} decodes,"
            f" {spent['tokens'] - spent['large_tokens']} tokens)"
        )


if __name__ == "__main__":
    main()
