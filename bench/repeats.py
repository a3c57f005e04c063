"""Repeated array items in real `extract` outputs, on the list-heavy set and the development set.

Runs the real `extract` command (greedy, default settings, `--stats`, one batch of documents
per schema) over bench/listset (bench/build_listset.py: holders, package, manpage, advisory,
people; the schema of docs/X/ is schemas/X.json) and bench/devset (gold.jsonl maps each
document to its schema), in each mode (plain; `--grounded`), and prints per set/schema and
mode:

- outputs: documents extracted (failed ones are counted apart, with the first error);
- w/ repeat: outputs with at least one repeated array item;
- repeated: the repeated items. An item repeats when it is JSON-equal to an earlier item of
  the same array (1 and 1.0 equal, true and 1 not), or, for a non-empty object, when each of
  its fields equals the same field of one earlier object of that array (a subset copy:
  `{"name": "john"}` after `{"name": "john", "email": "j@x.org"}`). Arrays at any depth count
  (`names` inside objects inside `people`); a repeated item's own arrays are not searched
  again (they are the earlier item's);
- budget: outputs the token budget closed (--stats `budget_closed_at` set): an array that
  kept growing until --max-tokens, as copies do where nothing stops them;
- stopped, preview: the decoder's own `repeats_stopped` (arrays it closed rather than let the
  model write a copy) and `preview_tokens` (tokens evaluated to preview an item), summed from
  the --stats figures; `-` where the tree's --stats has no such figure;
- verbatim: of the non-empty strings inside arrays (array items, and string fields of objects
  that are array items, at any depth), how many occur in the document's file, a run of
  whitespace read as one space, case kept: a proxy for invented items;
- s/doc: the extraction's `prompt_seconds` + `generate_seconds` per output (the model's
  loading left out).

`--root DIR [DIR ...]` compares code trees (checkouts of this repository) in one run (default:
the tree this file is in): each runs as `extract` with PYTHONPATH set to a temporary folder
that holds a `gguf_extract` symlink to that tree (checked to import from there). The trees are
labelled A, B, ... and take turns on each chunk of documents (`--chunk`, 4 by default when
there are several trees; the first tree first on even chunks, last on odd ones), each mode
in turn, so a busy machine slows them alike; the last column is each tree's s/doc over A's.

`--save FILE` keeps every output line (tree, root, commit, set, schema, mode, file, the line
itself and the invocation's wall time) as JSON Lines; `--rescore FILE [FILE ...]` prints the
figures again from saved files (documents read from this tree's bench/), without a model.
`--limit N` takes the first N documents of each schema.

    python bench/repeats.py [--root DIR [DIR ...]] [--sets listset devset] [--modes plain grounded]
                            [--limit N] [--chunk N] [--save FILE]
    python bench/repeats.py --rescore FILE [FILE ...]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TREE = HERE.parent
SETS = ("listset", "devset")
MODES = ("plain", "grounded")
GUARD = ("repeats_stopped", "preview_tokens")


# ---- what counts as a repeat ----------------------------------------------------------


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: numbers by value (1 == 1.0), booleans apart from numbers,
    objects by their members whatever their order, arrays item by item."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def subset_copy(item: Any, earlier: Any) -> bool:
    """Whether `item` is a non-empty object each of whose fields equals the same field of
    `earlier` (an object too): a copy that left fields out adds nothing to the array."""
    if not (isinstance(item, dict) and isinstance(earlier, dict) and item):
        return False
    return all(key in earlier and json_equal(value, earlier[key]) for key, value in item.items())


def repeats(item: Any, earlier: list[Any]) -> bool:
    return any(json_equal(item, before) or subset_copy(item, before) for before in earlier)


def repeated_items(value: Any, pointer: str = "") -> list[tuple[str, Any]]:
    """(JSON pointer, item) of each repeated array item in `value`, at any depth."""
    found: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        for key, child in value.items():
            found += repeated_items(child, f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if repeats(item, value[:index]):
                found.append((f"{pointer}/{index}", item))
            else:
                found += repeated_items(item, f"{pointer}/{index}")
    return found


def array_strings(value: Any, in_array: bool = False) -> list[str]:
    """The non-empty strings inside arrays: items, and fields of items, at any depth."""
    if isinstance(value, str):
        return [value] if in_array and value else []
    if isinstance(value, dict):
        return [text for child in value.values() for text in array_strings(child, in_array)]
    if isinstance(value, list):
        return [text for child in value for text in array_strings(child, True)]
    return []


def squash(text: str) -> str:
    return " ".join(text.split())


def verbatim(text: str, document: str) -> bool:
    return squash(text) in squash(document)


# ---- the documents --------------------------------------------------------------------


@dataclass(frozen=True)
class Batch:
    set: str
    schema: str
    schema_file: Path
    files: tuple[Path, ...]  # relative to bench/

    @property
    def name(self) -> str:
        return f"{self.set}/{self.schema}"


def batches(sets: list[str], limit: int | None) -> list[Batch]:
    """One batch per schema of each set, its documents in the set's order (the first `limit`)."""
    found: list[Batch] = []
    for name in sets:
        folder = HERE / name
        listing = "index.jsonl" if name == "listset" else "gold.jsonl"
        records = [json.loads(line) for line in (folder / listing).read_text(encoding="utf-8").splitlines()]
        for schema in dict.fromkeys(record["schema"] for record in records):
            files = tuple(Path(name) / record["file"] for record in records if record["schema"] == schema)
            found.append(Batch(name, schema, Path(name) / "schemas" / f"{schema}.json", files[:limit]))
    return found


# ---- running the trees ----------------------------------------------------------------


@dataclass(frozen=True)
class Tree:
    label: str
    root: Path
    commit: str
    path: Path  # the folder PYTHONPATH names: it holds a gguf_extract symlink to root


def commit_of(root: Path) -> str:
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    status = ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"]
    dirty = subprocess.run(status, capture_output=True, text=True, check=False)
    return (head.stdout.strip() or "?") + ("+changes" if dirty.stdout.strip() else "")


def make_trees(roots: list[Path], scratch: Path) -> list[Tree]:
    trees = []
    for index, root in enumerate(roots):
        label = chr(ord("A") + index)
        path = scratch / label
        path.mkdir()
        (path / "gguf_extract").symlink_to(root.resolve(), target_is_directory=True)
        probe = subprocess.run(
            [sys.executable, "-c", "import gguf_extract; print(gguf_extract.__file__)"],
            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(path)}, check=False,
        )  # fmt: skip
        if probe.returncode != 0 or Path(probe.stdout.strip()).parent != path / "gguf_extract":
            raise SystemExit(f"{root}: gguf_extract does not import from it ({probe.stdout.strip() or probe.stderr.strip()})")
        trees.append(Tree(label, root.resolve(), commit_of(root), path))
    return trees


def extract_command() -> list[str]:
    script = Path(sys.executable).parent / "extract"
    return [str(script)] if script.exists() else [sys.executable, "-m", "gguf_extract"]


def run_chunk(tree: Tree, batch: Batch, files: tuple[Path, ...], mode: str) -> tuple[list[dict[str, Any]], float]:
    """The output lines of one `extract` batch (in the documents' order), and its wall time."""
    command = [*extract_command(), "-s", str(batch.schema_file), "--stats", "-q"]
    command += ["--grounded"] if mode == "grounded" else []
    # --files-from makes a batch even of one document: one JSON line each, --stats inside it
    listing = "".join(f"{file}\n" for file in files)
    environment = {**os.environ, "PYTHONPATH": str(tree.path)}
    started = time.perf_counter()
    done = subprocess.run(
        [*command, "--files-from", "-"], input=listing, cwd=HERE, capture_output=True, text=True, env=environment, check=False
    )
    seconds = time.perf_counter() - started
    lines = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            lines[record.get("source")] = record
    missing = {"error": {"type": "NoOutput", "message": f"exit {done.returncode}: {done.stderr.strip()[-300:]}"}}
    return [lines.get(str(file), {"source": str(file), **missing}) for file in files], seconds


def chunks(files: tuple[Path, ...], size: int) -> Iterator[tuple[Path, ...]]:
    for start in range(0, len(files), size):
        yield files[start : start + size]


def run(trees: list[Tree], plan: list[Batch], modes: list[str], size: int, save: Any) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for batch in plan:
        for turn, files in enumerate(chunks(batch.files, size)):
            for mode in modes:
                for tree in trees if turn % 2 == 0 else trees[::-1]:
                    lines, seconds = run_chunk(tree, batch, files, mode)
                    print(f"{batch.name} {mode} {tree.label}: {len(files)} documents in {seconds:.1f} s", file=sys.stderr)
                    for file, line in zip(files, lines, strict=True):
                        record = {"tree": tree.label, "root": str(tree.root), "commit": tree.commit, "set": batch.set}
                        record |= {"schema": batch.schema, "mode": mode, "file": str(file), "line": line}
                        record |= {"chunk_seconds": round(seconds, 3)}
                        records.append(record)
                        if save is not None:
                            save.write(json.dumps(record, ensure_ascii=False) + "\n")
                            save.flush()
    return records


# ---- the figures ----------------------------------------------------------------------


@dataclass
class Tally:
    outputs: int = 0
    failed: int = 0
    first_error: str = ""
    with_repeat: int = 0
    repeated: int = 0
    budget: int = 0
    guard: dict[str, int] = field(default_factory=dict)
    strings: int = 0
    verbatim: int = 0
    seconds: float = 0.0
    examples: list[str] = field(default_factory=list)

    def add(self, record: dict[str, Any], document: str) -> None:
        line = record["line"]
        if "data" not in line:
            self.failed += 1
            self.first_error = self.first_error or f"{record['file']}: {line.get('error')}"
            return
        self.outputs += 1
        found = repeated_items(line["data"])
        self.with_repeat += bool(found)
        self.repeated += len(found)
        if found and len(self.examples) < 3:
            pointer, item = found[0]
            self.examples.append(f"{Path(record['file']).name} {pointer}: {json.dumps(item, ensure_ascii=False)[:100]}")
        stats = line.get("stats", {})
        self.budget += stats.get("budget_closed_at") is not None
        for key in GUARD:
            if key in stats:
                self.guard[key] = self.guard.get(key, 0) + int(stats[key])
        strings = array_strings(line["data"])
        self.strings += len(strings)
        self.verbatim += sum(verbatim(text, document) for text in strings)
        self.seconds += float(stats.get("prompt_seconds", 0.0)) + float(stats.get("generate_seconds", 0.0))

    def merge(self, other: Tally) -> None:
        self.outputs += other.outputs
        self.failed += other.failed
        self.first_error = self.first_error or other.first_error
        self.with_repeat += other.with_repeat
        self.repeated += other.repeated
        self.budget += other.budget
        for key, value in other.guard.items():
            self.guard[key] = self.guard.get(key, 0) + value
        self.strings += other.strings
        self.verbatim += other.verbatim
        self.seconds += other.seconds

    def per_doc(self) -> float | None:
        return self.seconds / self.outputs if self.outputs else None


def tallies(records: list[dict[str, Any]]) -> dict[tuple[str, str, str], Tally]:
    """Tally per (set/schema, mode, tree label), in the records' order."""
    found: dict[tuple[str, str, str], Tally] = {}
    texts: dict[str, str] = {}
    for record in records:
        key = (f"{record['set']}/{record['schema']}", record["mode"], record["tree"])
        if record["file"] not in texts:
            texts[record["file"]] = (HERE / record["file"]).read_text(encoding="utf-8", errors="replace")
        found.setdefault(key, Tally()).add(record, texts[record["file"]])
    return found


HEADER = f"{'set/schema':<18} {'mode':<9} tree  outputs  w/ repeat  repeated  budget  stopped  preview  {'verbatim':>17}   s/doc"


def row(name: str, mode: str, label: str, tally: Tally, base: Tally | None) -> str:
    guard = [str(tally.guard[key]) if key in tally.guard else "-" for key in GUARD]
    share = f"{tally.verbatim}/{tally.strings} {100 * tally.verbatim / tally.strings:5.1f}%" if tally.strings else "-"
    per_doc, base_doc = tally.per_doc(), base.per_doc() if base is not None else None
    seconds = f"{per_doc:7.2f}" if per_doc is not None else "      -"
    ratio = f"  x{per_doc / base_doc:.2f}" if base is not None and per_doc is not None and base_doc else ""
    failed = f"  ({tally.failed} failed: {tally.first_error[:120]})" if tally.failed else ""
    return (
        f"{name:<18} {mode:<9} {label:<4} {tally.outputs:7d}  {tally.with_repeat:9d}  {tally.repeated:8d}  {tally.budget:6d}  "
        f"{guard[0]:>7}  {guard[1]:>7}  {share:>17} {seconds}{ratio}{failed}"
    )


def report(records: list[dict[str, Any]]) -> None:
    trees = {record["tree"]: (record["root"], record["commit"]) for record in records}
    for label, (root, commit) in trees.items():
        print(f"tree {label}: {root} at {commit}")
    found = tallies(records)
    groups = list(dict.fromkeys((name, mode) for name, mode, _ in found))
    labels = list(trees)
    print(HEADER)
    totals: dict[tuple[str, str, str], Tally] = {}
    for name, mode in groups:
        base = found.get((name, mode, labels[0]))
        for label in labels:
            tally = found.get((name, mode, label))
            if tally is not None:
                print(row(name, mode, label, tally, base if label != labels[0] else None))
                for scope in (name.split("/")[0], "all"):
                    totals.setdefault((scope, mode, label), Tally()).merge(tally)
    print()
    for scope, mode, label in sorted(totals, key=lambda key: (key[0] == "all", key[0], MODES.index(key[1]), key[2])):
        base = totals.get((scope, mode, labels[0])) if label != labels[0] else None
        print(row(f"{scope} (total)", mode, label, totals[(scope, mode, label)], base))
    print()
    for (name, mode, label), tally in found.items():
        for example in tally.examples:
            print(f"repeat: {label} {name} {mode}: {example}")


def saved_records(paths: list[Path]) -> list[dict[str, Any]]:
    """The records of saved runs; with several files, their trees relabelled A, B, ... in the
    order met, so that two runs of one tree (a baseline and a later one) stand side by side
    (their s/doc then come from different runs: compare them with care)."""
    records = [(n, json.loads(line)) for n, path in enumerate(paths) for line in path.read_text(encoding="utf-8").splitlines()]
    if len(paths) == 1:
        return [record for _, record in records]
    labels: dict[tuple[int, str], str] = {}
    for n, record in records:
        labels.setdefault((n, record["tree"]), chr(ord("A") + len(labels)))
    return [
        {**record, "tree": labels[(n, record["tree"])], "commit": f"{record['commit']} ({paths[n]})"} for n, record in records
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", nargs="+", type=Path, default=[TREE], help="code trees to compare (default: this one)")
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--limit", type=int, help="the first N documents of each schema")
    parser.add_argument("--chunk", type=int, help="documents per extract run (default: all, or 4 with several trees)")
    parser.add_argument("--save", type=Path, help="write every output line here (JSON Lines)")
    parser.add_argument("--rescore", nargs="+", type=Path, help="print the figures of saved runs; runs nothing")
    args = parser.parse_args()
    if args.rescore:
        report(saved_records(args.rescore))
        return
    plan = batches(args.sets, args.limit)
    size = args.chunk or (4 if len(args.root) > 1 else max(len(batch.files) for batch in plan))
    with tempfile.TemporaryDirectory(prefix="repeats-") as scratch:
        trees = make_trees(args.root, Path(scratch))
        started = time.perf_counter()
        with args.save.open("w", encoding="utf-8") if args.save else contextlib.nullcontext() as save:
            records = run(trees, plan, args.modes, size, save)
    seconds = time.perf_counter() - started
    print(f"{len(records)} outputs in {seconds:.0f} s; modes {' '.join(args.modes)}; greedy, default settings")
    report(records)


if __name__ == "__main__":
    main()
