"""Where a batch's results go with `--output-dir`: one file per document, named after it, never
over an input, the schema or another document's result; what stands there already, and whether
it is a complete result; each written through a temporary file and a rename, so an interrupted
batch never leaves a partial file and a later run can tell a finished result from a missing one.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import gguf_extract
from gguf_extract import OutputError, Schema, SchemaError, best_error, validator_for_schema

from ..exit_codes import UsageError
from ..preflight import FileIdentity, file_identity, probe_folder, protected_files
from ..request import Request
from ..sources import Source


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


def check_targets(request: Request, sources: list[Source], inputs: list[Source]) -> None:
    """Refuse a batch that would write a result over an input document, the schema, another
    document's result, or an existing file the options do not say what to do with."""
    directory = request.batch.output_dir
    assert directory is not None
    collision = first_collision(directory, sources)
    if collision is not None:
        first, second, target = collision
        raise UsageError(f"{first.label} and {second.label} would both write {target}", hint=_collision_hint(first, second))
    protected = dict(protected_files(request, inputs))
    existing: list[Path] = []
    for source in sources:
        target = output_path(directory, source)
        identity = file_identity(target)
        if identity is None:
            continue
        if identity in protected:
            raise UsageError(
                f"refusing to write the result of {source.label} to {target}: that is {protected[identity]}",
                hint="choose another --output-dir (--overwrite never replaces the schema or an input)",
            )
        existing.append(target)
    if existing and not (request.batch.skip_existing or request.batch.overwrite):
        more = f" (and {len(existing) - 1} more results)" if len(existing) > 1 else ""
        raise UsageError(
            f"{existing[0]} exists{more}, and this run did not write it",
            hint="pass --skip-existing to keep valid results and extract the rest, or --overwrite to replace them",
        )


def _collision_hint(first: Source, second: Source) -> str:
    if first.path == second.path:
        return "the same document is given twice: pass it once"
    if first.path.parent == second.path.parent:  # a.txt and a.md: names differ only in their suffix
        return "narrow --glob to one suffix (e.g. --glob '*.txt'), rename one, or run them separately"
    return "run them separately with different --output-dir, or pass one directory holding both (results keep the path below it)"


def result_files(directory: Path | None, sources: list[Source]) -> dict[Path, FileIdentity]:
    """The result files of `sources` that exist now, by identity: each write replaces the file,
    so comparing two of these tells exactly which results a run wrote (with any worker)."""
    if directory is None:
        return {}
    found = ((target, file_identity(target)) for target in (output_path(directory, s) for s in sources))
    return {target: identity for target, identity in found if identity is not None}


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
