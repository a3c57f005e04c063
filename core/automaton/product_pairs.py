"""The pairs of intersect's product of two character machines (core/automaton/charnfa.py):
numbered in the order met, breadth first from the pair of starts, each edge of the first
machine's row met with each edge of the second's that shares a character, the first's edge by
the first's edge. Where an edge leads into an open end (its machine accepts every string from
there on), the product goes on as the other machine alone: a block of numbers holds that
machine's states, given on first need, whose rows charnfa fills in.

Walked in C where setup.py built core/automaton/_product.c (a uri's machine of thousands of
states met by a pattern makes thousands of pairs of a few edges each), else here in Python: the
same pairs in the same order, the same rows.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable, Sequence

from .overlaps import row_index
from .regex import Machine

try:  # compiled at install where a C compiler is found (setup.py); else the same work in Python
    from . import _product
except ImportError:  # pragma: no cover - an install without a compiler
    _product = None  # type: ignore[assignment]

Edge = tuple[int, int, int]  # low code point, high code point, target state
COPIED = -1  # a pair's two states where the product's state is a copied machine's (no pair)
Pairs = tuple[list[list[Edge]], list[tuple[int, int]], dict[int, int]]
OpenEnds = tuple[frozenset[int], frozenset[int]]  # each machine's open ends


def product_pairs(first: Machine, second: Machine, open_ends: OpenEnds, state_limit: int) -> Pairs | None:
    """The product's rows by number (a copied state's empty), its pairs ((COPIED, COPIED) for a
    copied state), and where each copied machine's block begins, by side (0: first); None past
    `state_limit` states."""
    if _product is not None:
        found: Pairs | None = _product.product_pairs(
            first.edges, first.start, second.edges, second.start, *open_ends, state_limit
        )
        return found
    return _pairs(first, second, open_ends, state_limit)


def _pairs(first: Machine, second: Machine, open_ends: OpenEnds, state_limit: int) -> Pairs | None:
    machines = (first, second)
    bases: dict[int, int] = {}
    ids = {(first.start, second.start): 0}
    pairs = [(first.start, second.start)]
    edges: list[list[Edge]] = []
    queue = deque([0])
    index = row_index(second)
    while queue:
        pair_id = queue.popleft()
        left, right = pairs[pair_id]
        row: list[Edge] = []
        for low, high, target_a, target_b in index.overlaps(first.edges[left], right):
            if target_b in open_ends[1] or target_a in open_ends[0]:
                side = 0 if target_b in open_ends[1] else 1
                base = bases.get(side)
                if base is None:  # the copy's block, on first need
                    base = bases[side] = len(pairs)
                    pairs.extend((COPIED, COPIED) for _ in machines[side].edges)
                    if len(pairs) > state_limit:
                        return None
                row.append((low, high, base + (target_a if side == 0 else target_b)))
                continue
            key = (target_a, target_b)
            target = ids.get(key)
            if target is None:
                if len(pairs) >= state_limit:
                    return None
                target = ids[key] = len(pairs)
                pairs.append(key)
                queue.append(target)
            row.append((low, high, target))
        edges.extend([] for _ in range(pair_id + 1 - len(edges)))
        edges[pair_id] = row
    edges.extend([] for _ in range(len(pairs) - len(edges)))
    return edges, pairs, bases


def finished_pairs(
    edges: list[list[Edge]], accepts: set[int], base: int, size: int
) -> tuple[tuple[tuple[Edge, ...], ...], int, list[int]] | None:
    """After a copy (the product's states `base` to `base + size`, each able to finish), the
    pairs that can finish: their rows, renumbered after the copy's `size` states (the copy keeps
    its machine's own numbers), sorted and joined (merged_row); the start's number; the numbers
    of the accepting pairs. None where the start cannot finish."""
    if _product is not None:
        found: tuple[tuple[tuple[Edge, ...], ...], int, list[int]] | None = _product.finished_pairs(edges, accepts, base, size)
        return found
    inside = range(base, base + size)
    pairs = [state for state in range(len(edges)) if state not in inside]
    entering = [state for state in pairs if any(target in inside for _, _, target in edges[state])]
    # The copy can finish from wherever it is entered.
    found_states = able_to_reach(edges, pairs, [state for state in accepts if state not in inside] + entering)
    if 0 not in found_states:
        return None
    kept = sorted(found_states)
    number = {state: size + index for index, state in enumerate(kept)}
    number.update(zip(inside, range(size), strict=True))
    rows = tuple(
        tuple(merged_row((low, high, number[target]) for low, high, target in edges[state] if target in number)) for state in kept
    )
    return rows, number[0], sorted(number[state] for state in accepts if state in found_states)


def able_to_reach(edges: Sequence[Sequence[Edge]], states: Iterable[int], goals: Iterable[int]) -> set[int]:
    """The states among `states` (and the `goals` themselves) from which some goal is reached,
    on the reversed edges of `states`."""
    reverse: dict[int, list[int]] = {}
    for state in states:
        for target in {target for _, _, target in edges[state]}:  # a state's edges share few targets
            reverse.setdefault(target, []).append(state)
    found = set(goals)
    stack = list(found)
    while stack:
        for source in reverse.get(stack.pop(), ()):
            if source not in found:
                found.add(source)
                stack.append(source)
    return found


def merged_row(edges: Iterable[Edge]) -> list[Edge]:
    """Edges sorted, duplicates dropped and adjacent ranges to one target joined."""
    ordered = sorted(edges)
    for previous, edge in itertools.pairwise(ordered):  # most rows have nothing to join: looked for first
        if edge[2] == previous[2] and previous[1] + 1 >= edge[0]:
            break
    else:
        return ordered
    out = [ordered[0]]
    first, last, joined = ordered[0]
    for edge in ordered:  # sorted: an edge never starts before the one it may join
        low, high, target = edge
        if target == joined and last + 1 >= low:  # (a duplicate too)
            last = max(last, high)
            out[-1] = (first, last, target)
        else:
            out.append(edge)
            first, last, joined = edge
    return out
