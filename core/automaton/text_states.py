"""What the lazy NFA (core.automaton.nfa) tells of its states inside strings and literals
without expanding them: the characters a string body of free text still requires and allows,
the labels of values and strings, a literal's bytes from a state on, and where a token of plain
text leads from a state, its states between never named. Mixed into the NFA, whose tables and
naming it reads.
"""

from __future__ import annotations

from .free_text import free_positions, takes_every_character
from .keys import Keys
from .pending import COPIES, NEXT, NODE, POSITION, SPARE, Helper, Pending
from .regex import Lit, Machine, Mark, Node, Repeat, Seq, Text, TextLabel, ValueLabel, leading_literal

# A walk of text over a string automaton gives up past this many positions at once (a
# machine of overlapping edges; the DFA's states, kept, serve it better).
_MOST_POSITIONS = 8


class TextStates:
    """The NFA's queries of string and literal states (see the module's docstring)."""

    _pending: list[Pending | None]
    _nodes: list[Node | Helper]
    _text_runs: dict[int, tuple[int, int] | None]
    distance: list[int]

    def _state(self, node: Node | Helper, next_state: int, count: int = 0, spare: int = 0, position: int = 0) -> int:
        raise NotImplementedError  # the NFA names states

    def _named_repeat(self, node: Repeat, next_state: int, count: int, spare: int) -> int:
        raise NotImplementedError  # the NFA names states

    def after_parts(self, node: Seq, first: int, next_state: int) -> int:
        raise NotImplementedError  # the NFA names states

    def text_run(self, state: int) -> tuple[int, int] | None:
        """For a state inside the body of a JSON string whose characters are free (a Text, then
        the closing quote): the characters still required and the further ones allowed (-1: any
        number). Every text character leads from here to `after_text(state, 1)`, and nothing
        else the string holds is text. None for any other state."""
        if state not in self._text_runs:
            self._text_runs[state] = self._find_text_run(state)
        return self._text_runs[state]

    def text_reach(self, state: int) -> int | None:
        """How many text characters (those a JSON string holds unescaped) `state` surely takes:
        every string of up to that many begins a match from here (-1: of any length), and no
        longer one does unless it is -1. None where that is not known: a state neither inside a
        text run (its characters still allowed) nor at a free position of a string automaton
        (any length, see core.automaton.free_text)."""
        run = self.text_run(state)
        if run is not None:
            count, spare = run
            return -1 if spare < 0 else count + spare
        pending = self._pending[state]
        if pending is None:
            return None
        node = self._nodes[pending[NODE]]
        if isinstance(node, Machine) and pending[POSITION] in free_positions(node):
            return -1
        if isinstance(node, Keys) and pending[POSITION] in free_positions(node.machine):
            return -1  # inside a key read as one
        return None

    def escapes_taken(self, state: int) -> str | None:
        """Where every escape goes on from `state` as from any other of its kind, which kind:
        "text" inside a string body of free text without a most (STRING_CHAR's escapes, every
        character's), "pattern" at a position of a string automaton that takes every character
        from every position, then the closing quote (the escapes the byte layer writes, see
        NFA._machine_state); None elsewhere. From a state of either, a token of text and escapes
        that does not close the string is taken exactly where it is taken from any other."""
        run = self.text_run(state)
        if run is not None:
            return "text" if run[1] < 0 else None
        pending = self._pending[state]
        if pending is None:
            return None
        node = self._nodes[pending[NODE]]
        if isinstance(node, Machine) and takes_every_character(node) and self._closes_string(pending[NEXT]):
            return "pattern"
        if isinstance(node, Keys) and takes_every_character(node.machine):
            return "pattern"  # every name's end reads the closing quote first
        return None

    def text_label(self, state: int) -> TextLabel | None:
        """The label of the plain string value whose body text-run `state` lies in (None for
        other states and unlabelled strings)."""
        if self.text_run(state) is None:
            return None
        pending = self._pending[state]
        assert pending is not None
        node = self._nodes[pending[NODE]]
        assert isinstance(node, Text)
        return node.label

    def value_label(self, state: int) -> ValueLabel | None:
        """The label of the date or number value that begins at `state` (see Mark), if any."""
        pending = self._pending[state]
        node = None if pending is None else self._nodes[pending[NODE]]
        return node.label if isinstance(node, Mark) else None

    def starts_text(self, state: int) -> bool:
        """Whether text-run `state` is the start of its string's body (no character yet)."""
        pending = self._pending[state]
        return self.text_run(state) is not None and pending is not None and pending[POSITION] == 0

    def _find_text_run(self, state: int) -> tuple[int, int] | None:
        pending = self._pending[state]
        if pending is None:
            return None
        node = self._nodes[pending[NODE]]
        if not isinstance(node, Text):
            return None
        # Text never closes the string, so no text continues past the body: where something
        # other than the closing quote followed, it could, and there is no run.
        if not self._closes_string(pending[NEXT]):
            return None
        if pending[POSITION] == 0:
            return node.low, -1 if node.high is None else node.high - node.low
        return pending[COPIES], pending[SPARE]

    def text_end(self, state: int) -> int:
        """The state after the body text-run `state` lies in: where its closing quote is read."""
        pending = self._pending[state]
        assert self.text_run(state) is not None and pending is not None
        return pending[NEXT]

    def after_text(self, state: int, most: int) -> list[int]:
        """The states 0, 1, ..., `most` text characters after text-run `state` (`most` at most
        as many as it allows)."""
        run = self.text_run(state)
        pending = self._pending[state]
        assert run is not None and pending is not None
        node, nxt = self._nodes[pending[NODE]], pending[NEXT]
        assert isinstance(node, Text)
        count, spare = run
        assert spare < 0 or most <= count + spare, "more characters than the string allows"
        states = [state]
        for characters in range(1, most + 1):
            over = max(characters - count, 0)
            states.append(self._named_repeat(node, nxt, max(count - characters, 0), spare if spare < 0 else spare - over))
        return states

    def after_plain_text(self, state: int, data: bytes, text: str) -> tuple[int, ...] | None:
        """The states `state` leads to after `data`, the UTF-8 of `text`, every character of
        which a JSON string holds unescaped, where its node tells them without naming the
        states between: inside a literal (the bytes compared), inside a string body of free
        text (the characters counted), at a position of a string automaton followed by the
        closing quote (the characters walked over its code point edges). Empty where `data`
        is not allowed; None where this does not tell (the literal ends before `data` does,
        or another node). A token of text inside a string then costs no state per byte."""
        pending = self._pending[state]
        if pending is None:
            return None
        node, position, nxt = self._nodes[pending[NODE]], pending[POSITION], pending[NEXT]
        if isinstance(node, Lit | Seq):
            opening = node if isinstance(node, Lit) else leading_literal(node)
            if opening is None:
                return None
            if not opening.data:  # an empty literal (a value's label): what follows it tells
                return self.after_plain_text(nxt, data, text)
            rest = opening.data[position:]
            if len(rest) < len(data):
                return None if data.startswith(rest) else ()
            if not rest.startswith(data):
                return ()
            if len(rest) > len(data):
                return (self._state(node, nxt, position=position + len(data)),)
            return (nxt if isinstance(node, Lit) else self.after_parts(node, 1, nxt),)
        if isinstance(node, Text):
            run = self.text_run(state)
            if run is None:
                return None
            count, spare = run
            characters = len(text)
            if 0 <= spare < characters - count:
                return ()
            over = max(characters - count, 0)
            return (self._named_repeat(node, nxt, max(count - characters, 0), spare if spare < 0 else spare - over),)
        if isinstance(node, Machine) and self._closes_string(nxt):  # no text goes past the string
            positions = self._positions_after(node, {position}, text)
            return positions if positions is None else tuple(self._state(node, nxt, position=at) for at in positions)
        if isinstance(node, Keys):  # a key read as one: its names end at a closing quote
            positions = self._positions_after(node.machine, {position}, text)
            if positions is None:
                return None
            return tuple(self._state(node, nxt, count=pending[COPIES], position=at) for at in positions)
        return None

    @staticmethod
    def _positions_after(node: Machine, positions: set[int], text: str) -> set[int] | None:
        """The machine's positions after the characters of `text` from `positions` (empty: it
        does not take them; None: it guesses too widely to follow, the DFA's cells serve)."""
        for character in map(ord, text):
            positions = {target for at in positions for low, high, target in node.edges[at] if low <= character <= high}
            if not positions:
                return positions
            if len(positions) > _MOST_POSITIONS:
                return None
        return positions

    def _closes_string(self, state: int) -> bool:
        """Whether `state` reads the closing quote of a string (and nothing else) first."""
        pending = self._pending[state]
        quote = None if pending is None else self._nodes[pending[NODE]]
        return isinstance(quote, Lit) and pending is not None and quote.data[pending[POSITION] : pending[POSITION] + 1] == b'"'

    def literal_rest(self, state: int) -> bytes | None:
        """For a live state inside a literal (a property name, `", "`), or opening a sequence
        with one: the literal's bytes from there on, read without naming any state; None for
        any other state. A walk down the vocabulary along a literal needs nothing more until
        a token goes past its end (see after_literal)."""
        pending = self._pending[state]
        if pending is None or self.distance[state] < 0:
            return None
        node = self._nodes[pending[NODE]]
        if isinstance(node, Seq):
            opening = leading_literal(node)
            return None if opening is None else opening.data[pending[POSITION] :]
        if not isinstance(node, Lit) or not node.data:
            return None
        return node.data[pending[POSITION] :]

    def after_literal(self, state: int) -> int:
        """The state after the bytes `literal_rest(state)` tells (named now: of the many keys an
        object may take next, a walk goes past the end of few)."""
        pending = self._pending[state]
        assert pending is not None
        node = self._nodes[pending[NODE]]
        if isinstance(node, Seq):
            return self.after_parts(node, 1, pending[NEXT])
        return pending[NEXT]
