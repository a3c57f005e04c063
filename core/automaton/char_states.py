"""The byte edges of a string automaton's characters as JSON writes them: each character's
UTF-8 bytes (those after the first are a Tail state of the NFA), or after a backslash its
escape, a short letter or `u` with four hex digits. Mixed into the NFA, whose naming it calls."""

from __future__ import annotations

from collections.abc import Callable

from .escapes import BytePosition, escape_lengths
from .pending import Escaped, Helper, Hex, unescaped_first_bytes
from .regex import Machine, Node

Edge = tuple[int, int, int]  # low byte, high byte, target state (as the NFA's)


class CharacterStates:
    """The NFA's states reading characters and their escapes (see the module)."""

    _escaped: dict[tuple[int, int], Escaped | None]
    _hexes: dict[tuple[tuple[BytePosition, ...], ...], Hex]

    def _state(self, node: Node | Helper, next_state: int, count: int = 0, spare: int = 0, position: int = 0) -> int:
        raise NotImplementedError  # the NFA names states

    def _tail_state(self, ranges: tuple[tuple[int, int], ...], nxt: int) -> int:
        raise NotImplementedError  # the NFA names states

    def _character_edges(self, node: Machine, position: int, following_of: Callable[[int], int], edges: list[Edge]) -> None:
        """The byte edges of the machine's characters at `position`, each to `following_of` its target."""
        for low, high, target in node.edges[position]:
            following = following_of(target)
            for first_low, first_high, tail in unescaped_first_bytes(low, high):
                edges.append((first_low, first_high, self._tail_state(tail, following)))
            escaped = self._escaped_of(low, high)
            if escaped is not None:  # the backslash, then what follows it, named for when a walk reads one
                edges.append((0x5C, 0x5C, self._state(escaped, following, position=1)))

    def _escaped_of(self, low: int, high: int) -> Escaped | None:
        """What names the escapes of the characters in [low, high] (None: none has one), with
        their lengths; one per range, so states naming it share the memo."""
        key = (low, high)
        if key not in self._escaped:
            lengths = escape_lengths(low, high)
            self._escaped[key] = None if lengths is None else Escaped(low, high, *lengths)
        return self._escaped[key]

    def _after_backslash(self, escaped: Escaped, nxt: int) -> list[Edge]:
        """The escapes of the characters `escaped` stands for after the backslash, as a trie: a
        short letter where one exists, and `u` with four hex digits (either case; a surrogate
        pair beyond U+FFFF) for the characters JSON must escape and those from U+007F up."""
        after: list[Edge] = [(letter, letter, nxt) for letter in escaped.letters]
        if escaped.hex_sequences:
            after.append((0x75, 0x75, self._hex_state(escaped.hex_sequences, nxt)))
        return after

    def _hex_state(self, sequences: tuple[tuple[BytePosition, ...], ...], nxt: int) -> int:
        """The state matching any of `sequences` (byte positions) then going on to `nxt`,
        named now and built when a walk reads it (see Hex). No sequence is empty."""
        hexes = self._hexes.get(sequences)
        if hexes is None:
            lengths = [len(sequence) for sequence in sequences]
            hexes = self._hexes[sequences] = Hex(sequences, min(lengths), max(lengths))
        return self._state(hexes, nxt)

    def _hex_edges(self, node: Hex, nxt: int, edges: list[Edge]) -> None:
        """The first byte of each of `node`'s sequences, the sequences sharing a first position
        going on together."""
        for position, going, ends in node.branches:
            targets = [self._hex_state(going, nxt)] if going else []
            if ends:
                targets.append(nxt)
            edges.extend((low, high, target) for target in targets for low, high in position)
