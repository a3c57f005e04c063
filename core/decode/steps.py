"""Carrying out one chosen token in a decoding (core.decode.decoder): the bytes it decides (its own and
the forced text after it), the zeros it holds back (core.decode.held_zeros) and the tokens to
evaluate for it. `Steps` keeps nothing of a decoding: each call is given the position
(core.decode.state) and what follows the output, so one serves any number of decodings.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass

from ..index.compiled import CompiledSchema, token_table
from ..index.guide import Allowed, Guide
from ..vocab.canonical import canonical_tokens
from .held_zeros import Held, ZeroHolder
from .state import END, DecodeState, Position, TokenChoice


@dataclass(frozen=True)
class Step:
    """What choosing one token does: the bytes it decides (its own and the forced text after
    it), the tokens to evaluate for them, and where decoding stands afterwards."""

    token: int
    text: bytes
    evaluated: list[int]
    after: Position
    final_tokens: int = 0  # > 0: the document is complete, with this many unevaluated tokens


class Steps:
    """What taking a token does under one compiled schema, budget and tokenizer."""

    def __init__(self, compiled: CompiledSchema, max_tokens: int, tokenize: Callable[[bytes], list[int]]) -> None:
        self._pieces = compiled.vocab.pieces
        self._table = token_table(compiled.vocab)
        self._max_tokens = max_tokens
        self._tokenize = tokenize

    @staticmethod
    def after(position: Position, token: int) -> Guide:
        """A guide past `token` (allowed at `position`), the position's own left as it was."""
        after = position.guide.copy()
        after.advance(token)
        return after

    def allowed(self, position: Position) -> Allowed:
        """The choices at `position`: the automaton's, held text or not."""
        return position.guide.allowed(self._max_tokens - position.used, position.pending)

    def step(self, position: Position, token: int, after: Guide, zeros: ZeroHolder) -> Step:
        """Choosing `token` at `position`; `after` is the position's guide past it, `zeros` the
        holder that has followed the text up to `position`."""
        piece = self._pieces[token]
        held = self.held_after(position, token, after, zeros)
        if held is not None:
            return Step(token, b"", [token], position.at(after, held=held))
        forced = after.forced_text()
        if forced or after.is_finished():
            return self.forced_step(token, position, piece + forced, piece[len(position.pending) :] + forced)
        return Step(token, piece[len(position.pending) :], [token], position.at(after))

    def forced_step(self, token: int, position: Position, tail: bytes, text: bytes) -> Step:
        """`tail` (the chosen token's bytes and the forced text after it) tokenized
        canonically: all but the last token are evaluated, the last is held back so the
        model may merge it with what follows (a space before a value, a quote before its
        first characters)."""
        tokens = canonical_tokens(tail, self._tokenize, self._table)
        after = position.guide.copy()
        for each in tokens:
            after.advance(each)
        if after.is_finished():
            return Step(token, text, [], position, final_tokens=len(tokens))
        after.rollback(1)
        return Step(token, text, tokens[:-1], position.at(after, self._pieces[tokens[-1]]))

    # -- zeros held at the end of a number (core.decode.held_zeros) ---------------------------

    def held_after(self, position: Position, token: int, after: Guide, zeros: ZeroHolder) -> Held | None:
        """What is held once `token` is taken at `position` (`after` is past it; `zeros` as in
        step): nothing inside a string or after pending text. Text the automaton forces after
        held zeros is then chosen token by token (the tokens it allows are its own), so that
        the zeros may still be dropped when it ends the number (`10.000` at the digit limit)."""
        if zeros.in_string or position.pending:
            return None
        return zeros.hold(position.held, self._pieces[token], position.guide)

    def settle(self, state: DecodeState, token: int) -> Generator[bytes, None, Position]:
        """Where `token` (or END) leaves the text held at the state's position: still held
        (more zeros); dropped, where the token ends the number and the automaton takes it
        right after the written text (the token is then taken there, and the held tokens'
        choices are put on the number's last byte, so they still count for it); or written."""
        position, zeros = state.position, state.followers.zeros
        held = position.held
        assert held is not None
        if token != END and self.held_after(position, token, self.after(position, token), zeros) is not None:
            return position
        if zeros.droppable(held, None if token == END else token, b"" if token == END else self._pieces[token]):
            last, kept = max(state.written - 1, 0), len(state.choices) - held.choices
            state.choices[kept:] = [TokenChoice(last, state.written, choice.probability) for choice in state.choices[kept:]]
            return Position(held.before, skipped=position.skipped + position.guide.tokens_taken - held.before.tokens_taken)
        yield state.emit(held.text)
        return position.at(position.guide)
