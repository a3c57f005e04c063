"""Character automata built by the shortcuts of core/automaton/charnfa.py are the machines the
general construction builds: a length bound intersected by counting, and the automaton of every
name but a few."""

from __future__ import annotations

import itertools
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
from gguf_extract.core.automaton.free_text import free_positions
from gguf_extract.core.automaton.measure import ShortestMatch
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


@pytest.mark.parametrize(
    "words",
    [
        ["", "ab", "a", "\u00e9t\u00e9", "a\U0001f600"],
        ["name", "names", "id", 'say "hi"', "back\\slash", "tab\t"],
        # every character of one byte after "x" a word's: the end of "x" is two bytes (an escaped
        # quote) from acceptance, and the distances are searched for
        ["x"] + ["x" + chr(code) for code in range(0x20, 0x80) if chr(code) not in '"\\'],
    ],
)
def test_what_the_excluding_machine_keeps_is_what_would_be_worked_out(words: list[str]) -> None:
    """Its distances and free positions, kept as it is built, are those the general searches
    find on the same edges."""
    machine = excluding_machine(words)
    plain = Machine(machine.edges, machine.start, machine.accepts)  # nothing kept on it
    assert ShortestMatch.machine(machine) == ShortestMatch.machine(plain)
    assert free_positions(machine) == free_positions(plain)


def test_excluding_machine_rows_cover_every_character_once_at_the_edges_of_its_ranges() -> None:
    """Each row, a node's one child or many, takes every character of ANY_CHAR (and a child's,
    a lone surrogate too) exactly once, in order: the characters at the ends of the ranges cut
    where a child's character lies."""
    words = ["\x00", "\x00a", "\ud7ff", "\ue000", "\U0010ffff", "\ud800", "ab", "ac", "b"]
    machine = excluding_machine(words)
    for row in machine.edges:
        assert all(earlier[1] < later[0] for earlier, later in itertools.pairwise(row))
        covered = sum(high - low + 1 for low, high, _ in row)
        children = sum(1 for low, high, _ in row if low == high and 0xD800 <= low <= 0xDFFF)
        assert covered == 0xD800 + (0x10FFFF - 0xE000 + 1) + children
    rng = random.Random(7)
    alphabet = ["\x00", "a", "b", "c", "\ud7ff", "\ue000", "\U0010ffff"]  # (no other text holds a lone surrogate)
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 3)))
        assert _matches(machine, text) == (text not in words)
    assert not _matches(machine, "\ud800")
