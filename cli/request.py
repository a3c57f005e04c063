"""What one `extract` invocation asks for, whatever spelled it: the options as values, and their
one serialised form, with which a `--workers` parent hands its request to each process.

Only cli.app knows the flags; everything after it reads a `Request`. A new option is a new field
here (with its default) and a parameter of the same name in cli.app: the request is made from
the parameters by name (`Request.from_options`), and the serialised form follows the fields, so
a worker process gets every option without a second list of them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gguf_extract import DEFAULT_ENCODING

if TYPE_CHECKING:
    from pydantic import TypeAdapter


@dataclass(frozen=True)
class BatchOptions:
    files_from: str | None = None
    glob: str = "*"
    output_dir: Path | None = None
    skip_existing: bool = False
    shard: str | None = None
    quiet: bool = False
    workers: int = 1
    overwrite: bool = False
    worker: bool = False  # one process of a --workers batch: its documents come from the parent, no summary
    processes: int = 1  # the batch's processes converting documents at once on this machine (--workers)
    setup_warnings: bool = True  # False: another worker says what loading and compiling warn of, once for all
    # Documents, or a --chunk document's pieces, decoded together (core.runtime); None:
    # the machine's default for documents (Extractor.default_parallel), 1 for pieces.
    parallel: int | None = None


@dataclass(frozen=True)
class Request:
    documents: tuple[str, ...]
    schema: str
    model: str | None  # as written (a name or a path), then the file it names (cli.commands.extract.execute)
    max_tokens: int
    temperature: float
    top_p: float
    seed: int | None
    n_gpu_layers: int
    threads: int | None
    ctx: int | None
    instructions: str | None
    lenient: bool
    recursion_depth: int
    stats: bool
    verbose: bool
    use_cache: bool = True
    truncate: bool = False
    indent: int | None = None
    encoding: str = DEFAULT_ENCODING
    batch: BatchOptions = BatchOptions()
    grounded: bool = False
    evidence: bool = False
    min_confidence: float | None = None
    abstain: bool = False  # null in place of values below min_confidence, where the schema allows it
    review: Path | None = None
    document_format: str | None = None  # a name from core.documents.convert.FORMATS; None: told from each document
    # A document too long for the context is extracted piece by piece: True always (--chunk),
    # False never (--no-chunk: it is refused), None where it was read whole (cli.extraction_steps).
    chunk: bool | None = None
    allow_repeats: bool = False  # no remedy for looping strings and copied array items (core.decode.repetition)
    debug: bool = False  # tracebacks on stderr, for a document's unforeseen error too

    @property
    def is_batch(self) -> bool:
        """More than one document, a directory, a list of paths or an output directory: JSON
        Lines (or files) out, one result per document, failures reported and skipped."""
        batch = self.batch
        single = len(self.documents) == 1 and not Path(self.documents[0]).is_dir()
        return not single or batch.files_from is not None or batch.output_dir is not None or batch.worker

    @staticmethod
    def from_options(options: Mapping[str, Any]) -> Request:
        """The request `extract`'s options make, each given by its parameter's name in cli.app: a
        field of this name or of BatchOptions, but `documents` (a list, or None for none) and
        `no_cache` (the opposite of `use_cache`). A name of neither is a TypeError."""
        given = dict(options)
        documents = tuple(given.pop("documents") or ())
        use_cache = not given.pop("no_cache")
        batch = BatchOptions(**{field.name: given.pop(field.name) for field in fields(BatchOptions) if field.name in given})
        return Request(documents=documents, use_cache=use_cache, batch=batch, **given)

    def to_json(self) -> str:
        """One line of JSON holding every field. Names that are not UTF-8 (undecodable bytes
        kept as lone surrogates, PEP 383) are written as \\udcXX escapes and come back the same."""
        return json.dumps(_adapter().dump_python(self, mode="json"))

    @staticmethod
    def from_json(line: str) -> Request:
        """The request `to_json` wrote; pydantic's ValidationError for anything else."""
        return _adapter().validate_python(json.loads(line))


@cache
def _adapter() -> TypeAdapter[Request]:
    from pydantic import TypeAdapter  # imported only where a request is serialised: --help stays quick

    return TypeAdapter(Request)


@dataclass(frozen=True)
class CheckRequest:
    """What `extract check` asks for."""

    schema: str
    recursion_depth: int
    as_json: bool


@dataclass(frozen=True)
class TextRequest:
    """What `extract text` asks for."""

    documents: tuple[str, ...]
    encoding: str = DEFAULT_ENCODING
    document_format: str | None = None
    glob: str = "*"
