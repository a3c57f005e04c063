"""Which tokens each automaton state allows, and where each one leads.

For a state the index walks every candidate token through the lazy DFA's table, a read per
byte (core.index.mask_walks.walk_through_table: in C where it was compiled at install, else in numpy a byte
position of all tokens at a time), dropping tokens as they die. Candidates are the tokens
whose first byte the state allows, or, where only a few first bytes are, whose first two
bytes it allows. Shortcuts allow whole groups of tokens by their length without a walk:
- text runs: inside a JSON string body of free text (the NFA knows how many characters are
  still required and allowed), every token of plain text characters up to that many;
- text slices: where every text character leads to one state, and keeps doing so;
- byte-class runs: where many text bytes lead to one state and keep doing so (a pattern's
  character class, the loop of a pattern searched for anywhere in a string), every text token
  made only of them (and of non-ASCII characters, where those keep to the run too).
Only the remaining tokens (quotes, escapes, partial characters, longer ones) are walked.
A state's set is a few parts: the groups allowed by length are slices of the vocabulary's
tables, kept by reference with the chain of states they end on, so a set of most of a 262k
vocabulary costs a few hundred bytes; only walked tokens are listed one by one. Results are
cached per state; DFA rows missing during a walk are built on the spot. Where only which
tokens are allowed is asked (the Guide's bitmask), core.index.bitmasks answers with cheaper
walks that list no end state, and uses these lists only where none of those serves.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..automaton.dfa import DEAD, LazyDFA
from ..automaton.utf8 import utf8_sequences
from ..vocab.token_table import TEXT_ASCII, IdArray, TextSlice, TokenTable
from .bitmasks import StateMasks
from .mask_walks import latest_kept, walk_through_table

# States allowing at most this many first bytes are walked by their first two bytes.
_FEW_FIRST_BYTES = 8
# A byte class shortcut needs at least this many ASCII bytes leading to one state, and is
# worth laying out the class's tokens only when the candidates are this many (or a quarter of
# a small vocabulary) and as many tokens start with a byte of the class.
_CLASS_RUN_MIN = 8
_CLASS_RUN_CANDIDATES = 2048
# States listing more walked tokens than this are kept only for the latest _WIDE_SETS_KEPT ones.
_WIDE_SET = 16384
_WIDE_SETS_KEPT = 16
# Whole arrays (ids, and the fewest tokens each needs to close the document) are kept for the
# latest few states: inside a string of free text the same state comes back token after token.
_WHOLE_ARRAYS_KEPT = 4
# The ASCII text characters as a mask over bytes 0..127.
_TEXT_ASCII_MEMBERS = np.zeros(128, dtype=bool)
_TEXT_ASCII_MEMBERS[TEXT_ASCII] = True
_TEXT_ASCII_BYTES = np.flatnonzero(_TEXT_ASCII_MEMBERS)
# Byte-range sequences of the non-ASCII characters of the Basic Multilingual Plane (surrogates
# have no encoding), and of the characters beyond it.
_BMP_TEXT = utf8_sequences(0x80, 0xFFFF)
_ASTRAL_TEXT = utf8_sequences(0x10000, 0x10FFFF)


@dataclass(frozen=True)
class _TextClass:
    """The text tokens whose ASCII bytes all belong to a class, by the kind of characters they
    hold (ASCII only; with characters of the Basic Multilingual Plane; with characters beyond
    it), each ordered by length in characters, and which tokens of the vocabulary they are (for
    every text character, the masks are left empty)."""

    slices: tuple[TextSlice, TextSlice, TextSlice]
    members: tuple[npt.NDArray[np.bool_], ...]


@dataclass(frozen=True)
class Part:
    """Some of the tokens a state allows and where each leads: `targets[lengths]` for a group
    allowed by length (slices of the vocabulary's tables, kept by reference: each token ends as
    many characters along a chain of states as it holds), else `targets` itself, token by token."""

    ids: IdArray
    targets: IdArray
    lengths: IdArray | None = None

    @property
    def end_states(self) -> IdArray:
        return self.targets if self.lengths is None else self.targets[self.lengths]

    @property
    def own_size(self) -> int:
        """Tokens listed for this part alone (a group by length shares the vocabulary's)."""
        return len(self.ids) if self.lengths is None else 0

    def end_of(self, token: int) -> int:
        """The state `token` leads to, or DEAD where this part does not hold it."""
        where = np.flatnonzero(self.ids == token)
        if len(where) == 0:
            return DEAD
        return int(self.targets[where[0] if self.lengths is None else self.lengths[where[0]]])

    def is_well_formed(self) -> bool:
        if self.lengths is None:
            return len(self.ids) == len(self.targets)
        return len(self.ids) == len(self.lengths) and (len(self.lengths) == 0 or int(self.lengths.max()) < len(self.targets))


@dataclass(frozen=True)
class TokenArrays:
    """A state's allowed tokens as whole arrays: their ids (end-of-generation tokens excluded,
    in no particular order) and, for each, the fewest tokens that close the document once it
    is taken, itself included (1 + the bytes still needed after it: no token is shorter than a
    byte); `most_needed` is the largest of those (0 when none is allowed). `ids` is read-only:
    the same array stands for the same state each time it is asked for."""

    ids: IdArray
    needed: IdArray
    most_needed: int


@dataclass(frozen=True)
class Transitions:
    """The tokens a state allows (end-of-generation tokens excluded, in no particular order)
    and the DFA state each one leads to, as parts that hold no token twice."""

    parts: tuple[Part, ...]

    @staticmethod
    def of(token_ids: IdArray, end_states: IdArray) -> Transitions:
        return Transitions((Part(token_ids, end_states),))

    @property
    def size(self) -> int:
        return sum(len(part.ids) for part in self.parts)

    @property
    def own_size(self) -> int:
        return sum(part.own_size for part in self.parts)

    @property
    def token_ids(self) -> IdArray:
        if len(self.parts) == 1:
            return self.parts[0].ids
        return np.concatenate([part.ids for part in self.parts])

    @property
    def end_states(self) -> IdArray:
        if len(self.parts) == 1:
            return self.parts[0].end_states
        return np.concatenate([part.end_states for part in self.parts])

    def end_of(self, token: int) -> int:
        """The state `token` leads to, or DEAD where it is not allowed."""
        for part in self.parts:
            end = part.end_of(token)
            if end != DEAD:
                return end
        return DEAD

    def is_well_formed(self) -> bool:
        return all(part.is_well_formed() for part in self.parts)


class TokenIndex:
    def __init__(self, dfa: LazyDFA, table: TokenTable) -> None:
        self.dfa = dfa
        self.table = table
        self._cache: dict[int, Transitions] = {}
        self._wide: OrderedDict[int, Transitions] = OrderedDict()
        self._multibyte_checked: dict[tuple[int, int, int], bool] = {}
        self._all_text = _TextClass((table.ascii_text, table.wide_text, table.astral_text), ())
        self._text_classes: dict[bytes, _TextClass] = {}
        self._masks = StateMasks(dfa, table)
        self._whole: OrderedDict[int, TokenArrays] = OrderedDict()

    def _walked_ids(self, state: int) -> Iterable[IdArray]:
        """The tokens `state` allows, in parts, as the walk lists them (for masks no cheaper walk
        makes)."""
        return (part.ids for part in self.transitions(state).parts)

    def computed(self) -> dict[int, Transitions]:
        """The token sets computed so far and kept, by state."""
        return dict(self._cache)

    def transitions(self, state: int) -> Transitions:
        """Tokens allowed from `state` (end-of-generation tokens excluded). Cached: for good
        where the tokens listed for the state alone are few (groups allowed by length are kept
        by reference), else only for the latest few states (each position of a bounded string
        is a new state, visited once; a large vocabulary makes such a list megabytes)."""
        found = self._cache.get(state) or self._wide.get(state)
        if found is None:
            found = self._walk(state)
            if found.own_size <= _WIDE_SET:
                self._cache[state] = found
            else:
                self._wide[state] = found
                if len(self._wide) > _WIDE_SETS_KEPT:
                    self._wide.popitem(last=False)
        elif state in self._wide:
            self._wide.move_to_end(state)
        return found

    def arrays(self, state: int) -> TokenArrays:
        """`transitions(state)` as whole arrays, with what each token needs to close the
        document. Kept for the latest few states."""
        return latest_kept(self._whole, state, _WHOLE_ARRAYS_KEPT, lambda: self._arrays(state))

    def _arrays(self, state: int) -> TokenArrays:
        transitions = self.transitions(state)
        needed = 1 + self.dfa.distance_array[transitions.end_states]
        ids = transitions.token_ids.view()
        ids.flags.writeable = False  # handed out again and again: one state, one unchanging array
        return TokenArrays(ids, needed, int(needed.max(initial=0)))

    def fill_mask(self, state: int, bitmask: npt.NDArray[np.int32]) -> None:
        """Write the tokens `state` allows into `bitmask` (int32, `mask_words` words; bit
        t % 32 of word t // 32 for token t; end-of-generation tokens left out). A copy and a
        few words where the state's mask was made before (see core.index.bitmasks)."""
        self._masks.fill(state, bitmask, self._walked_ids)

    def packed_mask(self, state: int) -> npt.NDArray[np.int32]:
        """The tokens `state` allows as a new bitmask (see fill_mask)."""
        return self._masks.packed(state, self._walked_ids)

    def allowed_ids(self, state: int) -> IdArray:
        """The tokens `state` allows, ascending, read from its mask (no state each leads to is
        worked out: see `arrays` for that). Read-only; kept for the latest few states."""
        return self._masks.ids(state, self._walked_ids)

    def _candidates(self, first_bytes: npt.NDArray[np.intp]) -> IdArray:
        """Tokens starting with one of `first_bytes`."""
        if len(first_bytes) == 0:
            return np.empty(0, dtype=np.int32)
        return np.concatenate([self.table.by_first_byte[b] for b in first_bytes])

    def _walk(self, state: int) -> Transitions:
        run = self.dfa.text_run(state)
        if run is not None:
            return self._walk_text_run(state, run)
        chain = self._run(state, _TEXT_ASCII_BYTES, self.table.ascii_text.longest)
        if len(chain) > 1:
            return self._walk_with_text_slices(state, chain, self._all_text)
        first_bytes = np.flatnonzero(self.dfa.row(state))
        if len(first_bytes) <= _FEW_FIRST_BYTES:
            return self._walk_by_two_bytes(state, first_bytes)
        return self._walk_class_run(state, first_bytes)

    def _walk_class_run(self, state: int, first_bytes: npt.NDArray[np.intp]) -> Transitions:
        """Where many text bytes lead to one state and keep doing so (a pattern's character
        class repeated, a key of free text, the loop of a pattern searched for anywhere in a
        string), text tokens made only of those bytes are allowed by their length without a
        walk, and so are text tokens with other characters where every character of their plane
        keeps to the run as well; the other candidates are walked."""
        table = self.table
        ascii_row = self.dfa.row(state)[:128]
        live = ascii_row[ascii_row != DEAD]
        worth_it = self._starting_with(first_bytes) >= min(_CLASS_RUN_CANDIDATES, len(table.walkable) // 4)
        if not worth_it or len(live) < _CLASS_RUN_MIN:
            return self._walk_tokens(state, self._candidates(first_bytes))
        members = _TEXT_ASCII_MEMBERS & (ascii_row == np.bincount(live).argmax())
        member_bytes = np.flatnonzero(members)
        if len(member_bytes) < _CLASS_RUN_MIN or self._starting_with(member_bytes) < _CLASS_RUN_CANDIDATES:
            # Few tokens could be made of the class (digits, where the model splits numbers):
            # laying out the class's tokens would cost more than walking the candidates.
            return self._walk_tokens(state, self._candidates(first_bytes))
        run = self._run(state, member_bytes, table.ascii_text.longest)
        return self._walk_with_text_slices(state, run, self._text_class(members))

    def _starting_with(self, first_bytes: npt.NDArray[np.intp]) -> int:
        """How many tokens start with one of `first_bytes`."""
        return sum(len(self.table.by_first_byte[b]) for b in first_bytes.tolist())

    def _text_class(self, members: npt.NDArray[np.bool_]) -> _TextClass:
        """The text tokens of the class `members` (text ASCII bytes). Cached per class."""
        key = members.tobytes()
        found = self._text_classes.get(key)
        if found is None:
            table = self.table
            slices, masks = [], []
            for every in (table.ascii_text, table.wide_text, table.astral_text):
                inside = table.ascii_within(members, every.ids)
                mask = np.zeros(table.vocab.size, dtype=bool)
                mask[every.ids[inside]] = True
                slices.append(every.where(inside))
                masks.append(mask)
            found = _TextClass((slices[0], slices[1], slices[2]), tuple(masks))
            self._text_classes[key] = found
        return found

    def _run(self, state: int, members: npt.NDArray[np.intp], longest: int) -> list[int]:
        """States after 0, 1, 2, ... bytes from `members` (ASCII bytes, ascending), as long as
        every such byte leads to one and the same live state, and at most `longest` bytes. A
        state the bytes lead back to stays the state for any number more."""
        run = [state]
        while len(run) <= longest:
            targets = self.dfa.row(run[-1])[members]
            following: int = targets.item(0)
            if following == DEAD or targets.min() != targets.max():
                break
            if following == run[-1]:
                run += [following] * (longest + 1 - len(run))
                break
            run.append(following)
        return run

    def _walk_by_two_bytes(self, state: int, first_bytes: npt.NDArray[np.intp]) -> Transitions:
        """Where few first bytes are allowed (a space before a value, a quote), take only the
        tokens whose second byte the state after the first allows too: a space allows
        thousands of tokens by its first byte and a handful by its first two."""
        row, table = self.dfa.row(state), self.table
        ids: list[IdArray] = [np.empty(0, dtype=np.int32)]
        ends: list[IdArray] = [np.empty(0, dtype=np.int32)]
        for first in first_bytes.tolist():
            after_first = int(row[first])
            singles = table.one_byte[first]
            ids.append(singles)
            ends.append(np.full(len(singles), after_first, dtype=np.int32))
            following_row = self.dfa.row(after_first)
            candidates = table.starting_with(first, np.flatnonzero(following_row))
            states = following_row[table.bytes[:, 1][candidates]]
            walked = self._walk_from(candidates, states, 2)
            ids.append(walked.token_ids)
            ends.append(walked.end_states)
        return Transitions.of(np.concatenate(ids), np.concatenate(ends))

    def _walk_text_run(self, state: int, run: tuple[int, int]) -> Transitions:
        """Inside a string body of free text: text tokens of up to the characters still allowed
        are allowed, each ending that many characters on, and no longer text token can be (text
        never closes the string); only the other tokens (quotes, escapes, partial characters)
        are walked. Nothing is built for the positions ahead but their names."""
        table = self.table
        count, spare = run
        slices = self._all_text.slices
        longest = max(every.longest for every in slices)
        reach = longest if spare < 0 else min(count + spare, longest)
        ends = np.array(self.dfa.after_text(state, reach), dtype=np.int32)
        free = [every.split(reach) for every in slices]
        others = [table.rest_by_first_byte[b] for b in np.flatnonzero(self.dfa.row(state))]
        walked = self._walk_tokens(state, np.concatenate([np.empty(0, dtype=np.int32), *others]))
        return _by_length(ends, [(ids, lengths) for ids, lengths, _ in free], walked)

    def _wide_reaches(self, chain: list[int]) -> tuple[int, int]:
        """How many characters along `chain` every character of the Basic Multilingual Plane
        keeps to it, and how many every character does."""
        plane = self._reach(chain, 0, min(len(chain) - 1, self.table.wide_text.longest))
        return plane, self._reach(chain, 1, min(plane, self.table.astral_text.longest))

    def _reach(self, chain: list[int], kind: int, most: int) -> int:
        reach = 0
        while reach < most and self._all_multibyte_lead_to(chain[reach], chain[reach + 1], kind):
            reach += 1
        return reach

    def _all_multibyte_lead_to(self, state: int, target: int, kind: int) -> bool:
        """Whether every non-ASCII character of the Basic Multilingual Plane (kind 0) or beyond
        it (kind 1) leads from `state` to `target`. Cached."""
        found = self._multibyte_checked.get((state, target, kind))
        if found is None:
            sequences = _ASTRAL_TEXT if kind else _BMP_TEXT
            found = all(self._sequence_leads_to(state, sequence, target) for sequence in sequences)
            self._multibyte_checked[(state, target, kind)] = found
        return found

    def _sequence_leads_to(self, state: int, sequence: tuple[tuple[int, int], ...], target: int) -> bool:
        """Whether every character of `sequence` (a byte range per position) leads from `state`
        to `target`; the states between its bytes may differ from one byte to another."""
        states = {state}
        for low, high in sequence:
            following: set[int] = set()
            for current in states:
                following.update(self.dfa.row(current)[low : high + 1].tolist())
            if DEAD in following:
                return False
            states = following
        return states == {target}

    def _walk_with_text_slices(self, state: int, chain: list[int], text: _TextClass) -> Transitions:
        """Text tokens of the class `text` within the chain's reach are allowed without a walk
        and end where the chain is after their length; longer ones and all others are walked."""
        table = self.table
        ends = np.asarray(chain, dtype=np.int32)
        reaches = (len(chain) - 1, *self._wide_reaches(chain))
        split = [every.split(reach) for every, reach in zip(text.slices, reaches, strict=True)]
        first_bytes = np.flatnonzero(self.dfa.row(state))
        if text is self._all_text:
            others = [table.rest_by_first_byte[b] for b in first_bytes]
            walked = np.concatenate([longer for _, _, longer in split] + others)
        else:
            # The candidates by first byte, less the class's own tokens, are left to walk; and
            # the class's tokens too long for the reach, where that reach is some characters.
            candidates = self._candidates(first_bytes)
            apart = np.zeros(len(candidates), dtype=bool)
            longer = []
            for (_, _, too_long), members, reach in zip(split, text.members, reaches, strict=True):
                if reach:
                    apart |= members[candidates]
                    longer.append(too_long)
            walked = np.concatenate([*longer, candidates[~apart]])
        found = self._walk_tokens(state, walked)
        return _by_length(ends, [(ids, lengths) for ids, lengths, _ in split], found)

    def _walk_tokens(self, state: int, ids: IdArray) -> Transitions:
        return self._walk_from(ids, state, 0)

    def _walk_from(self, ids: IdArray, states: IdArray | int, position: int) -> Transitions:
        """Walk tokens `ids`, each already `position` bytes in and at its state in `states` (one
        int where all start from the same state)."""
        return Transitions.of(*walk_through_table(self.dfa, self.table, ids, states, position))

def _by_length(ends: IdArray, groups: list[tuple[IdArray, IdArray]], walked: Transitions) -> Transitions:
    """Groups of tokens allowed by length (each ending at `ends[length]`) and the walked rest."""
    parts = [Part(ids, ends, lengths) for ids, lengths in groups if len(ids)]
    return Transitions((*parts, *walked.parts))
