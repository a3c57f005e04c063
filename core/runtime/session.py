"""One model in use: its weights loaded on first need, with a context just large enough for the
prompt and the token budget (core.runtime.context_budget), loaded again larger when a document
needs more, and the jobs that use it run one at a time on its own context or several at once as
sequences of a shared one (core.runtime.sequences), each stepped by a scheduler (core.runtime.scheduler).

    session = Session(model_path, ModelOptions(), trained=8192)
    session.model_for(600)                           # loads the weights, a context of 768
    for outcome in session.run(jobs, 4, prefix): ... # 4 jobs at a time, in input order
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ..defaults import DEFAULT_GPU_LAYERS, DEFAULT_GPU_PARALLEL
from ..model import GGUFModel, SequenceContext, offloads_to_gpu, threads_for
from .context_budget import ContextBudget
from .scheduler import JobSteps, Outcome, Scheduler, in_order
from .sequences import OneSequence, SharedSequences

# The context of the model that only lends its weights to a multi-sequence context
# (core.runtime.sequences.SharedSequences): the smallest llama.cpp makes (it rounds a smaller one up, and
# llama-cpp-python would then size its own token list for the smaller one).
_WEIGHTS_ONLY_CONTEXT = 256
T = TypeVar("T")


@dataclass(frozen=True)
class ModelOptions:
    n_ctx: int | None = None
    n_threads: int | None = None
    n_gpu_layers: int = DEFAULT_GPU_LAYERS
    use_cache: bool = True  # the on-disk cache of the model's vocabulary (core.vocab.cache)


class Session:
    """The model at `model_path`, trained on `trained` tokens of context, run with `options`:
    no weights are loaded until a job or `model_for` needs them."""

    def __init__(self, model_path: Path, options: ModelOptions, trained: int) -> None:
        self.model_path = model_path
        self.options = options
        self.budget = ContextBudget(trained, options.n_ctx)
        self._model: GGUFModel | None = None
        # The model's own context as one sequence: what one job at a time runs on, kept from
        # one job to the next (the next prompt's shared prefix is found there).
        self.alone = Scheduler(OneSequence(self.model_for))

    @property
    def loaded_model(self) -> GGUFModel | None:
        """The model with weights, once loaded."""
        return self._model

    def model_for(self, n_tokens: int) -> GGUFModel:
        """The loaded model, (re)loaded with a context of at least `n_tokens`. Raises
        ContextTooSmall where the budget cannot hold that many (ContextBudget.size_for)."""
        wanted = self.budget.size_for(n_tokens)
        if self._model is None or self._model.n_ctx < max(n_tokens, wanted):
            if self._model is not None:
                self._model.close()
            self._model = GGUFModel.load(self.model_path, wanted, self.options.n_threads, self.options.n_gpu_layers)
        return self._model

    @property
    def threads(self) -> int:
        """The llama.cpp threads the model runs (or will run) with: ModelOptions.n_threads, or one
        a core this process may use, never the machine's load (core.model.threads_for)."""
        return threads_for(self.options.n_threads)

    @property
    def default_parallel(self) -> int:
        """How many jobs to run together when not told: DEFAULT_GPU_PARALLEL where the model
        runs on a GPU, else 1 (on this project's 2-core CPU more measured no faster: a batch
        there is mostly prompts, already evaluated 512 tokens at a time)."""
        return DEFAULT_GPU_PARALLEL if offloads_to_gpu(self.options.n_gpu_layers) else 1

    def run(
        self, jobs: Iterable[Callable[[], JobSteps[T]]], parallel: int, prefix: Callable[[], list[int]]
    ) -> Generator[Outcome[T], None, None]:
        """Run `jobs` `parallel` at a time, each on one sequence of a shared context holding
        `prefix()` (the prompt tokens every job starts with) once; outcomes in input order. With
        `parallel` 1, one after another on the model's own context. No more sequences are made
        than there are jobs (each sequence's slot is context memory): the first `parallel` jobs
        are read before any runs."""
        together, counted = _counted_ahead(jobs, parallel)
        if together == 1:
            yield from in_order(self.alone.run(counted))
            return
        unified = offloads_to_gpu(self.options.n_gpu_layers)  # the faster layout of each (core.runtime.sequences)
        sequences = SharedSequences(self.sequence_context(unified), together, prefix(), unified)
        try:
            with self.alone.busy():  # the loaded model lends its weights: nothing else may reload it meanwhile
                yield from in_order(Scheduler(sequences).run(counted))
        finally:
            sequences.close()

    def sequence_context(self, unified: bool) -> Callable[[int, int], SequenceContext]:
        """What makes a context of `n_seq` sequences in `n_ctx` cells, one cache or a stream each."""

        def made(n_seq: int, n_ctx: int) -> SequenceContext:
            if self._model is None:
                options = self.options
                self._model = GGUFModel.load(self.model_path, _WEIGHTS_ONLY_CONTEXT, options.n_threads, options.n_gpu_layers)
            return SequenceContext(self._model, n_seq, n_ctx, unified)

        return made


def _counted_ahead(jobs: Iterable[T], most: int) -> tuple[int, Iterator[T]]:
    """How many of `jobs` there are, up to `most` (at least 1), and all of them still to come.
    Where reading them fails, the jobs read before come first, then the failure."""
    iterator = iter(jobs)
    head: list[T] = []
    try:
        head.extend(itertools.islice(iterator, max(1, most)))
    except Exception as error:  # the caller's jobs failed to come: raised where the next would be
        return max(1, len(head)), itertools.chain(head, _raising(error))
    return max(1, min(most, len(head))), itertools.chain(head, iterator)


def _raising(error: Exception) -> Iterator[Any]:
    raise error
    yield  # a generator: raises when its first item is asked for
