"""Several documents decoded together: continuous batching across documents.

    run = ParallelRun(pool, jobs, bind)   # jobs: callables, one per document
    for outcome in run.outcomes():        # in input order, each as soon as it and those before are done
        outcome.value, outcome.error

Each in-flight document's extraction runs unchanged in a thread of its own, on a
`SequenceView`: one sequence of a `SequencePool`, which is one llama.cpp context holding
`n_seq` sequences (core.model.SequenceContext). A view's evaluations are requests to the pool.
When every active sequence has one waiting (a lockstep barrier, never a timeout), a scheduler
thread packs them into one llama_decode of at most n_batch tokens (sequences in id order, so
that the batches do not depend on thread timing) and hands each finished request its own
logits rows. A request too large to share the decode (a piece of a long prompt) is cut: each
request takes a fair share of n_batch (all of a smaller one, an equal part of what is left for
the larger ones) and its rest waits for the next decode, which the others' next steps join, so
a long prompt does not stall the sequences already decoding. When a document ends, its thread
takes the next document at once: sequences are freed and refilled continuously (documents that
end after the same decode take theirs in sequence order: SequencePool.take_turn). On a GPU the
sequences form two groups whose decodes take turns, so one group's Python runs while the
other's decode does (SequencePool).

Why threads and one lock: the decoding loop (core.decode.decoder) stays as it is, one call stack per
document. Only one thread runs Python at a time (`work`, held except while waiting on the
model): the compiled schema, its index and the tokenizer build caches lazily and are not
thread-safe, and under the GIL nothing is lost by it, since llama_decode, where the time goes,
runs without it.

Memory: the shared prompt prefix (instructions and schema outline) is evaluated once, on
sequence 0, and shared with every other (llama_memory_seq_cp: the cells are held once, in the
one cache of core.model.SequenceContext). Beside it each sequence has a slot of cells for a
document's own prompt part and output, sized from the first documents (rounded up to 256). A document that needs a larger slot
waits until the documents in flight are done, and the context is made again with slots of its
size. Where llama.cpp cannot make that context, that document alone fails (SequenceSlotRefused)
and the context is made again at the size before, for the others; only where no context at all
can be made is it the model's failure (ModelError), every document's.

Slow work outside the model (converting a PDF in a child process) is done `aside`: the
sequence is not waited for meanwhile and joins the decodes again when its document asks for
its slot. Everything else keeps a sequence counted between documents, so that which documents
share each decode does not depend on the threads' timing.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np

from ..decode.decode_types import Logits
from ..errors import ModelError, SequenceSlotRefused
from ..model import SequenceContext

T = TypeVar("T")

# Cells kept free in a slot beyond a document's prompt and budget: drafts and previews are
# evaluated past the budget before being taken back.
_SLOT_MARGIN = 64
_SLOT_STEP = 256


class Cancelled(Exception):
    """The parallel run was stopped (its outcomes are no longer wanted)."""


@dataclass(eq=False)  # each request is itself: compared by identity
class _Request:
    seq: int
    start: int
    tokens: list[int]
    rows: list[int]
    logits: Logits | None = None
    error: BaseException | None = None
    done: bool = False
    evaluated: int = 0  # tokens decoded so far: a request larger than its share goes in parts
    found: list[Logits] = field(default_factory=list)  # the logits rows of the parts decoded
    # Set once done: only the request's own thread waits on it, so a decode wakes each
    # sequence's thread once, not every waiting thread once per request made.
    finished: threading.Event = field(default_factory=threading.Event)

    def part(self, size: int) -> tuple[int, int, list[int], list[int]]:
        """The next `size` tokens as a decode request (sequence, position, tokens, rows)."""
        first, end = self.evaluated, self.evaluated + size
        rows = [row - first for row in sorted(self.rows) if first <= row < end]
        return self.seq, self.start + first, self.tokens[first:end], rows

    def take(self, size: int, logits: Logits) -> None:
        """The next `size` tokens decoded with these rows; done once every token is."""
        self.evaluated += size
        self.found.append(logits)
        if self.evaluated == len(self.tokens):
            self.logits = self.found[0] if len(self.found) == 1 else np.concatenate(self.found)
            self.done = True
            self.finished.set()

    def fail(self, error: BaseException) -> None:
        self.error, self.done = error, True
        self.finished.set()


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """One job's result: its value, or the exception it raised."""

    value: T | None
    error: BaseException | None = None


class SequenceView:
    """One sequence of a SequencePool, as the decoder and an Extraction see a model
    (core.decode.decode_types.PromptModel). Its evaluations block until the pool's next decode."""

    def __init__(self, pool: SequencePool, seq: int, group: int) -> None:
        self.pool = pool
        self.seq = seq
        self.group = group  # the decodes it shares: those of its group (see SequencePool)
        self.tokens: list[int] = []  # the sequence's cells, by position
        self.active = False  # counted in the barrier: a document is being extracted on it
        self.between = False  # its document done, waiting for its turn to take the next (SequencePool.take_turn)
        self._last: Logits | None = None

    @property
    def n_batch(self) -> int:
        return self.pool.n_batch

    def fit(self, n_tokens: int) -> SequenceView:
        """This view, once its slot holds `n_tokens` (prompt and budget): may wait (see
        SequencePool.fit). Cheap when it fits."""
        self.pool.fit(self, n_tokens)
        return self

    def aside(self) -> contextlib.AbstractContextManager[None]:
        """A context for slow work outside the model (see SequencePool.aside): the other
        sequences are not held up by it."""
        return self.pool.aside(self)

    def tokenize(self, text: bytes, add_bos: bool = False, special: bool = False) -> list[int]:
        return self.pool.tokenize(text, add_bos, special)

    def rollback(self, n_past: int) -> None:
        """Forget every token after the first `n_past` (the cells go at the next decode)."""
        del self.tokens[n_past:]

    def holds(self, tokens: list[int]) -> bool:
        return bool(tokens) and self.tokens[: len(tokens)] == tokens

    def discard(self, count: int) -> None:
        self.rollback(len(self.tokens) - count)

    def eval(self, tokens: list[int]) -> None:
        """Evaluate `tokens`, n_batch at a time, as GGUFModel.eval cuts them."""
        for start in range(0, len(tokens), self.n_batch):
            piece = tokens[start : start + self.n_batch]
            self._last = self.pool.evaluate(self, piece, [len(piece) - 1])[0]

    def eval_with_logits(self, tokens: list[int], rows: list[int]) -> Logits:
        # What GGUFModel.eval_with_logits refuses, refused here too: a decoder bug must not
        # show only when documents run one after another.
        if not tokens or not rows or rows != sorted(set(rows)) or rows[-1] >= len(tokens):
            raise ValueError(f"eval_with_logits: {len(tokens)} tokens, rows {rows}")
        logits = self.pool.evaluate(self, tokens, rows)
        self._last = logits[-1]
        return logits

    def last_logits(self) -> Logits:
        if self._last is None:
            raise ValueError("no logits: nothing evaluated on this sequence yet")
        return self._last


class SequencePool:
    """`n_seq` sequences of one context, `prefix` evaluated once and copied to all; the
    lockstep scheduler that decodes their requests together. `open_context(n_seq, n_ctx)`
    makes the context (on first use, and again when a document needs larger slots).

    `groups` > 1 splits the sequences into that many groups (sequence s in group s % groups)
    whose decodes alternate: while one group's decode runs, the other groups' documents do
    their Python (masks, drafts), which one group in lockstep would do while the model waits.
    Each decode still holds one whole group, in a fixed order of groups, so which documents
    share a decode does not depend on the threads' timing."""

    def __init__(
        self,
        open_context: Callable[[int, int], SequenceContext],
        n_seq: int,
        prefix: list[int],
        tokenize: Callable[[bytes, bool, bool], list[int]],
        groups: int = 1,
    ) -> None:
        self._open_context = open_context
        self._context: SequenceContext | None = None
        self.prefix = prefix
        self.tokenize = tokenize
        self.n_batch = 1  # the context's, once made
        self.slot = 0  # cells each sequence may use beyond the prefix
        self.work = threading.Lock()  # held by the thread whose Python runs (see the module docstring)
        self.groups = max(1, min(groups, n_seq))
        self.views = [SequenceView(self, seq, seq % self.groups) for seq in range(n_seq)]
        self._cond = threading.Condition()
        # Every view starts counted, so the first decode waits for every thread's first
        # document; a view leaves the count to wait in `fit`, or when no document is left for it.
        self._active = n_seq
        self._active_in = [0] * self.groups  # the count, by group
        for view in self.views:
            view.active = True
            self._active_in[view.group] += 1
        self._waiting: dict[int, int] = {}  # views waiting in `fit`, with the room each needs
        self._refusals: dict[int, BaseException] = {}  # waiting views whose room cannot be made, with why
        self._pending: list[_Request] = []
        self._stopped = False
        self._scheduler = threading.Thread(target=self._serve, name="extract-decode", daemon=True)
        self._scheduler.start()

    @property
    def stopped(self) -> bool:
        return self._stopped

    # -- admission ---------------------------------------------------------------------

    def fit(self, view: SequenceView, n_tokens: int) -> None:
        """Have `view` counted in the barrier with room for `n_tokens` (its prompt and budget).
        Where its slot is too small, or another document waits for larger slots, it waits
        until no document is in flight; then every waiting view is admitted at once, the
        context made again first where a slot is too small. A view back from `aside` whose
        slot is large enough joins the next decode at once. Called by the view's thread
        holding `work` (released while waiting). Raises Cancelled once the run is stopped;
        SequenceSlotRefused where llama.cpp cannot make slots of this size (the others go on),
        ModelError where it cannot make a context at all."""
        room = n_tokens - len(self.prefix) + _SLOT_MARGIN
        if view.active and room <= self.slot and not self._waiting:
            return
        self.work.release()
        try:
            with self._cond:
                if self._fits_now(room) and not view.active:
                    self._join(view)
                    return
                self._leave(view)
                self._waiting[view.seq] = room
                try:
                    while not view.active:
                        if self._stopped:
                            raise Cancelled
                        if (refusal := self._refusals.pop(view.seq, None)) is not None:
                            raise refusal
                        if self._active == 0:
                            self._admit()
                        else:
                            self._cond.wait()
                finally:
                    self._waiting.pop(view.seq, None)
                    self._refusals.pop(view.seq, None)  # unused where this view raised otherwise
        finally:
            self.work.acquire()

    def _fits_now(self, room: int) -> bool:
        """Whether a document needing `room` may join the decodes under way (caller holds `_cond`)."""
        return not self._stopped and self._context is not None and room <= self.slot and not self._waiting

    def _admit(self) -> None:
        """Every waiting view counted in the barrier, all at once (so which documents share
        the next decode does not depend on the threads' timing), once the context has room.
        Where llama.cpp cannot make slots that large, the views needing that much are refused
        (SequenceSlotRefused, raised by each in `fit`) and the context is made for the others,
        at least at the size before: as one after another, only the document too large
        fails. Where even that cannot be made, the model fails: its ModelError is raised here
        and given to the refused views; each other waiting view tries again in its turn."""
        refused: list[tuple[int, int, ModelError]] = []  # (sequence, room, llama.cpp's refusal)
        while True:
            needed = max(self._waiting.values(), default=0)
            if self._context is not None and needed <= self.slot:
                break
            # The size before where nobody needs more; with none before and nobody waiting,
            # the smallest: whether any context can be made tells the model's fault from a size's.
            size = max(needed, self.slot) or _SLOT_STEP
            try:
                with self.work:  # free now (no view is active); the caller's output waits while stderr is silenced
                    self._remake(size)
            except ModelError as refusal:
                too_large = [seq for seq, room in self._waiting.items() if room == size]
                if not too_large:
                    self._refusals.update((seq, refusal) for seq, _, _ in refused)
                    raise
                for seq in too_large:
                    del self._waiting[seq]
                    refused.append((seq, size, refusal))
            finally:
                self._cond.notify_all()
        for seq, room, error in refused:
            self._refusals[seq] = SequenceSlotRefused(room + len(self.prefix) - _SLOT_MARGIN, len(self.views), str(error))
        for seq in self._waiting:
            self._join(self.views[seq])
        self._waiting.clear()
        self._cond.notify_all()

    def _join(self, view: SequenceView) -> None:
        if not view.active:
            view.active = True
            self._active += 1
            self._active_in[view.group] += 1

    def release(self, view: SequenceView) -> None:
        """`view`'s document is done: no longer counted in the barrier."""
        with self._cond:
            self._leave(view)

    @contextlib.contextmanager
    def aside(self, view: SequenceView) -> Iterator[None]:
        """A context for slow work outside the model on `view`'s thread (converting its
        document): `view` is not waited for meanwhile, and `work` is free, so the other
        sequences go on decoding. It is counted again when its document next asks for its
        slot (fit). Called holding `work`; so it is once the context ends, however it ends."""
        self.work.release()
        try:
            self.release(view)
            yield
        finally:
            self.work.acquire()

    # -- which sequence takes which document ------------------------------------------

    def take_turn(self, view: SequenceView) -> None:
        """Wait for `view`'s turn to take a next document (its last is done; the caller holds
        `work`, released meanwhile): once every other active sequence of its group waits on a
        request or for a turn too, the lowest-numbered waiting sequence takes one first. So
        which sequence (and group) each document runs on, and which documents share each
        decode, do not depend on the threads' timing: where llama.cpp's arithmetic depends a
        little on where in the cache a sequence's cells lie (as on a GPU), two runs of one
        command still give the same output. End the turn with `end_turn`."""
        self.work.release()
        try:
            with self._cond:
                view.between = True
                self._cond.notify_all()
                while not self._stopped and not self._turn_of(view):
                    self._cond.wait()
        finally:
            self.work.acquire()

    def end_turn(self, view: SequenceView) -> None:
        """`view` took its next document (or found none): the next sequence's turn may come.
        Called holding `work`, released while `_cond` is taken: `_admit` takes them the other
        way round."""
        self.work.release()
        try:
            with self._cond:
                view.between = False
                self._cond.notify_all()
        finally:
            self.work.acquire()

    def _turn_of(self, view: SequenceView) -> bool:
        """Whether `view` takes a document now (the caller holds `_cond`); see take_turn."""
        waiting = {request.seq for request in self._pending if not request.done}  # a done one's thread runs
        members = [other for other in self.views if other.group == view.group and other.active]
        if any(not other.between and other.seq not in waiting for other in members):
            return False
        return view.seq == min((other.seq for other in members if other.between), default=view.seq)

    def _leave(self, view: SequenceView) -> None:
        if view.active:
            view.active = False
            self._active -= 1
            self._active_in[view.group] -= 1
            self._cond.notify_all()

    def _remake(self, room: int) -> None:
        """A new context with slots of at least `room` cells: the prefix evaluated on sequence
        0, as GGUFModel.eval cuts it, and shared with the others. Only while none is active."""
        if self._context is not None:
            self._context.close()
            self._context = None
        slot = -(-room // _SLOT_STEP) * _SLOT_STEP
        context = self._open_context(len(self.views), len(self.prefix) + len(self.views) * slot)
        try:
            for start in range(0, len(self.prefix), context.n_batch):
                piece = self.prefix[start : start + context.n_batch]
                context.decode([(0, start, piece, [len(piece) - 1])])
            for view in self.views[1:]:
                context.copy_sequence(0, view.seq)
        except BaseException:
            context.close()
            raise
        for view in self.views:
            view.tokens = list(self.prefix)
        self._context, self.n_batch, self.slot = context, context.n_batch, slot

    # -- the lockstep barrier ----------------------------------------------------------

    def evaluate(self, view: SequenceView, tokens: list[int], rows: list[int]) -> Logits:
        """Evaluate `tokens` after `view`'s, in the next decode of every active sequence's
        request; the logits after tokens[i] for each i in `rows`. Raises the decode's error,
        or Cancelled."""
        request = _Request(view.seq, len(view.tokens), list(tokens), rows)
        self.work.release()
        try:
            with self._cond:
                if self._stopped:
                    raise Cancelled
                self._pending.append(request)
                self._cond.notify_all()
            request.finished.wait()
        finally:
            self.work.acquire()
        if request.error is not None:
            raise request.error
        assert request.logits is not None
        view.tokens.extend(tokens)
        return request.logits

    def _serve(self) -> None:
        """The scheduler: whenever every active sequence of the group whose turn it is waits on
        a request, decode a share of each (all of it where the requests fit n_batch together);
        a request cut short stays pending, so its sequence is still waited for, and goes on in
        that group's next decode. The turn passes to the next group after each decode, and
        over a group with no active sequence."""
        turn = 0
        while True:
            with self._cond:
                while (group := self._ready(turn)) is None or self._stopped:
                    if self._stopped:
                        self._fail(self._pending, Cancelled())
                        return
                    self._cond.wait()
                requests = sorted((r for r in self._pending if self.views[r.seq].group == group), key=lambda r: r.seq)
                context = self._context
            turn = (group + 1) % self.groups
            try:
                if context is None:  # fit admits no view without a context: a bug, reported to each document
                    raise RuntimeError("no context to decode in")
                self._decode_shares(context, requests)
            except BaseException as error:  # every waiting document gets it: none waits for ever
                with self._cond:
                    self._pending = [r for r in self._pending if r not in requests]
                    self._fail(requests, error)
                continue
            with self._cond:
                self._pending = [r for r in self._pending if not r.done]

    def _ready(self, turn: int) -> int | None:
        """The group to decode now (the caller holds `_cond`): the first from `turn` on with an
        active sequence, once each of its active sequences waits on a request; None until then."""
        for group in [*range(turn, self.groups), *range(turn)]:
            if self._active_in[group]:
                waiting = sum(1 for r in self._pending if self.views[r.seq].group == group)
                return group if waiting >= self._active_in[group] else None
        return None
    @staticmethod
    def _decode_shares(context: SequenceContext, requests: list[_Request]) -> None:
        """Each request's share of one decode of n_batch tokens (more than one decode only
        where there are more requests than n_batch)."""
        sizes = _shares([len(r.tokens) - r.evaluated for r in requests], context.n_batch)
        parts = [(request, size) for request, size in zip(requests, sizes, strict=True)]
        for group in _groups(parts, context.n_batch):
            found = context.decode([request.part(size) for request, size in group])
            for (request, size), logits in zip(group, found, strict=True):
                request.take(size, logits)

    def _fail(self, requests: list[_Request], error: BaseException) -> None:
        for request in requests:
            request.fail(error)
        self._cond.notify_all()

    def stop(self) -> None:
        """End the scheduler; a view waiting or evaluating after this raises Cancelled. Frees
        the context once the scheduler has ended."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        self._scheduler.join()
        if self._context is not None:
            self._context.close()
            self._context = None


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


def _groups(parts: list[tuple[_Request, int]], n_batch: int) -> Iterator[list[tuple[_Request, int]]]:
    """`parts` (requests and how many of their tokens to decode) in order, cut into runs of at
    most `n_batch` tokens (a part is never cut: each holds at most n_batch)."""
    group: list[tuple[_Request, int]] = []
    total = 0
    for request, size in parts:
        if group and total + size > n_batch:
            yield group
            group, total = [], 0
        group.append((request, size))
        total += size
    if group:
        yield group


class ParallelRun(Generic[T]):
    """Run `jobs` (one per document) on the pool's sequences, one thread per sequence, each
    taking the next job as soon as its last one is done. `bind(view)` makes the calling
    thread's extractions use `view` (core.extract.extractor.Extractor.model_for). Where the
    pool has several groups, job i goes to group i % groups (whichever of its sequences is
    free first), so which group decodes a document does not depend on the threads' timing."""

    def __init__(self, pool: SequencePool, jobs: Iterable[Callable[[], T]], bind: Callable[[SequenceView | None], None]) -> None:
        self._pool = pool
        self._jobs = enumerate(jobs)
        self._bind = bind
        self._results: dict[int, Outcome[T]] = {}
        self._taken = 0
        self._held: dict[int, Callable[[], T]] = {}  # jobs read ahead for another group, by index
        self._running = 0
        self._cond = threading.Condition()

    def outcomes(self) -> Iterator[Outcome[T]]:
        """Every job's outcome in input order, each as soon as it and those before it are
        done. Closing the iterator early stops the run (the documents in flight raise
        Cancelled) and frees the context."""
        threads = [threading.Thread(target=self._work, args=(view,), daemon=True) for view in self._pool.views]
        self._running = len(threads)
        for thread in threads:
            thread.start()
        try:
            index = 0
            while (outcome := self._next(index)) is not None:
                with self._pool.work:  # the caller's code runs while no document's does
                    yield outcome
                index += 1
        finally:
            self._pool.stop()
            for thread in threads:
                thread.join()

    def _next(self, index: int) -> Outcome[T] | None:
        with self._cond:
            while index not in self._results and (self._running or index < self._taken):
                self._cond.wait()
            return self._results.pop(index, None)

    def _work(self, view: SequenceView) -> None:
        self._bind(view)
        try:
            with self._pool.work:
                while True:
                    self._pool.take_turn(view)
                    try:
                        job = self._take(view.group)
                    finally:
                        self._pool.end_turn(view)
                    if job is None:
                        break
                    index, action = job
                    try:
                        outcome: Outcome[T] = Outcome(action())
                    except BaseException as error:  # the document's own failure, in its place
                        outcome = Outcome(None, error)
                    with self._cond:
                        self._results[index] = outcome
                        self._cond.notify_all()
        finally:
            # Counted in the barrier until no document is left for it, the next document
            # included: it joins the very next decode, whatever the threads' timing, so the
            # documents that share each decode are the same from one run to the next.
            self._pool.release(view)
            with self._cond:
                self._running -= 1
                self._cond.notify_all()

    def _take(self, group: int) -> tuple[int, Callable[[], T]] | None:
        """The next job of `group` (the caller holds `work`), or None when there are none or
        the run stopped. Jobs of other groups read on the way are held for them."""
        if self._pool.stopped:
            return None
        groups = self._pool.groups
        held = [index for index in self._held if index % groups == group]
        if held:
            index = min(held)
            return index, self._held.pop(index)
        while True:
            try:
                job = next(self._jobs, None)
            except Exception as error:  # the caller's jobs failed to come: the run ends there, that error in place
                with self._cond:
                    self._results[self._taken] = Outcome(None, error)
                    self._taken += 1
                    self._cond.notify_all()
                self._jobs = enumerate(())
                return None
            if job is None:
                return None
            with self._cond:
                self._taken = job[0] + 1
            if job[0] % groups == group:
                return job
            self._held[job[0]] = job[1]
