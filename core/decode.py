"""The decoding loop: sample at branching states, jump forward over forced text.

Decoding walks the schema with a Guide (core.guide) and nothing else of the compiled schema.

Invariants:
- The position's guide has taken the tokens evaluated so far, less those whose text was
  dropped (`skipped`), so `tokens_taken + skipped` is the budget used.
- `pending` is decided text not yet evaluated: the last token of a canonically tokenized
  forced run, held back so the model may merge it with what follows (a space before a
  value, a quote before its first characters). The next token must start with it.
- `held` is text evaluated but not written: zeros that end a number's fraction so far,
  written once a digit follows, dropped if the number ends (core.held_zeros). No guesses are
  drafted while text is held.
- Budget: a token is allowed only if, after it, the bytes still needed to close the document
  (an upper bound on tokens for byte-level vocabularies) fit in what is left of
  `max_tokens`, so the document can always close inside the budget.
- Speculation: after a chosen token with no forced text behind it, up to
  `draft_tokens` guessed tokens (core.lookahead) are evaluated in the same batch. Each is
  kept only if the choice made from the logits before it, exactly as without the guess,
  picks it; the first choice that differs is carried over as the next token. The output is
  the same with or without drafts (up to the float rounding of batched evaluation); only
  the number of model calls changes.
- Runaway values (core.repetition, `stop_repeats`): a token that makes a string's tail loop
  is passed over for the next choice, never the last one left; a token that starts another
  array item is first previewed (the item decoded as `run` would, then all of it taken
  back), and where the item would copy an earlier one the best token closing the array is
  taken instead. No guess is drafted past the start of an array item, so each goes through
  that review.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import accumulate
from typing import Protocol

import numpy as np
import numpy.typing as npt

from .canonical import canonical_tokens
from .compiled import CompiledSchema, token_table
from .errors import TokenBudgetTooSmall
from .evidence import TokenChoice
from .grounding import Grounding
from .guide import Allowed, Guide
from .held_zeros import Held, ZeroHolder
from .lookahead import TokenHistory
from .repetition import ItemWatch, RepetitionGuard, avoid, closing_brackets
from .vocab import IdArray

Logits = npt.NDArray[np.float32]
_END = -1  # the choice that ends generation
# Forced tokens (keys, separators) a draft may carry beyond its guessed ones.
_FORCED_TOKENS_PER_DRAFT = 16
# The most tokens one speculative batch holds (llama.cpp's n_batch is 512, less only with a
# context under 512 tokens, too small for any prompt with a schema in it).
LARGEST_DRAFT_BATCH = 48
# The most choices a preview of an array's next item makes (it stops sooner: as soon as the
# item stops being a prefix of an earlier one).
_PREVIEW_CHOICES = 64


class TokenModel(Protocol):
    """What the decoder needs from a model; core.model.GGUFModel implements it."""

    def tokenize(self, text: bytes, add_bos: bool = False, special: bool = False) -> list[int]: ...

    def eval(self, tokens: list[int]) -> None: ...

    def last_logits(self) -> npt.NDArray[np.float32]: ...

    def eval_with_logits(self, tokens: list[int], rows: list[int]) -> npt.NDArray[np.float32]:
        """Evaluate `tokens` in one batch; returns the logits after tokens[i] for each i in
        `rows` (increasing), one row each."""
        ...

    def discard(self, count: int) -> None:
        """Forget the last `count` evaluated tokens."""
        ...


@dataclass(frozen=True)
class SamplingSettings:
    max_tokens: int = 1024
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None
    draft_tokens: int = 8  # guessed tokens evaluated with each chosen one; 0 turns speculation off
    stop_repeats: bool = True  # no string tail looping, no array item copying an earlier one (core.repetition)


@dataclass
class DecodeStats:
    output_tokens: int = 0
    sampled_tokens: int = 0
    forced_tokens: int = 0
    model_calls: int = 0
    drafted_tokens: int = 0
    accepted_draft_tokens: int = 0
    discarded_tokens: int = 0  # evaluated for a rejected guess, then dropped from the context
    loops_stopped: int = 0  # choices where a token that made a string loop was ruled out
    repeats_stopped: int = 0  # arrays closed where the next item would have copied an earlier one
    preview_tokens: int = 0  # evaluated to preview an array's next item, then dropped
    generate_seconds: float = 0.0


@dataclass(frozen=True)
class _Position:
    guide: Guide  # past every token evaluated but dropped ones; never advanced in place (steps take copies)
    pending: bytes = b""
    held: Held | None = None
    skipped: int = 0  # tokens evaluated whose text was dropped
    ending: bool = False  # held zeros were just dropped: the number ends here

    @property
    def used(self) -> int:
        return self.guide.tokens_taken + self.skipped

    def at(self, guide: Guide, pending: bytes = b"", held: Held | None = None) -> _Position:
        """A position further on (the tokens skipped so far carried along)."""
        return _Position(guide, pending, held, self.skipped)


@dataclass(frozen=True)
class _Step:
    """What choosing one token does: the bytes it decides (its own and the forced text after
    it), the tokens to evaluate for them, and where decoding stands afterwards."""

    token: int
    text: bytes
    evaluated: list[int]
    after: _Position
    final_tokens: int = 0  # > 0: the document is complete, with this many unevaluated tokens


class Decoder:
    """One constrained generation. The model must hold the prompt already; `seen` is the
    part of it worth copying from (the document), searched for draft tokens."""

    def __init__(
        self,
        model: TokenModel,
        compiled: CompiledSchema,
        settings: SamplingSettings,
        seen: Sequence[int] = (),
        grounding: Grounding | None = None,
    ) -> None:
        self.model = model
        self.compiled = compiled
        self.settings = settings
        self.stats = DecodeStats()
        self._table = token_table(compiled.vocab)
        self._pieces = compiled.vocab.pieces
        self._rng = np.random.default_rng(settings.seed)
        self._eog = np.asarray(compiled.vocab.eog_ids, dtype=np.int32)
        self._history = TokenHistory(seen, len(seen) + settings.max_tokens)
        self._logits: Logits | None = None  # None: the model's last row is current
        self.grounding = grounding
        self.choices: list[TokenChoice] = []  # every token chosen, with the model's probability for it
        self.written = 0  # output bytes so far
        self.budget_bound_at: int | None = None  # output offset where the budget first ruled out a token
        self._probability: float | None = None  # the model's probability for the latest choice
        self._zeros = ZeroHolder(self._table, compiled.vocab.size)
        self._repeats = RepetitionGuard() if settings.stop_repeats else None
        self._closers = closing_brackets(compiled.vocab) if settings.stop_repeats else np.zeros(0, dtype=bool)

    def run(self) -> Iterator[bytes]:
        """Yield the output's bytes as they are decided."""
        started = time.perf_counter()
        try:
            yield from self._loop()
        finally:
            self.stats.generate_seconds = time.perf_counter() - started
            self.stats.forced_tokens = max(self.stats.output_tokens - self.stats.sampled_tokens, 0)

    def _loop(self) -> Iterator[bytes]:
        position = self._start()
        forced = position.guide.forced_text()
        if forced:
            opening = self._forced_step(-1, position, forced, forced)
            yield self._emit(opening.text)
            if opening.final_tokens:
                self.stats.output_tokens = opening.final_tokens
                return
            self._evaluate(opening.evaluated)
            position = opening.after
        decided: int | None = None
        while True:
            token = self._choose(position) if decided is None else decided
            reached, decided = yield from self._advance(position, token)
            if reached is None:
                return
            position = reached

    def _advance(
        self, position: _Position, token: int, review: bool = True
    ) -> Generator[bytes, None, tuple[_Position | None, int | None]]:
        """Take `token` (or _END) chosen at `position`: write what it decides, evaluate it
        (with guessed tokens after it, where there are some). `review`: where the token starts
        an array item, see whether it is a copy first (_review). Returns (as the generator's
        value) the position reached (None: the document is complete) and the choice already
        made there, if one was."""
        if position.held is not None:
            position = yield from self._settle(position, token)
            if position.ending:
                return position, None  # the token was dropped with the zeros: choose how the number ends
        if token == _END:
            self.stats.output_tokens = position.used
            return None, None
        if review and self._repeats is not None and position.held is None:  # held: a zero, no item starts
            token = self._review(position, token)
        step = self._step(position, token, self._after(position, token))
        self._record(token, position)
        yield self._emit(step.text)
        if step.final_tokens:
            self.stats.output_tokens = position.used + step.final_tokens
            return None, None
        drafted = self._draft(step) if step.evaluated and step.after.held is None else []
        if not drafted:
            self._evaluate(step.evaluated)
            return step.after, None
        return (yield from self._verify(step, drafted))

    def _start(self) -> _Position:
        guide = self.compiled.guide()
        shortest = guide.shortest_completion()
        if shortest > self.settings.max_tokens:
            raise TokenBudgetTooSmall(self.settings.max_tokens, shortest)
        return _Position(guide)

    # -- steps -------------------------------------------------------------------------

    @staticmethod
    def _after(position: _Position, token: int) -> Guide:
        """A guide past `token` (allowed at `position`), the position's own left as it was."""
        after = position.guide.copy()
        after.advance(token)
        return after

    def _step(self, position: _Position, token: int, after: Guide) -> _Step:
        """Choosing `token` at `position`; `after` is the position's guide past it."""
        piece = self._pieces[token]
        held = None if self._zeros.in_string else self._held_after(position, token, after)
        if held is not None:
            return _Step(token, b"", [token], position.at(after, held=held))
        forced = after.forced_text()
        if forced or after.is_finished():
            return self._forced_step(token, position, piece + forced, piece[len(position.pending) :] + forced)
        return _Step(token, piece[len(position.pending) :], [token], position.at(after))

    def _forced_step(self, token: int, position: _Position, tail: bytes, text: bytes) -> _Step:
        """`tail` (the chosen token's bytes and the forced text after it) tokenized
        canonically: all but the last token are evaluated, the last is held back so the
        model may merge it with what follows (a space before a value, a quote before its
        first characters)."""
        tokens = self.canonical_tokens(tail)
        after = position.guide.copy()
        for each in tokens:
            after.advance(each)
        if after.is_finished():
            return _Step(token, text, [], position, final_tokens=len(tokens))
        after.rollback(1)
        return _Step(token, text, tokens[:-1], position.at(after, self._pieces[tokens[-1]]))

    # -- speculation -------------------------------------------------------------------

    def _draft(self, step: _Step) -> list[_Step]:
        """Guessed steps to evaluate in the same batch as `step`: the history's continuation
        after it, as far as the automaton allows each guessed token, the document stays
        open, the budget holds and the evaluated tokens keep following the continuation."""
        most = self.settings.draft_tokens
        if most <= 0:
            return []
        guesses = self._history.continuation(most + _FORCED_TOKENS_PER_DRAFT, then=step.evaluated)
        drafted: list[_Step] = []
        position, cursor, size = step.after, 0, len(step.evaluated)
        while cursor < len(guesses) and len(drafted) < most:
            guess = self._guessed_step(position, guesses[cursor])
            if guess is None or guess.final_tokens or size + len(guess.evaluated) > LARGEST_DRAFT_BATCH:
                break
            drafted.append(guess)
            size += len(guess.evaluated)
            if guess.evaluated != guesses[cursor : cursor + len(guess.evaluated)] or not guess.evaluated:
                break
            position, cursor = guess.after, cursor + len(guess.evaluated)
        if self._repeats is not None:  # another array item is never guessed: _review sees it
            drafted = drafted[: self._repeats.draftable([guess.text for guess in drafted])]
        return drafted

    def _guessed_step(self, position: _Position, token: int) -> _Step | None:
        if not self._pieces[token].startswith(position.pending):
            return None
        after = position.guide.copy()
        if not after.try_advance(token):
            return None
        if position.skipped + after.tokens_taken + after.shortest_completion() > self.settings.max_tokens:
            return None
        if self._held_after(position, token, after) is not None:
            return None  # zeros the choice might hold: the output there is decided token by token
        return self._step(position, token, after)

    def _verify(self, step: _Step, drafted: list[_Step]) -> Generator[bytes, None, tuple[_Position, int | None]]:
        """Evaluate `step` and the drafted steps in one batch, then keep each drafted step
        whose token is the one chosen from the logits before it. Returns (as the generator's
        value) the position reached and the choice that rejected a guess, if one did."""
        batch = step.evaluated + [token for guess in drafted for token in guess.evaluated]
        cursors = list(accumulate([len(step.evaluated)] + [len(guess.evaluated) for guess in drafted]))
        wanted = sorted({cursor - 1 for cursor in cursors})  # the logits before each guess, and at the end
        rows = dict(zip(wanted, self._evaluate_with_logits(batch, wanted), strict=True))
        self.stats.drafted_tokens += len(drafted)
        position = step.after
        for guess, cursor in zip(drafted, cursors, strict=False):
            self._logits = rows[cursor - 1]
            decided = self._choose(position)
            if decided != guess.token:
                self._discard(len(batch) - cursor)
                self.stats.discarded_tokens += len(batch) - cursor
                return position, decided
            self.stats.accepted_draft_tokens += 1
            self._record(guess.token, position)
            yield self._emit(guess.text)
            position = guess.after
        self._logits = rows[cursors[-1] - 1]
        return position, None

    # -- zeros held at the end of a number (core.held_zeros) ---------------------------

    def _held_after(self, position: _Position, token: int, after: Guide) -> Held | None:
        """What is held once `token` is taken at `position` (`after` is past it)."""
        added = self._pieces[token][len(position.pending) :]
        return self._zeros.hold(position.held, added, after, lambda: self._past_pending(position))

    def _past_pending(self, position: _Position) -> Guide | None:
        """The position's guide past its pending text (None if that text's tokens do not fit)."""
        guide = position.guide.copy()
        if position.pending and not all(guide.try_advance(t) for t in self.canonical_tokens(position.pending)):
            return None
        return guide

    def _settle(self, position: _Position, token: int) -> Generator[bytes, None, _Position]:
        """Where `token` leaves the text held at `position`: still held (another zero), written
        (a digit follows it: the held tokens' choices keep their places) or dropped (the
        number ends: their choices are put on its last byte, so they still count for it). A
        zero the automaton cannot take there is dropped too, unevaluated: `ending`."""
        held = position.held
        assert held is not None
        after = position.guide.copy()
        if token != _END and after.try_advance(token):
            if self._held_after(position, token, after) is not None:
                return position
            yield self._emit(held.text)
            return position.at(position.guide)
        last = max(self.written - 1, 0)
        kept = len(self.choices) - held.choices
        self.choices[kept:] = [TokenChoice(last, self.written, choice.probability) for choice in self.choices[kept:]]
        skipped = position.skipped + position.guide.tokens_taken - held.before.tokens_taken
        return _Position(held.before, skipped=skipped, ending=token != _END and self._zeros.overflows(after, token))

    def _allowed(self, position: _Position) -> Allowed:
        """The choices at `position` (see core.held_zeros for those while text is held)."""
        budget = self.settings.max_tokens - position.used
        if position.held is not None:
            return self._zeros.candidates(position.held, position.guide, budget)
        if position.ending:
            return self._zeros.ending(position.guide, budget)
        return position.guide.allowed(budget, position.pending)

    # -- the output --------------------------------------------------------------------

    def _emit(self, text: bytes) -> bytes:
        """`text`, now written: counted, and followed by grounding."""
        self.written += len(text)
        self._zeros.feed(text)
        if self.grounding is not None:
            self.grounding.feed(text)
        if self._repeats is not None:
            self._repeats.feed(text)
        return text

    def _record(self, token: int, position: _Position) -> None:
        """Note the chosen `token` (its bytes start with the pending ones, already written, or
        follow the held ones)."""
        start = self.written - len(position.pending) + (len(position.held.text) if position.held is not None else 0)
        self.choices.append(TokenChoice(start, start + len(self._pieces[token]), self._probability))

    # -- runaway values (core.repetition) ----------------------------------------------

    def _avoid_loops(self, position: _Position, choices: IdArray, scores: Logits, index: int) -> int:
        """`index`, or the next choice where the token there would make a string loop."""
        assert self._repeats is not None
        skip = len(position.pending)
        loops = self._repeats.loops
        chosen = avoid(scores, index, self._sample, lambda i: loops(self._pieces[int(choices[i])][skip:]))
        self.stats.loops_stopped += chosen != index
        return chosen

    def _review(self, position: _Position, token: int) -> int:
        """`token`, unless it starts another item of an array and the model would write that
        item as a copy of an earlier one: then the best token that closes the array."""
        assert self._repeats is not None and position.held is None
        skip = len(position.pending)
        array = self._repeats.continued_array(self._pieces[token][skip:])
        if array is None:
            return token
        ids = self._allowed(position).ids
        ids = ids if self.grounding is None else self.grounding.restrict(position.pending, ids)
        closing = [int(t) for t in ids[self._closers[ids]] if self._repeats.closes(self._pieces[int(t)][skip:], array)]
        if not closing:
            return token
        logits = np.array(self.model.last_logits() if self._logits is None else self._logits)  # the preview evaluates
        watch = self._repeats.watch(array)
        self._preview(position, token, watch)
        self._logits = logits
        if not watch.repeats:
            return token
        best = max(closing, key=lambda closer: float(logits[closer]))
        self.stats.repeats_stopped += 1
        self._probability = _probability(logits, best)
        return best

    def _preview(self, position: _Position, token: int, watch: ItemWatch) -> None:
        """Decode greedily from `token` chosen at `position`, as `run` would (drafts included,
        so the model sees the same batches), feeding `watch` what is written while it asks for
        more; then take it all back: the model's context, the output, what follows the output
        (grounding, held zeros), the statistics and the random state are as they were."""
        saved = (self.grounding, self._zeros, self._repeats, self.settings, self.stats, self.written, self.choices)
        marks, start = (self.budget_bound_at, self._probability), len(self._history)
        if self.grounding is not None:  # its state is plain fields but `bodies`, which grows in place
            self.grounding = copy.copy(self.grounding)
            self.grounding.bodies = list(self.grounding.bodies)
        self._zeros, self._repeats, self.stats = copy.deepcopy(self._zeros), watch.guard, DecodeStats()
        self.settings, self.choices = replace(self.settings, temperature=0.0), list(self.choices)
        try:
            decided: int | None = token
            for _ in range(_PREVIEW_CHOICES):
                if not watch.wants_more:
                    return
                decided = self._choose(position) if decided is None else decided
                reached, decided = _drain(self._advance(position, decided, review=False))
                if reached is None:
                    return
                position = reached
        except TokenBudgetTooSmall:
            return  # the decoding itself meets this, if it goes this way
        finally:
            kept = len(self._history) - start
            self._discard(kept)
            evaluated = kept + self.stats.discarded_tokens
            self.grounding, self._zeros, self._repeats, self.settings, self.stats, self.written, self.choices = saved
            self.budget_bound_at, self._probability = marks
            self.stats.preview_tokens += evaluated

    # -- the model ---------------------------------------------------------------------

    def _evaluate(self, tokens: list[int]) -> None:
        if tokens:
            self.model.eval(tokens)
            self._history.extend(tokens)
            self._logits = None
            self.stats.model_calls += 1

    def _evaluate_with_logits(self, tokens: list[int], rows: list[int]) -> Logits:
        logits = self.model.eval_with_logits(tokens, rows)
        self._history.extend(tokens)
        self.stats.model_calls += 1
        return logits

    def _discard(self, count: int) -> None:
        if count:
            self.model.discard(count)
            self._history.truncate(len(self._history) - count)

    def canonical_tokens(self, text: bytes) -> list[int]:
        """The model's own tokenization of `text` (core.canonical)."""
        return canonical_tokens(text, self.model.tokenize, self._table)

    def _choose(self, position: _Position) -> int:
        """The next token id, or _END for end of generation."""
        allowed = self._allowed(position)
        if allowed.budget_cut and self.budget_bound_at is None:
            self.budget_bound_at = self.written
        ids = allowed.ids
        if self.grounding is not None:
            ids = self.grounding.restrict(position.pending, ids)
        if len(ids) == 0:
            if allowed.may_end:
                return _END
            raise TokenBudgetTooSmall(self.settings.max_tokens)
        if len(ids) == 1 and not allowed.may_end:
            self._probability = None
            return int(ids[0])
        choices = np.concatenate([ids, self._eog]) if allowed.may_end else ids
        logits = self.model.last_logits() if self._logits is None else self._logits
        index = self._sample(logits[choices])
        if self._repeats is not None:
            index = self._avoid_loops(position, choices, logits[choices], index)
        self.stats.sampled_tokens += 1
        if allowed.may_end and (index >= len(ids) or int(ids[index]) in self.compiled.vocab.eog_ids):
            return _END
        self._probability = _probability(logits, int(ids[index]))
        return int(ids[index])

    def _sample(self, logits: npt.NDArray[np.float32]) -> int:
        if self.settings.temperature <= 0:
            return int(np.argmax(logits))
        scaled = logits.astype(np.float64) / self.settings.temperature
        probs = np.exp(scaled - scaled.max())
        probs /= probs.sum()
        if self.settings.top_p < 1.0:
            order = np.argsort(-probs)
            cumulative = np.cumsum(probs[order])
            cut = int(np.searchsorted(cumulative, self.settings.top_p)) + 1
            kept = order[:cut]
            return int(kept[self._rng.choice(len(kept), p=probs[kept] / probs[kept].sum())])
        return int(self._rng.choice(len(probs), p=probs))


def _drain(steps: Generator[bytes, None, tuple[_Position | None, int | None]]) -> tuple[_Position | None, int | None]:
    """Run `steps` to its end, dropping what it yields; its value."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def _probability(logits: Logits, token: int) -> float:
    """The model's own probability for `token`: softmax at temperature 1 over the whole
    vocabulary, before any mask."""
    row = logits.astype(np.float64)
    top = row.max()
    return float(np.exp(row[token] - top) / np.exp(row - top).sum())
