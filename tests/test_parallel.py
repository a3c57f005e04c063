"""The multi-sequence scheduler (core.extract.parallel) on a fake context: each sequence's logits depend
on its own tokens only, so every job's output must equal its output alone, whatever shares a
decode with it."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gguf_extract.core.errors import ModelError, SequenceSlotRefused
from gguf_extract.core.extract.parallel import Outcome, ParallelRun, SequencePool, SequenceView, _shares

VOCAB = 50


class FakeContext:
    """A context of `n_seq` sequences whose logits after a token favour a token computed from
    the sequence's whole history: outputs depend on a sequence's own tokens alone."""

    def __init__(self, n_seq: int, n_ctx: int, log: list[Any], fail_after: int | None = None) -> None:
        self.n_seq, self.n_ctx, self.n_batch = n_seq, n_ctx, 16
        self.cells: dict[int, list[int]] = {seq: [] for seq in range(n_seq)}
        self.log = log
        self.fail_after = fail_after
        self.closed = False

    def decode(self, requests: list[tuple[int, int, list[int], list[int]]]) -> list[np.ndarray]:
        assert not self.closed and 0 < sum(len(tokens) for _, _, tokens, _ in requests) <= self.n_batch
        assert [seq for seq, _, _, _ in requests] == sorted({seq for seq, _, _, _ in requests})
        if self.fail_after is not None and len(self.log) >= self.fail_after:
            raise ModelError("the fake model fails")
        self.log.append([seq for seq, _, _, _ in requests])
        found = []
        for seq, start, tokens, rows in requests:
            assert start <= len(self.cells[seq]), "a request must follow the sequence's cells"
            history = self.cells[seq] = self.cells[seq][:start] + tokens
            found.append(np.array([_logits(history[: start + row + 1]) for row in rows], dtype=np.float32).reshape(-1, VOCAB))
        return found

    def copy_sequence(self, source: int, target: int) -> None:
        self.cells[target] = list(self.cells[source])

    def close(self) -> None:
        self.closed = True


def _logits(history: list[int]) -> np.ndarray:
    row = np.zeros(VOCAB, dtype=np.float32)
    row[(sum((i + 1) * t for i, t in enumerate(history)) * 7 + len(history)) % VOCAB] = 1.0
    return row


def generate(
    view: SequenceView, prompt: list[int], steps: int, fail_at: int | None = None, on_step: Callable[[], None] = lambda: None
) -> list[int]:
    """A tiny greedy decoding on `view`: the prompt, then `steps` tokens, one at a time, with
    a two-token draft now and then (eval_with_logits) and a rollback after it; `on_step`
    called before each."""
    prefix = view.pool.prefix
    view.fit(len(prefix) + len(prompt) + steps)
    assert view.holds(prefix)
    view.rollback(len(prefix))
    view.eval(prompt)
    logits = view.last_logits()
    out: list[int] = []
    for step in range(steps):
        on_step()
        if step == fail_at:
            raise ValueError(f"failed at step {step}")
        token = int(np.argmax(logits))
        out.append(token)
        if step % 3 == 2:
            logits = view.eval_with_logits([token, 1], [0, 1])[0]
            view.discard(1)  # the guess is dropped, as a rejected draft is
        else:
            view.eval([token])
            logits = view.last_logits()
    return out


class Harness:
    """A pool on fake contexts; `most_cells`: larger contexts are refused, as llama.cpp refuses
    one it has no memory for."""

    def __init__(
        self, n_seq: int, prefix: list[int], fail_after: int | None = None, most_cells: int | None = None, groups: int = 1
    ) -> None:
        self.log: list[Any] = []
        self.contexts: list[FakeContext] = []
        self.local = threading.local()
        self.fail_after = fail_after
        self.most_cells = most_cells
        self.pool = SequencePool(self._open, n_seq, prefix, lambda text, bos, special: list(text), groups)

    def _open(self, n_seq: int, n_ctx: int) -> Any:
        if self.most_cells is not None and n_ctx > self.most_cells:
            raise ModelError(f"llama.cpp could not make a context of {n_ctx} tokens for {n_seq} sequences")
        context = FakeContext(n_seq, n_ctx, self.log, self.fail_after)
        self.contexts.append(context)
        return context

    def bind(self, view: SequenceView | None) -> None:
        self.local.view = view

    def run(self, jobs: list[Callable[[SequenceView], list[int]]]) -> Iterator[Outcome[list[int]]]:
        calls = [lambda job=job: job(self.local.view) for job in jobs]
        return ParallelRun(self.pool, calls, self.bind).outcomes()


PREFIX = [3, 1, 4, 1, 5, 9, 2, 6]
PROMPTS = [[7, 7, i, i + 1] * (1 + i % 5) for i in range(9)]


def alone(prompt: list[int], steps: int) -> list[int]:
    harness = Harness(1, PREFIX)
    (outcome,) = harness.run([lambda view: generate(view, prompt, steps)])
    assert outcome.error is None and outcome.value is not None
    return outcome.value


@pytest.mark.parametrize("groups", [1, 2])
def test_each_sequence_gives_its_output_alone_in_input_order_with_slots_refilled(groups: int) -> None:
    expected = [alone(prompt, 10 + i) for i, prompt in enumerate(PROMPTS)]
    harness = Harness(3, PREFIX, groups=groups)
    outcomes = list(harness.run([lambda view, p=p, i=i: generate(view, p, 10 + i) for i, p in enumerate(PROMPTS)]))
    assert [outcome.value for outcome in outcomes] == expected
    assert max(len(seqs) for seqs in harness.log) == (3 if groups == 1 else 2)  # sequences shared decodes (a group's)
    assert {seq for seqs in harness.log for seq in seqs} == {0, 1, 2}  # nine documents on three sequences


def test_a_long_prompt_goes_in_pieces_between_the_other_sequences_steps_within_n_batch() -> None:
    """A prompt of three batches on sequence 0 does not stall the others: every decode holds
    each sequence's next input (the prompt's part cut to what n_batch leaves), never the prompt
    alone while the others wait for the next decode; every output is still its output alone."""
    long_prompt = [(5 * i) % 11 + 1 for i in range(48)]  # three requests of 16, the fake's n_batch
    jobs = [(long_prompt, 3), (PROMPTS[0], 12), (PROMPTS[1], 12)]
    expected = [alone(prompt, steps) for prompt, steps in jobs]
    harness = Harness(3, PREFIX)
    outcomes = list(harness.run([lambda view, p=p, s=s: generate(view, p, s) for p, s in jobs]))
    assert [outcome.value for outcome in outcomes] == expected
    assert harness.log[0] == [0]  # the shared prefix, on sequence 0
    assert all(seqs == [0, 1, 2] for seqs in harness.log[1:8]), harness.log[:8]


def test_shares_of_a_decode_are_max_min_fair_and_at_least_one_token_each() -> None:
    assert _shares([16, 4, 4], 16) == [8, 4, 4]
    assert _shares([1, 9, 1], 16) == [1, 9, 1]  # all fit: nothing is cut
    assert _shares([512, 512, 512], 512) == [170, 171, 171]
    assert _shares([40, 3, 40], 16) == [6, 3, 7]
    assert _shares([2] * 20, 16) == [1] * 20  # more requests than tokens: one each, over two decodes


@pytest.mark.parametrize("groups", [1, 2])
def test_a_job_that_raises_midway_gets_its_error_in_place_and_the_others_finish(groups: int) -> None:
    expected = [alone(prompt, 12) for prompt in PROMPTS[:5]]
    harness = Harness(3, PREFIX, groups=groups)
    jobs = [lambda view, p=p, i=i: generate(view, p, 12, fail_at=4 if i == 1 else None) for i, p in enumerate(PROMPTS[:5])]
    outcomes = list(harness.run(jobs))
    assert isinstance(outcomes[1].error, ValueError) and outcomes[1].value is None
    assert [o.value for i, o in enumerate(outcomes) if i != 1] == [e for i, e in enumerate(expected) if i != 1]


@pytest.mark.parametrize("groups", [1, 2])
def test_a_job_that_fails_before_using_its_sequence_does_not_hold_the_others(groups: int) -> None:
    def unreadable(view: SequenceView) -> list[int]:
        raise OSError("cannot read")

    harness = Harness(2, PREFIX, groups=groups)
    outcomes = list(harness.run([unreadable, lambda view: generate(view, PROMPTS[0], 5), unreadable]))
    assert isinstance(outcomes[0].error, OSError) and isinstance(outcomes[2].error, OSError)
    assert outcomes[1].value == alone(PROMPTS[0], 5)


@pytest.mark.parametrize("groups", [1, 2])
def test_a_document_needing_a_larger_slot_waits_and_the_context_is_made_again(groups: int) -> None:
    prompts = [[5] * 4, [6] * 4, [8] * 600, [9] * 4]
    expected = [alone(prompt, 6) for prompt in prompts]
    harness = Harness(2, PREFIX, groups=groups)
    outcomes = list(harness.run([lambda view, p=p: generate(view, p, 6) for p in prompts]))
    assert [o.value for o in outcomes] == expected
    assert len(harness.contexts) == 2 and harness.contexts[0].closed
    assert harness.contexts[1].n_ctx > harness.contexts[0].n_ctx


@pytest.mark.parametrize("groups", [1, 2])
def test_a_document_whose_slot_cannot_be_made_fails_alone_and_the_others_go_on_at_the_size_before(groups: int) -> None:
    prompts = [[5] * 4, [6] * 4, [8] * 600, [9] * 4, [4] * 300]
    expected = [alone(prompt, 6) for prompt in prompts]
    harness = Harness(2, PREFIX, most_cells=1100, groups=groups)  # two slots of 600 tokens are refused, of 300 made
    outcomes = list(harness.run([lambda view, p=p: generate(view, p, 6) for p in prompts]))
    refusal = outcomes[2].error
    assert isinstance(refusal, SequenceSlotRefused) and outcomes[2].value is None
    assert refusal.needed == len(PREFIX) + 600 + 6 and refusal.sequences == 2
    assert "could not make a context" in refusal.reason and "parallel=1" in refusal.hint
    assert [o.value for i, o in enumerate(outcomes) if i != 2] == [e for i, e in enumerate(expected) if i != 2]
    sizes = [context.n_ctx for context in harness.contexts]
    assert sizes[1] == sizes[0] < sizes[2] <= 1100  # made again at the size before, then larger for the 300 tokens


def test_a_first_document_whose_slot_cannot_be_made_fails_alone() -> None:
    prompts = [[8] * 600, [5] * 4, [6] * 4]
    harness = Harness(2, PREFIX, most_cells=1000)
    outcomes = list(harness.run([lambda view, p=p: generate(view, p, 6) for p in prompts]))
    assert isinstance(outcomes[0].error, SequenceSlotRefused)
    assert [o.value for o in outcomes[1:]] == [alone(p, 6) for p in prompts[1:]]


def test_where_not_even_the_smallest_context_can_be_made_it_is_the_model_that_fails() -> None:
    harness = Harness(2, PREFIX, most_cells=100)  # less than two of the smallest slots
    outcomes = list(harness.run([lambda view, p=p: generate(view, p, 6) for p in [[8] * 600, [5] * 4, [6] * 4]]))
    assert all(type(outcome.error) is ModelError for outcome in outcomes)


@pytest.mark.parametrize("groups", [1, 2])
def test_a_job_aside_is_not_waited_for_and_joins_the_decodes_when_its_document_is_ready(groups: int) -> None:
    aside, progressed = threading.Event(), threading.Event()
    steps_seen_aside = 0

    def count_steps_while_aside() -> None:
        nonlocal steps_seen_aside
        if aside.is_set():
            steps_seen_aside += 1
            if steps_seen_aside == 5:
                progressed.set()

    def converting(view: SequenceView) -> list[int]:
        with view.aside():  # as a PDF converts in a child process
            aside.set()
            assert progressed.wait(timeout=120), "the other sequence made no progress while this one was aside"
        return generate(view, PROMPTS[2], 8)

    harness = Harness(2, PREFIX, groups=groups)
    jobs = [
        lambda view: generate(view, PROMPTS[0], 40, on_step=count_steps_while_aside),
        lambda view: generate(view, PROMPTS[1], 2),
        converting,
    ]
    if groups == 2:  # job i runs in group i % 2: the converting one beside the long one, not after it
        jobs[1], jobs[2] = jobs[2], jobs[1]
    outcomes = list(harness.run(jobs))
    assert [o.error for o in outcomes] == [None, None, None]
    expected = [alone(PROMPTS[0], 40), alone(PROMPTS[1], 2), alone(PROMPTS[2], 8)]
    if groups == 2:
        expected[1], expected[2] = expected[2], expected[1]
    assert [o.value for o in outcomes] == expected
    assert steps_seen_aside >= 5


def test_a_first_job_aside_does_not_hold_the_first_decode() -> None:
    progressed = threading.Event()

    def converting(view: SequenceView) -> list[int]:
        with view.aside():
            assert progressed.wait(timeout=120), "the first decode waited for a document aside"
        return generate(view, PROMPTS[1], 4)

    harness = Harness(2, PREFIX)
    jobs = [converting, lambda view: generate(view, PROMPTS[0], 30, on_step=lambda: progressed.set())]
    outcomes = list(harness.run(jobs))
    assert [o.value for o in outcomes] == [alone(PROMPTS[1], 4), alone(PROMPTS[0], 30)]


@pytest.mark.parametrize("groups", [1, 2])
def test_a_failing_decode_fails_the_documents_in_flight_and_nothing_waits_for_ever(groups: int) -> None:
    harness = Harness(3, PREFIX, fail_after=8, groups=groups)
    outcomes = list(harness.run([lambda view, p=p: generate(view, p, 20) for p in PROMPTS[:4]]))
    assert all(isinstance(outcome.error, ModelError) for outcome in outcomes)


@pytest.mark.parametrize("groups", [1, 2])
def test_closing_the_outcomes_early_stops_the_run_and_frees_the_context(groups: int) -> None:
    harness = Harness(2, PREFIX, groups=groups)
    started: list[Any] = []

    def job(view: Any, prompt: Any) -> Any:
        started.append(prompt)
        return generate(view, prompt, 30)

    outcomes = harness.run([lambda view, p=p: job(view, p) for p in PROMPTS])
    first = next(outcomes)
    assert first.value == alone(PROMPTS[0], 30)
    outcomes.close()
    assert harness.contexts[-1].closed
    assert len(started) < len(PROMPTS)  # the documents after the stop were never run
    assert harness.pool.stopped


def test_parallel_below_one_is_refused_before_any_model_loads(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Ada, 36.")
    command = [sys.executable, "-m", "gguf_extract", "-s", "person", str(tmp_path / "a.txt"), str(tmp_path / "a.txt")]
    run = subprocess.run([*command, "--parallel", "0"], capture_output=True, timeout=120, check=False)
    assert run.returncode == 2 and run.stdout == b""
    assert "--parallel" in run.stderr.decode() and "greater than or equal to 1" in run.stderr.decode()


def test_a_context_that_cannot_be_made_fails_every_document_and_nothing_waits_for_ever() -> None:
    def refuse(n_seq: int, n_ctx: int) -> Any:
        raise ModelError(f"no memory for {n_ctx} cells")

    local = threading.local()
    pool = SequencePool(refuse, 3, PREFIX, lambda text, bos, special: list(text))
    jobs = [lambda p=p: generate(local.view, p, 5) for p in PROMPTS[:5]]
    outcomes = list(ParallelRun(pool, jobs, lambda view: setattr(local, "view", view)).outcomes())
    assert len(outcomes) == 5 and all(isinstance(outcome.error, ModelError) for outcome in outcomes)


@pytest.mark.parametrize("groups", [1, 2])
def test_jobs_that_fail_to_come_end_the_run_with_that_error_in_place(groups: int) -> None:
    harness = Harness(2, PREFIX, groups=groups)

    def jobs() -> Iterator[Callable[[], list[int]]]:
        for prompt in PROMPTS[:2]:
            yield lambda p=prompt: generate(harness.local.view, p, 6)
        raise OSError("the list of documents could not be read")

    outcomes = list(ParallelRun(harness.pool, jobs(), harness.bind).outcomes())
    assert [o.value for o in outcomes[:2]] == [alone(p, 6) for p in PROMPTS[:2]]
    assert len(outcomes) == 3 and isinstance(outcomes[2].error, OSError)


def test_a_sequence_refuses_the_logit_rows_the_model_refuses() -> None:
    """Rows out of order, repeated, empty or past the tokens are a ValueError on a sequence of
    a parallel run as on the model itself, before anything is decoded."""
    harness = Harness(1, PREFIX)
    refused: list[str] = []

    def job(view: Any) -> None:
        for rows in ([1, 0], [1, 1], [], [2]):
            try:
                view.eval_with_logits([7, 8], rows)
            except ValueError as error:
                refused.append(str(error))

    list(harness.run([job]))
    assert len(refused) == 4


def test_with_two_groups_decodes_alternate_between_them_and_job_i_runs_in_group_i_mod_2() -> None:
    """Each decode holds one group's sequences (sequence s in group s % 2), the groups take
    turns while both have documents, job i runs on a sequence of group i % 2, and every output
    is still its output alone."""
    prompts = PROMPTS[:7]
    expected = [alone(prompt, 8 + i) for i, prompt in enumerate(prompts)]
    harness = Harness(4, PREFIX, groups=2)
    sequences: dict[int, int] = {}

    def job(view: SequenceView, index: int) -> list[int]:
        sequences[index] = view.seq
        return generate(view, prompts[index], 8 + index)

    outcomes = list(harness.run([lambda view, i=i: job(view, i) for i in range(len(prompts))]))
    assert [o.value for o in outcomes] == expected
    assert all(seq % 2 == index % 2 for index, seq in sequences.items()), sequences
    decodes = harness.log[1:]  # after the shared prefix
    assert all(len({seq % 2 for seq in seqs}) == 1 for seqs in decodes)
    parities = [seqs[0] % 2 for seqs in decodes]
    assert parities[:6] == [0, 1, 0, 1, 0, 1]
    assert max(len(seqs) for seqs in decodes) == 2


@pytest.mark.parametrize("groups", [1, 2])
def test_which_sequence_takes_which_document_and_what_shares_each_decode_are_the_same_every_run(groups: int) -> None:
    """Documents that end after the same decode take their next in sequence order, so the run
    is the same whatever the threads' timing (each job here sleeps a different while, as
    Python work of different lengths would): the same sequence per job, the same decodes."""
    steps = [6, 6, 6, 3, 9, 6, 2, 2, 7, 5, 6, 4]

    def job(view: SequenceView, index: int, delay: float, placed: dict[int, int]) -> list[int]:
        placed[index] = view.seq
        return generate(view, PROMPTS[index % len(PROMPTS)], steps[index], on_step=lambda: time.sleep(delay))

    runs = []
    for delays in ([0.0] * 12, [0.002 * ((i * 5) % 3) for i in range(12)], [0.002 * (i % 2) for i in range(12)]):
        harness = Harness(4, PREFIX, groups=groups)
        placed: dict[int, int] = {}
        jobs = [lambda view, i=i, d=d, p=placed: job(view, i, d, p) for i, d in enumerate(delays)]
        outcomes = list(harness.run(jobs))
        assert all(outcome.error is None for outcome in outcomes)
        runs.append((placed, harness.log))
    assert runs[0] == runs[1] == runs[2]
    assert [runs[0][0][i] for i in range(4)] == [0, 1, 2, 3]  # the first documents in sequence order


def test_ending_a_turn_while_another_thread_holds_the_condition_and_wants_work_does_not_deadlock() -> None:
    """`end_turn` is called holding `work`; `_admit` holds the pool's condition and takes `work`:
    end_turn must not wait for the condition while it holds `work` (a hang seen when the last
    document in flight ended while one waited for a larger slot and another was between documents)."""
    pool = SequencePool(lambda n_seq, n_ctx: FakeContext(n_seq, n_ctx, []), 2, PREFIX, lambda text, bos, special: list(text))
    condition_held, turn_ending = threading.Event(), threading.Event()

    def admitting() -> None:  # as _admit: the condition first, then work
        with pool._cond:
            condition_held.set()
            assert turn_ending.wait(timeout=60)
            with pool.work:
                pass

    def ending_a_turn() -> None:
        assert condition_held.wait(timeout=60)
        with pool.work:
            turn_ending.set()
            pool.end_turn(pool.views[1])

    threads = [threading.Thread(target=admitting, daemon=True), threading.Thread(target=ending_a_turn, daemon=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "end_turn and the condition's holder wait for each other"
    pool.stop()
