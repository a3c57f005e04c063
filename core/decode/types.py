"""The decoder's public types: what it needs from a model, the settings it decodes with and the
statistics it keeps (core.decode.decoder runs the decoding)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ..defaults import DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE, DEFAULT_TOP_P

Logits = npt.NDArray[np.float32]


class Tokenizer(Protocol):
    """What a decoding needs of the model's vocabulary: forced text is tokenized as the model would."""

    def tokenize(self, text: bytes, add_bos: bool = False, special: bool = False) -> list[int]: ...


@runtime_checkable
class TokenModel(Tokenizer, Protocol):
    """A model one decoding is driven on alone (core.decode.requests.drive); core.model.GGUFModel
    implements it."""

    def eval(self, tokens: list[int]) -> None: ...

    def last_logits(self) -> npt.NDArray[np.float32]: ...

    def eval_with_logits(self, tokens: list[int], rows: list[int]) -> npt.NDArray[np.float32]:
        """Evaluate `tokens` in one batch; returns the logits after tokens[i] for each i in
        `rows` (increasing), one row each."""
        ...

    def discard(self, count: int) -> None:
        """Forget the last `count` evaluated tokens."""
        ...


@dataclass(frozen=True)
class SamplingSettings:
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = DEFAULT_TEMPERATURE
    top_p: float = DEFAULT_TOP_P
    seed: int | None = None
    draft_tokens: int = 8  # guessed tokens evaluated with each chosen one; 0 turns speculation off
    stop_repeats: bool = True  # no string tail looping, no array item copying an earlier one (core.decode.repetition)

    def __post_init__(self) -> None:
        """Raises ValueError for a setting out of its range, here rather than deep in a run: a
        NaN temperature fails every comparison, so it would pass for greedy in one place and for
        sampling in another; an infinite one samples every allowed token alike; numpy refuses a
        negative seed only once sampling starts."""
        if not math.isfinite(self.temperature) or self.temperature < 0:
            raise ValueError(f"temperature is {self.temperature}: give 0 (greedy) or a positive number")
        if math.isnan(self.top_p) or not 0 <= self.top_p <= 1:
            raise ValueError(f"top_p is {self.top_p}: give a number from 0 to 1 (1: no nucleus cut)")
        if self.seed is not None and self.seed < 0:
            raise ValueError(f"seed is {self.seed}: give a number of 0 or more, or None")
        if self.max_tokens < 1 or self.draft_tokens < 0:
            raise ValueError(f"max_tokens is {self.max_tokens} and draft_tokens {self.draft_tokens}: give at least 1 and 0")


@dataclass
class DecodeStats:
    output_tokens: int = 0
    sampled_tokens: int = 0
    forced_tokens: int = 0
    model_calls: int = 0
    drafted_tokens: int = 0
    accepted_draft_tokens: int = 0
    discarded_tokens: int = 0  # evaluated for a rejected guess, then dropped from the context
    loops_stopped: int = 0  # choices where a token that made a string loop was ruled out
    repeats_stopped: int = 0  # arrays closed where the next item would have copied an earlier one
    runaways_closed: int = 0  # strings closed where their tail near-repeated (core.decode.repetition)
    preview_tokens: int = 0  # evaluated to preview an array's next item, then dropped
    generate_seconds: float = 0.0
