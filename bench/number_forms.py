"""Whether valid numbers, as Python's json.dumps writes them, get through the public Guide.

For a seeded sample of the JSONSchemaBench corpus: compile each schema, sample documents from
its automaton, and rewrite each into another valid instance as a Python program would hold
it: every integer that may be a float there (the instance still validates with it) becomes
one, so `3` is written `3.0`, and every float is written by json.dumps (`1e5` becomes
`100000.0`, `2.5e-7` becomes `2.5e-07`). Each such instance, serialized by `json.dumps`, is
then walked through the public Guide as a sampler would drive it: the model's tokens for the
text, and at each one `fill_mask`, the token's bit tested, `advance`; then an end-of-generation
token. A text is rejected at the first token whose bit is clear; the cause is read from the
JSON text there: a number (`fraction ending in 0`, `exponent`, `minus zero`, `other number`),
a string, or anything else.

    python bench/number_forms.py                       # 300 schemas, seed 1, SmolLM2's tokens
    python bench/number_forms.py --schemas 1000 --seed 7 --documents 3
    python bench/number_forms.py --bytes               # one token per byte (no model needed)
    python bench/number_forms.py --unicode             # strings unescaped: numbers behind them seen too
    python bench/number_forms.py --variant undeclared  # an undeclared property in each object where valid
    python bench/number_forms.py --variant reordered   # each object's members shuffled
    python bench/number_forms.py --variant reordered --every-valid-text   # the Guide taking any order

Prints the instances walked and accepted, and rejections by cause with a few examples.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import random
import re
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "jsonschemabench.jsonl.gz"
TIMEOUT_S = 20
MAX_FLOATED = 64  # integers tried as floats per instance (each costs one validation)
# One JSON lexical item: a string, a number, or any other byte.
_ITEM = re.compile(rb'"(?:[^"\\]|\\.)*"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|.', re.DOTALL)

Tokenize = Callable[[bytes], list[int]]


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def corpus_sample(count: int, seed: int, path: Path = CORPUS) -> list[dict[str, Any]]:
    """`count` corpus entries drawn with `seed`, in corpus order."""
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        entries = [json.loads(line) for line in lines]
    chosen = sorted(random.Random(seed).sample(range(len(entries)), min(count, len(entries))))
    return [entries[i] for i in chosen]


def floated(instance: Any, is_valid: Callable[[Any], bool]) -> Any:
    """`instance` with each integer that may be a float there (the whole instance still valid)
    turned into one, as a Python program computing the value would hold it."""
    paths = list(_integer_paths(instance, ()))[:MAX_FLOATED]
    for path in paths:
        candidate = _replaced(instance, path, float(_at(instance, path)))
        if is_valid(candidate):
            instance = candidate
    return instance


def with_undeclared(instance: Any, is_valid: Callable[[Any], bool], rng: random.Random) -> Any:
    """`instance` with an undeclared property (`"x-extra": "value"`) put at a random place in
    each of its objects where the whole instance stays valid, as a document from elsewhere may
    have one the schema allows but does not declare."""
    for path in list(_object_paths(instance, ()))[:MAX_FLOATED]:
        members = list(_at(instance, path).items())
        if "x-extra" in _at(instance, path):
            continue
        members.insert(rng.randint(0, len(members)), ("x-extra", "value"))
        candidate = _replaced(instance, path, dict(members))
        if is_valid(candidate):
            instance = candidate
    return instance


def reordered(instance: Any, is_valid: Callable[[Any], bool], rng: random.Random) -> Any:
    """`instance` with the members of each of its objects shuffled (valid still: order never
    matters to a validator), as a document from elsewhere may order them."""
    for path in list(_object_paths(instance, ()))[:MAX_FLOATED]:
        members = list(_at(instance, path).items())
        rng.shuffle(members)
        instance = _replaced(instance, path, dict(members))
    return instance


def _object_paths(value: Any, path: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        yield path
        for key, item in value.items():
            yield from _object_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _object_paths(item, (*path, index))


def _integer_paths(value: Any, path: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield path
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _integer_paths(item, (*path, index))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _integer_paths(item, (*path, key))


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, list):
        return [_replaced(item, rest, new) if index == head else item for index, item in enumerate(value)]
    return {key: _replaced(item, rest, new) if key == head else item for key, item in value.items()}


def walk(compiled: Any, tokens: list[int], every_valid_text: bool = False) -> int | None:
    """Drive the public Guide along `tokens` then an end-of-generation token, as a sampler
    would: fill_mask, test the token's bit, advance. The index of the first token whose bit is
    clear (len(tokens) for the end), or None when all of it is accepted."""
    from gguf_extract.core.index.guide import new_bitmask

    guide = compiled.guide(every_valid_text=every_valid_text)
    bitmask = new_bitmask(compiled.vocab.size).view(np.uint32)
    eog = compiled.vocab.eog_ids[0]
    for step, token in enumerate([*tokens, eog]):
        guide.fill_mask(bitmask.view(np.int32))
        if not (int(bitmask[token >> 5]) >> (token & 31)) & 1:
            return step
        guide.advance(token)
    return None


def cause(text: bytes, start: int, end: int) -> tuple[str, str]:
    """Why bytes [start, end) of the JSON `text` were refused: the kind of the lexical item
    they touch (a number just before them, which could not end there, first), and its text."""
    touched = [m for m in _ITEM.finditer(text) if m.start() < max(end, start + 1) and m.end() >= start]
    kinds = [(_kind(m.group().decode("utf-8", "replace")), m.group().decode("utf-8", "replace")) for m in touched]
    numbers = [each for each in kinds if each[0].startswith("number")]
    inside = [each for m, each in zip(touched, kinds, strict=True) if m.end() > start]
    return (numbers or inside or [("end of document", "")])[0]


def _kind(item: str) -> str:
    if item.startswith('"'):
        return "string"
    if not re.fullmatch(r"-?[0-9].*", item):
        return "structure"
    mantissa = re.split("[eE]", item)[0]
    if "e" in item.lower():
        return "number: exponent"
    if item.startswith("-") and float(item) == 0:
        return "number: minus zero"
    if "." in mantissa and mantissa.endswith("0"):
        return "number: fraction ending in 0"
    return "number: other"


def measure(
    entry: dict[str, Any],
    documents: int,
    tokenize: Tokenize,
    vocab: Any,
    ascii: bool = True,
    variant: str = "floats",
    every_valid_text: bool = False,
) -> dict[str, Any]:
    """Compile one entry, then walk `documents` json.dumps-serialized float-form instances
    (`ascii`: other characters written as `\\u` escapes, json.dumps's default); `variant`
    `undeclared` adds an undeclared property to each object where valid, `reordered`
    shuffles each object's members; `every_valid_text` walks the Guide that takes any order and
    undeclared properties (`compiled.guide(every_valid_text=True)`)."""
    from gguf_extract.core.automaton.sample import sample_accepted
    from gguf_extract.core.errors import SchemaError
    from gguf_extract.core.index.compiled import compile_automaton, compile_schema
    from gguf_extract.core.schema.read.validation import validator_for_schema

    result: dict[str, Any] = {"id": entry["id"], "walked": 0, "accepted": 0, "rejected": [], "skipped": 0}
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT_S)
    try:
        automaton = compile_automaton(entry["schema"])
        compiled = compile_schema(entry["schema"], vocab)
        validator = validator_for_schema(entry["schema"])
        rng = random.Random(entry["id"])
        for _ in range(documents):
            instance = floated(json.loads(sample_accepted(automaton.dfa, rng)), validator.is_valid)
            if variant == "undeclared":
                instance = with_undeclared(instance, validator.is_valid, rng)
            elif variant == "reordered":
                instance = reordered(instance, validator.is_valid, rng)
            text = json.dumps(instance, ensure_ascii=ascii).encode()
            tokens = tokenize(text)
            if not validator.is_valid(instance) or not tokens:
                result["skipped"] += 1
                continue
            result["walked"] += 1
            refused = walk(compiled, tokens, every_valid_text)
            if refused is None:
                result["accepted"] += 1
                continue
            start = sum(len(vocab.pieces[t]) for t in tokens[:refused])
            end = start + (len(vocab.pieces[tokens[refused]]) if refused < len(tokens) else 0)
            kind, item = cause(text, start, end)
            result["rejected"].append(
                {"cause": kind, "item": item[:40], "text": text[max(0, start - 40) : end + 20].decode("utf-8", "replace")}
            )
    except (SchemaError, RecursionError):
        result["status"] = "not compiled"
    except _Timeout:
        result["status"] = f"still running after {TIMEOUT_S} s"
    finally:
        signal.alarm(0)
    return result


def byte_vocabulary() -> tuple[Any, Tokenize]:
    """A vocabulary of one token per byte (0 ends generation; one two-byte token, unused,
    as the token table needs one), and its tokenizer."""
    from gguf_extract.core.vocab.token_table import Vocabulary

    vocab = Vocabulary.from_pieces([b""] + [bytes([b]) for b in range(256)] + [b", "], (0,))
    return vocab, lambda text: [byte + 1 for byte in text]


def model_vocabulary() -> tuple[Any, Tokenize]:
    """The bundled SmolLM2's vocabulary and tokenizer; a text the tokens do not spell back
    (the tokenizer normalises some characters) gets no tokens, and is skipped."""
    from gguf_extract.core.model import GGUFModel, bundled_model_path

    model = GGUFModel.load_vocab_only(bundled_model_path())
    vocab = model.vocabulary()

    def tokenize(text: bytes) -> list[int]:
        tokens = model.tokenize(text)
        return tokens if b"".join(vocab.pieces[t] for t in tokens) == text else []

    return vocab, tokenize


def report(results: list[dict[str, Any]], seconds: float) -> None:
    walked = sum(r["walked"] for r in results)
    accepted = sum(r["accepted"] for r in results)
    compiled = [r for r in results if r.get("status") != "not compiled"]
    late = [r["id"] for r in results if r.get("status", "").startswith("still running")]
    rejected = [(r["id"], each) for r in results for each in r["rejected"]]
    schemas = {schema for schema, _ in rejected}
    print(f"schemas: {len(results)} sampled, {len(compiled)} compiled" + (f", {len(late)} cut off: {late[:3]}" if late else ""))
    rejections = f"{len(rejected)} rejected in {len(schemas)} schemas"
    print(f"instances (json.dumps, float forms): {walked} walked, {accepted} accepted, {rejections}")
    by_cause = collections.Counter(each["cause"] for _, each in rejected)
    schemas_by_cause = {kind: len({s for s, each in rejected if each["cause"] == kind}) for kind in by_cause}
    for kind, count in by_cause.most_common():
        examples = [each["item"] for _, each in rejected if each["cause"] == kind][:6]
        print(f"  {kind:30} {count:5} instances in {schemas_by_cause[kind]:4} schemas, e.g. {', '.join(examples)}")
    for schema, each in rejected[:12]:
        print(f"  {schema}: {each['cause']} at ...{each['text']}...")
    print(f"({len(results)} schemas in {seconds:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--schemas", type=int, default=300, help="schemas sampled from the corpus")
    parser.add_argument("--seed", type=int, default=1, help="seed of the corpus sample")
    parser.add_argument("--documents", type=int, default=5, help="instances walked per schema")
    parser.add_argument("--bytes", action="store_true", help="one token per byte instead of SmolLM2's tokens")
    parser.add_argument("--unicode", action="store_true", help="json.dumps(ensure_ascii=False): strings as written")
    parser.add_argument(
        "--variant",
        choices=["floats", "undeclared", "reordered"],
        default="floats",
        help="also add an undeclared property to each object where valid, or shuffle each object's members",
    )
    parser.add_argument(
        "--every-valid-text",
        action="store_true",
        help="walk compiled.guide(every_valid_text=True) (any order, undeclared properties)",
    )
    parser.add_argument("--out", type=Path, help="write per-schema results (JSON Lines)")
    args = parser.parse_args()
    vocab, tokenize = byte_vocabulary() if args.bytes else model_vocabulary()
    started = time.perf_counter()
    results = [
        measure(entry, args.documents, tokenize, vocab, not args.unicode, args.variant, args.every_valid_text)
        for entry in corpus_sample(args.schemas, args.seed, args.corpus)
    ]
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in results), encoding="utf-8")
    report(results, time.perf_counter() - started)


if __name__ == "__main__":
    main()
