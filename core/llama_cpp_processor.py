"""This library's schema support inside llama-cpp-python's own high-level API.

    processors, stopping = llama_cpp_logits_processor(compiled, max_tokens=256)
    llm.create_completion(prompt, max_tokens=256, logits_processor=processors, stopping_criteria=stopping)

The logits processor keeps a Guide in step with the tokens llama-cpp-python has generated and
sets every token the schema does not allow to -inf, so its own sampler can only choose
allowed ones; the stopping criterion ends generation once the document is complete and
nothing may follow. With `max_tokens` the budget is kept as this library's decoder keeps it:
a token is allowed only if the document can still close within the budget after it.

This path asks the model at every token (llama-cpp-python samples one token per call), so it
gives the schema, not this library's speed: forced text and drafts need `Extractor`.
The lists are llama-cpp-python's shape (lists that are called), built here so that this
module needs no import of llama_cpp; use a new pair for each completion.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from .compiled import CompiledSchema, token_table
from .guide import Guide
from .held_zeros import Held, ZeroHolder

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

    Numbers follow the schema's shortest form as this library's decoder does, with the zeros
    that end a fraction held (core.held_zeros): a model writing `10.0` may then end the number
    (the automaton reads `10`), where a plain mask would force another digit (`10.01`). Those
    zeros stay in llama-cpp-python's text, which writes every token it sampled: the value is
    the same, only its form is not the shortest. For the same reason a number never ends on a
    bare point (`10.`), and a sign before zeros is not held (the decoder writes `0` for `-0.0`;
    here nothing could replace it)."""

    def __init__(self, compiled: CompiledSchema, max_tokens: int | None = None) -> None:
        self.guide = Guide(compiled)  # past every token taken, held zeros included
        self._compiled = compiled
        self._max_tokens = max_tokens
        self._prompt_length: int | None = None
        self._generated = 0
        self._zeros = ZeroHolder(token_table(compiled.vocab), compiled.vocab.size, rewrites=False)
        self._held: Held | None = None
        self._ending = False  # held zeros were dropped with a zero past the digit limit: the number ends
        self._eog = np.asarray(sorted(compiled.vocab.eog_ids), dtype=np.int32)

    def __call__(self, input_ids: InputIds, scores: Scores) -> Scores:
        self.follow(input_ids)
        allowed = self._allowed()
        masked = np.full_like(scores, -np.inf)
        masked[allowed] = scores[allowed]
        return masked

    def follow(self, input_ids: InputIds) -> None:
        """Advance past the tokens generated since the last look. The first call sees the
        prompt only: everything after it is output. Raises ValueError if a token the schema
        does not allow was generated (another processor changed the choice)."""
        if self._prompt_length is None:
            self._prompt_length = len(input_ids)
        for token in input_ids[self._prompt_length + self._generated :].tolist():
            self._take(int(token))
            self._generated += 1

    def is_finished(self) -> bool:
        return self._held is None and not self._ending and self.guide.is_finished()

    def _take(self, token: int) -> None:
        piece = self._compiled.vocab.pieces[token]
        if self._held is not None:
            self._settle(token, piece)
            return
        self._ending = False
        after = self.guide.copy()
        after.advance(token)
        before = self.guide
        held = None if self._zeros.in_string else self._zeros.hold(None, piece, after, lambda: before)
        self.guide, self._held = after, held
        if held is None:
            self._zeros.feed(piece)

    def _settle(self, token: int, piece: bytes) -> None:
        """`token` after held zeros: more zeros (still held), a digit (the zeros count), or
        the number's end (the automaton goes back to before the zeros)."""
        held = self._held
        assert held is not None
        after = self.guide.copy()
        if after.try_advance(token):
            self.guide, self._held = after, self._zeros.hold(held, piece, after, lambda: None)
            if self._held is None:
                self._zeros.feed(piece)
            return
        self._held, overflow = None, self._zeros.overflows(self.guide, token)
        self.guide = held.before.copy()
        if overflow:
            self._ending = True  # the zero goes with the others; the next token ends the number
            return
        self.guide.advance(token)
        self._zeros.feed(piece)

    def _allowed(self) -> npt.NDArray[np.intp]:
        budget = None if self._max_tokens is None else self._max_tokens - self._generated
        if self._held is not None:
            allowed = self._zeros.candidates(self._held, self.guide, budget)
        elif self._ending:
            allowed = self._zeros.ending(self.guide, budget)
        else:
            allowed = self.guide.allowed(budget)
        ids = np.union1d(allowed.ids, self._eog) if allowed.may_end else np.unique(allowed.ids)
        return ids.astype(np.intp)


def llama_cpp_logits_processor(
    compiled: CompiledSchema, max_tokens: int | None = None
) -> tuple[LogitsProcessorList, StoppingCriteriaList]:
    """`(logits_processor, stopping_criteria)` for llama-cpp-python's
    `Llama.create_completion(prompt, logits_processor=..., stopping_criteria=...)`, holding
    its output to `compiled`'s schema (and, with `max_tokens`, closing the document inside
    that many tokens: pass the same number to create_completion). One pair per completion."""
    processor = SchemaLogitsProcessor(compiled, max_tokens)

    def document_complete(input_ids: InputIds, _logits: Scores) -> bool:
        processor.follow(input_ids)
        return processor.is_finished()

    return LogitsProcessorList([processor]), StoppingCriteriaList([document_complete])
