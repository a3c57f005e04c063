"""One KV cache for every sequence (kv_unified) against one stream a sequence, measured through
the public command: `extract --parallel N` over development-set documents, each layout in a fresh
interpreter, rounds alternated; the whole run and the seconds inside llama_decode (timed at its
ctypes call), medians, and the ratio of one stream a sequence to one cache.

    python bench/kv_layout.py                          # 24 documents, --parallel 8, 2 rounds
    python bench/kv_layout.py --parallel 8 32 --rounds 1
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from parallel import DEVSET, pick_documents  # noqa: E402

# In the child: the layout chosen (core.model.SequenceContext's `unified`), llama_decode timed.
_CHILD = r"""
import json, sys, time
import gguf_extract.core.model as model
import llama_cpp, llama_cpp.llama_cpp as raw
from gguf_extract.core.runtime import sequences
unified = sys.argv.pop(1) == "unified"
made = sequences.SharedSequences.__init__
def laid_out(self, open_context, n_seq, prefix, *rest):
    made(self, open_context, n_seq, prefix, unified)  # the layout asked for, whatever the device
sequences.SharedSequences.__init__ = laid_out
import gguf_extract.core.extract.extractor as extractor
contexts = extractor.Extractor._sequence_context
extractor.Extractor._sequence_context = lambda self, _: contexts(self, unified)
spent = {"decode": 0.0}
original = raw.llama_decode
def timed(ctx, batch):
    started = time.perf_counter()
    try:
        return original(ctx, batch)
    finally:
        spent["decode"] += time.perf_counter() - started
raw.llama_decode = llama_cpp.llama_decode = timed
from gguf_extract.cli.app import main
sys.argv = ["extract", *sys.argv[1:]]
started = time.perf_counter()
try:
    main()
finally:
    spent["wall"] = time.perf_counter() - started
    print(json.dumps(spent), file=sys.stderr)
"""


def measure(layout: str, documents: list[str], schema: Path, parallel: int, max_tokens: str) -> tuple[dict[str, float], str]:
    command = [sys.executable, "-c", _CHILD, layout, "-s", str(schema), "--parallel", str(parallel), "-q"]
    command += ["--max-tokens", max_tokens, *documents]
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    if run.returncode not in (0, 1):
        raise SystemExit(f"extract failed (exit {run.returncode}): {run.stderr[-2000:]}")
    spent: dict[str, float] = json.loads(run.stderr.strip().splitlines()[-1])
    return spent, run.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=24)
    parser.add_argument("--schema", type=Path, default=DEVSET / "schemas" / "package.json")
    parser.add_argument("--parallel", type=int, nargs="+", default=[8])
    parser.add_argument("--max-tokens", default="160")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    documents = [str(path) for path in pick_documents(args.documents)]
    print(f"{len(documents)} documents, {args.schema.name}, --max-tokens {args.max_tokens}, {args.rounds} rounds (medians)")
    for n in args.parallel:
        found: dict[str, list[dict[str, float]]] = {"unified": [], "streams": []}
        outputs: dict[str, str] = {}
        for _ in range(args.rounds):
            for layout in found:
                spent, outputs[layout] = measure(layout, documents, args.schema, n, args.max_tokens)
                found[layout].append(spent)
        medians = {
            layout: {key: statistics.median(run[key] for run in runs) for key in ("wall", "decode")}
            for layout, runs in found.items()
        }
        for layout, figures in medians.items():
            print(f"--parallel {n:2d} {layout:8s}: run {figures['wall']:6.1f} s, in llama_decode {figures['decode']:6.1f} s")
        same = sum(a == b for a, b in zip(outputs["unified"].splitlines(), outputs["streams"].splitlines(), strict=False))
        ratio = medians["streams"]["wall"] / medians["unified"]["wall"]
        decode_ratio = medians["streams"]["decode"] / medians["unified"]["decode"]
        print(
            f"--parallel {n:2d}: one stream a sequence takes x{ratio:.2f} the run and x{decode_ratio:.2f} the decode time"
            f" of one cache; lines alike {same}/{len(documents)}"
        )


if __name__ == "__main__":
    main()
