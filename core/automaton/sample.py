"""Random accepted strings: the soundness oracle's input and `extract check`'s example."""

from __future__ import annotations

import random

import numpy as np

from .dfa import LazyDFA


def sample_accepted(dfa: LazyDFA, rng: random.Random, soft_limit: int = 400) -> bytes:
    """A random byte string `dfa` accepts.

    Bytes are drawn at random (stopping at acceptance one time in five) until `soft_limit`
    bytes are written; from then on the walk takes a byte that gets closest to acceptance,
    so it always ends. Raises ValueError if the automaton accepts nothing."""
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
            byte = int(allowed[rng.randrange(len(allowed))])
        out.append(byte)
        state = int(row[byte])
