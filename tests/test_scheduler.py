"""The scheduler (core.runtime.scheduler) and the model's sequences (core.runtime.sequences) on
fakes: a context whose logits after a token depend on the sequence's own tokens alone, so every
job's output must be its output alone whatever shares a decode with it; every decode, context
made and job admitted is traced, so what shares each decode, and from which position, is
checked too. No model, no thread, no sleep."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from gguf_extract.core.decode.requests import Evaluate, Prompt
from gguf_extract.core.decode.types import Logits
from gguf_extract.core.errors import ModelError, SequenceSlotRefused
from gguf_extract.core.runtime.scheduler import Event, JobSteps, Outcome, Scheduler, _shares, in_order
from gguf_extract.core.runtime.sequences import SLOT_MARGIN, OneSequence, SharedSequences

VOCAB = 50
PREFIX = [3, 1, 4, 1, 5, 9, 2, 6]
PROMPTS = [[7, 7, i, i + 1] * (1 + i % 3) for i in range(9)]  # 4, 8 or 12 tokens

Part = tuple[int, int, list[int], list[int]]
Trace = list[tuple[Any, ...]]
Make = Callable[[], JobSteps[list[int]]]


def _logits(history: list[int]) -> Logits:
    """The logits after `history`: one token favoured, computed from the whole history."""
    row = np.zeros(VOCAB, dtype=np.float32)
    row[(sum((i + 1) * t for i, t in enumerate(history)) * 7 + len(history)) % VOCAB] = 1.0
    return row


def alone(prompt: list[int], steps: int, prefix: list[int] = PREFIX) -> list[int]:
    """The tokens a greedy decoding of `prompt` writes on a sequence of its own."""
    history, out = [*prefix, *prompt], []
    for _ in range(steps):
        token = int(np.argmax(_logits(history)))
        out.append(token)
        history.append(token)
    return out


class FakeContext:
    """A SequenceContext of `n_seq` sequences in `n_ctx` cells, each sequence's logits computed
    from its own history. Each decode is traced as ("decode", ((seq, start, count), ...)), or
    ("failed", ...) where `fault` (told the number of decodes so far) gives an error to raise.
    The rows it gives are overwritten (NaN) at its next decode, as the scheduler's Runtime
    protocol allows, unless the harness's `poison` is off."""

    def __init__(self, harness: Harness, n_seq: int, n_ctx: int) -> None:
        self.harness = harness
        self.n_seq, self.n_ctx, self.n_batch = n_seq, n_ctx, harness.n_batch
        self.slot = (n_ctx - len(harness.prefix)) // n_seq
        self.cells: dict[int, list[int]] = {seq: [] for seq in range(n_seq)}
        self.closed = False
        self._given: list[Logits] = []

    def decode(self, parts: list[Part]) -> list[Logits]:
        harness = self.harness
        entry = tuple((seq, start, len(tokens)) for seq, start, tokens, _ in parts)
        assert not self.closed
        assert 0 < sum(count for _, _, count in entry) <= self.n_batch, entry
        assert [seq for seq, _, _ in entry] == sorted({seq for seq, _, _ in entry}), entry
        for given in self._given if harness.poison else ():  # valid until the next decode only
            given.fill(np.nan)
        self._given = []
        calls, harness.calls = harness.calls, harness.calls + 1
        error = harness.fault(calls)
        if error is not None:
            harness.trace.append(("failed", entry))
            raise error
        harness.trace.append(("decode", entry))
        found = []
        for seq, start, tokens, rows in parts:
            assert rows == sorted(set(rows)) and all(0 <= row < len(tokens) for row in rows), rows
            assert start <= len(self.cells[seq]), "a part must follow the sequence's cells"
            history = self.cells[seq] = self.cells[seq][:start] + tokens
            assert len(history) <= len(harness.prefix) + self.slot, "past the sequence's slot"
            rows_found = np.array([_logits(history[: start + row + 1]) for row in rows], dtype=np.float32)
            found.append(rows_found.reshape(-1, VOCAB))
        self._given = found
        return found

    def copy_sequence(self, source: int, target: int) -> None:
        self.cells[target] = list(self.cells[source])

    def close(self) -> None:
        self.closed = True
        self.harness.trace.append(("close", self.n_ctx))


def no_fault(calls: int) -> BaseException | None:
    return None


class Harness:
    """SharedSequences on fake contexts, and a scheduler over them. `most_cells`: larger
    contexts are refused (ModelError), as llama.cpp refuses one it has no memory for. The trace
    holds ("admit", index) as each job is made, ("open", n_ctx) / ("refused", n_ctx) as each
    context is made or refused, and the contexts' decodes and closes."""

    def __init__(
        self,
        n_seq: int,
        prefix: list[int] = PREFIX,
        n_batch: int = 16,
        most_cells: int | None = None,
        fault: Callable[[int], BaseException | None] = no_fault,
        poison: bool = True,
    ) -> None:
        self.prefix, self.n_batch, self.most_cells, self.fault = prefix, n_batch, most_cells, fault
        self.poison = poison
        self.trace: Trace = []
        self.contexts: list[FakeContext] = []
        self.calls = 0
        self.sequences = SharedSequences(self._open, n_seq, prefix)
        self.scheduler = Scheduler(self.sequences)
        self.outputs: dict[int, bytes] = {}

    def _open(self, n_seq: int, n_ctx: int) -> Any:
        if self.most_cells is not None and n_ctx > self.most_cells:
            self.trace.append(("refused", n_ctx))
            raise ModelError(f"llama.cpp could not make a context of {n_ctx} tokens for {n_seq} sequences")
        self.trace.append(("open", n_ctx))
        context = FakeContext(self, n_seq, n_ctx)
        self.contexts.append(context)
        return context

    def traced(self, makes: list[Make]) -> Iterator[Make]:
        for index, make in enumerate(makes):
            yield self._admitting(index, make)

    def _admitting(self, index: int, make: Make) -> Make:
        def admitted() -> JobSteps[list[int]]:
            self.trace.append(("admit", index))
            return make()

        return admitted

    def events(self, makes: list[Make]) -> Iterator[Event[list[int]]]:
        """The run's events, checked as they come: a job's output before its one end."""
        ended: set[int] = set()
        for event in self.scheduler.run(self.traced(makes)):
            assert event.index not in ended, f"job {event.index} went on after its end"
            if event.outcome is None:
                self.outputs[event.index] = self.outputs.get(event.index, b"") + event.output
            else:
                ended.add(event.index)
            yield event

    def run(self, makes: list[Make]) -> list[Outcome[list[int]]]:
        try:
            outcomes = list(in_order(self.events(makes)))
        finally:
            self.sequences.close()
        assert len(outcomes) == len(makes)
        return outcomes

    @property
    def decodes(self) -> list[tuple[tuple[int, int, int], ...]]:
        """The scheduler's decodes: each context's own decodes of the shared prefix left out."""
        found, skip = [], 0
        for entry in self.trace:
            if entry[0] == "open":
                skip = -(-len(self.prefix) // self.n_batch)
            elif entry[0] == "decode" and skip:
                skip -= 1
            elif entry[0] == "decode":
                found.append(entry[1])
        return found

    def index(self, entry: tuple[Any, ...]) -> int:
        return self.trace.index(entry)


@dataclass
class Watch:
    """What happened to the jobs: those closed early (GeneratorExit), each job's own checks."""

    closed: set[int] = field(default_factory=set)
    prompts: dict[int, Prompt] = field(default_factory=dict)
    threads: list[int] = field(default_factory=list)
    kept: list[JobSteps[list[int]]] = field(default_factory=list)  # every job's steps, so that only a close closes them


def room(prompt: list[int], steps: int, prefix: list[int] = PREFIX) -> int:
    return len(prefix) + len(prompt) + steps + 1  # the last draft's guess, taken back


def generate(prompt: list[int], steps: int, **options: Any) -> JobSteps[list[int]]:
    """A job's steps (`generating`), kept by its watch: were the scheduler to drop a job without
    closing it, the job would stay open, not be closed by the garbage collector."""
    made = generating(prompt, steps, **options)
    watch: Watch | None = options.get("watch")
    if watch is not None:
        watch.kept.append(made)
    return made


def generating(
    prompt: list[int],
    steps: int,
    *,
    prefix: list[int] = PREFIX,
    index: int = 0,
    watch: Watch | None = None,
    fail_at: int | None = None,
    interrupt_at: int | None = None,
    pieces: int = 1,
) -> JobSteps[list[int]]:
    """A tiny greedy decoding as a job: the prompt, then `steps` tokens, each written and then
    evaluated, every third as a two-token draft whose guess is dropped at the next evaluation.
    Every logits row sent back is checked against the sequence's history. `pieces`: each
    token's byte written in that many outputs (the extra ones empty)."""
    request = Prompt(prefix, prompt, room(prompt, steps, prefix))
    if watch is not None:
        watch.prompts[index] = request
    history = [*prefix, *prompt]
    out: list[int] = []
    drop = 0
    try:
        logits = yield request
        for step in range(steps):
            if watch is not None:
                watch.threads.append(threading.active_count())
            if step == fail_at:
                raise ValueError(f"job {index} failed at step {step}")
            if step == interrupt_at:
                raise KeyboardInterrupt
            assert logits is not None and np.array_equal(logits, _logits(history)[None, :]), f"job {index}: wrong logits"
            token = int(np.argmax(logits[0]))
            out.append(token)
            yield bytes([token])
            for _ in range(pieces - 1):
                yield b""
            history.append(token)
            if step % 3 == 2:
                rows = yield Evaluate([token, 1], [0, 1], drop)
                assert rows is not None and np.array_equal(rows[1], _logits([*history, 1])), f"job {index}: wrong draft row"
                logits, drop = rows[:1], 1
            else:
                logits, drop = (yield Evaluate([token], None, drop)), 0
    except GeneratorExit:
        if watch is not None:
            watch.closed.add(index)
        raise
    return out


def jobs(specs: list[tuple[list[int], int]], **options: Any) -> list[Make]:
    return [lambda i=i, p=p, s=s: generate(p, s, index=i, **options) for i, (p, s) in enumerate(specs)]


def values(outcomes: list[Outcome[list[int]]]) -> list[list[int] | None]:
    for outcome in outcomes:
        assert outcome.error is None, outcome.error
    return [outcome.value for outcome in outcomes]


def slot_cells(n_tokens: int, prefix: list[int] = PREFIX) -> int:
    """SharedSequences' slot for a document of `n_tokens` cells (rounded up to 256)."""
    return -(-(n_tokens - len(prefix) + SLOT_MARGIN) // 256) * 256


# -- each output its own, in input order -----------------------------------------------------


def test_each_job_writes_and_returns_its_output_alone_in_input_order_with_slots_refilled() -> None:
    specs = [(PROMPTS[0], 9), (PROMPTS[1], 3), (PROMPTS[2], 14), (PROMPTS[3], 5), (PROMPTS[4], 7)]
    expected = [alone(prompt, steps) for prompt, steps in specs]
    one = Harness(1)
    assert values(one.run(jobs(specs))) == expected
    assert all(len(decode) == 1 for decode in one.decodes)

    harness = Harness(2)
    assert values(harness.run(jobs(specs))) == expected
    assert harness.outputs == {i: bytes(out) for i, out in enumerate(expected)}
    decodes = harness.decodes
    assert len(decodes) < len(one.decodes)  # two sequences shared decodes
    # A slot freed is taken at once: both sequences are in every decode until the last job is in.
    last_admitted = harness.index(("admit", len(specs) - 1))
    before = [entry[1] for entry in harness.trace[:last_admitted] if entry[0] == "decode"][1:]  # after the prefix
    assert before and all([seq for seq, _, _ in decode] == [0, 1] for decode in before), before
    assert {seq for decode in decodes for seq, _, _ in decode} == {0, 1}


def test_every_job_on_one_sequence_gives_its_output_alone_and_reuses_the_prefix_it_left() -> None:
    specs = [(PROMPTS[i], 4 + i) for i in range(5)]
    model = FakeModel(n_batch=4)
    rooms: list[int] = []

    def model_for(n_tokens: int) -> Any:
        rooms.append(n_tokens)
        return model

    watch = Watch()
    outcomes = list(in_order(Scheduler(OneSequence(model_for)).run(jobs(specs, watch=watch))))
    assert values(outcomes) == [alone(prompt, steps) for prompt, steps in specs]
    assert rooms == [room(prompt, steps) for prompt, steps in specs]
    assert [watch.prompts[i].reused for i in range(5)] == [0] + [len(PREFIX)] * 4


# -- admission: input order only -------------------------------------------------------------


def requests_of(prompt: list[int], steps: int) -> list[tuple[int, int]]:
    """The (start, count) of each evaluation `generate` asks for, as the scheduler places them."""
    found = [(len(PREFIX), len(prompt))]
    length, drop = len(PREFIX) + len(prompt), 0
    for step in range(steps):
        count = 2 if step % 3 == 2 else 1
        start = length - drop
        found.append((start, count))
        length, drop = start + count, (1 if count == 2 else 0)
    return found


def expected_trace(specs: list[tuple[list[int], int]], slots: int, n_ctx: int) -> Trace:
    """The documented rule, played out: the first jobs fill every slot and wait for the context
    together; then at the start of every round each free slot, lowest first, takes the next job
    in input order, and every job in flight has its next evaluation in the round's one decode,
    in slot order."""
    first = min(slots, len(specs))
    trace: Trace = [*(("admit", index) for index in range(first)), ("open", n_ctx), ("decode", ((0, 0, len(PREFIX)),))]
    queues = [requests_of(prompt, steps) for prompt, steps in specs]
    to_come = iter(range(first, len(specs)))
    in_slot: list[int | None] = [*range(first), *[None] * (slots - first)]
    while True:
        for slot in range(slots):
            if in_slot[slot] is None and (index := next(to_come, None)) is not None:
                trace.append(("admit", index))
                in_slot[slot] = index
        flight = [(slot, index) for slot, index in enumerate(in_slot) if index is not None]
        if not flight:
            return trace
        trace.append(("decode", tuple((slot, *queues[index].pop(0)) for slot, index in flight)))
        for slot, index in flight:
            if not queues[index]:
                in_slot[slot] = None


def test_which_slot_takes_which_job_and_what_shares_each_decode_follow_input_order_only() -> None:
    """Two runs of the same jobs, one writing its output in many more pieces, trace the same
    admissions and decodes, and both are the documented rule played out."""
    steps = [6, 6, 6, 3, 9, 6, 2, 2, 7, 5, 6, 4]
    specs = [([7, 7, i % 5, i][: 2 + i % 3], count) for i, count in enumerate(steps)]  # 2 to 4 tokens
    runs = []
    for pieces in (1, 3):
        harness = Harness(4)
        assert values(harness.run(jobs(specs, pieces=pieces))) == [alone(p, s) for p, s in specs]
        runs.append([entry for entry in harness.trace if entry[0] != "close"])
    assert runs[0] == runs[1]
    assert runs[0] == expected_trace(specs, 4, len(PREFIX) + 4 * slot_cells(max(room(*spec) for spec in specs[:4])))


# -- a long prompt in fair shares -------------------------------------------------------------


def test_shares_of_a_decode_are_max_min_fair_and_at_least_one_token_each() -> None:
    assert _shares([16, 4, 4], 16) == [8, 4, 4]
    assert _shares([1, 9, 1], 16) == [1, 9, 1]  # all fit: nothing is cut
    assert _shares([512, 512, 512], 512) == [170, 171, 171]
    assert _shares([40, 3, 40], 16) == [6, 3, 7]
    assert _shares([2] * 20, 16) == [1] * 20  # more requests than tokens: one each
    assert _shares([], 16) == []


def test_a_long_prompt_goes_in_fair_shares_within_n_batch_between_the_other_sequences_steps() -> None:
    """A prompt of three batches on sequence 0 does not stall the others: every decode holds
    each sequence's next evaluation, the prompt cut to its fair share of n_batch."""
    long_prompt = [(5 * i) % 11 + 1 for i in range(48)]
    specs = [(long_prompt, 3), (PROMPTS[0], 12), (PROMPTS[3], 12)]
    harness = Harness(3)
    assert values(harness.run(jobs(specs))) == [alone(prompt, steps) for prompt, steps in specs]
    decodes = harness.decodes
    assert all(sum(count for _, _, count in decode) <= 16 for decode in decodes)
    left, position, pieces = len(long_prompt), len(PREFIX), []
    for decode in decodes:
        if not left:
            break
        assert [seq for seq, _, _ in decode] == [0, 1, 2], decode
        (_, start, count), *others = decode
        assert start == position and count == _shares([left, *(n for _, _, n in others)], 16)[0]
        pieces.append(count)
        left, position = left - count, position + count
    assert pieces == [8, 14, 14, 12]  # beside the others' prompts (4 tokens each), then their steps


# -- failures: each its own ------------------------------------------------------------------


def test_a_job_that_raises_midway_gets_its_error_in_place_and_the_others_finish() -> None:
    specs = [(PROMPTS[i], 12) for i in range(5)]
    watch = Watch()
    makes = [
        lambda i=i, p=p, s=s: generate(p, s, index=i, watch=watch, fail_at=4 if i == 1 else None)
        for i, (p, s) in enumerate(specs)
    ]
    harness = Harness(3)
    outcomes = harness.run(makes)
    assert isinstance(outcomes[1].error, ValueError) and outcomes[1].value is None
    assert "job 1 failed at step 4" in str(outcomes[1].error)
    assert [o.value for i, o in enumerate(outcomes) if i != 1] == [alone(p, s) for i, (p, s) in enumerate(specs) if i != 1]
    assert [o.error for i, o in enumerate(outcomes) if i != 1] == [None] * 4
    assert harness.outputs[1] == bytes(alone(*specs[1])[:4])  # what it wrote before failing
    assert not watch.closed


def unreadable() -> JobSteps[list[int]]:
    raise OSError("cannot read the document")


def failing_at_once() -> JobSteps[list[int]]:
    raise OSError("the document is not text")
    yield b""  # a generator that fails at its first step, before any request


def test_jobs_that_fail_before_their_first_request_do_not_hold_the_others() -> None:
    good = [(PROMPTS[0], 5), (PROMPTS[1], 7)]
    expected = Harness(2)
    assert values(expected.run(jobs(good))) == [alone(p, s) for p, s in good]
    harness = Harness(2)
    first, second = jobs(good)
    outcomes = harness.run([unreadable, first, failing_at_once, second, unreadable])
    assert [type(o.error) for o in outcomes] == [OSError, type(None), OSError, type(None), OSError]
    assert "cannot read" in str(outcomes[0].error) and "not text" in str(outcomes[2].error)
    assert [outcomes[1].value, outcomes[3].value] == [alone(p, s) for p, s in good]
    assert harness.decodes == expected.decodes  # the failures took no slot and no decode


def test_jobs_that_fail_to_come_end_the_run_with_that_error_in_place() -> None:
    specs = [(PROMPTS[0], 6), (PROMPTS[1], 6)]
    harness = Harness(2)

    def listed() -> Iterator[Make]:
        yield from jobs(specs)
        raise OSError("the list of documents could not be read")

    outcomes = list(in_order(harness.scheduler.run(listed())))
    assert len(outcomes) == 3 and isinstance(outcomes[2].error, OSError)
    assert [o.value for o in outcomes[:2]] == [alone(p, s) for p, s in specs]

    def none_come() -> Iterator[Make]:
        raise OSError("no list")
        yield from ()

    (outcome,) = in_order(Scheduler(Harness(2).sequences).run(none_come()))
    assert isinstance(outcome.error, OSError)


# -- room: a larger slot, a refused one, no context ------------------------------------------


def test_a_document_needing_a_larger_slot_waits_for_those_in_flight_and_the_context_is_made_again() -> None:
    specs = [([5] * 4, 4), ([6] * 4, 12), ([8] * 600, 6), ([9] * 4, 6)]
    harness = Harness(2)
    assert values(harness.run(jobs(specs))) == [alone(p, s) for p, s in specs]
    small, large = len(PREFIX) + 2 * slot_cells(room(*specs[0])), len(PREFIX) + 2 * slot_cells(room(*specs[2]))
    assert [entry for entry in harness.trace if entry[0] in ("open", "close")] == [
        ("open", small),
        ("close", small),
        ("open", large),
        ("close", large),
    ]
    waits, next_in, made = harness.index(("admit", 2)), harness.index(("admit", 3)), harness.index(("open", large))
    # nobody admitted while the large one waited beside a job in flight; once job 1 was done,
    # job 3 came in and waited with it, and the context was made for both at once
    assert waits < next_in < made
    between = [entry[1] for entry in harness.trace[waits:next_in] if entry[0] == "decode"]
    assert between and all([seq for seq, _, _ in decode] == [1] for decode in between)  # job 1 went on alone
    assert not [entry for entry in harness.trace[next_in:made] if entry[0] == "decode"]
    assert harness.trace[waits - 1][0] == "decode" and harness.trace[made - 1] == ("close", small)
    # then the large document's prompt on slot 0 (its share of n_batch) and job 3's beside it
    after = [entry[1] for entry in harness.trace[made:] if entry[0] == "decode"]
    assert after[:2] == [((0, 0, len(PREFIX)),), ((0, len(PREFIX), 12), (1, len(PREFIX), 4))]  # the prefix first


def test_a_document_whose_slot_cannot_be_made_fails_alone_and_the_others_go_on_at_the_size_before() -> None:
    specs = [([5] * 4, 4), ([6] * 4, 12), ([8] * 600, 6), ([9] * 4, 6), ([4] * 300, 6)]
    harness = Harness(2, most_cells=1100)  # two slots for 600 tokens are refused, for 300 made
    watch = Watch()
    outcomes = harness.run(jobs(specs, watch=watch))
    assert watch.closed == {2}
    refusal = outcomes[2].error
    assert isinstance(refusal, SequenceSlotRefused) and outcomes[2].value is None
    assert refusal.needed == room(*specs[2]) and refusal.sequences == 2
    assert "could not make a context" in refusal.reason and "parallel=1" in refusal.hint
    assert [o.value for i, o in enumerate(outcomes) if i != 2] == [alone(p, s) for i, (p, s) in enumerate(specs) if i != 2]
    small = len(PREFIX) + 2 * slot_cells(room(*specs[0]))
    assert [entry for entry in harness.trace if entry[0] in ("open", "refused")] == [
        ("open", small),
        ("refused", len(PREFIX) + 2 * slot_cells(room(*specs[2]))),
        ("open", small),  # the size before
        ("open", len(PREFIX) + 2 * slot_cells(room(*specs[4]))),
    ]


def test_a_first_document_whose_slot_cannot_be_made_fails_alone() -> None:
    specs = [([8] * 600, 6), ([5] * 4, 6), ([6] * 4, 6)]
    harness = Harness(2, most_cells=1000)
    outcomes = harness.run(jobs(specs))
    assert isinstance(outcomes[0].error, SequenceSlotRefused)
    assert [o.value for o in outcomes[1:]] == [alone(p, s) for p, s in specs[1:]]


def test_where_no_context_at_all_can_be_made_every_document_fails_with_the_models_error() -> None:
    harness = Harness(2, most_cells=100)  # less than two of the smallest slots
    specs = [([8] * 600, 6), ([5] * 4, 6), ([6] * 4, 6), ([7] * 4, 6)]
    outcomes = harness.run(jobs(specs))
    assert [type(outcome.error) for outcome in outcomes] == [ModelError] * 4
    assert not harness.contexts and not any(entry[0] == "decode" for entry in harness.trace)


# -- a failing decode ------------------------------------------------------------------------


def test_a_decode_that_raises_fails_the_documents_in_it_and_the_later_ones_go_on() -> None:
    fault = ModelError("llama_decode failed")
    harness = Harness(3, fault=lambda calls: fault if calls == 4 else None)  # the prefix is call 0
    specs = [(PROMPTS[i], 10) for i in range(6)]
    watch = Watch()
    outcomes = harness.run(jobs(specs, watch=watch))
    assert [outcome.error for outcome in outcomes[:3]] == [fault] * 3  # jobs 0 to 2 were in that decode
    assert watch.closed == {0, 1, 2}
    assert [seq for seq, _, _ in next(entry[1] for entry in harness.trace if entry[0] == "failed")] == [0, 1, 2]
    assert [o.value for o in outcomes[3:]] == [alone(p, s) for p, s in specs[3:]]


def test_a_decode_that_raises_fails_only_the_documents_in_that_decode() -> None:
    """With n_batch 2 and three sequences a round is two decodes: [0, 1] then [2]; the second
    failing fails job 2 alone, and a job admitted in its place goes on."""
    fault = ModelError("llama_decode failed")
    harness = Harness(3, n_batch=2, poison=False, fault=lambda calls: fault if calls == 5 else None)  # 4 prefix decodes
    specs = [(PROMPTS[i], 6) for i in range(5)]
    outcomes = harness.run(jobs(specs))
    assert [entry for entry in harness.trace if entry[0] == "failed"] == [("failed", ((2, len(PREFIX), 1),))]
    assert outcomes[2].error is fault
    assert [o.value for i, o in enumerate(outcomes) if i != 2] == [alone(p, s) for i, (p, s) in enumerate(specs) if i != 2]


def test_a_model_that_keeps_failing_fails_every_document_and_nothing_waits_for_ever() -> None:
    harness = Harness(3, fault=lambda calls: ModelError("llama_decode failed") if calls >= 3 else None)
    outcomes = harness.run(jobs([(PROMPTS[i], 10) for i in range(7)]))
    assert all(isinstance(outcome.error, ModelError) for outcome in outcomes)


# -- stopping early --------------------------------------------------------------------------


def test_closing_the_events_early_closes_every_job_in_flight_and_the_context_can_be_closed() -> None:
    harness = Harness(2)
    watch = Watch()
    specs = [(PROMPTS[0], 10)] + [(PROMPTS[i], 30) for i in range(1, 6)]
    events = harness.scheduler.run(harness.traced(jobs(specs, watch=watch)))
    first = next(event for event in events if event.outcome is not None)
    assert first.index == 0 and first.outcome is not None and first.outcome.value == alone(*specs[0])
    assert next(event for event in events if event.index == 2).output  # job 2 took the slot job 0 left
    events.close()
    admitted = {entry[1] for entry in harness.trace if entry[0] == "admit"}
    assert admitted == {0, 1, 2}  # the jobs after were never made
    assert watch.closed == {1, 2}  # those in flight, closed
    harness.sequences.close()
    assert harness.contexts[-1].closed
    # The scheduler is free again.
    assert values(list(in_order(harness.scheduler.run(jobs(specs[:1]))))) == [alone(*specs[0])]


def test_an_interrupt_in_a_job_ends_the_run_and_closes_the_other_jobs() -> None:
    harness = Harness(3)
    watch = Watch()
    specs = [(PROMPTS[i], 12) for i in range(5)]
    makes = [
        lambda i=i, p=p, s=s: generate(p, s, index=i, watch=watch, interrupt_at=5 if i == 1 else None)
        for i, (p, s) in enumerate(specs)
    ]
    with pytest.raises(KeyboardInterrupt):
        harness.run(makes)
    assert watch.closed == {0, 2}
    assert harness.contexts[-1].closed  # Harness.run closes the sequences on its way out


def test_an_interrupt_in_a_decode_ends_the_run_and_closes_every_job() -> None:
    harness = Harness(3, fault=lambda calls: KeyboardInterrupt() if calls == 5 else None)
    watch = Watch()
    with pytest.raises(KeyboardInterrupt):
        harness.run(jobs([(PROMPTS[i], 12) for i in range(5)], watch=watch))
    assert watch.closed == {0, 1, 2}
    assert values(list(in_order(harness.scheduler.run(jobs([(PROMPTS[0], 2)]))))) == [alone(PROMPTS[0], 2)]


# -- drop ------------------------------------------------------------------------------------


def test_an_evaluation_that_drops_cells_starts_that_many_cells_earlier() -> None:
    harness = Harness(2)
    seen: list[Logits] = []

    def dropping() -> JobSteps[list[int]]:
        logits = yield Prompt(PREFIX, [11, 12, 13], len(PREFIX) + 10)
        assert logits is not None
        seen.append(np.array(logits))  # the rows are valid until the next decode only
        rows = yield Evaluate([21, 22, 23], [0, 1, 2])
        assert rows is not None
        seen.append(np.array(rows))
        for request in (Evaluate([31], None, 2), Evaluate([41, 42], [1], 1), Evaluate([51])):
            sent = yield request
            assert sent is not None
            seen.append(np.array(sent))
        return []

    assert values(harness.run([dropping])) == [[]]
    start = len(PREFIX)
    assert harness.decodes == [
        ((0, start, 3),),
        ((0, start + 3, 3),),
        ((0, start + 6 - 2, 1),),  # 22 and 23 dropped
        ((0, start + 5 - 1, 2),),  # 31 dropped
        ((0, start + 6, 1),),
    ]
    history = [*PREFIX, 11, 12, 13]
    assert np.array_equal(seen[0], _logits(history)[None, :])
    assert np.array_equal(
        seen[1], np.stack([_logits([*history, 21]), _logits([*history, 21, 22]), _logits([*history, 21, 22, 23])])
    )
    assert np.array_equal(seen[2], _logits([*history, 21, 31])[None, :])
    assert np.array_equal(seen[3], _logits([*history, 21, 41, 42])[None, :])
    assert np.array_equal(seen[4], _logits([*history, 21, 41, 42, 51])[None, :])
    assert harness.contexts[0].cells[0] == [*history, 21, 41, 42, 51]


# -- no thread, one run at a time ------------------------------------------------------------


def test_a_batch_of_sixteen_documents_starts_no_thread() -> None:
    harness = Harness(4)
    watch = Watch()
    specs = [(PROMPTS[i % len(PROMPTS)], 3 + i % 5) for i in range(16)]
    before = threading.active_count()
    assert values(harness.run(jobs(specs, watch=watch))) == [alone(p, s) for p, s in specs]
    assert len(watch.threads) == sum(steps for _, steps in specs)
    assert max(watch.threads) <= before and threading.active_count() <= before
    assert max(len(decode) for decode in harness.decodes) == 4  # the documents did share decodes


def test_a_run_left_paused_is_stopped_by_the_next_and_a_run_inside_a_job_or_a_lent_model_is_refused() -> None:
    harness = Harness(2)
    specs = [(PROMPTS[0], 6), (PROMPTS[1], 6)]
    watch = Watch()
    events = harness.scheduler.run(jobs(specs, watch=watch))
    next(events)  # read halfway, then put aside
    assert values(list(in_order(harness.scheduler.run(jobs(specs))))) == [alone(p, s) for p, s in specs]
    assert watch.closed == {0, 1}  # the paused run's jobs were stopped when the next began
    with pytest.raises(RuntimeError, match="was stopped"):
        next(events)
    with harness.scheduler.busy(), pytest.raises(RuntimeError, match="in use by a run already"):
        next(harness.scheduler.run(jobs(specs)))

    second = Harness(2)

    def nested() -> JobSteps[list[int]]:
        next(second.scheduler.run(jobs(specs[:1])))  # a job starting a run on the scheduler running it
        yield b""
        return []

    outcomes = second.run([*jobs(specs[:1]), nested])
    assert outcomes[0].value == alone(*specs[0])
    assert isinstance(outcomes[1].error, RuntimeError)


# -- in_order --------------------------------------------------------------------------------


def test_in_order_gives_each_outcome_in_input_order_as_soon_as_those_before_it_are_done() -> None:
    ends = [Outcome(f"v{i}") for i in range(4)]
    given: list[int] = []

    def events() -> Iterator[Event[str]]:
        for index in (2, 0, 3, 1):
            given.append(index)
            yield Event(index, output=b"x")
            yield Event(index, outcome=ends[index])

    ordered = in_order(events())
    assert next(ordered) is ends[0] and given == [2, 0]  # not waiting for the rest
    assert list(ordered) == ends[1:] and given == [2, 0, 3, 1]


def test_outcomes_of_jobs_ending_out_of_order_come_in_input_order() -> None:
    specs = [(PROMPTS[0], 20), (PROMPTS[1], 2), (PROMPTS[2], 5)]
    harness = Harness(3)
    raw = [event.index for event in harness.events(jobs(specs)) if event.outcome is not None]
    assert raw == [1, 2, 0]
    harness = Harness(3)
    assert values(harness.run(jobs(specs))) == [alone(p, s) for p, s in specs]


# -- prompts: a prefix held, a prefix evaluated ----------------------------------------------


def test_a_prompt_whose_prefix_the_shared_sequences_hold_decodes_only_its_rest() -> None:
    other = [2, 7, 1, 8]
    specs = [([5, 6, 7], 4), ([8, 9], 4)]
    watch = Watch()
    makes = [
        *jobs(specs, watch=watch),
        lambda: generate([4, 4, 4], 3, prefix=other, index=2, watch=watch),
    ]
    harness = Harness(3)
    assert values(harness.run(makes)) == [*(alone(p, s) for p, s in specs), alone([4, 4, 4], 3, prefix=other)]
    assert [watch.prompts[i].reused for i in range(3)] == [len(PREFIX), len(PREFIX), 0]
    decodes = harness.decodes
    assert decodes[0] == ((0, len(PREFIX), 3), (1, len(PREFIX), 2), (2, 0, len(other)))  # the other prefix, from 0
    assert decodes[1][2] == (2, len(other), 3)  # then its rest, in the next decode
    assert not any(start < len(PREFIX) for decode in decodes for seq, start, _ in decode if seq != 2)


class FakeModel:
    """What OneSequence uses of a GGUFModel; each batch logged as (start, tokens, rows)."""

    def __init__(self, n_batch: int) -> None:
        self.n_batch = n_batch
        self.tokens: list[int] = []
        self.batches: list[tuple[int, list[int], list[int]]] = []

    @property
    def n_past(self) -> int:
        return len(self.tokens)

    def holds(self, tokens: list[int]) -> bool:
        return bool(tokens) and self.tokens[: len(tokens)] == tokens

    def rollback(self, n_past: int) -> None:
        assert n_past <= len(self.tokens)
        del self.tokens[n_past:]

    def eval_with_logits(self, tokens: list[int], rows: list[int]) -> Logits:
        if not 0 < len(tokens) <= self.n_batch or not rows or rows != sorted(set(rows)) or rows[-1] >= len(tokens):
            raise ValueError(f"eval_with_logits: {len(tokens)} tokens (at most {self.n_batch}), rows {rows}")
        start = len(self.tokens)
        self.batches.append((start, list(tokens), list(rows)))
        self.tokens.extend(tokens)
        return np.stack([_logits(self.tokens[: start + row + 1]) for row in rows])


def test_one_sequence_evaluates_a_prefix_not_held_then_the_rest_each_in_n_batch_pieces_with_progress() -> None:
    model = FakeModel(n_batch=4)
    prefix, rest = [1, 2, 3, 4, 5, 6], list(range(10, 20))
    progress: list[tuple[int, int]] = []
    prompts: list[Prompt] = []

    def job(rest: list[int], report: bool) -> JobSteps[list[int]]:
        prompt = Prompt(prefix, rest, 40, (lambda done, total: progress.append((done, total))) if report else None)
        prompts.append(prompt)
        logits = yield prompt
        assert logits is not None and np.array_equal(logits, _logits([*prefix, *rest])[None, :])
        logits = yield Evaluate([30])
        assert logits is not None and np.array_equal(logits, _logits([*prefix, *rest, 30])[None, :])
        return []

    outcomes = list(
        in_order(Scheduler(OneSequence(lambda n_tokens: model)).run([lambda: job(rest, True), lambda: job([40, 41], False)]))
    )
    assert values(outcomes) == [[], []]
    assert [(start, tokens) for start, tokens, _ in model.batches] == [
        (0, prefix[:4]),
        (4, prefix[4:]),
        (6, rest[:4]),
        (10, rest[4:8]),
        (14, rest[8:]),
        (16, [30]),
        (6, [40, 41]),  # the second prompt's prefix held: only its rest
        (8, [30]),
    ]
    assert progress == [(4, 10), (8, 10), (10, 10)]
    assert [prompt.reused for prompt in prompts] == [0, len(prefix)]
    assert model.tokens == [*prefix, 40, 41, 30]


# -- the runtime's rows are valid until its next decode only ---------------------------------


def test_more_sequences_than_n_batch_tokens_take_several_decodes_a_round_each_output_its_own() -> None:
    """With n_batch 2 and three sequences, a round is two decodes (the shares, one token each,
    cut into runs of at most n_batch); rows kept by the runtime, every output is its own."""
    specs = [(PROMPTS[i], 6) for i in range(5)]
    harness = Harness(3, n_batch=2, poison=False)
    assert values(harness.run(jobs(specs))) == [alone(p, s) for p, s in specs]
    assert harness.decodes[:2] == [((0, len(PREFIX), 1), (1, len(PREFIX), 1)), ((2, len(PREFIX), 1),)]


def test_rows_of_a_decode_are_read_or_copied_before_the_runtimes_next_decode() -> None:
    specs = [(PROMPTS[i], 6) for i in range(5)]
    harness = Harness(3, n_batch=2)  # the fake's rows are overwritten at its next decode
    assert values(harness.run(jobs(specs))) == [alone(p, s) for p, s in specs]


# -- a request the model cannot take ----------------------------------------------------------


@pytest.mark.parametrize(
    "request_",
    [
        Evaluate([7, 8], []),
        Evaluate([7, 8], [2]),
        Evaluate([7, 8], [1, 0]),
        Evaluate([7, 8], [1, 1]),
        Evaluate([]),
        Prompt(PREFIX, [], 20),
    ],
    ids=["rows-empty", "row-past-tokens", "rows-out-of-order", "rows-repeated", "no-tokens", "prompt-without-rest"],
)
def test_a_request_the_model_cannot_take_fails_that_document_alone(request_: Evaluate | Prompt) -> None:
    def asking() -> JobSteps[list[int]]:
        yield Prompt(PREFIX, [5, 6], 20)
        yield request_
        return []

    neighbour = (PROMPTS[0], 4)
    outcomes = Harness(2).run([asking, *jobs([neighbour])])
    assert isinstance(outcomes[0].error, Exception)
    assert outcomes[1].error is None and outcomes[1].value == alone(*neighbour)


# -- one sequence: a document too large for any context ---------------------------------------


def test_on_one_sequence_a_document_too_large_for_any_context_fails_alone() -> None:
    model = FakeModel(n_batch=4)
    too_large = ModelError("the document needs more than the model's context")

    def model_for(n_tokens: int) -> Any:
        if n_tokens > 100:
            raise too_large
        return model

    watch = Watch()
    specs = [(PROMPTS[0], 4), ([8] * 200, 4), (PROMPTS[1], 4)]
    outcomes = list(in_order(Scheduler(OneSequence(model_for)).run(jobs(specs, watch=watch))))
    assert outcomes[1].error is too_large and outcomes[1].value is None
    assert [outcomes[0].value, outcomes[2].value] == [alone(*specs[0]), alone(*specs[2])]
    assert watch.closed == {1}  # its steps closed, nothing of it evaluated
    assert all(tokens[:1] != [8] for _, tokens, _ in model.batches)
