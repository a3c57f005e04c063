"""One loop drives every document: the scheduler that steps passive jobs over one model.

    scheduler = Scheduler(runtime)                      # a runtime: one context and its sequences
    for event in scheduler.run(jobs):                   # jobs: callables, each making a job's steps
        event.index, event.output / event.outcome       # output bytes as written; each job's end

A job is a generator (core.decode.requests): it yields the bytes it writes and the model work it
needs (`Prompt`, `Evaluate`) and is sent back the logits rows; it never calls the model. The
scheduler runs in the caller's thread and owns the runtime: each round it gathers the request
of every job in flight into one llama_decode (sequences in slot order; where they hold more than
the runtime's n_batch together, each takes a fair share and its rest goes on in the next round,
so a long prompt does not stall the documents already decoding), then hands each finished
request its rows and steps its job to its next request. No thread, lock or barrier.

Admission depends on input order only: whenever a slot is free at the start of a round, the
next job in input order takes it (the lowest free slot), so which documents share each decode
is the same from one run to the next, however long anything took. A job that needs more room
than a slot has waits, with no job admitted meanwhile, until the jobs in flight are done; then
the runtime makes room for every waiting job at once (core.runtime.sequences), or refuses the
ones it cannot fit, each with its own error.

A job that raises ends with that error as its outcome, in its place; the others go on. A
failure of the model itself (an evaluation llama.cpp refuses) is the outcome of every job in
that decode. Anything that is not an Exception (Ctrl-C) ends the run, closing every job.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from ..decode.requests import Evaluate, Prompt, Request
from ..decode.types import Logits

T = TypeVar("T")
# A job's steps: bytes written (sent None), requests (sent the logits rows); its value at the end.
JobSteps = Generator["bytes | Request", "Logits | None", T]


class Runtime(Protocol):
    """What the scheduler needs of a context and its sequences (core.runtime.sequences)."""

    @property
    def slots(self) -> int:
        """How many sequences decode at once."""
        ...

    @property
    def n_batch(self) -> int:
        """The most tokens one decode takes."""
        ...

    def fits(self, seq: int, room: int) -> bool:
        """Whether sequence `seq` may hold `room` cells now, making room where that needs no
        other sequence to stop (may raise the document's error: too large for any context)."""
        ...

    def make_room(self, rooms: dict[int, int]) -> dict[int, Exception]:
        """Room for each waiting sequence's `rooms` (no sequence is in flight); the sequences it
        cannot fit, each with its error. Raises where no context at all can be made."""
        ...

    def holds(self, seq: int, tokens: list[int]) -> bool:
        """Whether sequence `seq` starts with exactly `tokens`."""
        ...

    def length(self, seq: int) -> int:
        """How many cells sequence `seq` holds."""
        ...

    def decode(self, parts: list[tuple[int, int, list[int], list[int]]]) -> list[Logits]:
        """One llama_decode of every part (sequence, position of its first token, tokens,
        rows wanted); each part's logits rows, valid until the next decode."""
        ...


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """One job's result: its value, or the exception it raised."""

    value: T | None
    error: BaseException | None = None


@dataclass(frozen=True)
class Event(Generic[T]):
    """What a round brings: bytes job `index` wrote (`output`), or its end (`outcome`)."""

    index: int
    output: bytes = b""
    outcome: Outcome[T] | None = None


@dataclass(eq=False)
class _Part:
    """Tokens to evaluate on a sequence from `start`, with the rows wanted (None: the last
    token's, once all are evaluated); `done` tokens evaluated so far."""

    start: int
    tokens: list[int]
    rows: list[int] | None
    progress: Callable[[int], None] | None = None  # told how many of `tokens` are evaluated, after each decode
    done: int = 0
    found: list[Logits] = field(default_factory=list)

    def piece(self, size: int, seq: int) -> tuple[int, int, list[int], list[int]]:
        """The next `size` tokens as a decode part."""
        first, end = self.done, self.done + size
        wanted = [len(self.tokens) - 1] if self.rows is None else self.rows
        return seq, self.start + first, self.tokens[first:end], [row - first for row in wanted if first <= row < end]

    def take(self, size: int, logits: Logits, last_decode: bool) -> None:
        """`size` more tokens evaluated, with these rows. Rows the job reads only after another
        decode (of this part, or of this round) are copied: the next decode writes over the
        runtime's buffer; those of the round's last decode are read before the next."""
        self.done += size
        if len(logits):
            self.found.append(logits if self.finished and last_decode else np.array(logits))
        if self.progress is not None:
            self.progress(self.done)

    @property
    def finished(self) -> bool:
        return self.done == len(self.tokens)

    def logits(self) -> Logits:
        return self.found[0] if len(self.found) == 1 else np.concatenate(self.found)


@dataclass(eq=False)
class _Job(Generic[T]):
    index: int
    slot: int
    steps: JobSteps[T]
    parts: list[_Part] = field(default_factory=list)  # evaluations queued, the first under way
    prompt: Prompt | None = None  # a prompt waiting for its room


class Scheduler:
    """Steps jobs on `runtime`'s sequences, `runtime.slots` at a time (see the module)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._current: _Run[Any] | None = None  # the run under way, or paused where its caller left it
        self._lent = False

    def run(self, jobs: Iterable[Callable[[], JobSteps[T]]]) -> Iterator[Event[T]]:
        """Every job run; an event for each piece of output and for each job's end, as they
        come (a job's end after its output). Closing the iterator early closes every job in
        flight. A run left unfinished while paused (an extraction read halfway, then put aside)
        is stopped when the next one starts: resuming it then raises RuntimeError. A run
        started from inside a job (stepping) raises RuntimeError at once."""
        self._claim()
        run = _Run(self.runtime, iter(jobs))
        self._current = run
        try:
            yield from run.events()
        finally:
            run.close()
            if self._current is run:
                self._current = None

    def _claim(self) -> None:
        """Make way for a new run: refused inside a job or a lent model's run; a paused one stopped."""
        current = self._current
        if self._lent or (current is not None and current.stepping):
            raise RuntimeError(
                "the model is in use by a run already: inside a job, run an extraction with `yield from run.steps()`,"
                " not run() or iteration"
            )
        if current is not None:
            current.abandon()

    @contextlib.contextmanager
    def busy(self) -> Iterator[None]:
        """This scheduler's model lent to other work meanwhile (the weights of a run of several
        sequences): a run started in it raises RuntimeError, since it would load the model anew
        under that work."""
        self._claim()
        self._lent = True
        try:
            yield
        finally:
            self._lent = False


def in_order(events: Iterable[Event[T]]) -> Iterator[Outcome[T]]:
    """The outcomes of `events`, in input order, each as soon as it and those before it are done."""
    held: dict[int, Outcome[T]] = {}
    wanted = 0
    try:
        for event in events:
            if event.outcome is None:
                continue
            held[event.index] = event.outcome
            while wanted in held:
                yield held.pop(wanted)
                wanted += 1
    finally:
        close = getattr(events, "close", None)
        if close is not None:  # closed early: so is the run, and every job in flight
            close()


class _Run(Generic[T]):
    """One `Scheduler.run`: the jobs still to come, those in flight by slot, the events ready."""

    def __init__(self, runtime: Runtime, jobs: Iterator[Callable[[], JobSteps[T]]]) -> None:
        self._runtime = runtime
        self._jobs = enumerate(jobs)
        self._taken = 0  # jobs read so far
        self._more = True
        self._slots: list[_Job[T] | None] = [None] * self._runtime.slots
        self._ready: list[Event[T]] = []
        self.stepping = False  # running jobs now (not paused at an event)
        self._abandoned = False

    def events(self) -> Iterator[Event[T]]:
        while True:
            self._resume()
            self._admit()
            yield from self._drain()
            self._resume()
            if all(job is None for job in self._slots):
                if not self._more:
                    return
                continue
            self._round()
            yield from self._drain()

    def abandon(self) -> None:
        """Stop this paused run: another run needs the model (see Scheduler.run)."""
        self._abandoned = True
        self.close()

    def _resume(self) -> None:
        self.stepping = True
        if self._abandoned:
            raise RuntimeError("this run was stopped: another run started on the model before it was read to its end")

    def close(self) -> None:
        jobs, self._slots = self._slots, [None] * len(self._slots)
        for job in jobs:
            if job is not None:
                _close(job)

    def _drain(self) -> Iterator[Event[T]]:
        while self._ready:
            ready, self._ready = self._ready, []
            for event in ready:
                self.stepping = False
                yield event
                self._resume()

    # -- admission, in input order ---------------------------------------------------------

    def _admit(self) -> None:
        """Fill every free slot with the next jobs in input order, unless a job waits for room
        while others run: then nobody is admitted until they are done. (Jobs admitted while
        every job in flight waits wait too, so that room is made for all of them at once: the
        first slots are sized for the first documents, not the first alone.)"""
        while self._more and not (self._waiting_for_room() and self._running()):
            free = next((slot for slot, job in enumerate(self._slots) if job is None), None)
            if free is None:
                return
            try:
                taken = next(self._jobs, None)
            except Exception as error:  # the caller's jobs failed to come: the run ends there, that error in place
                self._more = False
                self._end(self._taken, Outcome(None, error))
                return
            if taken is None:
                self._more = False
                return
            index, make = taken
            self._taken = index + 1
            try:
                steps = make()
                if not isinstance(steps, Generator):
                    raise TypeError(
                        f"a job gave {type(steps).__name__}, not its steps: make it a generator that runs"
                        " `yield from extraction.steps()` and returns its value"
                    )
            except Exception as error:  # the document failed before its first request (reading it)
                self._end(index, Outcome(None, error))
                continue
            job = _Job(index, free, steps)
            self._slots[free] = job
            self._step(job, None)

    def _waiting_for_room(self) -> bool:
        return any(job is not None and job.prompt is not None for job in self._slots)

    def _running(self) -> bool:
        return any(job is not None and job.parts for job in self._slots)

    # -- one round: a decode of every request, then each job stepped -----------------------

    def _round(self) -> None:
        """Decode a share of every queued evaluation; with none queued, make room for the jobs
        waiting for it (every job in flight waits then)."""
        running = [job for job in self._slots if job is not None and job.parts]
        if not running:
            self._make_room()
            return
        runtime = self._runtime
        sizes = _shares([len(job.parts[0].tokens) - job.parts[0].done for job in running], runtime.n_batch)
        groups = list(_groups(list(zip(running, sizes, strict=True)), runtime.n_batch))
        for number, group in enumerate(groups, start=1):
            try:
                found = runtime.decode([job.parts[0].piece(size, job.slot) for job, size in group])
            except Exception as error:  # the model failed: every document in the decode gets it
                for job, _ in group:
                    self._fail(job, error)
                continue
            for (job, size), logits in zip(group, found, strict=True):
                try:
                    job.parts[0].take(size, logits, number == len(groups))
                except Exception as error:  # the job's own progress report failed: its failure alone
                    self._fail(job, error)
        for job in running:
            if self._slots[job.slot] is job and job.parts and job.parts[0].finished:
                part = job.parts.pop(0)
                if not job.parts:
                    self._step(job, part.logits())

    def _make_room(self) -> None:
        waiting = [job for job in self._slots if job is not None and job.prompt is not None]
        rooms = {job.slot: job.prompt.room for job in waiting if job.prompt is not None}
        try:
            refused = self._runtime.make_room(rooms)
        except Exception as error:  # no context at all: every waiting document's failure
            for job in waiting:
                self._fail(job, error)
            return
        for job in waiting:
            prompt = job.prompt
            assert prompt is not None
            job.prompt = None
            if job.slot in refused:
                self._fail(job, refused[job.slot])
            else:
                self._start_prompt(job, prompt)

    # -- a job's requests ------------------------------------------------------------------

    def _step(self, job: _Job[T], sent: Logits | None) -> None:
        """Run `job` on from `sent` to its next request, or its end."""
        while True:
            try:
                item = job.steps.send(sent)
            except StopIteration as done:
                self._end(job.index, Outcome(done.value))
                self._slots[job.slot] = None
                return
            except Exception as error:  # the document's own failure, in its place
                self._end(job.index, Outcome(None, error))
                self._slots[job.slot] = None
                return
            if isinstance(item, bytes):
                self._ready.append(Event(job.index, output=item))
                sent = None
                continue
            try:
                _check(item)
                if isinstance(item, Evaluate):
                    start = self._runtime.length(job.slot) - item.drop
                    if start < 0:
                        raise ValueError(f"an evaluation drops {item.drop} cells of {self._runtime.length(job.slot)}")
                    job.parts.append(_Part(start, item.tokens, item.rows))
                    return
                # Nobody starts beside a job waiting for room: room is made for both at once.
                fits = not self._waiting_for_room() and self._runtime.fits(job.slot, item.room)
            except Exception as error:  # a request no model could take, or too large for any context: the document's failure
                self._fail(job, error)
                return
            if fits:
                self._start_prompt(job, item)
            else:
                job.prompt = item
            return

    def _start_prompt(self, job: _Job[T], prompt: Prompt) -> None:
        """Queue `prompt`'s evaluation: its prefix kept where the sequence holds it, else
        evaluated first (in its own batches, so that the numbers do not depend on whether it was held)."""
        prefix, rest = prompt.prefix, prompt.rest
        prompt.started = time.perf_counter()
        if prefix and self._runtime.holds(job.slot, prefix):
            prompt.reused = len(prefix)
        elif prefix:
            job.parts.append(_Part(0, prefix, None))
        report = prompt.progress
        total = len(rest)
        progress = None if report is None else (lambda done: report(done, total))
        job.parts.append(_Part(len(prefix), rest, None, progress))

    def _fail(self, job: _Job[T], error: Exception) -> None:
        if self._slots[job.slot] is not job:
            return
        self._slots[job.slot] = None
        _close(job)
        self._end(job.index, Outcome(None, error))

    def _end(self, index: int, outcome: Outcome[T]) -> None:
        self._ready.append(Event(index, outcome=outcome))


def _close(job: _Job[Any]) -> None:
    """Close `job`'s steps; a job whose own cleanup fails is closed all the same (its error is
    not the run's)."""
    with contextlib.suppress(Exception):  # a job's failing cleanup must not end the others
        job.steps.close()


def _check(request: Request) -> None:
    """Raise ValueError for a request no decode can serve (a job's bug, its own failure)."""
    tokens = request.tokens if isinstance(request, Evaluate) else request.rest
    if not tokens:
        raise ValueError(f"{type(request).__name__} with no tokens to evaluate")
    if isinstance(request, Evaluate) and request.rows is not None:
        rows = request.rows
        if not rows or rows != sorted(set(rows)) or rows[0] < 0 or rows[-1] >= len(tokens):
            raise ValueError(f"Evaluate of {len(tokens)} tokens asks for rows {rows}: give increasing indices into its tokens")
    if isinstance(request, Evaluate) and request.drop < 0:
        raise ValueError(f"Evaluate drops {request.drop} cells")


def _shares(sizes: list[int], budget: int) -> list[int]:
    """How many of its `sizes` tokens each request decodes within `budget`: max-min fair, so
    all of each request that fits an equal share, the rest shared equally by the larger ones
    (the smaller requests first, ties by position, so the shares depend on the sizes alone);
    at least one token each."""
    shares = [0] * len(sizes)
    left = budget
    order = sorted(range(len(sizes)), key=lambda i: (sizes[i], i))
    for taken, i in enumerate(order):
        shares[i] = min(sizes[i], max(1, left // (len(order) - taken)))
        left -= shares[i]
    return shares


def _groups(parts: list[tuple[_Job[T], int]], n_batch: int) -> Iterator[list[tuple[_Job[T], int]]]:
    """`parts` (jobs and how many of their tokens to decode) in order, cut into runs of at
    most `n_batch` tokens (a part is never cut: each holds at most n_batch)."""
    group: list[tuple[_Job[T], int]] = []
    total = 0
    for job, size in parts:
        if group and total + size > n_batch:
            yield group
            group, total = [], 0
        group.append((job, size))
        total += size
    if group:
        yield group
