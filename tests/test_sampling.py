"""Choosing a token from scores (core.decode.sampling): a temperature too small to divide by is
taken at its limit, greedily, without a warning; one that is not a number is refused."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from gguf_extract.core.decode.sampling import sample
from gguf_extract.core.decode.types import SamplingSettings


@pytest.mark.parametrize("temperature", [1e-320, 5e-324, 1e-306, 1e-300])
@pytest.mark.parametrize("top_p", [1.0, 0.5])
@pytest.mark.parametrize("scores", [[1.0, 30.5, 30.25, -4.0], [-9.0, -2.0, -3.0, -700.0], [0.0, 1e-3, 0.0, 0.0]])
def test_a_temperature_too_small_to_divide_by_chooses_the_highest_score(
    temperature: float, top_p: float, scores: list[float]
) -> None:
    """1e-320 made every positive score inf and the softmax NaN: `Probabilities contain NaN`,
    after numpy's warnings on stderr. Where the scores stay in range (1e-300 for small ones)
    the softmax is the argmax already."""
    logits = np.array(scores, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning fails the test
        chosen = {sample(logits, temperature, top_p, np.random.default_rng(seed)) for seed in range(20)}
    assert chosen == {int(np.argmax(logits))}


@pytest.mark.parametrize("temperature", [1e300, float("inf")])
def test_a_huge_temperature_samples_the_scores_alike(temperature: float) -> None:
    logits = np.array([1.0, 30.0, -4.0], dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chosen = {sample(logits, temperature, 1.0, np.random.default_rng(seed)) for seed in range(60)}
    assert chosen == {0, 1, 2}


def test_a_temperature_that_is_not_a_number_is_refused() -> None:
    with pytest.raises(ValueError, match="temperature is nan"):
        SamplingSettings(temperature=float("nan"))


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"temperature": float("inf")}, "temperature is inf"),
        ({"temperature": -1.0}, "temperature is -1.0"),
        ({"top_p": float("nan")}, "top_p is nan"),
        ({"top_p": 2.0}, "top_p is 2.0"),
        ({"seed": -1}, "seed is -1"),
        ({"max_tokens": 0}, "max_tokens is 0"),
        ({"draft_tokens": -1}, "draft_tokens -1"),
    ],
)
def test_settings_out_of_range_are_refused_when_made(settings: dict[str, float], said: str) -> None:
    with pytest.raises(ValueError, match=said):
        SamplingSettings(**settings)  # type: ignore[arg-type]
