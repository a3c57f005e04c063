"""The decoding loop: sample at branching states, jump forward over forced text.

Decoding walks the schema with a Guide (core.index.guide) and nothing else of the compiled schema.
A decoding's state is one value (core.decode.state.DecodeState); what taking a token does
(the bytes it decides, the zeros it holds) is core.decode.steps; the Decoder makes the
choices and writes the output. It never calls the model: `steps` is a generator that yields
the bytes written and the evaluations it needs (core.decode.requests.Evaluate) and is sent the
logits rows back, so one scheduler (core.runtime.scheduler) steps every document of a batch
from one loop, and `run` drives it alone on a TokenModel.

Invariants:
- Budget: a token is allowed only if, after it, the bytes still needed to close the document
  (an upper bound on tokens for byte-level vocabularies) fit in what is left of
  `max_tokens`, so the document can always close inside the budget.
- Speculation: after a chosen token with no forced text behind it, up to
  `draft_tokens` guessed tokens (core.decode.lookahead) are evaluated in the same batch. Each is
  kept only if the choice made from the logits before it, exactly as without the guess,
  picks it; the first choice that differs is carried over as the next token. The output is
  the same with or without drafts (up to the float rounding of batched evaluation); only
  the number of model calls changes. Guesses are fed to the followers as they are made, and
  the followers restored after.
- Policies (core.decode.policy): grounding (core.decode.grounding_policy, with a Grounding)
  and the repetition guard (core.decode.repetition_policy, `stop_repeats`) narrow, veto or
  change choices through one protocol, called in that order on both ways a choice is made
  (the full choice and greedy decoding's shortcut) and before each chosen token is taken.
  Only `choice_policies`, which gathers them, names any of them. A policy's review may
  decode ahead greedily and take it all back (the repetition guard's preview of an array's
  next item): the decoder offers it the state, the allowed tokens, a greedy copy of itself
  and the model's context to discard (core.decode.policy.Decoding).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import accumulate

import numpy as np

from ..errors import TokenBudgetTooSmall
from ..grounding.follower import Grounding
from ..index.compiled import CompiledSchema
from ..vocab.token_table import IdArray, Vocabulary
from .grounding_policy import GroundingPolicy
from .lookahead import TokenHistory
from .policy import Choice, ChoicePolicy, Draw, Going
from .repetition import RepetitionGuard
from .repetition_policy import RepetitionPolicy
from .requests import DecodeSteps, Evaluate, drive
from .sampling import probability, sample, share
from .state import END, DecodeState, Followers, Position, TokenChoice
from .steps import Step, Steps
from .types import DecodeStats, Logits, SamplingSettings, Tokenizer, TokenModel

# Forced tokens (keys, separators) a draft may carry beyond its guessed ones.
_FORCED_TOKENS_PER_DRAFT = 16
# The most tokens one speculative batch holds (llama.cpp's n_batch is 512, less only with a
# context under 512 tokens, too small for any prompt with a schema in it).
LARGEST_DRAFT_BATCH = 48


def start_state(
    compiled: CompiledSchema, settings: SamplingSettings, seen: Sequence[int] = (), grounding: Grounding | None = None
) -> DecodeState:
    """The state a decoding starts from: nothing written, `seen` (the part of the prompt worth
    copying from) in the history drafts are looked up in."""
    history = TokenHistory(seen, len(seen) + settings.max_tokens)
    repeats = RepetitionGuard() if settings.stop_repeats else None
    return DecodeState(Position(compiled.guide()), Followers(history, repeats, grounding))


def choice_policies(followers: Followers, vocab: Vocabulary) -> tuple[ChoicePolicy, ...]:
    """The policies over a decoding's choices, in the order they act, each asking the
    follower it is made with: grounding narrows the allowed tokens first, so the repetition
    guard draws again only among those it keeps."""
    policies: list[ChoicePolicy] = []
    if followers.grounding is not None:
        policies.append(GroundingPolicy(followers.grounding))
    if followers.repeats is not None:
        policies.append(RepetitionPolicy(followers.repeats, vocab))
    return tuple(policies)


@dataclass
class _Cells:
    """Tokens the model's sequence is to forget before its next evaluation (rejected guesses,
    a previewed item): shared by a decoding and its greedy copy in a preview."""

    drop: int = 0


class Decoder:
    """One constrained generation, stepped (`steps`): the model holds the prompt already;
    `seen` is the part of it worth copying from (the document), searched for draft tokens.
    `tokenizer` tokenizes forced text (any object with the model's `tokenize`; with a
    TokenModel, `run` drives the decoding on it)."""

    def __init__(
        self,
        tokenizer: Tokenizer,
        compiled: CompiledSchema,
        settings: SamplingSettings,
        seen: Sequence[int] = (),
        grounding: Grounding | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        self.compiled = compiled
        self.settings = settings
        self.state = start_state(compiled, settings, seen, grounding)
        self._steps = Steps(compiled, settings.max_tokens, tokenizer.tokenize)
        self._cells = _Cells()
        self._pieces = compiled.vocab.pieces
        self._rng = np.random.default_rng(settings.seed)
        self._eog = np.asarray(compiled.vocab.eog_ids, dtype=np.int32)
        self._policies = choice_policies(self.state.followers, compiled.vocab)

    @property
    def stats(self) -> DecodeStats:
        return self.state.stats

    @property
    def choices(self) -> list[TokenChoice]:
        """Every token chosen, with the model's probability for it."""
        return self.state.choices

    @property
    def grounding(self) -> Grounding | None:
        return self.state.followers.grounding

    @property
    def tokens_to_forget(self) -> int:
        """Evaluated tokens the model's sequence is still to forget (a guess rejected after the
        last evaluation): they go with the next evaluation, and at the end with the sequence."""
        return self._cells.drop

    @property
    def budget_bound_at(self) -> int | None:
        """The output offset where the budget first ruled out a token (None: it never did)."""
        return self.state.budget_bound_at

    def run(self) -> Iterator[bytes]:
        """Yield the output's bytes as they are decided, decoding alone on the TokenModel this
        decoder was made with (which holds the prompt)."""
        model = self.tokenizer
        if not isinstance(model, TokenModel):
            raise TypeError("Decoder.run needs a TokenModel; step `steps` with logits elsewhere")
        return drive(self.steps(model.last_logits()), model)

    def steps(self, logits: Logits) -> DecodeSteps:
        """The decoding, stepped: `logits` is the row after the prompt's last token. Yields each
        piece of output as it is decided (send None back) and each evaluation it needs (send its
        logits rows back: core.decode.requests.Evaluate)."""
        started = time.perf_counter()
        self.state.logits = logits
        try:
            yield from self._loop()
        finally:
            self.stats.generate_seconds = time.perf_counter() - started
            self.stats.forced_tokens = max(self.stats.output_tokens - self.stats.sampled_tokens, 0)

    def _loop(self) -> Generator[bytes | Evaluate, Logits | None, None]:
        state = self.state
        shortest = state.position.guide.shortest_completion()
        if shortest > self.settings.max_tokens:
            raise TokenBudgetTooSmall(self.settings.max_tokens, shortest)
        forced = state.position.guide.forced_text()
        if forced:
            opening = self._steps.forced_step(-1, state.position, forced, forced)
            yield state.emit(opening.text)
            if opening.final_tokens:
                state.stats.output_tokens = opening.final_tokens
                return
            yield from self._evaluate(opening.evaluated)
            state.position = opening.after
        decided: int | None = None
        while True:
            token = self.choose() if decided is None else decided
            going_on, decided = yield from self.advance(token)
            if not going_on:
                return

    def advance(self, token: int, review: bool = True) -> Going:
        """Take `token` (or END) chosen at the state's position: write what it decides,
        evaluate it (with guessed tokens after it, where there are some). `review`: the
        policies may put another token in its place first, and learn what it wrote
        (core.decode.policy). Returns (as the generator's value) whether the document goes on,
        and the choice already made at the position reached, if one was."""
        state = self.state
        if state.position.held is not None:
            state.position = yield from self._steps.settle(state, token)
        position = state.position
        if token == END:
            state.stats.output_tokens = position.used
            return False, None
        if review:
            for policy in self._policies:
                token = yield from policy.review(self, position, token)
        step = self._steps.step(position, token, self._steps.after(position, token), state.followers.zeros)
        if review:
            for policy in self._policies:
                policy.taken(position, token, step.text)
        state.record(position, len(self._pieces[token]))
        yield state.emit(step.text)
        if step.final_tokens:
            state.stats.output_tokens = position.used + step.final_tokens
            return False, None
        state.position = step.after
        drafted = self._draft(step) if step.evaluated and step.after.held is None else []
        if not drafted:
            yield from self._evaluate(step.evaluated)
            return True, None
        return (yield from self._verify(step, drafted))

    def greedy(self) -> Decoder:
        """This decoding choosing greedily: the same state, model context, policies and random
        state (greedy choices draw nothing). A policy's review decodes ahead with it."""
        greedy = copy.copy(self)
        greedy.settings = replace(self.settings, temperature=0.0)
        return greedy

    # -- speculation -------------------------------------------------------------------

    def _draft(self, step: Step) -> list[Step]:
        """Guessed steps to evaluate in the same batch as `step`: the history's continuation
        after it, as far as the automaton allows each guessed token, the document stays
        open, the budget holds and the evaluated tokens keep following the continuation.
        The followers follow the guessed text while they are drafted, and are restored after."""
        most = self.settings.draft_tokens
        if most <= 0:
            return []
        followers = self.state.followers
        guesses = followers.history.continuation(most + _FORCED_TOKENS_PER_DRAFT, then=step.evaluated)
        mark = followers.snapshot()
        try:
            return self._guessed_steps(step, guesses)
        finally:
            followers.restore(mark)

    def _guessed_steps(self, step: Step, guesses: list[int]) -> list[Step]:
        drafted: list[Step] = []
        followers = self.state.followers
        position, cursor, size = step.after, 0, len(step.evaluated)
        while cursor < len(guesses) and len(drafted) < self.settings.draft_tokens:
            guess = self._guessed_step(position, guesses[cursor])
            if guess is None or guess.final_tokens or size + len(guess.evaluated) > LARGEST_DRAFT_BATCH:
                break
            if any(policy.stops_draft(guess.text) for policy in self._policies):
                break  # text a policy reviews when chosen (another array item) is never guessed
            drafted.append(guess)
            followers.feed(guess.text)
            size += len(guess.evaluated)
            if guess.evaluated != guesses[cursor : cursor + len(guess.evaluated)] or not guess.evaluated:
                break
            position, cursor = guess.after, cursor + len(guess.evaluated)
        return drafted

    def _guessed_step(self, position: Position, token: int) -> Step | None:
        if not self._pieces[token].startswith(position.pending):
            return None
        after = position.guide.copy()
        if not after.try_advance(token):
            return None
        if position.skipped + after.tokens_taken + after.shortest_completion() > self.settings.max_tokens:
            return None
        zeros = self.state.followers.zeros
        if self._steps.held_after(position, token, after, zeros) is not None:
            return None  # zeros the choice might hold: the output there is decided token by token
        return self._steps.step(position, token, after, zeros)

    def _verify(self, step: Step, drafted: list[Step]) -> Going:
        """Evaluate `step` and the drafted steps in one batch, then keep each drafted step
        whose token is the one chosen from the logits before it. Returns (as the generator's
        value) that the document goes on, and the choice that rejected a guess, if one did."""
        state = self.state
        batch = step.evaluated + [token for guess in drafted for token in guess.evaluated]
        cursors = list(accumulate([len(step.evaluated)] + [len(guess.evaluated) for guess in drafted]))
        wanted = sorted({cursor - 1 for cursor in cursors})  # the logits before each guess, and at the end
        found = yield from self._evaluate_with_logits(batch, wanted)
        rows = dict(zip(wanted, found, strict=True))
        state.stats.drafted_tokens += len(drafted)
        for guess, cursor in zip(drafted, cursors, strict=False):
            state.logits = rows[cursor - 1]
            decided = self.choose()
            if decided != guess.token:
                self.discard(len(batch) - cursor)
                state.stats.discarded_tokens += len(batch) - cursor
                return True, decided
            state.stats.accepted_draft_tokens += 1
            state.record(state.position, len(self._pieces[guess.token]))
            yield state.emit(guess.text)
            state.position = guess.after
        state.logits = rows[cursors[-1] - 1]
        return True, None

    # -- choosing ----------------------------------------------------------------------

    def choose(self) -> int:
        """The next token id at the state's position, or END for end of generation."""
        first = self._model_first_choice()
        if first is not None:
            return first
        state = self.state
        position = state.position
        allowed = self._steps.allowed(position)
        if allowed.budget_cut and state.budget_bound_at is None:
            state.budget_bound_at = state.written
        choice = self._narrowed(position, allowed.ids)
        ids = choice.ids
        if len(ids) == 0:
            if allowed.may_end:
                return END
            raise TokenBudgetTooSmall(self.settings.max_tokens)
        if len(ids) == 1 and not allowed.may_end:
            state.probability = None
            return int(ids[0])
        choices = np.concatenate([ids, self._eog]) if allowed.may_end else ids
        logits = state.logits
        assert logits is not None  # every evaluation sets it, the prompt's first
        scores = logits[choices]
        index = self._sample(scores)
        for policy in self._policies:
            index = policy.redraw(Draw(position, choices, scores, index, self._sample, state.stats))
        state.stats.sampled_tokens += 1
        if allowed.may_end and (index >= len(ids) or int(ids[index]) in self.compiled.vocab.eog_ids):
            return END
        # A held value's confidence is the model's choice among what the document states (a
        # date, number, term or pattern string the model would not have written unmasked may still be the one
        # it prefers of the document's): on the development set its AUROC went 0.533 -> 1.000
        # for numbers, 0.886 -> 0.928 for strings. So is a string held to the values the document
        # labels with its property's name (core.grounding.labels): unmasked, the model's doubt about
        # a right `>=3.9` made grounded strings' AUROC 0.908 (0.958 so) and ECE 0.193 (0.142). Any
        # other grounded plain string's stays the unmasked probability: masked, its AUROC fell to
        # 0.823. Grounding's policy (core.decode.grounding_policy) says which choices are such.
        token = int(ids[index])
        shared = choice.shared or any(policy.shares_confidence(token) for policy in self._policies)
        state.probability = share(scores, index) if shared else probability(logits, token)
        return token

    def allowed_ids(self, position: Position) -> IdArray:
        """The tokens allowed at `position`, as the policies narrow them (a policy's review
        asks: the tokens it may take instead of the one chosen)."""
        return self._narrowed(position, self._steps.allowed(position).ids).ids

    def _narrowed(self, position: Position, ids: IdArray) -> Choice:
        choice = Choice(position, ids)
        for policy in self._policies:
            policy.narrow(choice)
        return choice

    def _model_first_choice(self) -> int | None:
        """Greedy decoding's choice, where it is the model's own first choice: that token is
        the highest score among the allowed ones too when it is allowed (the tokens allowed
        need not be listed, which is most of the work at a state met for the first time).
        None where the full choice must be made: sampling, held text, a tie for the first
        place, a token the schema or the budget rules out here, one a policy would have a say
        about (core.decode.policy: `lets_first`), or no other choice besides (no confidence then)."""
        state, settings = self.state, self.settings
        position = state.position
        if settings.temperature > 0 or position.pending or position.held is not None:
            return None
        logits = state.logits
        assert logits is not None
        token = int(np.argmax(logits))
        if np.isnan(logits[token]) or np.count_nonzero(logits == logits[token]) > 1:
            return None  # a tie (or a NaN, which argmax takes first): the full choice's order decides
        budget, guide = settings.max_tokens - position.used, position.guide
        if token >= guide.vocabulary_size:
            return None  # logits wider than the vocabulary: such a token is never allowed
        if not (guide.budget_cuts_nothing(budget) and guide.allows_among_others(token, budget)):
            return None  # where the budget may cut a token, the full choice says so (budget_bound_at)
        if not all(policy.lets_first(token, lambda other: guide.allows(other, budget)) for policy in self._policies):
            return None
        state.stats.sampled_tokens += 1
        state.probability = probability(logits, token)
        return token

    def _sample(self, logits: Logits) -> int:
        return sample(logits, self.settings.temperature, self.settings.top_p, self._rng)

    # -- the model ---------------------------------------------------------------------

    def _evaluate(self, tokens: list[int]) -> Generator[Evaluate, Logits | None, None]:
        if tokens:
            rows = yield self._request(tokens, None)
            assert rows is not None
            self.state.followers.history.extend(tokens)
            self.state.logits = rows[0]
            self.stats.model_calls += 1

    def _evaluate_with_logits(self, tokens: list[int], rows: list[int]) -> Generator[Evaluate, Logits | None, Logits]:
        logits = yield self._request(tokens, rows)
        assert logits is not None
        self.state.followers.history.extend(tokens)
        self.stats.model_calls += 1
        return logits

    def _request(self, tokens: list[int], rows: list[int] | None) -> Evaluate:
        """The evaluation of `tokens`, the tokens discarded since the last one forgotten first."""
        request = Evaluate(tokens, rows, self._cells.drop)
        self._cells.drop = 0
        return request

    def discard(self, count: int) -> None:
        """Forget the last `count` evaluated tokens (the model's sequence at its next evaluation)."""
        if count:
            self._cells.drop += count
            history = self.state.followers.history
            history.truncate(len(history) - count)
