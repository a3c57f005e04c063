"""Choosing one token from the model's scores for the allowed ones, and the model's own
probability for a token (core.results.evidence multiplies those of the tokens
overlapping a value into its confidence)."""

from __future__ import annotations

import math

import numpy as np

from .types import Logits


def sample(logits: Logits, temperature: float, top_p: float, rng: np.random.Generator) -> int:
    """The index of the chosen score in `logits`: the highest at temperature 0, else drawn with
    `rng` from the softmax at `temperature`, kept to the smallest set of most likely choices
    whose probabilities reach `top_p` when it is below 1 (nucleus sampling). A temperature so
    small that the highest score divided by it leaves the float range (1e-320: a score of 10
    becomes inf, and the softmax NaN) is taken at its limit, the highest score, as at 0."""
    if temperature <= 0:
        return int(np.argmax(logits))
    with np.errstate(over="ignore"):  # an overflow is met below, not a warning for stderr
        scaled = logits.astype(np.float64) / temperature
    top = scaled.max()
    if not np.isfinite(top):  # as the temperature falls to 0 the softmax tends to the argmax
        return int(np.argmax(logits))
    with np.errstate(over="ignore"):  # a score far below the highest becomes -inf: its chance is 0
        probs = np.exp(scaled - top)
    probs /= probs.sum()
    if top_p < 1.0:
        order = np.argsort(-probs)
        cumulative = np.cumsum(probs[order])
        cut = int(np.searchsorted(cumulative, top_p)) + 1
        kept = order[:cut]
        return int(kept[rng.choice(len(kept), p=probs[kept] / probs[kept].sum())])
    return int(rng.choice(len(probs), p=probs))


def probability(logits: Logits, token: int) -> float:
    """The model's own probability for `token`: softmax at temperature 1 over the whole
    vocabulary, before any mask."""
    return share(logits, token)


def share(scores: Logits, index: int) -> float:
    """The probability of `scores[index]` in the softmax (temperature 1) of `scores` alone:
    the model's choice among the allowed tokens only. The exponentials are float32 (a tenth of
    the time of float64 over a whole vocabulary row, measured), summed in float64; the chosen
    one's is taken in float64, so a tiny probability does not round to 0."""
    top = float(scores.max())
    total = float(np.exp(scores - np.float32(top)).sum(dtype=np.float64))
    return math.exp(float(scores[index]) - top) / total
