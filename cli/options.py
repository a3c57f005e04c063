"""What the commands' options accept and say: the checks typer runs on option values (`--encoding`,
`--format`, `--temperature`), the help texts, and the declarations of the options more than one
command takes, written once (cli.app declares each command's options with them)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Optional, TypeAlias

import typer

# typer needs Optional on Python 3.10 (ruff would write `int | None`): these name each such type once.
OptionalInt: TypeAlias = Optional[int]  # noqa: UP045
OptionalFloat: TypeAlias = Optional[float]  # noqa: UP045
OptionalStr: TypeAlias = Optional[str]  # noqa: UP045
OptionalBool: TypeAlias = Optional[bool]  # noqa: UP045
OptionalPath: TypeAlias = Optional[Path]  # noqa: UP045
OptionalStrList: TypeAlias = Optional[list[str]]  # noqa: UP045

EPILOG = """\
Examples:

  extract --schema schemas/person.json samples/person.txt

  cat notes.txt | extract --schema schemas/event.json - --stats

  extract --schema invoice.json invoice.txt --model ~/models/qwen2.5-1.5b-instruct-q4_k_m.gguf

  extract check schemas/invoice.json      (what is enforced or refused; no model needed)

  extract text invoice.pdf page.html      (the text the model reads from each; no model needed)

  extract models                          (the GGUF models other local tools keep, by the name --model takes)

  extract --schema person.json docs/ > people.jsonl       (a batch: one JSON line per document)

  extract --schema person.json docs/ --output-dir out/ --skip-existing --shard 0/4

Exit codes: 0 ok (stdout holds one schema-valid JSON document, or one line per document in a
batch), 2 usage, 3 schema refused or invalid, 4 model error, 5 document error, 6 generation
incomplete, 7 output not writable (stdout closed or full, --output-dir failing), 8 a --workers
process died (its documents without results get WorkerDied records), 70 internal error (a
bug; --debug shows the traceback), 130 interrupted (Ctrl-C), 141 stdout's reader left (a
closed pipe, said nowhere), 143 terminated (SIGTERM). On any non-zero exit stdout is not a complete document;
in a batch, the code is that of the first failed document, and the others were still
extracted.
"""


def known_encoding(name: str) -> str:
    from gguf_extract import check_encoding, is_text_encoding

    try:
        canonical = check_encoding(name)
    except (LookupError, ValueError):  # ValueError: a name with a NUL character in it
        raise typer.BadParameter(f"unknown encoding {name!r}; use a Python codec name such as utf-8, latin-1 or utf-16") from None
    if not is_text_encoding(canonical):
        raise typer.BadParameter(
            f"{name!r} is not a text encoding (it maps bytes to bytes or text to text); use one such as utf-8, latin-1 or utf-16"
        )
    return canonical


def known_format(name: str | None) -> str | None:
    from gguf_extract import DOCUMENT_FORMATS

    if name is not None and name not in DOCUMENT_FORMATS:
        raise typer.BadParameter(f"unknown format {name!r}; use one of {', '.join(DOCUMENT_FORMATS)}")
    return name


def finite(value: float) -> float:
    """A temperature is a finite number: inf passes the range check, and NaN fails every comparison."""
    if not math.isfinite(value):
        raise typer.BadParameter(f"{value} is not a finite number; use 0 (greedy) or a positive number")
    return value


FORMAT_HELP = (
    "The documents' format: text, markdown, html, pdf or docx [default: told from each document's content,"
    " its name a hint; needed for stdin holding Markdown or an HTML fragment]."
)


# The options more than one command takes. Each command gives its own default (the library's).
Encoding = Annotated[
    str, typer.Option("--encoding", callback=known_encoding, help="The documents' text encoding (any Python codec name).")
]
DocumentFormat = Annotated[OptionalStr, typer.Option("--format", callback=known_format, help=FORMAT_HELP, show_default=False)]
Glob = Annotated[str, typer.Option("--glob", help="In directories, take files whose names match this pattern.")]
RecursionDepth = Annotated[int, typer.Option(min=1, max=32, help="How deep recursive $ref schemas are unrolled.")]
Debug = Annotated[bool, typer.Option("--debug", help="Show tracebacks.")]
