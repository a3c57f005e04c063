"""The formats' machines stored beside core/schema/lexical/format_machines.py are the machines
their trees build: a stored machine that differs would generate and accept other strings than
the format's tree says."""

from __future__ import annotations

from pathlib import Path

import pytest

from gguf_extract.core.automaton.charnfa import machine_from_tree
from gguf_extract.core.automaton.regex import Machine
from gguf_extract.core.schema.lexical.format_machines import (
    SAME_TREE,
    STORED_FORMATS,
    format_machine,
    read_stored,
    write_stored_machines,
)
from gguf_extract.core.schema.lexical.formats import FORMATS

_REWRITE = (
    "a format's tree changed: from the repository's root, run python -c 'from pathlib import Path; "
    "from gguf_extract.core.schema.lexical.format_machines import write_stored_machines; "
    'write_stored_machines(Path("core/schema/lexical/format_machines.npz"))\''
)


def _parts(machine: Machine | None) -> object:
    return None if machine is None else (machine.edges, machine.start, machine.accepts)


@pytest.mark.parametrize("name", [*STORED_FORMATS, *SAME_TREE])
def test_a_stored_machine_is_the_one_its_format_builds(name: str) -> None:
    stored = read_stored(SAME_TREE.get(name, name))
    assert stored is not None, "the stored machines are missing from the install (pyproject's package-data)"
    assert _parts(stored) == _parts(machine_from_tree(FORMATS[name]())), _REWRITE
    assert _parts(format_machine(name)) == _parts(stored)


def test_formats_read_as_another_share_its_tree() -> None:
    for name, other in SAME_TREE.items():
        assert FORMATS[name]() is FORMATS[other]()


def test_machines_written_are_read_back_and_others_are_built(tmp_path: Path) -> None:
    path = tmp_path / "machines.npz"
    write_stored_machines(path)
    for name in STORED_FORMATS:
        assert _parts(read_stored(name, path)) == _parts(machine_from_tree(FORMATS[name]()))
    assert read_stored("date", path) is None  # not stored: format_machine builds it
    assert read_stored("uri", tmp_path / "missing.npz") is None
    assert _parts(format_machine("date")) == _parts(machine_from_tree(FORMATS["date"]()))
