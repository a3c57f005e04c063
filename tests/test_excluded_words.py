"""The trie an excluding machine keeps (core.automaton.excluded_words) tells what a walk of the
machine's rows would: where each word ends, and the words below each position with the bytes
JSON writes to their ends (what the key read as one asks of it, core.automaton.keys)."""

from __future__ import annotations

from typing import Any, cast

from hypothesis import given
from hypothesis import strategies as st

from gguf_extract.core.automaton.excluded_words import excluding_machine, trie_of
from gguf_extract.core.automaton.keys import Keys
from gguf_extract.core.automaton.regex import Machine

_CHARACTERS = st.sampled_from('ab"\\\né\U0001f600\x7f')  # plain, escaped, wide, four-byte
_WORDS = st.lists(st.text(alphabet=_CHARACTERS, min_size=1, max_size=5), min_size=1, max_size=8, unique=True)


def _walked(machine: Machine, word: str) -> int:
    position = machine.start
    for character in map(ord, word):
        (position,) = [target for low, high, target in machine.edges[position] if low <= character <= high]
    return position


@given(_WORDS)
def test_the_trie_kept_ends_each_word_where_the_rows_lead(words: list[str]) -> None:
    machine = excluding_machine(words)
    trie = trie_of(machine)
    assert trie is not None
    assert trie.ends == {word: _walked(machine, word) for word in words}
    assert machine.accepts.isdisjoint(trie.ends.values())


@given(_WORDS)
def test_the_trie_kept_tells_the_names_below_each_position_as_the_rows_do(words: list[str]) -> None:
    machine = excluding_machine(words)
    trie = trie_of(machine)
    assert trie is not None
    ends = {trie.ends[word]: index for index, word in enumerate(words)}
    sink = len(machine.edges) - 1
    order = cast(Any, None)  # names_below reads only the machine and the ends
    kept, walked = Keys(order, machine, ends, sink, (), trie), Keys(order, machine, ends, sink, (), None)
    for position in range(sink + 1):  # the sink too: after any name no word is
        assert sorted(kept.names_below(position)) == sorted(walked.names_below(position))
    assert sorted(member for member, _ in kept.names_below(machine.start)) == list(range(len(words)))


def test_a_machine_made_otherwise_keeps_no_trie() -> None:
    assert trie_of(Machine(((),), 0, frozenset({0}))) is None
