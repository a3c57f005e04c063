"""Choice policies: what narrows, vetoes or changes the decoder's choices, through one protocol.

The decoder (core.decode.decoder) makes every choice the same way, whatever watches it: the
tokens the automaton allows, narrowed by each policy in turn (`narrow`); one drawn from the
model's scores, which each policy may draw again (`redraw`); its confidence the model's
probability, or its share among the tokens left where a policy says so. Greedy decoding may
take the model's own first choice without listing the allowed tokens, unless a policy would
have a say there (`lets_first`). Before a chosen token is taken, each policy may put another
in its place (`review`, which may try the decoding ahead and take it all back: `Decoding`),
then learns what it wrote (`taken`); a guessed token a policy must see chosen ends a draft
(`stops_draft`). The decoder holds its policies in order and calls them in that order on
every path, so another policy is one more object, not an edit of the decoder.

Each policy reads the output through a follower of the decoding's state (core.decode.state),
which the state snapshots and restores; a policy keeps nothing else that a snapshot would miss.
The policies: grounding (core.decode.grounding_policy) and the repetition guard
(core.decode.repetition_policy).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Protocol

from ..vocab.token_table import IdArray
from .requests import Evaluate
from .state import DecodeState, Position
from .types import DecodeStats, Logits

# What taking a token yields and is sent: bytes written (sent None), or an evaluation (sent its
# logits rows); its value, whether the document goes on and the choice already made at the
# position reached, if one was.
Going = Generator[bytes | Evaluate, Logits | None, tuple[bool, int | None]]
# A review: the evaluations it needs (a preview), then the token to take.
Review = Generator[Evaluate, Logits | None, int]


@dataclass
class Choice:
    """One choice being made at `position`: the tokens still allowed (`ids`, which each policy
    may narrow in turn), and whether the chosen token's confidence is to be its share among
    them rather than the model's probability for it (`shared`)."""

    position: Position
    ids: IdArray
    shared: bool = False


@dataclass(frozen=True)
class Draw:
    """A token drawn for a choice at `position`: `index` into `choices` (the allowed ids, then
    the end-of-generation ones where the document may end), drawn by `sample` from `scores`
    (the model's, for `choices`). `stats`: the decoding's figures, where a policy counts what
    it changed."""

    position: Position
    choices: IdArray
    scores: Logits
    index: int
    sample: Callable[[Logits], int]
    stats: DecodeStats


class Decoding(Protocol):
    """What a policy's review may ask of the decoding (core.decode.decoder.Decoder): its
    state, the tokens allowed at a position, and trying the decoding ahead. What it tries, it
    takes back itself: the state restored from a snapshot, the evaluated tokens discarded."""

    state: DecodeState

    def allowed_ids(self, position: Position) -> IdArray:
        """The tokens allowed at `position`, as the policies narrow them."""
        ...

    def greedy(self) -> Decoding:
        """This decoding choosing greedily: its state, model context and policies shared."""
        ...

    def choose(self) -> int:
        """The next token at the state's position (or END)."""
        ...

    def advance(self, token: int, review: bool = True) -> Going:
        """Take `token` chosen at the state's position (`review` False: no policy reviews it)."""
        ...

    def discard(self, count: int) -> None:
        """Forget the last `count` evaluated tokens."""
        ...


class ChoicePolicy(Protocol):
    """A say in a decoding's choices (see the module's docstring). Each hook's default changes
    nothing, so a policy defines only those it needs; one that narrows or draws again also
    says, in `lets_first`, where that could change the model's first choice."""

    def narrow(self, choice: Choice) -> None:
        """Rule tokens out of `choice.ids` before one is drawn (and set `choice.shared` where
        the confidence is to be a share among those left)."""
        return None

    def lets_first(self, token: int, allows: Callable[[int], bool]) -> bool:
        """Whether greedy decoding may take the model's first choice `token` at a position with
        nothing pending or held, without the full choice (`allows`: whether the automaton
        allows a token there, within the budget)."""
        return True

    def redraw(self, draw: Draw) -> int:
        """The index into `draw.choices` to take instead of `draw.index` (or that one)."""
        return draw.index

    def shares_confidence(self, token: int) -> bool:
        """Whether `token`, just chosen, gets its share among the choices left as its confidence."""
        return False

    def review(self, decoding: Decoding, position: Position, token: int) -> Review:
        """The token to take at `position` instead of `token` (or that one), about to be taken."""
        return unchanged(token)

    def taken(self, position: Position, token: int, text: bytes) -> None:
        """`token`, reviewed, was taken at `position` and decided `text` (the forced text after
        it too)."""
        return None

    def stops_draft(self, text: bytes) -> bool:
        """Whether a guessed token that writes `text` ends the draft before it (text to be
        chosen, and reviewed, rather than guessed)."""
        return False


def unchanged(token: int) -> Review:
    """A review that asks for nothing and keeps `token`."""
    yield from ()
    return token
