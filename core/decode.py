"""The decoding loop: sample at branching states, jump forward over forced text.

Decoding walks the schema with a Guide (core.guide) and nothing else of the compiled schema.

Positions (the guide, the `pending` and `held` text) and carrying out a chosen token (the
bytes it decides, the output, the model context): core.decode_steps.

Invariants:
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
from dataclasses import replace
from itertools import accumulate

import numpy as np

from .compiled import CompiledSchema
from .decode_steps import END, DecoderSteps, Position, Step
from .decode_types import DecodeStats, Logits, SamplingSettings, TokenModel
from .errors import TokenBudgetTooSmall
from .grounding import Grounding
from .held_zeros import ZeroHolder
from .repetition import ItemWatch, avoid, closing_brackets
from .sampling import probability, sample
from .vocab import IdArray

# Forced tokens (keys, separators) a draft may carry beyond its guessed ones.
_FORCED_TOKENS_PER_DRAFT = 16
# The most tokens one speculative batch holds (llama.cpp's n_batch is 512, less only with a
# context under 512 tokens, too small for any prompt with a schema in it).
LARGEST_DRAFT_BATCH = 48
# The most choices a preview of an array's next item makes (it stops sooner: as soon as the
# item stops being a prefix of an earlier one).
_PREVIEW_CHOICES = 64


class Decoder(DecoderSteps):
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
        super().__init__(model, compiled, settings, seen, grounding)
        self._rng = np.random.default_rng(settings.seed)
        self._eog = np.asarray(compiled.vocab.eog_ids, dtype=np.int32)
        self.budget_bound_at: int | None = None  # output offset where the budget first ruled out a token
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
        self, position: Position, token: int, review: bool = True
    ) -> Generator[bytes, None, tuple[Position | None, int | None]]:
        """Take `token` (or END) chosen at `position`: write what it decides, evaluate it
        (with guessed tokens after it, where there are some). `review`: where the token starts
        an array item, see whether it is a copy first (_review). Returns (as the generator's
        value) the position reached (None: the document is complete) and the choice already
        made there, if one was."""
        if position.held is not None:
            position = yield from self._settle(position, token)
        if token == END:
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

    def _start(self) -> Position:
        guide = self.compiled.guide(generating=True)
        shortest = guide.shortest_completion()
        if shortest > self.settings.max_tokens:
            raise TokenBudgetTooSmall(self.settings.max_tokens, shortest)
        return Position(guide)

    # -- speculation -------------------------------------------------------------------

    def _draft(self, step: Step) -> list[Step]:
        """Guessed steps to evaluate in the same batch as `step`: the history's continuation
        after it, as far as the automaton allows each guessed token, the document stays
        open, the budget holds and the evaluated tokens keep following the continuation."""
        most = self.settings.draft_tokens
        if most <= 0:
            return []
        guesses = self._history.continuation(most + _FORCED_TOKENS_PER_DRAFT, then=step.evaluated)
        drafted: list[Step] = []
        position, cursor, size = step.after, 0, len(step.evaluated)
        zeros = self._zeros.copy()  # follows the guessed text, ahead of the output
        while cursor < len(guesses) and len(drafted) < most:
            guess = self._guessed_step(position, guesses[cursor], zeros)
            if guess is None or guess.final_tokens or size + len(guess.evaluated) > LARGEST_DRAFT_BATCH:
                break
            drafted.append(guess)
            zeros.feed(guess.text)
            size += len(guess.evaluated)
            if guess.evaluated != guesses[cursor : cursor + len(guess.evaluated)] or not guess.evaluated:
                break
            position, cursor = guess.after, cursor + len(guess.evaluated)
        if self._repeats is not None:  # another array item is never guessed: _review sees it
            drafted = drafted[: self._repeats.draftable([guess.text for guess in drafted])]
        return drafted

    def _guessed_step(self, position: Position, token: int, zeros: ZeroHolder) -> Step | None:
        if not self._pieces[token].startswith(position.pending):
            return None
        after = position.guide.copy()
        if not after.try_advance(token):
            return None
        if position.skipped + after.tokens_taken + after.shortest_completion() > self.settings.max_tokens:
            return None
        if self._held_after(position, token, after, zeros) is not None:
            return None  # zeros the choice might hold: the output there is decided token by token
        return self._step(position, token, after, zeros)

    def _verify(self, step: Step, drafted: list[Step]) -> Generator[bytes, None, tuple[Position, int | None]]:
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

    # -- runaway values (core.repetition) ----------------------------------------------

    def _avoid_loops(self, position: Position, choices: IdArray, scores: Logits, index: int) -> int:
        """`index`, or the next choice where the token there would make a string loop."""
        assert self._repeats is not None
        skip = len(position.pending)
        loops = self._repeats.loops
        chosen = avoid(scores, index, self._sample, lambda i: loops(self._pieces[int(choices[i])][skip:]))
        self.stats.loops_stopped += chosen != index
        return chosen

    def _review(self, position: Position, token: int) -> int:
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
        self._probability = probability(logits, best)
        return best

    def _preview(self, position: Position, token: int, watch: ItemWatch) -> None:
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

    # -- choosing ----------------------------------------------------------------------

    def _choose(self, position: Position) -> int:
        """The next token id, or END for end of generation."""
        allowed = self._allowed(position)
        if allowed.budget_cut and self.budget_bound_at is None:
            self.budget_bound_at = self.written
        ids = allowed.ids
        if self.grounding is not None:
            ids = self.grounding.restrict(position.pending, ids)
        if len(ids) == 0:
            if allowed.may_end:
                return END
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
            return END
        self._probability = probability(logits, int(ids[index]))
        return int(ids[index])

    def _sample(self, logits: Logits) -> int:
        return sample(logits, self.settings.temperature, self.settings.top_p, self._rng)


def _drain(steps: Generator[bytes, None, tuple[Position | None, int | None]]) -> tuple[Position | None, int | None]:
    """Run `steps` to its end, dropping what it yields; its value."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
