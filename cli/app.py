"""The `extract` command: parse options, call the library, print, exit with a documented code."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from gguf_extract import (
    DEFAULT_ENCODING,
    DEFAULT_GPU_LAYERS,
    DEFAULT_GPU_PARALLEL,
    DEFAULT_MAX_TOKENS,
    DEFAULT_RECURSION_DEPTH,
    DEFAULT_TEMPERATURE,
    DEFAULT_TOP_P,
)

from . import guard, interrupts
from .exit_codes import ExitCode

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


def _known_encoding(name: str) -> str:
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


def _known_format(name: str | None) -> str | None:
    from gguf_extract import DOCUMENT_FORMATS

    if name is not None and name not in DOCUMENT_FORMATS:
        raise typer.BadParameter(f"unknown format {name!r}; use one of {', '.join(DOCUMENT_FORMATS)}")
    return name


def _finite(value: float) -> float:
    """A temperature is a finite number: inf passes the range check, and NaN fails every comparison."""
    if not math.isfinite(value):
        raise typer.BadParameter(f"{value} is not a finite number; use 0 (greedy) or a positive number")
    return value


FORMAT_HELP = (
    "The documents' format: text, markdown, html, pdf or docx [default: told from each document's content,"
    " its name a hint; needed for stdin holding Markdown or an HTML fragment]."
)

app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)


@app.command(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
def extract(
    schema: Annotated[
        str,
        typer.Option(
            "--schema",
            "-s",
            help="JSON Schema file, a packaged schema's name (person, invoice, event), or module:Class (pydantic).",
        ),
    ],
    documents: Annotated[
        Optional[list[str]],  # noqa: UP045 - typer needs Optional on Python 3.10
        typer.Argument(
            help="Documents to extract from (text, Markdown, PDF, HTML or DOCX files) or directories of them, or - for stdin."
            " More than one, a directory,"
            " --files-from or --output-dir means a batch: one JSON line (or file) per document.",
            show_default=False,
        ),
    ] = None,
    model: Annotated[
        Optional[str],  # noqa: UP045 - typer needs Optional on Python 3.10; a name, not a Path: Path("./m") is "m"
        typer.Option(
            envvar="EXTRACT_MODEL",
            help="GGUF model file, or the name of one llama.cpp, LM Studio or Hugging Face downloaded here [default:"
            " bundled SmolLM2-135M-Instruct, small and fast: 44% of fields right on real documents in our tests, 64%"
            " with --grounded; a larger instruction-tuned GGUF does better].",
        ),
    ] = None,
    max_tokens: Annotated[
        int, typer.Option(min=1, help="Most output tokens; the JSON always closes inside it.")
    ] = DEFAULT_MAX_TOKENS,
    temperature: Annotated[
        float, typer.Option(min=0.0, callback=_finite, help="0 is greedy and deterministic.")
    ] = DEFAULT_TEMPERATURE,
    top_p: Annotated[float, typer.Option(min=0.0, max=1.0, help="Nucleus sampling when temperature > 0.")] = DEFAULT_TOP_P,
    seed: Annotated[Optional[int], typer.Option(min=0, help="Random seed for sampling (0 or more).")] = None,  # noqa: UP045
    allow_repeats: Annotated[
        bool,
        typer.Option(
            "--allow-repeats",
            help="Let a string repeat its tail and an array repeat an item (by default a looping string"
            " takes another token and an array the model would fill with a copy is closed).",
        ),
    ] = False,
    n_gpu_layers: Annotated[
        int, typer.Option(help="Layers on the GPU; -1 is all (when the build has a GPU).")
    ] = DEFAULT_GPU_LAYERS,
    threads: Annotated[Optional[int], typer.Option(min=1, help="CPU threads [default: one a core this process may use].")] = None,  # noqa: UP045
    ctx: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option(min=16, help="Context size [default: prompt + max-tokens, up to the model's]."),
    ] = None,
    instructions: Annotated[Optional[str], typer.Option(help="Replace the default instruction text.")] = None,  # noqa: UP045
    lenient: Annotated[
        bool,
        typer.Option("--lenient", help="Ignore keywords that cannot be enforced (listed on stderr); output is still validated."),
    ] = False,
    recursion_depth: Annotated[
        int, typer.Option(min=1, max=32, help="How deep recursive $ref schemas are unrolled.")
    ] = DEFAULT_RECURSION_DEPTH,
    stats: Annotated[bool, typer.Option("--stats", help="Print one JSON line of figures on stderr.")] = False,
    files_from: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--files-from", help="Read document paths from this file, one per line (- for stdin)."),
    ] = None,
    glob: Annotated[str, typer.Option("--glob", help="In directories, take files whose names match this pattern.")] = "*",
    output_dir: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--output-dir", help="Write DIR/<name>.json per document (atomically) instead of JSON Lines."),
    ] = None,
    skip_existing: Annotated[
        bool,
        typer.Option(
            "--skip-existing",
            help="With --output-dir, skip documents whose result exists and validates (resume); extract the rest.",
        ),
    ] = False,
    overwrite: Annotated[
        bool,
        typer.Option("--overwrite", help="With --output-dir, replace existing results (never the schema or an input document)."),
    ] = False,
    shard: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--shard", help="I/N: take every N-th document from the I-th (0 <= I < N), to spread a batch."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress display and no summary line.")] = False,
    workers: Annotated[
        int, typer.Option("--workers", min=1, max=64, help="Run the batch in N processes (each loads the model).")
    ] = 1,
    parallel: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option(
            "--parallel",
            min=1,
            max=64,
            help="Decode N documents of a batch, or N pieces of a --chunk document, together as sequences of one context"
            f" (1: one after another). Default: {DEFAULT_GPU_PARALLEL} documents where the model runs on a GPU, else 1.",
            show_default=False,
        ),
    ] = None,
    indent: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option("--indent", min=0, max=16, help="Pretty-print with N spaces (streamed; costs no tokens)."),
    ] = None,
    truncate: Annotated[
        bool, typer.Option("--truncate", help="Keep the head of a document too long for the context (with a warning).")
    ] = False,
    chunk: Annotated[
        Optional[bool],  # noqa: UP045
        typer.Option(
            "--chunk/--no-chunk",
            help="Extract from a document too long for the context piece by piece, and merge the results"
            " (by default where the document has no more bytes than the context holds tokens times the longest"
            " token's bytes); --no-chunk refuses such a document.",
            show_default=False,
        ),
    ] = None,
    encoding: Annotated[
        str, typer.Option("--encoding", callback=_known_encoding, help="The documents' text encoding (any Python codec name).")
    ] = DEFAULT_ENCODING,
    document_format: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--format", callback=_known_format, help=FORMAT_HELP, show_default=False),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write the on-disk cache (env EXTRACT_CACHE_DIR moves it).")
    ] = False,
    grounded: Annotated[
        bool, typer.Option("--grounded", help="Write every plain string value as a span of the document (x-grounded overrides).")
    ] = False,
    evidence: Annotated[
        bool, typer.Option("--evidence", help='One line per document: {"source", "data", "evidence"} with spans and confidence.')
    ] = False,
    min_confidence: Annotated[
        Optional[float],  # noqa: UP045
        typer.Option("--min-confidence", min=0.0, max=1.0, help="Warn on stderr about values the model was less sure of."),
    ] = None,
    abstain: Annotated[
        bool,
        typer.Option(
            "--abstain",
            help="With --min-confidence: write null in place of a value below it, where the schema allows null there.",
        ),
    ] = False,
    review: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--review", help="Write a self-contained HTML page showing each value's span and confidence."),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Show model, threads and settings on stderr (and one document's prompt).")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks.")] = False,
) -> None:
    """Extract schema-valid JSON from a document with a local GGUF model."""
    from .commands import extract as command
    from .request import BatchOptions, Request

    request = Request(
        documents=tuple(documents or ()),
        schema=schema,
        model=model,
        max_tokens=max_tokens,
        temperature=temperature,
        top_p=top_p,
        seed=seed,
        n_gpu_layers=n_gpu_layers,
        threads=threads,
        ctx=ctx,
        instructions=instructions,
        lenient=lenient,
        recursion_depth=recursion_depth,
        stats=stats,
        verbose=verbose,
        use_cache=not no_cache,
        truncate=truncate,
        indent=indent,
        encoding=encoding,
        batch=BatchOptions(files_from, glob, output_dir, skip_existing, shard, quiet, workers, overwrite, parallel=parallel),
        grounded=grounded,
        evidence=evidence,
        min_confidence=min_confidence,
        abstain=abstain,
        review=review,
        document_format=document_format,
        chunk=chunk,
        allow_repeats=allow_repeats,
        debug=debug,
    )
    raise typer.Exit(_guarded(command.execute, request, debug))


check_app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)


@check_app.command(context_settings={"help_option_names": ["-h", "--help"]})
def check(
    schema: Annotated[str, typer.Argument(help="JSON Schema file, packaged schema name, or module:Class.")],
    recursion_depth: Annotated[
        int, typer.Option(min=1, max=32, help="How deep recursive $ref schemas are unrolled.")
    ] = DEFAULT_RECURSION_DEPTH,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as one JSON object.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks.")] = False,
) -> None:
    """Compile a schema without a model: what is enforced, what is refused and why, the
    automaton's size. Exit 0 only when every keyword is enforced; 3 otherwise."""
    from .commands import check as command
    from .request import CheckRequest

    raise typer.Exit(_guarded(command.check, CheckRequest(schema, recursion_depth, as_json), debug))


text_app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)


@text_app.command(context_settings={"help_option_names": ["-h", "--help"]})
def text(
    documents: Annotated[list[str], typer.Argument(help="Documents to show (- for stdin).", show_default=False)],
    document_format: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--format", callback=_known_format, help=FORMAT_HELP, show_default=False),
    ] = None,
    encoding: Annotated[
        str, typer.Option("--encoding", callback=_known_encoding, help="The documents' text encoding (any Python codec name).")
    ] = DEFAULT_ENCODING,
    glob: Annotated[str, typer.Option("--glob", help="In directories, take files whose names match this pattern.")] = "*",
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks.")] = False,
) -> None:
    """Print the text the model would read from each document (after converting PDF, HTML or
    DOCX, before the prompt); a directory stands for its files. No model is loaded. Exit 0
    when every document was read; 5 otherwise."""
    from .commands import text as command
    from .request import TextRequest

    raise typer.Exit(_guarded(command.show_text, TextRequest(tuple(documents), encoding, document_format, glob), debug))


models_app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)


@models_app.command(context_settings={"help_option_names": ["-h", "--help"]})
def models(debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks.")] = False) -> None:
    """List the GGUF models found in llama.cpp's download cache, LM Studio's models folder and
    the Hugging Face hub cache: per line, the name --model takes (the file name without .gguf)
    and the file. No model is loaded. The folders searched go to stderr when none holds a
    model, and a warning when a folder held more entries than are read (the list is then
    incomplete, and each model is listed by its path)."""
    from .commands import models as command

    raise typer.Exit(_guarded(command.list_models, None, debug))


class _Phase:
    """Whether a command has started: before it, an OSError can only come from click writing
    its own text (help, usage) to a stream that does not take it."""

    command_started = False


def _guarded(action: Callable[[Any], int], request: Any, debug: bool) -> int:
    _Phase.command_started = True
    return guard.guarded(lambda: action(request), debug)


def _cannot_write_help(error: OSError) -> int:
    """Click's own output (--help, usage) failed to reach stdout: one line, exit 7."""
    from gguf_extract import OutputError

    from . import output

    output.discard_stdout()
    output.report_error(OutputError(f"cannot write to stdout: {error.strerror or error}", hint="check where stdout goes"))
    return int(ExitCode.OUTPUT)


def main() -> None:
    guard.prepare()
    try:
        if sys.argv[1:2] == ["check"]:
            check_app(args=sys.argv[2:], prog_name="extract check")
        elif sys.argv[1:2] == ["text"]:
            text_app(args=sys.argv[2:], prog_name="extract text")
        elif sys.argv[1:2] == ["models"]:
            models_app(args=sys.argv[2:], prog_name="extract models")
        else:
            app()
    except KeyboardInterrupt as stop:
        terminated = interrupts.was_terminated(stop)
        sys.stderr.write("terminated\n" if terminated else "interrupted\n")
        sys.exit(int(ExitCode.TERMINATED if terminated else ExitCode.INTERRUPTED))
    except OSError as error:
        if _Phase.command_started:
            raise  # not click's output: a bug, shown with its traceback
        sys.exit(_cannot_write_help(error))


if __name__ == "__main__":
    main()
