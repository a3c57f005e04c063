"""The decoding loop: sample at branching states, jump forward over forced text.

Invariants:
- `state` is the DFA state after every token evaluated so far.
- `pending` is decided text not yet evaluated: the last token of a canonically tokenized
  forced run, held back so the model may merge it with what follows (a space before a
  value, a quote before its first characters). The next token must start with it.
- Budget: `used + 1 + distance(end)` never exceeds `max_tokens` for any allowed token,
  where distance counts bytes (an upper bound on tokens for byte-level vocabularies), so
  the document can always close inside the budget.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from .compiled import CompiledSchema
from .errors import GenerationError
from .vocab import IdArray


class TokenModel(Protocol):
    """What the decoder needs from a model; core.model.GGUFModel implements it."""

    def tokenize(self, text: bytes, add_bos: bool = False, special: bool = False) -> list[int]: ...

    def eval(self, tokens: list[int]) -> None: ...

    def last_logits(self) -> npt.NDArray[np.float32]: ...


@dataclass(frozen=True)
class SamplingSettings:
    max_tokens: int = 1024
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None


@dataclass
class DecodeStats:
    output_tokens: int = 0
    sampled_tokens: int = 0
    forced_tokens: int = 0
    model_calls: int = 0
    generate_seconds: float = 0.0


@dataclass
class _Position:
    state: int
    pending: bytes = b""
    used: int = 0


class Decoder:
    """One constrained generation. The model must hold the prompt already."""

    def __init__(self, model: TokenModel, compiled: CompiledSchema, settings: SamplingSettings) -> None:
        self.model = model
        self.compiled = compiled
        self.settings = settings
        self.stats = DecodeStats()
        self._dfa = compiled.dfa
        self._table = compiled.index.table
        self._rng = np.random.default_rng(settings.seed)
        self._eog = np.asarray(compiled.vocab.eog_ids, dtype=np.int32)

    def run(self) -> Iterator[bytes]:
        """Yield the output's bytes as they are decided."""
        started = time.perf_counter()
        try:
            yield from self._loop()
        finally:
            self.stats.generate_seconds = time.perf_counter() - started
            self.stats.forced_tokens = max(self.stats.output_tokens - self.stats.sampled_tokens, 0)

    def _loop(self) -> Iterator[bytes]:
        position = _Position(self._dfa.start)
        shortest = self._dfa.distance(position.state)
        if shortest > self.settings.max_tokens:
            raise GenerationError(
                f"the shortest document this schema allows needs up to {shortest} tokens,"
                f" more than --max-tokens {self.settings.max_tokens}",
                hint=f"raise --max-tokens to at least {shortest}",
            )
        forced = self._dfa.forced_bytes(position.state)
        if forced:
            yield forced
            if self._finish_if_final(position, position.state, forced, forced):
                return
            self._append(position, forced)
        while True:
            token, end = self._choose(position)
            if token < 0:
                self.stats.output_tokens = position.used
                return
            piece = self.compiled.vocab.pieces[token]
            forced = self._dfa.forced_bytes(end)
            yield piece[len(position.pending) :] + forced
            if self._finish_if_final(position, end, forced, piece + forced):
                return
            if forced:
                self._append(position, piece + forced)
            else:
                self._evaluate([token])
                position.state, position.pending, position.used = end, b"", position.used + 1

    def _finish_if_final(self, position: _Position, state: int, forced: bytes, tail: bytes) -> bool:
        """Stop without evaluating anything when `forced` from `state` completes the document;
        `tail` is the unevaluated output text, counted into the output tokens."""
        if not self._dfa.is_final(self._dfa.walk(state, forced)):
            return False
        self.stats.output_tokens = position.used + len(self.canonical_tokens(tail))
        return True

    def _append(self, position: _Position, text: bytes) -> None:
        """Evaluate `text` (canonically tokenized) in one call, holding back its last token."""
        tokens = self.canonical_tokens(text)
        evaluated = tokens[:-1]
        self._evaluate(evaluated)
        head = b"".join(self.compiled.vocab.pieces[t] for t in evaluated)
        position.state = self._dfa.walk(position.state, head)
        position.pending = self.compiled.vocab.pieces[tokens[-1]]
        position.used += len(evaluated)

    def _evaluate(self, tokens: list[int]) -> None:
        if tokens:
            self.model.eval(tokens)
            self.stats.model_calls += 1

    def canonical_tokens(self, text: bytes) -> list[int]:
        """The model's own tokenization of `text`, or a greedy longest-match split when the
        tokenizer does not round-trip it (e.g. a leading-space prefix is added)."""
        tokens = self.model.tokenize(text)
        pieces = self.compiled.vocab.pieces
        if tokens and b"".join(pieces[t] for t in tokens) == text:
            return tokens
        return self._greedy_tokens(text)

    def _greedy_tokens(self, text: bytes) -> list[int]:
        tokens: list[int] = []
        pieces = self.compiled.vocab.pieces
        rest = text
        while rest:
            candidates = self._table.with_prefix(rest[:1])
            best = max((int(t) for t in candidates if rest.startswith(pieces[t])), key=lambda t: len(pieces[t]))
            tokens.append(best)
            rest = rest[len(pieces[best]) :]
        return tokens

    def _choose(self, position: _Position) -> tuple[int, int]:
        """The next token id and the state it leads to, or (-1, -1) for end of generation."""
        ids, ends = self._candidates(position)
        allow_end = not position.pending and self._dfa.is_accepting(position.state)
        if len(ids) == 0:
            if allow_end:
                return -1, -1
            raise GenerationError("no allowed continuation fits in the token budget", hint="raise --max-tokens")
        if len(ids) == 1 and not allow_end:
            return int(ids[0]), int(ends[0])
        choices = np.concatenate([ids, self._eog]) if allow_end else ids
        index = self._sample(self.model.last_logits()[choices])
        self.stats.sampled_tokens += 1
        if allow_end and (index >= len(ids) or int(ids[index]) in self.compiled.vocab.eog_ids):
            return -1, -1
        return int(ids[index]), int(ends[index])

    def _candidates(self, position: _Position) -> tuple[IdArray, IdArray]:
        transitions = self.compiled.index.transitions(position.state)
        ids, ends = transitions.token_ids, transitions.end_states
        if position.pending:
            prefixed = self._table.with_prefix(position.pending)
            _, keep, _ = np.intersect1d(ids, prefixed, assume_unique=True, return_indices=True)  # any order
            ids, ends = ids[keep], ends[keep]
        fits = position.used + 1 + self._dfa.distance_array[ends] <= self.settings.max_tokens
        if not fits.all():
            ids, ends = ids[fits], ends[fits]
        return ids, ends

    def _sample(self, logits: npt.NDArray[np.float32]) -> int:
        if self.settings.temperature <= 0:
            return int(np.argmax(logits))
        scaled = logits.astype(np.float64) / self.settings.temperature
        probs = np.exp(scaled - scaled.max())
        probs /= probs.sum()
        if self.settings.top_p < 1.0:
            order = np.argsort(-probs)
            cumulative = np.cumsum(probs[order])
            cut = int(np.searchsorted(cumulative, self.settings.top_p)) + 1
            kept = order[:cut]
            return int(kept[self._rng.choice(len(kept), p=probs[kept] / probs[kept].sum())])
        return int(self._rng.choice(len(probs), p=probs))
