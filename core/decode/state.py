"""One decoding's state as one value: where it stands, what it has written and chosen, its
figures, and the followers that watch its output. core.decode.decoder runs the loop over it.

Followers: what reads the output as it grows (held zeros, the repetition guard, grounding)
is fed every byte written, in order, and can be taken back to an earlier point
(`Follower`: feed, snapshot, restore). A decoding that tries text and takes it back (a
preview of an array's next item, guessed tokens) snapshots the whole state, or all the
followers, and restores them after: no follower is copied field by field, so a new one
cannot be forgotten. The history drafts are looked up in (core.decode.lookahead) follows the
model's context rather than the output: it is fed evaluated tokens, and taken back with the
rest.

The state holds no model: the decoder evaluates tokens and hands the state what it needs
(the logits row current, the tokens evaluated), so decodings of several documents may each
keep a state of their own while sharing a model and the step mechanics (core.decode.steps).

Invariants of a position:
- The guide has taken the tokens evaluated so far, less those whose text was dropped
  (`skipped`), so `tokens_taken + skipped` is the budget used.
- `pending` is decided text not yet evaluated: the last token of a canonically tokenized
  forced run, held back so the model may merge it with what follows (a space before a
  value, a quote before its first characters). The next token must start with it.
- `held` is text evaluated but not written: zeros that end a number's fraction so far,
  written once a digit follows, dropped if the number ends where the written text may end it
  (core.decode.held_zeros). The guide is past the held text; the Held keeps one before it. No
  guesses are drafted while text is held.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from typing import Any, Protocol, TypeVar

from ..grounding.follower import Grounding
from ..index.guide import Guide
from .held_zeros import Held, ZeroHolder
from .lookahead import TokenHistory
from .repetition import RepetitionGuard
from .types import DecodeStats, Logits

END = -1  # the choice that ends generation

Snapshot = TypeVar("Snapshot")


@dataclass(frozen=True)
class TokenChoice:
    """A token the model chose: its bytes' place in the output, and the probability the model
    gave it (None where there was no choice)."""

    start: int
    end: int
    probability: float | None


class Follower(Protocol[Snapshot]):
    """Reads a decoding's output as it is written, and can be taken back to an earlier point."""

    def feed(self, written: bytes) -> None:
        """Take in bytes just written to the output."""
        ...

    def snapshot(self) -> Snapshot:
        """An opaque value that `restore` takes back to: where the follower stands now."""
        ...

    def restore(self, snapshot: Snapshot) -> None:
        """Stand where `snapshot` was taken, as if nothing had been fed since (a snapshot may
        be restored more than once)."""
        ...


@dataclass(frozen=True)
class FollowersMark:
    """Where every follower stood at one point (Followers.snapshot)."""

    output: tuple[tuple[Follower[Any], Any], ...]
    history: int


class Followers:
    """What watches one decoding: the output's followers, fed every byte written, and the
    history of the tokens the model has seen, which drafts are looked up in."""

    def __init__(
        self,
        history: TokenHistory,
        repeats: RepetitionGuard | None = None,
        grounding: Grounding | None = None,
    ) -> None:
        self.zeros = ZeroHolder()
        self.history = history
        self.repeats = repeats
        self.grounding = grounding
        self._output: list[Follower[Any]] = [self.zeros, *(f for f in (grounding, repeats) if f is not None)]

    def feed(self, written: bytes) -> None:
        for follower in self._output:
            follower.feed(written)

    def snapshot(self) -> FollowersMark:
        return FollowersMark(tuple((follower, follower.snapshot()) for follower in self._output), self.history.snapshot())

    def restore(self, mark: FollowersMark) -> None:
        for follower, snapshot in mark.output:
            follower.restore(snapshot)
        self.history.restore(mark.history)

    @contextmanager
    def watching(self, watch: Follower[Any]) -> Iterator[None]:
        """`watch` fed the output too while the block runs (and snapshot and restored with
        the others, as what is tried in it is taken back)."""
        self._output.append(watch)
        try:
            yield
        finally:
            self._output.remove(watch)


@dataclass(frozen=True)
class Position:
    """Where decoding stands: the guide there, and the text pending or held (see above)."""

    guide: Guide  # past every token evaluated but dropped ones; never advanced in place (steps take copies)
    pending: bytes = b""
    held: Held | None = None
    skipped: int = 0  # tokens evaluated whose text was dropped

    @property
    def used(self) -> int:
        return self.guide.tokens_taken + self.skipped

    @property
    def held_text(self) -> bytes:
        """The bytes evaluated but held back here (core.decode.held_zeros)."""
        return b"" if self.held is None else self.held.text

    def at(self, guide: Guide, pending: bytes = b"", held: Held | None = None) -> Position:
        """A position further on (the tokens skipped so far carried along)."""
        return Position(guide, pending, held, self.skipped)


@dataclass
class DecodeState:
    """One decoding, as far as it has gone. Every field but `followers` is a value that a
    snapshot copies (so a field added here is taken back with the rest)."""

    position: Position
    followers: Followers
    stats: DecodeStats = field(default_factory=DecodeStats)
    choices: list[TokenChoice] = field(default_factory=list)  # every token chosen, with the model's probability for it
    written: int = 0  # output bytes so far
    probability: float | None = None  # the model's probability for the latest choice
    logits: Logits | None = None  # the row the next choice is made from (set by every evaluation, the prompt's first)
    budget_bound_at: int | None = None  # output offset where the budget first ruled out a token

    def emit(self, text: bytes) -> bytes:
        """`text`, now written: counted, and fed to the followers."""
        self.written += len(text)
        self.followers.feed(text)
        return text

    def record(self, position: Position, length: int) -> None:
        """Note the latest choice, a token of `length` bytes chosen at `position` (its bytes
        start with the pending ones, already written, or follow the held ones)."""
        start = self.written - len(position.pending) + len(position.held_text)
        self.choices.append(TokenChoice(start, start + length, self.probability))

    def snapshot(self) -> StateMark:
        """Where the decoding stands now, to `restore` after trying something."""
        return StateMark(_copied(self), self.followers.snapshot())

    def restore(self, mark: StateMark) -> None:
        """Back to `mark`: the same values and followers (the model context is the caller's)."""
        kept = _copied(mark.values)
        for each in fields(self):
            if each.name != "followers":
                setattr(self, each.name, getattr(kept, each.name))
        self.followers.restore(mark.followers)


@dataclass(frozen=True)
class StateMark:
    """A DecodeState's values and its followers' snapshots at one point."""

    values: DecodeState
    followers: FollowersMark


def _copied(state: DecodeState) -> DecodeState:
    """`state`'s values, its mutable ones copied (the followers shared: they have snapshots)."""
    return replace(state, stats=replace(state.stats), choices=list(state.choices))
