"""One KV cache for every sequence (kv_unified) against one stream a sequence, measured through
the public command: `extract --parallel N` over development-set documents, each layout in a fresh
interpreter, rounds alternated; the whole run and the seconds inside llama_decode (timed at its
ctypes call), medians, and the ratio of one stream a sequence to one cache.

    python bench/kv_layout.py                          # 24 documents, --parallel 8, 2 rounds
    python bench/kv_layout.py --parallel 8 32 --rounds 1
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from parallel import DEVSET, pick_documents  # noqa: E402
from python_share import measure  # noqa: E402

# In the child, before the command: the layout asked for, whatever the device.
_LAYOUT = r"""
from gguf_extract.core.runtime import sequences
from gguf_extract.core.runtime import session
unified = UNIFIED
made = sequences.SharedSequences.__init__
def laid_out(self, open_context, n_seq, prefix, *rest):
    made(self, open_context, n_seq, prefix, unified)
sequences.SharedSequences.__init__ = laid_out
contexts = session.Session.sequence_context
session.Session.sequence_context = lambda self, _: contexts(self, unified)
"""


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
                preamble = _LAYOUT.replace("UNIFIED", str(layout == "unified"))
                spent, outputs[layout] = measure(documents, args.schema, n, args.max_tokens, [], preamble)
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
