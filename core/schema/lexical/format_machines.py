"""The character machines of formats (a format's tree read as an epsilon-free machine, for a
product with a pattern or length bounds), those slowest to build stored beside this module.

A uri's machine takes some 40 milliseconds to build, a uri-reference's 80, and the first schema
of a process that bounds or searches such a format paid them all. The slowest are stored in
format_machines.npz, exactly as machine_from_tree builds them (tests/test_format_machines.py
checks each against a fresh build; `write_stored_machines()` writes the file anew after a
format's tree changes), and read in a few milliseconds. The file holds arrays of numbers only,
read without pickles: nothing in it runs.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np

from ...automaton.charnfa import machine_from_tree
from ...automaton.regex import Machine
from .formats import FORMATS

STORED_PATH = Path(__file__).with_name("format_machines.npz")
# The formats whose machines take 20 milliseconds and more to build, and those sharing their
# trees (formats.py: every URI is an IRI).
STORED_FORMATS = ("uri", "uri-reference", "regex", "json-pointer", "relative-json-pointer")
SAME_TREE = {"iri": "uri", "iri-reference": "uri-reference"}


@functools.cache
def format_machine(name: str) -> Machine:
    """The machine of format `name`'s own tree (FORMATS), stored or built; kept per process."""
    stored = SAME_TREE.get(name, name)
    if stored in STORED_FORMATS:
        machine = read_stored(stored)
        if machine is not None:
            return machine
    return machine_from_tree(FORMATS[name]())


def read_stored(name: str, path: Path = STORED_PATH) -> Machine | None:
    """The machine of format `name` as stored in `path` (None where it is not: built instead).
    Arrays of numbers only, read without pickles: `start`, `accepts`, each row's edge count,
    and the edges' low, high and target, flat."""
    try:
        with np.load(path, allow_pickle=False) as stored:
            start, accepts, counts, flat = (stored[f"{name}.{part}"] for part in ("start", "accepts", "counts", "edges"))
    except (FileNotFoundError, KeyError):
        return None
    edges = flat.tolist()
    triples = list(zip(edges[0::3], edges[1::3], edges[2::3], strict=True))
    rows, at = [], 0
    for count in counts.tolist():
        rows.append(tuple(triples[at : at + count]))
        at += count
    return Machine(tuple(rows), int(start), frozenset(accepts.tolist()))


def write_stored_machines(path: Path = STORED_PATH) -> None:
    """Build the machines of STORED_FORMATS and write them to `path`."""
    arrays: dict[str, Any] = {}  # (numpy arrays: Any, as savez_compressed takes them)
    for name in STORED_FORMATS:
        machine = machine_from_tree(FORMATS[name]())
        arrays[f"{name}.start"] = np.array(machine.start, dtype=np.int32)
        arrays[f"{name}.accepts"] = np.array(sorted(machine.accepts), dtype=np.int32)
        arrays[f"{name}.counts"] = np.array([len(row) for row in machine.edges], dtype=np.int32)
        arrays[f"{name}.edges"] = np.array([n for row in machine.edges for edge in row for n in edge], dtype=np.int32)
    np.savez_compressed(path, **arrays)
