"""The documents a command line names: files as given, and directories, each standing for its
files whose names match a glob (recursively, hidden files and folders skipped).

The order is the order given, with each directory's files in sorted order, so a run, its shards
and its re-runs all see the same sequence.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Source:
    """One document to extract from: where it is read and what its result is called."""

    path: Path
    name: str  # the result's name in an output directory: the path below the directory given, without suffix
    given: str | None = None  # the path exactly as the user wrote it (`./a.txt` keeps its `./`)

    @property
    def label(self) -> str:
        """The document's name in records and messages: the path as given."""
        return self.given if self.given is not None else str(self.path)

    def as_json(self) -> dict[str, str]:
        """The source as a --workers parent hands it to a worker process."""
        return {"path": str(self.path), "name": self.name, "label": self.label}

    @staticmethod
    def from_json(item: dict[str, str]) -> Source:
        return Source(Path(item["path"]), item["name"], item["label"])


def expand_inputs(arguments: Iterable[str], pattern: str = "*") -> list[Source]:
    """Files named by `arguments`, directories expanded (recursively, names matching
    `pattern`, hidden files and folders skipped), in a stable order. Missing files are kept
    (they fail as documents, not the whole batch)."""
    sources: list[Source] = []
    for argument in arguments:
        path = Path(argument)
        if path.is_dir():
            sources.extend(_directory(argument, pattern))
        else:
            sources.append(Source(path, path.stem, argument))
    return sources


def _directory(argument: str, pattern: str) -> list[Source]:
    folder = Path(argument)
    found = []
    for path in sorted(folder.rglob(pattern)):
        relative = path.relative_to(folder)
        if path.is_file() and not any(part.startswith(".") for part in relative.parts):
            # Joined to the argument as written, so `./docs` gives `./docs/a.txt` as `find` would.
            found.append(Source(path, relative.with_suffix("").as_posix(), os.path.join(argument, str(relative))))
    return found


def read_path_list(text: str) -> list[str]:
    """Paths from a list: one per line, blank lines ignored."""
    return [line.rstrip("\r") for line in text.split("\n") if line.strip()]
