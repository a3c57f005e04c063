"""Carrying out one chosen token in a decoding (core.decode): the bytes it decides (its own and
the forced text after it), the zeros it holds back (core.held_zeros), the output it writes (and
what follows the output: grounding, held zeros, the repetition guard) and the model context it
is evaluated into. `DecoderSteps` holds a decoding's state and these mechanics; core.decode's
Decoder, built on it, makes the choices.

Invariants:
- The position's guide has taken the tokens evaluated so far, less those whose text was
  dropped (`skipped`), so `tokens_taken + skipped` is the budget used.
- `pending` is decided text not yet evaluated: the last token of a canonically tokenized
  forced run, held back so the model may merge it with what follows (a space before a
  value, a quote before its first characters). The next token must start with it.
- `held` is text evaluated but not written: zeros that end a number's fraction so far,
  written once a digit follows, dropped if the number ends where the written text may end it
  (core.held_zeros). The guide is past the held text; the Held keeps one before it. No
  guesses are drafted while text is held.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass

from .canonical import canonical_tokens
from .compiled import CompiledSchema, token_table
from .decode_types import DecodeStats, Logits, SamplingSettings, TokenModel
from .evidence import TokenChoice
from .grounding import Grounding
from .guide import Allowed, Guide
from .held_zeros import Held, ZeroHolder
from .lookahead import TokenHistory
from .repetition import RepetitionGuard

END = -1  # the choice that ends generation


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

    def at(self, guide: Guide, pending: bytes = b"", held: Held | None = None) -> Position:
        """A position further on (the tokens skipped so far carried along)."""
        return Position(guide, pending, held, self.skipped)


@dataclass(frozen=True)
class Step:
    """What choosing one token does: the bytes it decides (its own and the forced text after
    it), the tokens to evaluate for them, and where decoding stands afterwards."""

    token: int
    text: bytes
    evaluated: list[int]
    after: Position
    final_tokens: int = 0  # > 0: the document is complete, with this many unevaluated tokens


class DecoderSteps:
    """A decoding's state, and what carrying out a chosen token does to it (core.decode.Decoder
    chooses the tokens)."""

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
        self._history = TokenHistory(seen, len(seen) + settings.max_tokens)
        self._logits: Logits | None = None  # None: the model's last row is current
        self.grounding = grounding
        self.choices: list[TokenChoice] = []  # every token chosen, with the model's probability for it
        self.written = 0  # output bytes so far
        self._probability: float | None = None  # the model's probability for the latest choice
        self._zeros = ZeroHolder()
        self._repeats = RepetitionGuard() if settings.stop_repeats else None

    # -- steps -------------------------------------------------------------------------

    @staticmethod
    def _after(position: Position, token: int) -> Guide:
        """A guide past `token` (allowed at `position`), the position's own left as it was."""
        after = position.guide.copy()
        after.advance(token)
        return after

    def _step(self, position: Position, token: int, after: Guide, zeros: ZeroHolder | None = None) -> Step:
        """Choosing `token` at `position`; `after` is the position's guide past it. `zeros`:
        the holder that has followed the output up to `position` (by default the decoding's:
        a guess ahead of the output brings its own)."""
        piece = self._pieces[token]
        held = self._held_after(position, token, after, zeros)
        if held is not None:
            return Step(token, b"", [token], position.at(after, held=held))
        forced = after.forced_text()
        if forced or after.is_finished():
            return self._forced_step(token, position, piece + forced, piece[len(position.pending) :] + forced)
        return Step(token, piece[len(position.pending) :], [token], position.at(after))

    def _forced_step(self, token: int, position: Position, tail: bytes, text: bytes) -> Step:
        """`tail` (the chosen token's bytes and the forced text after it) tokenized
        canonically: all but the last token are evaluated, the last is held back so the
        model may merge it with what follows (a space before a value, a quote before its
        first characters)."""
        tokens = self.canonical_tokens(tail)
        after = position.guide.copy()
        for each in tokens:
            after.advance(each)
        if after.is_finished():
            return Step(token, text, [], position, final_tokens=len(tokens))
        after.rollback(1)
        return Step(token, text, tokens[:-1], position.at(after, self._pieces[tokens[-1]]))

    # -- zeros held at the end of a number (core.held_zeros) ---------------------------

    def _held_after(self, position: Position, token: int, after: Guide, zeros: ZeroHolder | None = None) -> Held | None:
        """What is held once `token` is taken at `position` (`after` is past it; `zeros` as in
        _step): nothing inside a string or after pending text. Text the automaton forces after
        held zeros is then chosen token by token (the tokens it allows are its own), so that
        the zeros may still be dropped when it ends the number (`10.000` at the digit limit)."""
        zeros = zeros or self._zeros
        if zeros.in_string or position.pending:
            return None
        return zeros.hold(position.held, self._pieces[token], position.guide)

    def _settle(self, position: Position, token: int) -> Generator[bytes, None, Position]:
        """Where `token` (or END) leaves the text held at `position`: still held (more zeros);
        dropped, where the token ends the number and the automaton takes it right after the
        written text (the token is then taken there, and the held tokens' choices are put on
        the number's last byte, so they still count for it); or written."""
        held = position.held
        assert held is not None
        if token != END and self._held_after(position, token, self._after(position, token)) is not None:
            return position
        if self._zeros.droppable(held, None if token == END else token, b"" if token == END else self._pieces[token]):
            last = max(self.written - 1, 0)
            kept = len(self.choices) - held.choices
            self.choices[kept:] = [TokenChoice(last, self.written, choice.probability) for choice in self.choices[kept:]]
            return Position(held.before, skipped=position.skipped + position.guide.tokens_taken - held.before.tokens_taken)
        yield self._emit(held.text)
        return position.at(position.guide)

    def _allowed(self, position: Position) -> Allowed:
        """The choices at `position`: the automaton's, held text or not."""
        return position.guide.allowed(self.settings.max_tokens - position.used, position.pending)

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

    def _record(self, token: int, position: Position) -> None:
        """Note the chosen `token` (its bytes start with the pending ones, already written, or
        follow the held ones)."""
        start = self.written - len(position.pending) + (len(position.held.text) if position.held is not None else 0)
        self.choices.append(TokenChoice(start, start + len(self._pieces[token]), self._probability))

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
