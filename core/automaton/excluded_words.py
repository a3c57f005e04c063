"""The machine of every string but some words (the names an object declares, for the names
of its undeclared members; the values `not` lists): a trie of the words, leaving which leads
to a state taking anything. Kept on it, the trie itself: where each word ends, and the words
below each of its positions, which the key read as one (core.automaton.keys) asks of it."""

from __future__ import annotations

from dataclasses import dataclass

from .free_text import keep_every_position_free
from .measure import fewest_character_bytes, keep_distances_near_acceptance
from .regex import Machine

ANY_CHAR: tuple[tuple[int, int], ...] = ((0x0, 0xD7FF), (0xE000, 0x10FFFF))
Edge = tuple[int, int, int]
_TRIE = "excluded_words_trie"


@dataclass(frozen=True)
class Trie:
    """The trie an excluding machine was made of: the position each word ends at, and by
    position (the sink's last), each word end below it (itself too) with the fewest bytes JSON
    writes from the position to there."""

    ends: dict[str, int]
    below: tuple[tuple[tuple[int, int], ...], ...]


def excluding_machine(words: list[str]) -> Machine:
    """Every string except `words`: a trie of the words, where leaving the trie leads to a
    state accepting anything, and only the trie nodes ending a word are not accepting."""
    children: list[dict[int, int]] = [{}]
    ends: dict[str, int] = {}
    for word in words:
        node = 0
        for char in map(ord, word):
            if char not in children[node]:
                children[node][char] = len(children)
                children.append({})
            node = children[node][char]
        ends[word] = node
    sink = len(children)
    everything: tuple[Edge, ...] = tuple((low, high, sink) for low, high in ANY_CHAR)  # a leaf's row, and the sink's
    rows: list[tuple[Edge, ...]] = []
    for node_children in children:
        if not node_children:
            rows.append(everything)
            continue
        if len(node_children) == 1:  # most nodes of a trie of names: one range cut at one character
            ((character, target),) = node_children.items()
            if not 0xD800 <= character <= 0xDFFF:  # (a lone surrogate lies outside ANY_CHAR)
                rows.append(_cut_at(character, target, sink))
                continue
        row: list[Edge] = [(c, c, target) for c, target in node_children.items()]
        row += [(low, high, sink) for low, high in _without_points(ANY_CHAR, sorted(node_children))]
        rows.append(tuple(sorted(row)))
    rows.append(everything)
    # Already trimmed as it is built: every state is reached from the start and leads to the
    # sink, which accepts; no two edges of a row touch with one target (the sink's ranges lie
    # between the children's characters), so sorting is all trimming would do to a row.
    ended = set(ends.values())
    machine = Machine(tuple(rows), 0, frozenset(range(sink + 1)) - ended)
    # Each row covers every character, and every state leads to the sink: any text goes on from
    # every position, and the words' ends are a character from acceptance. Kept now: the name of
    # an undeclared member is one of these for each object, made when a walk first reaches it.
    keep_every_position_free(machine)
    keep_distances_near_acceptance(machine, ended)
    machine.__dict__[_TRIE] = Trie(ends, (*_words_below(children, ended), ()))  # the sink: no word below
    return machine


def trie_of(machine: Machine) -> Trie | None:
    """The trie `machine` was made of where excluding_machine made it, else None."""
    found: Trie | None = machine.__dict__.get(_TRIE)
    return found


def _words_below(children: list[dict[int, int]], ended: set[int]) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Trie.below, from the last node to the first: a node's children come after it, so each
    is done before its parent, whose list is its own end and theirs one character further."""
    below: list[tuple[tuple[int, int], ...]] = [()] * len(children)
    for node in range(len(children) - 1, -1, -1):
        found = [(node, 0)] if node in ended else []
        for character, target in children[node].items():
            step = fewest_character_bytes(character, character) or 0
            found.extend((end, spent + step) for end, spent in below[target])
        below[node] = tuple(found)
    return tuple(below)


def _cut_at(character: int, target: int, sink: int) -> tuple[Edge, ...]:
    """ANY_CHAR to `sink`, but `character` (one of it) to `target`, in order."""
    row: list[Edge] = []
    for low, high in ANY_CHAR:
        if low <= character <= high:
            if low < character:
                row.append((low, character - 1, sink))
            row.append((character, character, target))
            if character < high:
                row.append((character + 1, high, sink))
        else:
            row.append((low, high, sink))
    return tuple(row)


def _without_points(ranges: tuple[tuple[int, int], ...], points: list[int]) -> list[tuple[int, int]]:
    """`ranges` minus the sorted code points `points`."""
    out: list[tuple[int, int]] = []
    for low, high in ranges:
        for point in points:
            if low <= point <= high:
                if low < point:
                    out.append((low, point - 1))
                low = point + 1
        if low <= high:
            out.append((low, high))
    return out
