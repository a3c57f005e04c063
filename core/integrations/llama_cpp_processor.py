"""This library's schema support inside llama-cpp-python's own high-level API.

    processors, stopping = llama_cpp_logits_processor(compiled, max_tokens=256)
    llm.create_completion(prompt, max_tokens=256, logits_processor=processors, stopping_criteria=stopping)

The logits processor keeps a Guide in step with the tokens llama-cpp-python has generated and
sets every token the schema does not allow to -inf, so its own sampler can only choose
allowed ones; the stopping criterion ends generation once the document is complete and
nothing may follow. With `max_tokens` the budget is kept as this library's decoder keeps it:
a token is allowed only if the document can still close within the budget after it.

What can be wrong is refused when the pair is made, not while it runs: llama-cpp-python calls
a logits processor from inside its sampler (a ctypes callback), where an exception is printed
and ignored and the token is sampled from the unmasked logits. So a budget the schema's
shortest document does not fit raises TokenBudgetTooSmall here, and a pair may be passed to
one completion after another: each completion starts a new document (see
`SchemaLogitsProcessor.starts_completion`), as a llama-cpp-python grammar does, rather than
failing inside the sampler on a second prompt.

This path asks the model at every token (llama-cpp-python samples one token per call), so it
gives the schema, not this library's speed: forced text and drafts need `Extractor`.
The lists are llama-cpp-python's shape (lists that are called), built here so that this
module needs no import of llama_cpp.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import SupportsIndex

import numpy as np
import numpy.typing as npt

from ..errors import TokenBudgetTooSmall
from ..index.compiled import CompiledSchema
from ..index.guide import Guide

Scores = npt.NDArray[np.single]
InputIds = npt.NDArray[np.intc]


class LogitsProcessorList(list[Callable[[InputIds, Scores], Scores]]):
    """llama-cpp-python's LogitsProcessorList: each processor in turn."""

    def __call__(self, input_ids: InputIds, scores: Scores) -> Scores:
        for processor in self:
            scores = processor(input_ids, scores)
        return scores


class StoppingCriteriaList(list[Callable[[InputIds, Scores], bool]]):
    """llama-cpp-python's StoppingCriteriaList: stop when any says so."""

    def __call__(self, input_ids: InputIds, logits: Scores) -> bool:
        return any(criterion(input_ids, logits) for criterion in self)


class SchemaLogitsProcessor:
    """Masks llama-cpp-python's logits to the tokens `compiled` allows next (see the module).

    The mask is the Guide's and nothing else: the automaton takes every form of a number, so
    a model writing `10.0` may end the number there, and llama-cpp-python's text keeps the
    form the model sampled (`10.0`; this library's decoder writes `10`, see core.decode.held_zeros).

    One completion at a time: the state of the completion under way is kept here, so a
    processor is not for two completions running at once (threads)."""

    guide: Guide  # past every token taken
    _prompt_length: int | None  # None until the completion's first call
    _last_call: InputIds | None  # the tokens the latest call saw
    _generated: int

    def __init__(self, compiled: CompiledSchema, max_tokens: int | None = None) -> None:
        """Raises TypeError for a `max_tokens` that is not a whole number (a bool is not),
        ValueError for one below 1, TokenBudgetTooSmall for one the schema's shortest document
        does not fit (each byte may take a token)."""
        self._compiled = compiled
        self._max_tokens = checked_budget(compiled, max_tokens)
        self._eog = np.asarray(sorted(compiled.vocab.eog_ids), dtype=np.int32)
        self._begin(None)

    def __call__(self, input_ids: InputIds, scores: Scores) -> Scores:
        if self.starts_completion(input_ids):
            self._begin(input_ids)
        self._last_call = input_ids.copy()
        self.follow(input_ids)
        allowed = self._allowed()
        masked = np.full_like(scores, -np.inf)
        masked[allowed] = scores[allowed]
        return masked

    def starts_completion(self, input_ids: InputIds) -> bool:
        """Whether a call with `input_ids` is the first of a new completion rather than the
        next token of the one under way. llama-cpp-python samples one token per evaluated
        token, so the calls of one completion each bring exactly one token more than the last
        call, which they begin with; and none follows a document that is complete. Anything
        else is a new prompt: the same one again, another, or a chat's next turn holding the
        last answer. (A prompt that is exactly the last prompt and all its output is one token
        more: it carries an unfinished document on.) An O(len(input_ids)) comparison."""
        last = self._last_call
        if last is None or self.is_finished() or len(input_ids) != len(last) + 1:
            return True
        return not np.array_equal(input_ids[: len(last)], last)

    def follow(self, input_ids: InputIds) -> None:
        """Advance past the tokens generated since the last look. The first call of a
        completion sees the prompt only: everything after it is output. Raises ValueError if a
        token the schema does not allow was generated (another processor changed the choice)."""
        if self._prompt_length is None:
            self._prompt_length = len(input_ids)
        for token in input_ids[self._prompt_length + self._generated :].tolist():
            self.guide.advance(int(token))
            self._generated += 1

    def is_finished(self) -> bool:
        return self.guide.is_finished()

    def check_sampled(self, input_ids: InputIds) -> None:
        """Raise ValueError if the latest call saw more tokens than `input_ids`, the tokens
        sampled so far as llama-cpp-python hands them to stopping criteria: with a draft_model
        it hands logits processors the draft's guesses as well, which would be read as output
        (and, being more than one token, as a new prompt). The criterion is called outside the
        sampler, so this error reaches the caller."""
        last = self._last_call
        if last is not None and len(input_ids) < len(last):
            raise ValueError(
                f"the logits processor was given {len(last) - len(input_ids)} tokens not yet sampled"
                " (a draft_model's guesses): the schema cannot be kept with a draft_model; make the Llama without one"
            )

    def _begin(self, prompt: InputIds | None) -> None:
        """A new document, with the whole budget, after `prompt` (None: not seen yet)."""
        self.guide = self._compiled.guide()
        self._prompt_length = None if prompt is None else len(prompt)
        self._last_call = None
        self._generated = 0

    def _allowed(self) -> npt.NDArray[np.intp]:
        budget = None if self._max_tokens is None else self._max_tokens - self._generated
        allowed = self.guide.allowed(budget)
        ids = np.union1d(allowed.ids, self._eog) if allowed.may_end else np.unique(allowed.ids)
        return ids.astype(np.intp)


def checked_budget(compiled: CompiledSchema, max_tokens: object) -> int | None:
    """`max_tokens` as a number of tokens (None: no budget), or the error that says why it
    cannot be one: TypeError, ValueError, or TokenBudgetTooSmall (see SchemaLogitsProcessor).
    Costs a look at the automaton's first state."""
    if max_tokens is None:
        return None
    # A bool is an int to Python, and True would read as a budget of one token.
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, SupportsIndex):
        kind = type(max_tokens).__name__
        raise TypeError(f"max_tokens must be a whole number of tokens, or None for no budget, not {max_tokens!r} ({kind})")
    budget = operator.index(max_tokens)
    if budget < 1:  # llama-cpp-python reads a max_tokens of 0 or less as no limit at all
        raise ValueError(f"max_tokens must be a positive number of tokens, or None for no budget, not {budget}")
    shortest = compiled.guide().shortest_completion()
    if budget < shortest:
        raise TokenBudgetTooSmall(budget, shortest)
    return budget


def llama_cpp_logits_processor(
    compiled: CompiledSchema, max_tokens: int | None = None
) -> tuple[LogitsProcessorList, StoppingCriteriaList]:
    """`(logits_processor, stopping_criteria)` for llama-cpp-python's
    `Llama.create_completion(prompt, logits_processor=..., stopping_criteria=...)`, holding
    its output to `compiled`'s schema (and, with `max_tokens`, closing the document inside
    that many tokens: pass the same number to create_completion). The pair may serve one
    completion after another, each a new document with the whole budget; not two at once,
    nor a Llama with a draft_model (the criterion raises ValueError). Raises TypeError,
    ValueError or TokenBudgetTooSmall for a `max_tokens` it cannot keep (see
    SchemaLogitsProcessor); cheap otherwise (the compiled schema is shared)."""
    processor = SchemaLogitsProcessor(compiled, max_tokens)

    def document_complete(input_ids: InputIds, _logits: Scores) -> bool:
        processor.check_sampled(input_ids)
        processor.follow(input_ids)
        return processor.is_finished()

    return LogitsProcessorList([processor]), StoppingCriteriaList([document_complete])
