"""The `extract` command: parse options, call the library, print, exit with a documented code."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Annotated, Any

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
from .options import (
    EPILOG,
    Debug,
    DocumentFormat,
    Encoding,
    Glob,
    OptionalBool,
    OptionalFloat,
    OptionalInt,
    OptionalPath,
    OptionalStr,
    OptionalStrList,
    RecursionDepth,
    finite,
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
        OptionalStrList,
        typer.Argument(
            help="Documents to extract from (text, Markdown, PDF, HTML or DOCX files) or directories of them, or - for stdin."
            " More than one, a directory,"
            " --files-from or --output-dir means a batch: one JSON line (or file) per document.",
            show_default=False,
        ),
    ] = None,
    model: Annotated[
        OptionalStr,  # a name, not a Path: Path("./m") is "m"
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
        float, typer.Option(min=0.0, callback=finite, help="0 is greedy and deterministic.")
    ] = DEFAULT_TEMPERATURE,
    top_p: Annotated[float, typer.Option(min=0.0, max=1.0, help="Nucleus sampling when temperature > 0.")] = DEFAULT_TOP_P,
    seed: Annotated[OptionalInt, typer.Option(min=0, help="Random seed for sampling (0 or more).")] = None,
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
    threads: Annotated[OptionalInt, typer.Option(min=1, help="CPU threads [default: one a core this process may use].")] = None,
    ctx: Annotated[
        OptionalInt, typer.Option(min=16, help="Context size [default: prompt + max-tokens, up to the model's].")
    ] = None,
    instructions: Annotated[OptionalStr, typer.Option(help="Replace the default instruction text.")] = None,
    lenient: Annotated[
        bool,
        typer.Option("--lenient", help="Ignore keywords that cannot be enforced (listed on stderr); output is still validated."),
    ] = False,
    recursion_depth: RecursionDepth = DEFAULT_RECURSION_DEPTH,
    stats: Annotated[bool, typer.Option("--stats", help="Print one JSON line of figures on stderr.")] = False,
    files_from: Annotated[
        OptionalStr, typer.Option("--files-from", help="Read document paths from this file, one per line (- for stdin).")
    ] = None,
    glob: Glob = "*",
    output_dir: Annotated[
        OptionalPath, typer.Option("--output-dir", help="Write DIR/<name>.json per document (atomically) instead of JSON Lines.")
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
        OptionalStr, typer.Option("--shard", help="I/N: take every N-th document from the I-th (0 <= I < N), to spread a batch.")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress display and no summary line.")] = False,
    workers: Annotated[
        int, typer.Option("--workers", min=1, max=64, help="Run the batch in N processes (each loads the model).")
    ] = 1,
    parallel: Annotated[
        OptionalInt,
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
        OptionalInt, typer.Option("--indent", min=0, max=16, help="Pretty-print with N spaces (streamed; costs no tokens).")
    ] = None,
    truncate: Annotated[
        bool, typer.Option("--truncate", help="Keep the head of a document too long for the context (with a warning).")
    ] = False,
    chunk: Annotated[
        OptionalBool,
        typer.Option(
            "--chunk/--no-chunk",
            help="Extract from a document too long for the context piece by piece, and merge the results"
            " (by default where the document has no more bytes than the context holds tokens times the longest"
            " token's bytes); --no-chunk refuses such a document.",
            show_default=False,
        ),
    ] = None,
    encoding: Encoding = DEFAULT_ENCODING,
    document_format: DocumentFormat = None,
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
        OptionalFloat,
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
        OptionalPath, typer.Option("--review", help="Write a self-contained HTML page showing each value's span and confidence.")
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Show model, threads and settings on stderr (and one document's prompt).")
    ] = False,
    debug: Debug = False,
) -> None:
    """Extract schema-valid JSON from a document with a local GGUF model."""
    options = dict(locals())  # first, while the locals are the options, each by its parameter's name
    from .commands import extract as command
    from .request import Request

    raise typer.Exit(_guarded(command.execute, Request.from_options(options), debug))


check_app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)


@check_app.command(context_settings={"help_option_names": ["-h", "--help"]})
def check(
    schema: Annotated[str, typer.Argument(help="JSON Schema file, packaged schema name, or module:Class.")],
    recursion_depth: RecursionDepth = DEFAULT_RECURSION_DEPTH,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as one JSON object.")] = False,
    debug: Debug = False,
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
    document_format: DocumentFormat = None,
    encoding: Encoding = DEFAULT_ENCODING,
    glob: Glob = "*",
    debug: Debug = False,
) -> None:
    """Print the text the model would read from each document (after converting PDF, HTML or
    DOCX, before the prompt); a directory stands for its files. No model is loaded. Exit 0
    when every document was read; 5 otherwise."""
    from .commands import text as command
    from .request import TextRequest

    raise typer.Exit(_guarded(command.show_text, TextRequest(tuple(documents), encoding, document_format, glob), debug))


models_app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)


@models_app.command(context_settings={"help_option_names": ["-h", "--help"]})
def models(debug: Debug = False) -> None:
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
