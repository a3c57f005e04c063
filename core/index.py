"""Which tokens each automaton state allows, and where each one leads.

For a state the index walks every candidate token through the lazy DFA at once with numpy
gathers, one byte position per step, dropping tokens as they die. Candidates are the tokens
whose first byte the state allows, or, where only a few first bytes are, whose first two
bytes it allows. Shortcuts allow whole groups of tokens by their length without a walk:
- text runs: inside a JSON string body of free text (the NFA knows how many characters are
  still required and allowed), every token of plain text characters up to that many;
- text slices: where every text character leads to one state, and keeps doing so;
- byte-class runs: where many text bytes lead to one state and keep doing so (a pattern's
  character class, the loop of a pattern searched for anywhere in a string), every text token
  made only of them (and of non-ASCII characters, where those keep to the run too).
Only the remaining tokens (quotes, escapes, partial characters, longer ones) are walked.
Results are cached per state; DFA rows missing during a walk are built on the spot.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .automaton.dfa import DEAD, UNKNOWN, LazyDFA
from .automaton.utf8 import utf8_sequences
from .vocab import TEXT_ASCII, IdArray, TextSlice, TokenTable

# States allowing at most this many first bytes are walked by their first two bytes.
_FEW_FIRST_BYTES = 8
# A byte class shortcut needs at least this many ASCII bytes leading to one state, and is
# worth its set test over the candidates only when they are this many (or a quarter of a
# small vocabulary).
_CLASS_RUN_MIN = 8
_CLASS_RUN_CANDIDATES = 2048
# Token sets larger than this are kept only for the latest _WIDE_SETS_KEPT states.
_WIDE_SET = 16384
_WIDE_SETS_KEPT = 16
# The ASCII text characters as a mask over bytes 0..127.
_TEXT_ASCII_MEMBERS = np.zeros(128, dtype=bool)
_TEXT_ASCII_MEMBERS[TEXT_ASCII] = True
# Byte-range sequences of every non-ASCII character (surrogates have no encoding).
_MULTIBYTE_TEXT = utf8_sequences(0x80, 0x10FFFF)


@dataclass(frozen=True)
class _TextClass:
    """The text tokens whose ASCII bytes all belong to a class, ASCII ones apart from the
    others, each ordered by length in characters, and which tokens of the vocabulary they are."""

    ascii: TextSlice
    wide: TextSlice
    ascii_members: npt.NDArray[np.bool_]
    wide_members: npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Transitions:
    """Allowed token ids (in no particular order) and the DFA state each one leads to."""

    token_ids: IdArray
    end_states: IdArray


class TokenIndex:
    def __init__(self, dfa: LazyDFA, table: TokenTable) -> None:
        self.dfa = dfa
        self.table = table
        self._cache: dict[int, Transitions] = {}
        self._wide: OrderedDict[int, Transitions] = OrderedDict()
        self._multibyte_checked: dict[tuple[int, int], bool] = {}
        self._singles: dict[int, int] = {}
        self._all_text = _TextClass(table.ascii_text, table.wide_text, np.empty(0, dtype=bool), np.empty(0, dtype=bool))
        self._text_classes: dict[bytes, _TextClass] = {}

    def computed(self) -> dict[int, Transitions]:
        """The token sets computed so far, by state (for the on-disk cache)."""
        return dict(self._cache)

    def singles(self) -> dict[int, int]:
        return dict(self._singles)

    def restore(self, transitions: dict[int, Transitions], singles: dict[int, int]) -> None:
        """Take back what `computed` and `singles` gave for this index's automaton."""
        for state, found in transitions.items():
            if not (isinstance(found, Transitions) and len(found.token_ids) == len(found.end_states)):
                raise ValueError(f"stored token set of state {state} is malformed")
        self._cache.update(transitions)
        self._singles.update(singles)

    def transitions(self, state: int) -> Transitions:
        """Tokens allowed from `state` (end-of-generation tokens excluded). Cached: narrow sets
        for good, sets of most of the vocabulary only for the latest few states (each position
        of a bounded string is a new state, visited once; a large vocabulary makes each such set
        megabytes, and recomputing one takes about a millisecond)."""
        found = self._cache.get(state) or self._wide.get(state)
        if found is None:
            found = self._walk(state)
            if len(found.token_ids) <= _WIDE_SET:
                self._cache[state] = found
            else:
                self._wide[state] = found
                if len(self._wide) > _WIDE_SETS_KEPT:
                    self._wide.popitem(last=False)
        elif state in self._wide:
            self._wide.move_to_end(state)
        return found

    def _candidates(self, first_bytes: npt.NDArray[np.intp]) -> IdArray:
        """Tokens starting with one of `first_bytes`."""
        if len(first_bytes) == 0:
            return np.empty(0, dtype=np.int32)
        return np.concatenate([self.table.by_first_byte[b] for b in first_bytes])

    def _walk(self, state: int) -> Transitions:
        members = self.dfa.nfa_states(state)
        if len(members) == 1:
            (member,) = members
            run = self.dfa.nfa.text_run(member)
            if run is not None:
                return self._walk_text_run(state, member, run)
        chain = self._run(state, _TEXT_ASCII_MEMBERS, self.table.ascii_text.longest)
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
        walk, and so are text tokens with other characters where every non-ASCII character
        keeps to the run as well; the other candidates are walked."""
        table = self.table
        ascii_row = self.dfa.row(state)[:128]
        live = ascii_row[ascii_row != DEAD]
        candidates = sum(len(table.by_first_byte[b]) for b in first_bytes.tolist())
        worth_it = candidates >= min(_CLASS_RUN_CANDIDATES, len(table.walkable) // 4)
        if not worth_it or len(live) < _CLASS_RUN_MIN:
            return self._walk_tokens(state, self._candidates(first_bytes))
        members = _TEXT_ASCII_MEMBERS & (ascii_row == np.bincount(live).argmax())
        starting_in_class = sum(len(table.by_first_byte[b]) for b in np.flatnonzero(members).tolist())
        if members.sum() < _CLASS_RUN_MIN or starting_in_class < _CLASS_RUN_CANDIDATES:
            # Few tokens could be made of the class (digits, where the model splits numbers):
            # sorting the text tokens by the class would cost more than walking them all.
            return self._walk_tokens(state, self._candidates(first_bytes))
        run = self._run(state, members, table.ascii_text.longest)
        return self._walk_with_text_slices(state, run, self._text_class(members))

    def _text_class(self, members: npt.NDArray[np.bool_]) -> _TextClass:
        """The text tokens of the class `members` (text ASCII bytes). Cached per class."""
        key = members.tobytes()
        found = self._text_classes.get(key)
        if found is None:
            table = self.table
            ascii_in = table.made_of(members, table.ascii_text.ids)
            wide_in = table.made_of(members, table.wide_text.ids, other_bytes_apart=True)
            ascii_members = np.zeros(table.vocab.size, dtype=bool)
            ascii_members[table.ascii_text.ids[ascii_in]] = True
            wide_members = np.zeros(table.vocab.size, dtype=bool)
            wide_members[table.wide_text.ids[wide_in]] = True
            found = _TextClass(table.ascii_text.where(ascii_in), table.wide_text.where(wide_in), ascii_members, wide_members)
            self._text_classes[key] = found
        return found

    def _run(self, state: int, members: npt.NDArray[np.bool_], longest: int) -> list[int]:
        """States after 0, 1, 2, ... bytes from `members` (an ASCII mask), as long as every such
        byte leads to one and the same live state, and at most `longest` bytes. A state the
        bytes lead back to stays the state for any number more."""
        run = [state]
        while len(run) <= longest:
            targets = self.dfa.row(run[-1])[:128][members]
            following = int(targets[0])
            if following == DEAD or not (targets == following).all():
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
            states = following_row[table.bytes[candidates, 1]]
            walked = self._walk_from(candidates, states, 2)
            ids.append(walked.token_ids)
            ends.append(walked.end_states)
        return Transitions(np.concatenate(ids), np.concatenate(ends))

    def _walk_text_run(self, state: int, member: int, run: tuple[int, int]) -> Transitions:
        """Inside a string body of free text: text tokens of up to the characters still allowed
        are allowed, each ending that many characters on, and no longer text token can be (text
        never closes the string); only the other tokens (quotes, escapes, partial characters)
        are walked. Nothing is built for the positions ahead but their names."""
        table, nfa = self.table, self.dfa.nfa
        count, spare = run
        longest = max(table.ascii_text.longest, table.wide_text.longest)
        reach = longest if spare < 0 else min(count + spare, longest)
        ends = np.array([self._single(following) for following in nfa.after_text(member, reach)], dtype=np.int32)
        ascii_free, ascii_lengths, _ = table.ascii_text.split(reach)
        wide_free, wide_lengths, _ = table.wide_text.split(reach)
        others = [table.rest_by_first_byte[b] for b in np.flatnonzero(self.dfa.row(state))]
        walked = self._walk_tokens(state, np.concatenate([np.empty(0, dtype=np.int32), *others]))
        return Transitions(
            np.concatenate([ascii_free, wide_free, walked.token_ids]),
            np.concatenate([ends[ascii_lengths], ends[wide_lengths], walked.end_states]),
        )

    def _single(self, nfa_state: int) -> int:
        """The DFA state standing for one NFA state."""
        found = self._singles.get(nfa_state)
        if found is None:
            found = self.dfa.state_for(frozenset((nfa_state,)))
            self._singles[nfa_state] = found
        return found

    def _wide_reach(self, chain: list[int]) -> int:
        """How many characters along `chain` any text character, ASCII or not, keeps to it."""
        reach = 0
        while reach < min(len(chain) - 1, self.table.wide_text.longest) and self._all_multibyte_lead_to(
            chain[reach], chain[reach + 1]
        ):
            reach += 1
        return reach

    def _all_multibyte_lead_to(self, state: int, target: int) -> bool:
        """Whether every non-ASCII character leads from `state` to `target`. Cached."""
        found = self._multibyte_checked.get((state, target))
        if found is None:
            found = all(self._sequence_leads_to(state, sequence, target) for sequence in _MULTIBYTE_TEXT)
            self._multibyte_checked[(state, target)] = found
        return found

    def _sequence_leads_to(self, state: int, sequence: tuple[tuple[int, int], ...], target: int) -> bool:
        for low, high in sequence:
            successors = self.dfa.row(state)[low : high + 1]
            state = int(successors[0])
            if state == DEAD or not (successors == state).all():
                return False
        return state == target

    def _walk_with_text_slices(self, state: int, chain: list[int], text: _TextClass) -> Transitions:
        """Text tokens of the class `text` within the chain's reach are allowed without a walk
        and end where the chain is after their length; longer ones and all others are walked."""
        table = self.table
        ends = np.asarray(chain, dtype=np.int32)
        ascii_free, ascii_lengths, ascii_longer = text.ascii.split(len(chain) - 1)
        wide_reach = self._wide_reach(chain)
        wide_free, wide_lengths, wide_longer = text.wide.split(wide_reach)
        first_bytes = np.flatnonzero(self.dfa.row(state))
        if text is self._all_text:
            others = np.concatenate([np.empty(0, dtype=np.int32), *(table.rest_by_first_byte[b] for b in first_bytes)])
            walked = np.concatenate([ascii_longer, wide_longer, others])
        else:
            # The class's tokens are few or many; either way the candidates by first byte, less
            # the class's own, are what is left to walk.
            candidates = self._candidates(first_bytes)
            apart = text.ascii_members[candidates]
            if wide_reach:
                apart |= text.wide_members[candidates]
            else:
                wide_longer = wide_longer[:0]  # walked among the candidates, if their first byte allows
            walked = np.concatenate([ascii_longer, wide_longer, candidates[~apart]])
        found = self._walk_tokens(state, walked)
        return Transitions(
            np.concatenate([ascii_free, wide_free, found.token_ids]),
            np.concatenate([ends[ascii_lengths], ends[wide_lengths], found.end_states]),
        )

    def _walk_tokens(self, state: int, ids: IdArray) -> Transitions:
        return self._walk_from(ids, np.full(len(ids), state, dtype=np.int32), 0)

    def _walk_from(self, ids: IdArray, states: IdArray, position: int) -> Transitions:
        """Walk tokens `ids`, each already `position` bytes in and at its state in `states`."""
        lengths = self.table.lengths[ids]
        finished = lengths == position
        done_ids: list[IdArray] = [ids[finished]]
        done_states: list[IdArray] = [states[finished]]
        ids, states, lengths = ids[~finished], states[~finished], lengths[~finished]
        while len(ids):
            following = self._gather(states, self.table.bytes[ids, position])
            position += 1
            alive = following != DEAD
            finished = alive & (lengths == position)
            done_ids.append(ids[finished])
            done_states.append(following[finished])
            going = alive ^ finished
            ids, states, lengths = ids[going], following[going], lengths[going]
        return Transitions(np.concatenate(done_ids), np.concatenate(done_states))

    def _gather(self, states: IdArray, column: npt.NDArray[np.uint8]) -> IdArray:
        # One flat gather is several times cheaper than numpy's two-array fancy indexing.
        offsets = states.astype(np.intp) * 256 + column
        following = self.dfa.table.ravel()[offsets]
        unknown = following == UNKNOWN
        if unknown.any():
            self.dfa.ensure_rows(set(states[unknown].tolist()))
            following = self.dfa.table.ravel()[offsets]
        return following
