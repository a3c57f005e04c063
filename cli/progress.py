"""Progress on stderr while it is a terminal: of one extraction, the pieces of a `--chunk` run
done so far and the evaluation of a prompt longer than one batch (a long document's prompt
takes minutes on a small CPU, before the first output token); of a batch, the documents done,
tokens per second and the time left."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

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


@contextmanager
def documents_shown(total: int, hidden: bool) -> Iterator[Callable[[int], None]]:
    """A batch's progress while the block runs it: the block calls what this yields once a
    document is done, with the output tokens so far (nothing is shown when `hidden` or not on a
    terminal)."""
    if hidden or not output.stderr.is_terminal:
        yield lambda tokens: None
        return
    columns = (
        TextColumn("extracting"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeRemainingColumn(),
    )
    started = time.perf_counter()
    with Progress(*columns, console=output.stderr, transient=True) as progress:
        task = progress.add_task("documents", total=total, rate="")

        def advance(tokens: int) -> None:
            elapsed = time.perf_counter() - started
            progress.update(task, advance=1, rate=f"{tokens / elapsed:.0f} tokens/s" if elapsed > 0 else "")

        yield advance
