"""Grounding's say in the decoder's choices (core.decode.policy): strings and values held to
what the document states (core.grounding.follower).

At each choice the tokens allowed are narrowed to those keeping a grounded string on a span of
the document, or a grounded date, number, term or pattern string on a value it states
(`Grounding.restrict`, which may release a body no candidate keeps). The model's own first
choice is taken as it is only where grounding keeps it and another token besides, so the
narrowing would not have decided it. The Grounding follows the output as a follower of the
decoding's state; this policy only asks it.
"""

from __future__ import annotations

from collections.abc import Callable

from ..grounding.follower import Grounding
from .policy import Choice, ChoicePolicy


class GroundingPolicy(ChoicePolicy):
    """Grounding's hooks on a decoding's choices; `grounding` follows its output."""

    def __init__(self, grounding: Grounding) -> None:
        self.grounding = grounding

    def narrow(self, choice: Choice) -> None:
        """The tokens that keep the open string or value on the document's. A value held to the
        document's candidates, and still held after narrowing, gets its share among them as
        its confidence (see the decoder's `choose`)."""
        grounding, position = self.grounding, choice.position
        held = grounding.holding_value
        choice.ids = grounding.restrict(position.pending, choice.ids, position.held_text)
        choice.shared = choice.shared or (held and grounding.holding_value)

    def lets_first(self, token: int, allows: Callable[[int], bool]) -> bool:
        """Where grounding keeps `token` and another besides; else the full choice, which also
        releases a body no candidate keeps on the document."""
        return self.grounding.keeps_beside_another(token, allows)

    def shares_confidence(self, token: int) -> bool:
        """A string held to the values the document labels with its property's name
        (core.grounding.labels): `token` was chosen among the few those values allow."""
        return self.grounding.labeled_choice(token)
