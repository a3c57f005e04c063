"""What a stepped decoding asks of the model, and how one is driven alone.

A decoding (core.decode.decoder.Decoder.steps) and an extraction around it never call a model:
they are generators that yield the bytes they write and the evaluations they need, and are
sent the logits rows back. Whoever drives them owns the model: the scheduler
(core.runtime.scheduler), which gathers the requests of every sequence in flight into one
llama_decode, or `drive` here, which serves one decoding on one TokenModel (tests, and
callers with a model of their own).

    logits = yield Evaluate(tokens, rows)     # one row for each i in rows: the logits after tokens[i]

`drop` asks for the sequence's last tokens to be forgotten first (a rejected guess, a
previewed array item): rolled back lazily, as llama.cpp's own rollback is, at the next
evaluation.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from .types import Logits, TokenModel


@dataclass(frozen=True)
class Evaluate:
    """Evaluate `tokens` after the sequence's cells, the last `drop` of them forgotten first.
    `rows` None: the logits after the last token only, as a plain evaluation gives them; else
    the logits after tokens[i] for each i in `rows` (increasing), one row each. The driver may
    cut a long request into several batches (as llama.cpp's eval does, from its start)."""

    tokens: list[int]
    rows: list[int] | None = None
    drop: int = 0

    @property
    def wanted(self) -> list[int]:
        """The rows whose logits come back (indices into `tokens`)."""
        return [len(self.tokens) - 1] if self.rows is None else self.rows


@dataclass
class Prompt:
    """Evaluate a prompt on the sequence: `prefix` (the part every document of one schema
    shares) is kept where the sequence holds it already, else evaluated; then `rest`. `room`
    is the cells the document needs in all (prompt and budget): the driver makes room first
    or fails the document. The driver sets `reused` (prefix tokens found held) and `started`
    (when the room was there and evaluating began), and calls `progress(evaluated, total)`
    after each batch of `rest`."""

    prefix: list[int]
    rest: list[int]
    room: int
    progress: Callable[[int, int], None] | None = None
    reused: int = 0
    started: float = 0.0  # time.perf_counter() when evaluating began


Request = Evaluate | Prompt
R = TypeVar("R")  # the value of a generator of steps
# A decoding's steps: bytes written (sent None back) and evaluations (sent their logits rows).
DecodeSteps = Generator[bytes | Evaluate, Logits | None, None]


def drive(steps: DecodeSteps, model: TokenModel) -> Iterator[bytes]:
    """Run `steps` on `model`, alone: each evaluation in the model's own calls (a plain
    evaluation as `eval`, rows as `eval_with_logits`); the bytes it writes, as they come."""
    sent: Logits | None = None
    while True:
        try:
            item = steps.send(sent)
        except StopIteration:
            return
        if isinstance(item, bytes):
            sent = None
            yield item
            continue
        if item.drop:
            model.discard(item.drop)
        if item.rows is None:
            model.eval(item.tokens)
            sent = model.last_logits()[None, :]
        else:
            sent = model.eval_with_logits(item.tokens, item.rows)


@overload
def requests_only(steps: Generator[bytes | Evaluate, Logits | None, R]) -> Generator[Evaluate, Logits | None, R]: ...


@overload
def requests_only(steps: Generator[bytes | Request, Logits | None, R]) -> Generator[Request, Logits | None, R]: ...


def requests_only(steps: Any) -> Any:
    """`steps` with what it writes dropped and its requests passed on; its value."""
    return _passing(steps, None)


def noting_output(
    steps: Generator[bytes | Request, Logits | None, R], note: Callable[[bytes], object]
) -> Generator[bytes | Request, Logits | None, R]:
    """`steps` passed on whole, each piece it writes given to `note` too; its value."""
    return _passing(steps, note)


def _passing(
    steps: Generator[bytes | Request, Logits | None, R], note: Callable[[bytes], object] | None
) -> Generator[bytes | Request, Logits | None, R]:
    """`steps` passed on, what it writes given to `note`, or dropped where there is none."""
    sent: Logits | None = None
    while True:
        try:
            item = steps.send(sent)
        except StopIteration as done:
            return done.value
        if isinstance(item, bytes):
            if note is None:
                sent = None
                continue
            note(item)
        sent = yield item
