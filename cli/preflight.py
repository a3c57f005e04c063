"""Checks of the command line that need no model, made before any model loads: batch options
that only mean something together, `--shard` and `--glob`, and where a `--review` page may be
written; and the files no result may replace, by identity (cli.batch.results checks
`--output-dir` results against them). Each failure is a usage error (exit 2)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from importlib import resources
from pathlib import Path, PurePath

from gguf_extract import packaged_schema_names

from .exit_codes import UsageError
from .request import Request
from .sources import Source

FileIdentity = tuple[int, int]


def check_request(request: Request) -> tuple[int, int] | None:
    """Refuse options that do not apply to this run; returns the shard asked for, if any."""
    options = request.batch
    if request.abstain and request.min_confidence is None:
        raise UsageError(
            "--abstain needs --min-confidence P: the confidence below which a value is withheld",
            hint="add --min-confidence 0.5, say",
        )
    if options.output_dir is None and options.skip_existing:
        raise UsageError("--skip-existing applies only with --output-dir", hint="add --output-dir DIR, or drop --skip-existing")
    if options.output_dir is None and request.review is None and options.overwrite:
        raise UsageError(
            "--overwrite applies only with --output-dir or --review",
            hint="add --output-dir DIR or --review FILE, or drop --overwrite",
        )
    if options.skip_existing and options.overwrite:
        raise UsageError(
            "--skip-existing and --overwrite exclude each other",
            hint="--skip-existing keeps valid earlier results, --overwrite replaces them: pass one",
        )
    if request.chunk and request.truncate:
        raise UsageError(
            "--chunk and --truncate exclude each other",
            hint="--chunk extracts from the whole of a long document piece by piece, --truncate from its head: pass one",
        )
    check_glob(options.glob)
    if request.review is not None and options.workers > 1:
        raise UsageError(
            "--review needs every document's text in one process, and --workers spreads them over several",
            hint="drop --workers, or run --evidence with --workers and review a smaller batch",
        )
    if options.shard is None:
        return None
    shard = parse_shard(options.shard)
    if not request.is_batch:
        raise UsageError(
            "--shard applies to a batch, and one document was given",
            hint="pass a directory, several documents, --files-from or --output-dir, or drop --shard",
        )
    return shard


def parse_shard(text: str) -> tuple[int, int]:
    """`I/N` with 0 <= I < N."""
    index, slash, count = text.partition("/")
    if not slash or not index.strip().isdigit() or not count.strip().isdigit():
        raise UsageError(f"--shard {text!r} is not I/N", hint="e.g. --shard 0/4 for the first of four shards")
    shard, shards = int(index), int(count)
    if shards < 1 or shard >= shards:
        raise UsageError(f"--shard {text}: I must be at least 0 and below N", hint="shards are numbered 0/N to N-1/N")
    return shard, shards


def check_glob(pattern: str) -> None:
    """A name pattern matched inside each directory: never empty, absolute or leading out."""
    path = PurePath(pattern)
    if not pattern or path.is_absolute() or ".." in path.parts:
        raise UsageError(
            f"--glob {pattern!r} is not a pattern inside a directory",
            hint="give a file-name pattern such as '*.txt' (or 'sub/*.txt'); it is matched below each directory given",
        )


def check_review_target(request: Request, inputs: list[Source], results: list[Path]) -> None:
    """Refuse a `--review` page that would replace the schema, an input document, the path list,
    a result of this run, a folder or an existing file (without --overwrite), or that could not
    be written, before any model loads."""
    page = request.review
    if page is None:
        return
    identity = file_identity(page)
    protected = dict(protected_files(request, inputs))
    if identity is not None and identity in protected:
        raise UsageError(
            f"refusing to write the review page to {page}: that is {protected[identity]}",
            hint="choose another --review path, such as review.html (--overwrite never replaces the schema or an input)",
        )
    if any(_same_place(page, result) for result in results):
        raise UsageError(f"--review {page} is also where a result of this run goes", hint="choose another --review path")
    if page.is_dir():
        raise UsageError(f"--review {page} is a directory", hint="name a file in it, such as review.html")
    if identity is not None and not request.batch.overwrite:
        raise UsageError(
            f"{page} exists, and this run did not write it",
            hint="choose another --review path, or pass --overwrite to replace it",
        )
    _check_folder_takes_files(page)


def _same_place(first: Path, second: Path) -> bool:
    try:
        return first.resolve() == second.resolve()
    except (OSError, RuntimeError):  # a loop of links: neither can be written anyway
        return False


def _check_folder_takes_files(page: Path) -> None:
    """The folder the page goes in exists and takes a new file (a probe, created and removed)."""
    folder = page.parent
    if not folder.is_dir():
        raise UsageError(
            f"cannot write the review page {page}: the folder {folder} does not exist",
            hint="create it, or choose another --review path",
        )
    try:
        probe_folder(folder)
    except OSError as error:
        raise UsageError(
            f"cannot write the review page {page}: {error.strerror or error}", hint="choose a writable folder for --review"
        ) from None


def protected_files(request: Request, inputs: list[Source]) -> Iterator[tuple[FileIdentity, str]]:
    """Files a result must never replace, by identity (links followed), with what each is."""
    for source in inputs:
        identity = file_identity(source.path)
        if identity is not None:
            yield identity, f"the input document {source.label}"
    schema = _schema_file(request.schema)
    if schema is not None:
        yield schema, f"the schema file {request.schema}"
    if request.model is not None and (model := file_identity(Path(request.model))) is not None:
        yield model, f"the model file {request.model}"
    if request.batch.files_from not in (None, "-"):
        listing = file_identity(Path(str(request.batch.files_from)))
        if listing is not None:
            yield listing, f"the path list {request.batch.files_from}"


def _schema_file(spec: str) -> FileIdentity | None:
    """The file `--schema` reads (as core.schema.read.sources finds it), if it names one."""
    identity = file_identity(Path(spec))
    if identity is not None or spec not in packaged_schema_names():
        return identity
    with resources.as_file(resources.files("gguf_extract.schemas") / f"{spec}.json") as packaged:
        return file_identity(packaged)


def file_identity(path: Path) -> FileIdentity | None:
    """The device and inode `path` leads to (links followed), or None where there is no such file."""
    try:
        status = path.stat()
    except (OSError, ValueError):
        return None
    return status.st_dev, status.st_ino


def probe_folder(folder: Path) -> None:
    """Raise OSError unless `folder` takes a new file (one is created there and removed)."""
    handle, probe = tempfile.mkstemp(dir=folder, prefix=".extract-probe-")
    os.close(handle)
    os.unlink(probe)
