"""The `extract` command: parse options, call the library, print, exit with a documented code."""

from __future__ import annotations

import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from .exit_codes import ExitCode

EPILOG = """\
Examples:

  extract --schema schemas/person.json samples/person.txt

  cat notes.txt | extract --schema schemas/event.json - --stats

  extract --schema invoice.json invoice.txt --model ~/models/qwen2.5-1.5b-instruct-q4_k_m.gguf

  extract check schemas/invoice.json      (what is enforced or refused; no model needed)

  extract --schema person.json docs/ > people.jsonl       (a batch: one JSON line per document)

  extract --schema person.json docs/ --output-dir out/ --skip-existing --shard 0/4

Exit codes: 0 ok (stdout holds one schema-valid JSON document, or one line per document in a
batch), 2 usage, 3 schema refused or invalid, 4 model error, 5 document error, 6 generation
incomplete, 7 output not writable (stdout closed or full, --output-dir failing), 130
interrupted (Ctrl-C), 143 terminated (SIGTERM). On any non-zero exit stdout is not a complete
document; in a batch, the code is that of the first failed document, and the others were
still extracted.
"""


def _known_encoding(name: str) -> str:
    from ..core.document import check_encoding

    try:
        return check_encoding(name)
    except LookupError:
        raise typer.BadParameter(f"unknown encoding {name!r}; use a Python codec name such as utf-8, latin-1 or utf-16") from None


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the process is so that files are cleaned up as for Ctrl-C."""


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
            help="Text files or directories to extract from, or - for stdin. More than one, a directory,"
            " --files-from or --output-dir means a batch: one JSON line (or file) per document.",
            show_default=False,
        ),
    ] = None,
    model: Annotated[
        Optional[Path],  # noqa: UP045 - typer needs Optional on Python 3.10
        typer.Option(envvar="EXTRACT_MODEL", help="GGUF model file [default: bundled SmolLM2-135M-Instruct]."),
    ] = None,
    max_tokens: Annotated[int, typer.Option(min=1, help="Most output tokens; the JSON always closes inside it.")] = 1024,
    temperature: Annotated[float, typer.Option(min=0.0, help="0 is greedy and deterministic.")] = 0.0,
    top_p: Annotated[float, typer.Option(min=0.0, max=1.0, help="Nucleus sampling when temperature > 0.")] = 1.0,
    seed: Annotated[Optional[int], typer.Option(help="Random seed for sampling.")] = None,  # noqa: UP045
    n_gpu_layers: Annotated[int, typer.Option(help="Layers on the GPU; -1 is all (when the build has a GPU).")] = -1,
    threads: Annotated[Optional[int], typer.Option(min=1, help="CPU threads [default: all cores].")] = None,  # noqa: UP045
    ctx: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option(min=16, help="Context size [default: prompt + max-tokens, up to the model's]."),
    ] = None,
    instructions: Annotated[Optional[str], typer.Option(help="Replace the default instruction text.")] = None,  # noqa: UP045
    lenient: Annotated[
        bool,
        typer.Option("--lenient", help="Ignore keywords that cannot be enforced (listed on stderr); output is still validated."),
    ] = False,
    recursion_depth: Annotated[int, typer.Option(min=1, max=32, help="How deep recursive $ref schemas are unrolled.")] = 3,
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
        bool, typer.Option("--skip-existing", help="With --output-dir, skip documents whose result exists (resume).")
    ] = False,
    shard: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--shard", help="I/N: take every N-th document from the I-th (0 <= I < N), to spread a batch."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress display.")] = False,
    workers: Annotated[
        int, typer.Option("--workers", min=1, max=64, help="Run the batch in N processes (each loads the model).")
    ] = 1,
    worker: Annotated[bool, typer.Option("--worker", hidden=True)] = False,
    indent: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option("--indent", min=0, max=16, help="Pretty-print with N spaces (streamed; costs no tokens)."),
    ] = None,
    truncate: Annotated[
        bool, typer.Option("--truncate", help="Keep the head of a document too long for the context (with a warning).")
    ] = False,
    encoding: Annotated[
        str, typer.Option("--encoding", callback=_known_encoding, help="The documents' text encoding (any Python codec name).")
    ] = "utf-8",
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write the on-disk cache (env EXTRACT_CACHE_DIR moves it).")
    ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show model, settings and prompt on stderr.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks.")] = False,
) -> None:
    """Extract schema-valid JSON from a document with a local GGUF model."""
    from . import run

    request = run.Request(
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
        batch=run.BatchOptions(files_from, glob, output_dir, skip_existing, shard, quiet, workers, worker),
    )
    raise typer.Exit(_guarded(run.execute, request, debug))


check_app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)


@check_app.command(context_settings={"help_option_names": ["-h", "--help"]})
def check(
    schema: Annotated[str, typer.Argument(help="JSON Schema file, packaged schema name, or module:Class.")],
    recursion_depth: Annotated[int, typer.Option(min=1, max=32, help="How deep recursive $ref schemas are unrolled.")] = 3,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as one JSON object.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks.")] = False,
) -> None:
    """Compile a schema without a model: what is enforced, what is refused and why, the
    automaton's size. Exit 0 only when every keyword is enforced; 3 otherwise."""
    from . import run

    raise typer.Exit(_guarded(run.check, run.CheckRequest(schema, recursion_depth, as_json), debug))


def _guarded(action: Callable[[Any], int], request: Any, debug: bool) -> int:
    from ..core.errors import ExtractError
    from . import output

    try:
        return int(action(request))
    except ExtractError as error:
        if debug:
            traceback.print_exc()
        output.report_error(error)
        return int(output.exit_code_for(error))
    except Terminated:
        output.report_interrupt("terminated")
        return int(ExitCode.TERMINATED)
    except KeyboardInterrupt:
        output.report_interrupt()
        return int(ExitCode.INTERRUPTED)


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


def main() -> None:
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        if sys.argv[1:2] == ["check"]:
            check_app(args=sys.argv[2:], prog_name="extract check")
        else:
            app()
    except Terminated:
        sys.stderr.write("terminated\n")
        sys.exit(int(ExitCode.TERMINATED))
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(int(ExitCode.INTERRUPTED))


if __name__ == "__main__":
    main()
