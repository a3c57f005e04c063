"""Character automata built by the shortcuts of core/automaton/charnfa.py are the machines the
general construction builds: a length bound intersected by counting, and the automaton of every
name but a few."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from gguf_extract.core.automaton.charnfa import (
    AutomatonTooLarge,
    excluding_machine,
    intersect,
    length_machine,
    machine_from_tree,
    within_lengths,
)
from gguf_extract.core.automaton.regex import Chars, Machine, Node, Repeat, alt, lit, seq

_RANGES = [(0x61, 0x61), (0x61, 0x7A), (0x30, 0x39), (0x0, 0x10FFFF), (0xD000, 0xE100), (0x7F, 0x800), (0x10000, 0x10FFFF)]


def _tree(rng: random.Random, depth: int = 0) -> Node:
    kind = rng.randrange(5 if depth < 3 else 2)
    if kind == 0:
        return lit(rng.choice(["a", "ab", "\u00e9", "x\U0001f600", "0"]))
    if kind == 1:
        return Chars(tuple(rng.sample(_RANGES, rng.randrange(1, 4))))
    if kind == 2:
        return seq(*(_tree(rng, depth + 1) for _ in range(rng.randrange(1, 4))))
    if kind == 3:
        return alt(*(_tree(rng, depth + 1) for _ in range(rng.randrange(1, 4))))
    low = rng.randrange(0, 3)
    return Repeat(_tree(rng, depth + 1), low, rng.choice([None, low, low + rng.randrange(0, 4)]))


def _built(build: Callable[[], Machine]) -> tuple[object, ...]:
    try:
        machine = build()
    except AutomatonTooLarge as error:
        return ("too large", error.limit)
    return (machine.edges, machine.start, machine.accepts)


@pytest.mark.parametrize("seed", range(400))
def test_length_bounds_by_counting_are_the_general_product(seed: int) -> None:
    rng = random.Random(seed)
    machine = machine_from_tree(_tree(rng))
    low = rng.randrange(0, 6)
    high = rng.choice([None, low, low + rng.randrange(0, 8)])
    limit = rng.choice([40_000, 60])
    general = _built(lambda: intersect(machine, length_machine(low, high), limit))
    assert _built(lambda: within_lengths(machine, low, high, limit)) == general


def test_excluding_machine_accepts_every_other_string() -> None:
    words = ["", "ab", "a", "\u00e9t\u00e9", "a\U0001f600"]
    machine = excluding_machine(words)
    rng = random.Random(5)
    alphabet = ["a", "b", "\u00e9", "t", "\U0001f600"]
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 4)))
        assert _matches(machine, text) == (text not in words)
    for row in machine.edges:
        assert list(row) == sorted(row)


def _matches(machine: Machine, text: str) -> bool:
    states = {machine.start}
    for character in map(ord, text):
        states = {target for state in states for low, high, target in machine.edges[state] if low <= character <= high}
    return bool(states & machine.accepts)
