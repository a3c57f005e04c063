"""Many documents, one schema: which documents, in what order, and where each result goes.

Inputs are paths (a file, or a directory searched recursively for names matching a glob) and
lists of paths (one per line). The order is the order given, with each directory's files in
sorted order, so a run, its shards and its re-runs all see the same sequence. Results written
to a directory go through a temporary file and a rename, so an interrupted batch never leaves
a partial file and a later run can tell a finished result from a missing one.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gguf_extract
from gguf_extract import OutputError, Schema, SchemaError, best_error, validator_for_schema


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


def take_shard(sources: list[Source], shard: int, shards: int) -> list[Source]:
    """Every N-th document starting at the I-th: the shards of one input list are disjoint and
    together cover it."""
    return sources[shard::shards]


def output_path(directory: Path, source: Source) -> Path:
    return directory / f"{source.name}.json"


def first_collision(directory: Path, sources: list[Source]) -> tuple[Source, Source, Path] | None:
    """Two documents that would write the same result file, and that file; None if none do."""
    seen: dict[Path, Source] = {}
    for source in sources:
        target = output_path(directory, source)
        if target in seen:
            return seen[target], source, target
        seen[target] = source
    return None


FileIdentity = tuple[int, int]


def file_identity(path: Path) -> FileIdentity | None:
    """The device and inode `path` leads to (links followed), or None where there is no such file."""
    try:
        status = path.stat()
    except (OSError, ValueError):
        return None
    return status.st_dev, status.st_ino


# The largest result file --skip-existing reads: far above what a run writes (a budget of
# tokens, or a long document's merged pieces), so a larger file is not a result of this command.
RESULT_FILE_LIMIT = 64 * 1024 * 1024


class ResultCheck:
    """Whether a result file left by an earlier run is complete: JSON that validates against
    the schema (formats included), as the run that wrote it checked before writing. Only a
    regular file of at most RESULT_FILE_LIMIT bytes is read: whatever else sits at a result's
    path (a FIFO, a link to a device) is never waited on or read without end."""

    def __init__(self, schema: Schema) -> None:
        self._validator = validator_for_schema(schema)  # never retrieves a reference

    def fault(self, path: Path) -> str | None:
        """None when `path` holds a complete result; else why not, as a phrase about the file."""
        try:
            data = _read_regular_file(path, RESULT_FILE_LIMIT)
        except OSError as error:
            return f"cannot be read ({error.strerror or error})"
        if isinstance(data, str):
            return data
        try:
            value: Any = json.loads(data.decode("utf-8"))
            return None if best_error(self._validator, value) is None else "is not valid JSON for the schema"
        except (UnicodeDecodeError, ValueError, SchemaError, RecursionError):
            return "is not valid JSON for the schema"


def _read_regular_file(path: Path, limit: int) -> bytes | str:
    """The bytes of the regular file at `path`, or why it is not read. Opened without blocking,
    so a FIFO answers at once, and checked on the open descriptor, so the file cannot be
    swapped for another between the check and the read."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    with os.fdopen(descriptor, "rb") as stream:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            return "is not a regular file"
        data = stream.read(limit + 1)
    if len(data) > limit:
        return f"is larger than {limit} bytes, more than a result holds"
    return data


def probe_folder(folder: Path) -> None:
    """Raise OSError unless `folder` takes a new file (one is created there and removed)."""
    handle, probe = tempfile.mkstemp(dir=folder, prefix=".extract-probe-")
    os.close(handle)
    os.unlink(probe)


def prepare_output_dir(directory: Path) -> None:
    """Create `directory` and check that it takes files, before any model loads."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe_folder(directory)
    except OSError as error:
        raise OutputError(
            f"cannot write to output directory {directory}: {error.strerror or error}", hint="choose another output directory"
        ) from None


def write_atomically(target: Path, text: str) -> None:
    """Write `text` to `target` whole or not at all (the library's write_atomically), creating its folder first."""
    target.parent.mkdir(parents=True, exist_ok=True)
    gguf_extract.write_atomically(target, text)
