"""Random accepted strings: the soundness oracle's input and `extract check`'s example."""

from __future__ import annotations

import random

import numpy as np

from .dfa import LazyDFA


def sample_accepted(dfa: LazyDFA, rng: random.Random, soft_limit: int = 400, prefer: bytes = b"") -> bytes:
    """A random byte string `dfa` accepts.

    Bytes are drawn at random (stopping at acceptance one time in five) until `soft_limit`
    bytes are written; from then on the walk takes a byte that gets closest to acceptance,
    so it always ends. Where any of the bytes in `prefer` is allowed, a random one of them is
    drawn nine times in ten (text-like samples). Raises ValueError if the automaton accepts
    nothing."""
    preferred = np.frombuffer(prefer, dtype=np.uint8)
    state = dfa.start
    if dfa.distance(state) < 0:
        raise ValueError("the automaton accepts no string")
    out = bytearray()
    while True:
        row = dfa.row(state)
        allowed = np.flatnonzero(row)
        if dfa.is_accepting(state) and (len(allowed) == 0 or len(out) >= soft_limit or rng.random() < 0.2):
            return bytes(out)
        if len(out) >= soft_limit or rng.random() < 0.3:
            distances = dfa.distance_array[row[allowed]]
            byte = int(allowed[int(np.argmin(distances))])
        else:
            byte = _random_byte(row, allowed, preferred, rng)
        out.append(byte)
        state = int(row[byte])


def _random_byte(row: np.ndarray, allowed: np.ndarray, preferred: np.ndarray, rng: random.Random) -> int:
    if len(preferred) and rng.random() < 0.9:
        liked = preferred[row[preferred] != 0]
        if len(liked):
            return int(liked[rng.randrange(len(liked))])
    return int(allowed[rng.randrange(len(allowed))])
