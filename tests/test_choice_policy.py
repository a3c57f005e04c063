"""Choice policies (core.decode.policy): a policy the decoder holds has its say on both ways a
choice is made (the full choice and greedy decoding's shortcut), after those before it, and a
policy that changes nothing changes no choice."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from conftest import FakeModel, compile_for
from test_repetition import FavouringModel

from gguf_extract.core.decode import decoder as decoder_module
from gguf_extract.core.decode.decoder import Decoder, choice_policies
from gguf_extract.core.decode.policy import Choice, ChoicePolicy
from gguf_extract.core.decode.state import Followers, Position
from gguf_extract.core.decode.types import SamplingSettings
from gguf_extract.core.vocab.token_table import Vocabulary

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 3},
    },
    "required": ["name", "tags"],
}


class Banning(ChoicePolicy):
    """Rules `banned` out wherever another token is left, and lets no first choice of it through."""

    def __init__(self, banned: int) -> None:
        self.banned = banned

    def narrow(self, choice: Choice) -> None:
        if len(choice.ids) > 1:
            choice.ids = choice.ids[choice.ids != self.banned]

    def lets_first(self, token: int, allows: Callable[[int], bool]) -> bool:
        return token != self.banned


class Watching(ChoicePolicy):
    """Changes nothing but, where `shortcut` is False, greedy decoding's shortcut; notes what
    it is shown: the tokens left to it at each choice, and each token taken."""

    def __init__(self, shortcut: bool = True) -> None:
        self.shortcut = shortcut
        self.shown: list[set[int]] = []
        self.firsts = 0
        self.taken_tokens: list[int] = []

    def narrow(self, choice: Choice) -> None:
        self.shown.append(set(choice.ids.tolist()))

    def lets_first(self, token: int, allows: Callable[[int], bool]) -> bool:
        self.firsts += 1
        return self.shortcut

    def taken(self, position: Position, token: int, text: bytes) -> None:
        self.taken_tokens.append(token)


def decode(
    vocab: Vocabulary, model: FakeModel, temperature: float, added: tuple[ChoicePolicy, ...], monkeypatch: pytest.MonkeyPatch
) -> tuple[bytes, Decoder]:
    """A decoding of SCHEMA (no drafts, so every chosen token is taken one by one) with
    `added` after the policies it would hold anyway."""

    def policies(followers: Followers, vocab: Vocabulary) -> tuple[ChoicePolicy, ...]:
        return (*choice_policies(followers, vocab), *added)

    monkeypatch.setattr(decoder_module, "choice_policies", policies)
    settings = SamplingSettings(max_tokens=120, temperature=temperature, seed=model.seed, draft_tokens=0)
    decoder = Decoder(model, compile_for(SCHEMA, vocab), settings)
    return b"".join(decoder.run()), decoder


@pytest.mark.parametrize("seed", range(6))
def test_a_policy_that_only_stops_the_shortcut_changes_no_greedy_choice(
    vocab: Vocabulary, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shortcut takes the model's first choice as the full choice would have."""
    plain, plain_decoder = decode(vocab, FakeModel(vocab, seed), 0.0, (), monkeypatch)
    watching = Watching(shortcut=False)
    full, full_decoder = decode(vocab, FakeModel(vocab, seed), 0.0, (watching,), monkeypatch)
    assert full == plain and full_decoder.choices == plain_decoder.choices
    assert full_decoder.stats.sampled_tokens == plain_decoder.stats.sampled_tokens
    assert watching.firsts > 0 and len(watching.shown) >= watching.firsts  # every shortcut stopped took the full choice


@pytest.mark.parametrize("temperature", [0.0, 1.0])
@pytest.mark.parametrize("seed", range(4))
def test_a_token_a_policy_rules_out_is_never_chosen_either_way_and_later_policies_never_see_it(
    vocab: Vocabulary, seed: int, temperature: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    favoured = vocab.pieces.index(b"ab")
    before = Watching()
    decode(vocab, FavouringModel(vocab, seed, [b"ab"]), temperature, (before,), monkeypatch)
    assert favoured in before.taken_tokens  # the model writes it wherever it may
    after = Watching()
    output, _ = decode(vocab, FavouringModel(vocab, seed, [b"ab"]), temperature, (Banning(favoured), after), monkeypatch)
    assert favoured not in after.taken_tokens
    assert after.shown and all(favoured not in shown for shown in after.shown)
    assert output.startswith(b'{"name": "')
