"""Where a string automaton takes any text: the positions of a `Machine` from which every
string of text characters (those a JSON string holds unescaped) still begins a match.

A string searched for a pattern (`.*wpc-[0-9]+.*`), or a property name that must differ from
the declared ones, leaves its writer free: whatever text comes, more can follow and the
string can still be finished. The token index then allows every text token there without
walking one (core.index.bitmasks). A position is free when every text character has an edge
from it to a free position (a greatest fixed point, from the positions that can still reach
acceptance); the set is computed once per machine and kept on it.
"""

from __future__ import annotations

from collections.abc import Iterable

from .regex import Machine

# The characters a JSON string holds unescaped, less the surrogates no text can encode.
TEXT_CHARACTERS = ((0x20, 0x21), (0x23, 0x5B), (0x5D, 0xD7FF), (0xE000, 0x10FFFF))
# Every character a string may hold, escaped or not (no lone surrogate is a character).
EVERY_CHARACTER = ((0x0, 0xD7FF), (0xE000, 0x10FFFF))
_FREE = "_free_positions"
_EVERYWHERE = "_every_character_everywhere"


def free_positions(machine: Machine) -> frozenset[int]:
    """The positions of `machine` from which every string of text characters begins a match."""
    kept = machine.__dict__
    if _FREE not in kept:
        kept[_FREE] = _free_positions(machine)
    found: frozenset[int] = kept[_FREE]
    return found


def keep_every_position_free(machine: Machine) -> None:
    """Keep on `machine` that all its positions are free, and take every character (see
    `takes_every_character`): for a machine built so that every row covers every character and
    every position leads to acceptance (the trie of the words a name must not be, whose every
    other character goes to a state accepting anything), which the fixed point would find at a
    cost in proportion to its edges."""
    machine.__dict__[_FREE] = frozenset(range(len(machine.edges)))
    machine.__dict__[_EVERYWHERE] = True


def takes_every_character(machine: Machine) -> bool:
    """Whether every position of `machine` has an edge for every character (escaped ones too)
    and leads to acceptance: then any characters, however written, go on from any position,
    and only the closing quote tells its positions apart. Kept on the machine."""
    kept = machine.__dict__
    if _EVERYWHERE not in kept:
        every = all(_covers(row, EVERY_CHARACTER) for row in machine.edges)
        kept[_EVERYWHERE] = every and len(free_positions(machine)) == len(machine.edges)
    found: bool = kept[_EVERYWHERE]
    return found


def _free_positions(machine: Machine) -> frozenset[int]:
    before: list[set[int]] = [set() for _ in machine.edges]
    for source, row in enumerate(machine.edges):
        for _, _, target in row:
            before[target].add(source)
    free = _finishing(machine, before)
    unsure = list(free)
    while unsure:
        position = unsure.pop()
        if position in free and not _covers_text(machine, position, free):
            free.discard(position)
            unsure.extend(before[position] & free)
    return frozenset(free)


def _finishing(machine: Machine, before: list[set[int]]) -> set[int]:
    """The positions from which acceptance can be reached."""
    reached = set(machine.accepts)
    stack = list(reached)
    while stack:
        for source in before[stack.pop()]:
            if source not in reached:
                reached.add(source)
                stack.append(source)
    return reached


def _covers_text(machine: Machine, position: int, free: set[int]) -> bool:
    """Whether every text character has an edge from `position` to a position in `free`."""
    return _covers([edge for edge in machine.edges[position] if edge[2] in free], TEXT_CHARACTERS)


def _covers(row: Iterable[tuple[int, int, int]], characters: tuple[tuple[int, int], ...]) -> bool:
    """Whether the edges of `row` cover every character of `characters` (ranges)."""
    ranges = sorted((low, high) for low, high, _ in row)
    for low, high in characters:
        for first, last in ranges:
            if first > low:
                break
            low = max(low, last + 1)
        if low <= high:
            return False
    return True
