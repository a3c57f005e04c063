"""Progress of one extraction on stderr while it is a terminal: the pieces of a `--chunk`
run done so far, and the evaluation of a prompt longer than one batch (a long document's
prompt takes minutes on a small CPU, before the first output token)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from gguf_extract import ChunkedExtraction, ExtractionRun

from . import output


@contextmanager
def shown(extraction: ExtractionRun, quiet: bool) -> Iterator[None]:
    """Show `extraction`'s progress while the block runs it (nothing when quiet or not on a terminal)."""
    if quiet or not output.stderr.is_terminal:
        yield
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=output.stderr, transient=True) as progress:
        if isinstance(extraction, ChunkedExtraction):
            pieces = progress.add_task("pieces", total=len(extraction.pieces))
            extraction.on_piece = lambda done, total: progress.update(pieces, completed=done)
        prompt: list[TaskID] = []

        def evaluated(done: int, total: int) -> None:
            if not prompt:
                prompt.append(progress.add_task("prompt tokens", total=total))
            progress.update(prompt[0], completed=done, total=total, visible=done < total)

        extraction.on_prompt_progress = evaluated
        yield
