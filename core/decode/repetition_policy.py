"""The repetition guard's say in the decoder's choices (core.decode.policy): no string whose
tail loops, no runaway left open, no array item that copies an earlier one.

The guard (core.decode.repetition.RepetitionGuard) follows the output; this policy asks it at
each choice and before each token is taken (see core.decode.repetition's docstring for what
counts as a loop, a runaway and a copy):
- a drawn token that makes the open string loop is drawn again without it (`avoid`), never
  the last one left; a runaway string is closed with the best token that closes it; a token
  that would end an item not to be a copy as one is drawn again without it;
- a token that starts another item of an array is first previewed (`review`: the item decoded
  greedily, as `run` would, then the whole state restored and the model's context taken
  back); where the item would copy an earlier one, the best token closing the array is taken
  instead, or where the array may not close there, the item is to be written otherwise;
- greedy decoding's shortcut (the model's first choice, unlisted) is not taken where any of
  these could change the choice, and no guess is drafted past the start of an array item, so
  each goes through the review.
"""

from __future__ import annotations

from collections.abc import Callable, Generator

import numpy as np
import numpy.typing as npt

from ..errors import TokenBudgetTooSmall
from ..vocab.token_table import IdArray, Vocabulary
from .policy import ChoicePolicy, Decoding, Draw, Review
from .repetition import ItemWatch, RepetitionGuard
from .requests import Evaluate, requests_only
from .sampling import probability
from .state import Position
from .types import Logits

# The most choices a preview of an array's next item makes (it stops sooner: as soon as the
# item stops being a prefix of an earlier one).
_PREVIEW_CHOICES = 64


def avoid(
    scores: npt.NDArray[np.float32],
    first: int,
    sample: Callable[[npt.NDArray[np.float32]], int],
    ruled_out: Callable[[int], bool],
    tries: int = 64,
) -> int:
    """`first` (drawn by `sample` from `scores`) unless `ruled_out`; else draws again with the
    ruled-out candidates' scores at -inf, up to `tries` times. When every draw is ruled out, or
    no candidate is left, `first`: a repeat is better than no document."""
    index, masked = first, scores
    for _ in range(tries):
        if not ruled_out(index):
            return index
        if masked is scores:
            masked = scores.copy()
        masked[index] = -np.inf
        if np.isneginf(masked).all():
            break
        index = sample(masked)
    return first


_HOLDING: dict[tuple[str, bytes], npt.NDArray[np.bool_]] = {}


def tokens_holding(vocab: Vocabulary, byte: bytes) -> npt.NDArray[np.bool_]:
    """Over the vocabulary: tokens holding `byte`; built once per process, vocabulary and byte."""
    key = (vocab.fingerprint, byte)
    found = _HOLDING.get(key)
    if found is None:
        found = _HOLDING[key] = np.array([byte in piece for piece in vocab.pieces], dtype=bool)
    return found


_BY_PIECE: dict[str, dict[bytes, list[int]]] = {}


def tokens_by_piece(vocab: Vocabulary) -> dict[bytes, list[int]]:
    """The vocabulary's token ids by the bytes each stands for; built once per process and
    vocabulary."""
    found = _BY_PIECE.get(vocab.fingerprint)
    if found is None:
        found = _BY_PIECE[vocab.fingerprint] = {}
        for token, piece in enumerate(vocab.pieces):
            if piece:
                found.setdefault(piece, []).append(token)
    return found


def closing_brackets(vocab: Vocabulary) -> npt.NDArray[np.bool_]:
    """Tokens holding a `]` (those that may close an array)."""
    return tokens_holding(vocab, b"]")


def quote_tokens(vocab: Vocabulary) -> npt.NDArray[np.bool_]:
    """Tokens holding a `"` (those that may close a string)."""
    return tokens_holding(vocab, b'"')


class RepetitionPolicy(ChoicePolicy):
    """The repetition guard's hooks on a decoding's choices; `guard` follows its output."""

    def __init__(self, guard: RepetitionGuard, vocab: Vocabulary) -> None:
        self.guard = guard
        self._vocab = vocab
        self._pieces = vocab.pieces
        self._closers = closing_brackets(vocab)
        self._quotes = quote_tokens(vocab)

    # -- choosing ----------------------------------------------------------------------

    def lets_first(self, token: int, allows: Callable[[int], bool]) -> bool:
        """Not where `token` makes the string loop or leaves a runaway open, nor where an item
        not to be a copy is open or to come."""
        guard, piece = self.guard, self._pieces[token]
        return not (guard.loops(piece) or (guard.runaway() and not guard.closes_string(piece)) or guard.forbids_copies())

    def redraw(self, draw: Draw) -> int:
        index = self._avoid_loops(draw, draw.index)
        index = self._close_runaway(draw, index)
        return self._avoid_copies(draw, index)

    def _avoid_loops(self, draw: Draw, index: int) -> int:
        """`index`, or the next choice where the token there would make a string loop."""
        guard, choices, skip = self.guard, draw.choices, len(draw.position.pending)
        chosen = avoid(draw.scores, index, draw.sample, lambda i: guard.loops(self._pieces[int(choices[i])][skip:]))
        if chosen != index:
            draw.stats.loops_stopped += 1
            guard.note_stop()
        return chosen

    def _avoid_copies(self, draw: Draw, index: int) -> int:
        """`index`, or the next choice where the token there would end an item that may not be
        a copy (`RepetitionGuard.forbid_copy`) as one."""
        guard, choices = self.guard, draw.choices
        if not guard.forbids_copies():
            return index
        skip = len(draw.position.pending)
        return avoid(draw.scores, index, draw.sample, lambda i: guard.completes_copy(self._pieces[int(choices[i])][skip:]))

    def _close_runaway(self, draw: Draw, index: int) -> int:
        """`index`, or where the open string is a runaway and `index` does not end it, the best
        choice that does (none allowed: `index`)."""
        guard, choices, scores = self.guard, draw.choices, draw.scores
        skip = len(draw.position.pending)
        if not guard.runaway() or guard.closes_string(self._pieces[int(choices[index])][skip:]):
            return index
        quoted = np.flatnonzero(self._quotes[choices])
        closing = [int(i) for i in quoted if guard.closes_string(self._pieces[int(choices[i])][skip:])]
        if not closing:
            return index
        draw.stats.runaways_closed += 1
        return max(closing, key=lambda i: float(scores[i]))

    # -- taking a token ----------------------------------------------------------------

    def stops_draft(self, text: bytes) -> bool:
        """Another array item is never guessed: `review` sees it."""
        return self.guard.continued_array(text) is not None

    def review(self, decoding: Decoding, position: Position, token: int) -> Review:
        """`token`, unless it starts another item of an array and the model would write that
        item as a copy of earlier ones: then the best token that closes the array, or, where
        none does at once (`"}, ` ends an object item and starts the next in one token, and
        no token holds `"}]`), the best one that ends the open item on the way there, the
        array then to close at its next chance (`RepetitionGuard.close_later`)."""
        if position.held is not None:
            return token  # held: a zero, no item starts
        state, guard = decoding.state, self.guard
        skip = len(position.pending)
        piece = self._pieces[token][skip:]
        array = guard.continued_array(piece)
        if array is None:
            return token
        ids = decoding.allowed_ids(position)
        closing = [int(t) for t in ids[self._closers[ids]] if guard.closes(self._pieces[int(t)][skip:], array)]
        if not closing:  # tokens that write part of the open item's end (or only the text pending) and start no other item
            closing = self._toward_item_end(position.pending + guard.item_end(piece, array), ids)
        assert state.logits is not None
        logits = np.array(state.logits)  # a copy: the preview evaluates, and may reuse the row's buffer
        if not guard.closing(array):  # else the copy was seen already, on the way to the item's end
            watch = guard.watch(array)
            copying = yield from _preview(decoding, token, watch)
            state.logits = logits
            if not (watch.repeats or copying):
                return token
            state.stats.repeats_stopped += 1
        if not closing:  # the array may not end here (`minItems`): the item is to differ instead
            guard.forbid_copy(array)
            return token
        best = max(closing, key=lambda closer: float(logits[closer]))
        if not guard.closes(self._pieces[best][skip:], array):
            guard.close_later(array)
            guard.forbid_copy(array)  # where the array may not end after this item after all
        state.probability = probability(logits, best)
        return best

    def _toward_item_end(self, text: bytes, ids: IdArray) -> list[int]:
        """Of `ids`, those whose piece is a non-empty prefix of `text` (the pending text and the
        open item's end): looked up by piece, not by reading every allowed token."""
        by_piece = tokens_by_piece(self._vocab)
        found = np.array([t for k in range(1, len(text) + 1) for t in by_piece.get(text[:k], ())], dtype=ids.dtype)
        return [int(t) for t in found[np.isin(found, ids)]]

    def taken(self, position: Position, token: int, text: bytes) -> None:
        """Where the schema starts another array item in the forced text after `token` (a
        `minItems` not yet met: the array may not close), that item is not to come out a copy
        of earlier ones (`RepetitionGuard.forbid_copy`); an item the model's own token starts
        goes through `review` instead."""
        guard = self.guard
        array = guard.continued_array(text)
        if array is not None and guard.continued_array(self._pieces[token][len(position.pending) :]) != array:
            guard.forbid_copy(array)


def _preview(decoding: Decoding, token: int, watch: ItemWatch) -> Generator[Evaluate, Logits | None, bool]:
    """Decode greedily from `token` chosen at the state's position, as `run` would (drafts
    included, so the model sees the same batches), feeding `watch` what is written while it
    asks for more; then take it all back: the state is restored (the output, its followers,
    the statistics; the random state is untouched, as greedy choices draw nothing) and the
    model's context loses what the preview evaluated. Returns whether the preview ran out of
    choices with the item still copying earlier ones (a copy of a long item, begun)."""
    state = decoding.state
    copying = False
    mark, start, discarded = state.snapshot(), len(state.followers.history), state.stats.discarded_tokens
    greedy = decoding.greedy()
    try:
        with state.followers.watching(watch):
            copying = yield from _decode_item(greedy, token, watch)
    except TokenBudgetTooSmall:
        pass  # the decoding itself meets this, if it goes this way
    finally:
        kept = len(state.followers.history) - start
        decoding.discard(kept)
        evaluated = kept + state.stats.discarded_tokens - discarded
        state.restore(mark)
        state.stats.preview_tokens += evaluated
    return copying


def _decode_item(decoding: Decoding, token: int, watch: ItemWatch) -> Generator[Evaluate, Logits | None, bool]:
    """Take `token`, then the choices after it, while `watch` wants more (at most
    _PREVIEW_CHOICES of them), no token reviewed. Returns whether the choices ran out while it
    still did."""
    decided: int | None = token
    for _ in range(_PREVIEW_CHOICES):
        if not watch.wants_more:
            return False
        decided = decoding.choose() if decided is None else decided
        going_on, decided = yield from requests_only(decoding.advance(decided, review=False))
        if not going_on:
            return False
    return watch.copying
