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
    """For each row of a machine whose rows are sorted, its ranges' lows and the
    highest high up to each range: the ranges an edge may overlap are found by two searches, not
    by trying each (a format's rows hold dozens of ranges, a pattern's edge meets a few)."""

    def __init__(self, machine: Machine) -> None:
        self.edges = machine.edges
        self.rows: dict[int, tuple[list[int], list[int]]] = {}

    def overlaps(self, first: tuple[Edge, ...], state: int) -> Iterator[tuple[int, int, int, int]]:
        """The overlaps of each edge of `first` with each edge of the indexed machine's row
        `state`, with both targets, first's edge by first's edge (as trying every pair)."""
        second = self.edges[state]
        found = self.rows.get(state)
        if found is None:
            running = itertools.accumulate((high for _, high, _ in second), max)
            found = self.rows[state] = ([low for low, _, _ in second], list(running))
        lows, highest = found
        for low_a, high_a, target_a in first:
            for low_b, high_b, target_b in second[bisect.bisect_left(highest, low_a) : bisect.bisect_right(lows, high_a)]:
                if high_b >= low_a:
                    yield max(low_a, low_b), min(high_a, high_b), target_a, target_b


def row_index(machine: Machine) -> RowIndex | None:
    """The machine's RowIndex, kept on it (a format's meets pattern after pattern); None where
    a row is not sorted."""
    kept = machine.__dict__
    if _INDEX not in kept:
        ordered = all(all(earlier <= later for earlier, later in itertools.pairwise(row)) for row in machine.edges)
        kept[_INDEX] = RowIndex(machine) if ordered else None
    found: RowIndex | None = kept[_INDEX]
    return found


_INDEX = "_row_index"


def all_pairs(first: tuple[Edge, ...], second: tuple[Edge, ...]) -> Iterator[tuple[int, int, int, int]]:
    """The overlaps of every edge of `first` with every edge of `second`, first's edge by first's edge."""
    for low_a, high_a, target_a in first:
        for low_b, high_b, target_b in second:
            low, high = max(low_a, low_b), min(high_a, high_b)
            if low <= high:
                yield low, high, target_a, target_b
