"""Many documents, one schema: which documents, in what order, and where each result goes.

Inputs are paths (a file, or a directory searched recursively for names matching a glob) and
lists of paths (one per line). The order is the order given, with each directory's files in
sorted order, so a run, its shards and its re-runs all see the same sequence. `--output-dir`
results are written to a temporary file and renamed into place, so an interrupted batch never
leaves a partial file and `--skip-existing` can resume it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .errors import ExtractError, OutputError


class BatchError(ExtractError):
    """The batch cannot start: bad inputs, shard or output directory."""


@dataclass(frozen=True)
class Source:
    """One document to extract from: where it is read and what its result is called."""

    path: Path
    name: str  # the result's name under --output-dir: the path below the directory given, without suffix

    @property
    def label(self) -> str:
        return str(self.path)


def expand_inputs(arguments: Iterable[str], pattern: str = "*") -> list[Source]:
    """Files named by `arguments`, directories expanded (recursively, names matching
    `pattern`, hidden files and folders skipped), in a stable order. Missing files are kept
    (they fail as documents, not the whole batch)."""
    sources: list[Source] = []
    for argument in arguments:
        path = Path(argument)
        if path.is_dir():
            sources.extend(_directory(path, pattern))
        else:
            sources.append(Source(path, path.stem))
    return sources


def _directory(folder: Path, pattern: str) -> list[Source]:
    found = []
    for path in sorted(folder.rglob(pattern)):
        relative = path.relative_to(folder)
        if path.is_file() and not any(part.startswith(".") for part in relative.parts):
            found.append(Source(path, relative.with_suffix("").as_posix()))
    return found


def read_path_list(text: str) -> list[str]:
    """Paths from `--files-from`: one per line, blank lines ignored."""
    return [line.rstrip("\r") for line in text.split("\n") if line.strip()]


def parse_shard(text: str) -> tuple[int, int]:
    """`I/N` with 0 <= I < N."""
    index, slash, count = text.partition("/")
    if not slash or not index.strip().isdigit() or not count.strip().isdigit():
        raise BatchError(f"--shard {text!r} is not I/N", hint="e.g. --shard 0/4 for the first of four shards")
    shard, shards = int(index), int(count)
    if shards < 1 or shard >= shards:
        raise BatchError(f"--shard {text}: I must be at least 0 and below N", hint="shards are numbered 0/N to N-1/N")
    return shard, shards


def take_shard(sources: list[Source], shard: int, shards: int) -> list[Source]:
    """Every N-th document starting at the I-th: the shards of one input list are disjoint and
    together cover it."""
    return sources[shard::shards]


def output_path(directory: Path, source: Source) -> Path:
    return directory / f"{source.name}.json"


def check_output_names(directory: Path, sources: list[Source]) -> None:
    """Refuse a batch in which two documents would write the same result file."""
    seen: dict[Path, Source] = {}
    for source in sources:
        target = output_path(directory, source)
        if target in seen:
            raise BatchError(
                f"{seen[target].label} and {source.label} would both write {target}",
                hint="pass their directory instead of the files, or run them separately",
            )
        seen[target] = source


def prepare_output_dir(directory: Path) -> None:
    """Create `directory` and check that it takes files, before any model loads."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(dir=directory, prefix=".extract-probe-")
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise OutputError(
            f"cannot write to output directory {directory}: {error.strerror or error}", hint="choose another --output-dir"
        ) from None


def write_atomically(target: Path, text: str) -> None:
    """Write `text` to `target` through a temporary file in the same folder and a rename, so
    `target` is either absent or complete. Raises OSError (disk full, permissions)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
