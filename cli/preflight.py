"""Checks of the command line that need no model, made before any model loads: batch options
that only mean something together, `--shard` and `--glob`, and where `--output-dir` results
may be written. Each failure is a usage error (exit 2)."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from pathlib import Path, PurePath

from gguf_extract import packaged_schema_names

from . import batch
from .exit_codes import UsageError
from .request import Request


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


def check_targets(request: Request, sources: list[batch.Source], inputs: list[batch.Source]) -> None:
    """Refuse a batch that would write a result over an input document, the schema, another
    document's result, or an existing file the options do not say what to do with."""
    directory = request.batch.output_dir
    assert directory is not None
    collision = batch.first_collision(directory, sources)
    if collision is not None:
        first, second, target = collision
        raise UsageError(f"{first.label} and {second.label} would both write {target}", hint=_collision_hint(first, second))
    protected = dict(_protected_files(request, inputs))
    existing: list[Path] = []
    for source in sources:
        target = batch.output_path(directory, source)
        identity = batch.file_identity(target)
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


def check_review_target(request: Request, inputs: list[batch.Source], results: list[Path]) -> None:
    """Refuse a `--review` page that would replace the schema, an input document, the path list,
    a result of this run, a folder or an existing file (without --overwrite), or that could not
    be written, before any model loads."""
    page = request.review
    if page is None:
        return
    identity = batch.file_identity(page)
    protected = dict(_protected_files(request, inputs))
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
        batch.probe_folder(folder)
    except OSError as error:
        raise UsageError(
            f"cannot write the review page {page}: {error.strerror or error}", hint="choose a writable folder for --review"
        ) from None


def _collision_hint(first: batch.Source, second: batch.Source) -> str:
    if first.path == second.path:
        return "the same document is given twice: pass it once"
    if first.path.parent == second.path.parent:  # a.txt and a.md: names differ only in their suffix
        return "narrow --glob to one suffix (e.g. --glob '*.txt'), rename one, or run them separately"
    return "run them separately with different --output-dir, or pass one directory holding both (results keep the path below it)"


def _protected_files(request: Request, inputs: list[batch.Source]) -> Iterator[tuple[batch.FileIdentity, str]]:
    """Files a result must never replace, by identity (links followed), with what each is."""
    for source in inputs:
        identity = batch.file_identity(source.path)
        if identity is not None:
            yield identity, f"the input document {source.label}"
    schema = _schema_file(request.schema)
    if schema is not None:
        yield schema, f"the schema file {request.schema}"
    if request.model is not None and (model := batch.file_identity(Path(request.model))) is not None:
        yield model, f"the model file {request.model}"
    if request.batch.files_from not in (None, "-"):
        listing = batch.file_identity(Path(str(request.batch.files_from)))
        if listing is not None:
            yield listing, f"the path list {request.batch.files_from}"


def _schema_file(spec: str) -> batch.FileIdentity | None:
    """The file `--schema` reads (as core.schema.read.sources finds it), if it names one."""
    identity = batch.file_identity(Path(spec))
    if identity is not None or spec not in packaged_schema_names():
        return identity
    with resources.as_file(resources.files("gguf_extract.schemas") / f"{spec}.json") as packaged:
        return batch.file_identity(packaged)
