"""The overlapping edges of two rows of character automata, as intersect (core.automaton.charnfa)
pairs them: each edge of the first row with each of the second that shares a character, first's
edge by first's edge."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator

from .regex import Machine

Edge = tuple[int, int, int]  # low code point, high code point, target state (as a Machine's)


class RowIndex:
    """For each row of a machine, read on first need: its ranges' lows and the highest high up
    to each range, so that the ranges an edge may overlap are found by two searches, not by
    trying each (a format's rows hold dozens of ranges, a pattern's edge meets a few). A row
    whose lows are not in order has none, and is tried edge by edge."""

    def __init__(self, machine: Machine) -> None:
        self.edges = machine.edges
        self.rows: dict[int, tuple[list[int], list[int]] | None] = {}

    def overlaps(self, first: tuple[Edge, ...], state: int) -> Iterator[tuple[int, int, int, int]]:
        """The overlaps of each edge of `first` with each edge of the indexed machine's row
        `state`, with both targets, first's edge by first's edge (as all_pairs)."""
        second = self.edges[state]
        if state not in self.rows:
            lows = [low for low, _, _ in second]
            ordered = all(earlier <= later for earlier, later in itertools.pairwise(lows))
            self.rows[state] = (lows, list(itertools.accumulate((high for _, high, _ in second), max))) if ordered else None
        found = self.rows[state]
        if found is None:
            yield from all_pairs(first, second)
            return
        lows, highest = found
        for low_a, high_a, target_a in first:
            for low_b, high_b, target_b in second[bisect.bisect_left(highest, low_a) : bisect.bisect_right(lows, high_a)]:
                if high_b >= low_a:
                    yield max(low_a, low_b), min(high_a, high_b), target_a, target_b


def row_index(machine: Machine) -> RowIndex:
    """The machine's RowIndex, kept on it (a format's meets pattern after pattern)."""
    found: RowIndex | None = machine.__dict__.get(_INDEX)
    if found is None:
        found = machine.__dict__[_INDEX] = RowIndex(machine)
    return found


_INDEX = "_row_index"


def all_pairs(first: tuple[Edge, ...], second: tuple[Edge, ...]) -> Iterator[tuple[int, int, int, int]]:
    """The overlaps of every edge of `first` with every edge of `second`, first's edge by first's edge."""
    for low_a, high_a, target_a in first:
        for low_b, high_b, target_b in second:
            low, high = max(low_a, low_b), min(high_a, high_b)
            if low <= high:
                yield low, high, target_a, target_b
