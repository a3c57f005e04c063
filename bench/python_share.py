"""The Python per document: what a batch spends outside llama.cpp, per document, with the
one-time work (loading the model, compiling the schema) taken out. The public command runs in a
child interpreter with llama_decode and the reads of its logits timed at their ctypes calls
(every decode, one sequence's or many's; on a GPU the read waits for the decode to finish);
each --parallel runs twice, over all the documents and over the first alone, so the load and
compile cancel:

    per document = ((run - decode - logits) over N documents - (same) over 1) / (N - 1)

    python bench/python_share.py                               # 24 documents, --parallel 1 8, package schema
    python bench/python_share.py --documents 60 --parallel 1 64 -- --grounded

The documents are the development set's (bench/devset), picked as bench/parallel.py picks them.
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

# Run in the child: PREAMBLE (a bench's own patch), then llama_decode and the logits reads timed
# at their ctypes calls around the command. A CUDA build returns from llama_decode before the GPU
# is done and waits in the first read of the logits, so that wait is llama.cpp's time, not ours.
_CHILD = r"""
import json, sys, time
import gguf_extract.core.model  # llama.cpp loads first, as in the command
import llama_cpp, llama_cpp.llama_cpp as raw
PREAMBLE
spent = {"decode": 0.0, "decodes": 0, "logits": 0.0}
def timed(name, figure, count=None):
    original = getattr(raw, name)
    def call(*arguments):
        started = time.perf_counter()
        try:
            return original(*arguments)
        finally:
            spent[figure] += time.perf_counter() - started
            if count:
                spent[count] += 1
    setattr(raw, name, call)
    setattr(llama_cpp, name, call)
timed("llama_decode", "decode", "decodes")
timed("llama_get_logits", "logits")
timed("llama_get_logits_ith", "logits")
from gguf_extract.cli.app import main
sys.argv = ["extract", *sys.argv[1:]]
started = time.perf_counter()
try:
    main()
finally:
    spent["wall"] = time.perf_counter() - started
    print(json.dumps(spent), file=sys.stderr)
"""


def measure(
    documents: list[str], schema: Path, parallel: int, max_tokens: str, extra: list[str], preamble: str = ""
) -> tuple[dict[str, float], str]:
    """The command over `documents` in a fresh interpreter: its figures (wall, decode,
    decodes, logits: the seconds spent reading logits) and stdout; `preamble` runs in it first."""
    command = [sys.executable, "-c", _CHILD.replace("PREAMBLE", preamble), "-s", str(schema), "--parallel", str(parallel)]
    command += ["-q", "--max-tokens", max_tokens, *extra, *documents]
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    if run.returncode not in (0, 1):
        raise SystemExit(f"extract failed (exit {run.returncode}): {run.stderr[-2000:]}")
    spent: dict[str, float] = json.loads(run.stderr.strip().splitlines()[-1])
    return spent, run.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=24)
    parser.add_argument("--schema", type=Path, default=DEVSET / "schemas" / "package.json")
    parser.add_argument("--parallel", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--max-tokens", default="160")
    parser.add_argument("extra", nargs="*", help="more options for extract (after --)")
    args = parser.parse_args()
    documents = [str(path) for path in pick_documents(args.documents)]
    print(f"{len(documents)} documents, {args.schema.name}, --max-tokens {args.max_tokens} {' '.join(args.extra)}")
    for n in args.parallel:
        one, _ = measure(documents[:1], args.schema, n, args.max_tokens, args.extra)
        every, _ = measure(documents, args.schema, n, args.max_tokens, args.extra)
        outside_one = one["wall"] - one["decode"] - one["logits"]
        outside = every["wall"] - every["decode"] - every["logits"]
        per_document = (outside - outside_one) / max(1, len(documents) - 1)
        print(
            f"--parallel {n:2d}: run {every['wall']:6.2f} s, in llama_decode {every['decode']:6.2f} s"
            f" ({every['decodes']:.0f} decodes), reading logits {every['logits']:5.2f} s,"
            f" outside {outside:6.2f} s ({outside / every['wall']:.0%});"
            f" one document alone: outside {outside_one:5.2f} s;"
            f" Python per document {per_document * 1000:6.1f} ms"
        )


if __name__ == "__main__":
    main()
