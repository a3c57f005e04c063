"""The `extract` command: parse options, call the library, print, exit with a documented code."""

from __future__ import annotations

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

Exit codes: 0 ok (stdout holds one schema-valid JSON document), 2 usage, 3 schema refused or
invalid, 4 model error, 5 document error, 6 generation incomplete, 130 interrupted. On any
non-zero exit stdout is not a complete document.
"""

app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)


@app.command(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
def extract(
    document: Annotated[str, typer.Argument(help="Text file to extract from, or - for stdin.")],
    schema: Annotated[
        str,
        typer.Option(
            "--schema",
            "-s",
            help="JSON Schema file, a packaged schema's name (person, invoice, event), or module:Class (pydantic).",
        ),
    ],
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
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write the on-disk cache (env EXTRACT_CACHE_DIR moves it).")
    ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show model, settings and prompt on stderr.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks.")] = False,
) -> None:
    """Extract schema-valid JSON from a document with a local GGUF model."""
    from . import run

    request = run.Request(
        document=document,
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
    except KeyboardInterrupt:
        output.report_interrupt()
        return int(ExitCode.INTERRUPTED)


def main() -> None:
    try:
        if sys.argv[1:2] == ["check"]:
            check_app(args=sys.argv[2:], prog_name="extract check")
        else:
            app()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(int(ExitCode.INTERRUPTED))


if __name__ == "__main__":
    main()
