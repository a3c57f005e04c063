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

from .compiled import CompiledSchema
from .guide import Guide, new_bitmask

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
    """Masks llama-cpp-python's logits to the tokens `compiled` allows next (see the module)."""

    def __init__(self, compiled: CompiledSchema, max_tokens: int | None = None) -> None:
        self.guide = Guide(compiled)
        self._compiled = compiled
        self._max_tokens = max_tokens
        self._prompt_length: int | None = None
        self._bitmask = new_bitmask(compiled.vocab.size)

    def __call__(self, input_ids: InputIds, scores: Scores) -> Scores:
        self.follow(input_ids)
        allowed = self._allowed()
        masked = np.full_like(scores, -np.inf)
        masked[allowed] = scores[allowed]
        return masked

    def follow(self, input_ids: InputIds) -> None:
        """Advance the guide past the tokens generated since it last looked. The first call
        sees the prompt only: everything after it is output. Raises ValueError if a token
        the schema does not allow was generated (another processor changed the choice)."""
        if self._prompt_length is None:
            self._prompt_length = len(input_ids)
        for token in input_ids[self._prompt_length + self.guide.tokens_taken :].tolist():
            self.guide.advance(int(token))

    def _allowed(self) -> npt.NDArray[np.intp]:
        if self._max_tokens is not None:
            return self.guide.allowed_token_ids(self._max_tokens - self.guide.tokens_taken).astype(np.intp)
        self.guide.fill_mask(self._bitmask)
        bits = np.unpackbits(self._bitmask.view(np.uint8), bitorder="little")[: self._compiled.vocab.size]
        return np.flatnonzero(bits)


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
        return processor.guide.is_finished()

    return LogitsProcessorList([processor]), StoppingCriteriaList([document_complete])
