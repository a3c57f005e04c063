"""Character automata built by the shortcuts of core/automaton/charnfa.py are the machines the
general construction builds: a length bound intersected by counting, a product going on as one
machine alone where the other accepts every string, and the automaton of every name but a few.
A length bound counted as the automaton is walked (a Counted) reads what the product reads."""

from __future__ import annotations

import itertools
import json
import random
from collections import deque
from collections.abc import Callable

import pytest

from gguf_extract.core.automaton.charnfa import (
    AutomatonTooLarge,
    bounded_lengths,
    built_states,
    counted,
    intersect,
    length_machine,
    machine_from_tree,
    within_lengths,
)
from gguf_extract.core.automaton.dfa import DEAD, LazyDFA
from gguf_extract.core.automaton.excluded_words import ANY_CHAR, excluding_machine
from gguf_extract.core.automaton.free_text import free_positions
from gguf_extract.core.automaton.measure import GENERATED, ShortestMatch, most_to_finish
from gguf_extract.core.automaton.nfa import build_nfa
from gguf_extract.core.automaton.regex import Chars, Counted, Machine, Node, Repeat, alt, length_range, lit, seq

_RANGES = [(0x61, 0x61), (0x61, 0x7A), (0x30, 0x39), (0x0, 0x10FFFF), (0xD000, 0xE100), (0x7F, 0x800), (0x10000, 0x10FFFF)]


def _tree(rng: random.Random, depth: int = 0) -> Node:
    kind = rng.randrange(5 if depth < 3 else 2)
    if kind == 0:
        return lit(rng.choice(["a", "ab", "\u00e9", "x\U0001f600", "0"]))
    if kind == 1:
        return Chars(tuple(rng.sample(_RANGES, rng.randrange(1, 4))))
    if kind == 2:
        return seq(*(_tree(rng, depth + 1) for _ in range(rng.randrange(1, 4))))
    if kind == 3:
        return alt(*(_tree(rng, depth + 1) for _ in range(rng.randrange(1, 4))))
    low = rng.randrange(0, 3)
    return Repeat(_tree(rng, depth + 1), low, rng.choice([None, low, low + rng.randrange(0, 4)]))


def _built(build: Callable[[], Machine]) -> tuple[object, ...]:
    try:
        machine = build()
    except AutomatonTooLarge as error:
        return ("too large", error.limit)
    return (machine.edges, machine.start, machine.accepts)


@pytest.mark.parametrize("seed", range(400))
def test_length_bounds_by_counting_are_the_general_product(seed: int) -> None:
    rng = random.Random(seed)
    machine = machine_from_tree(_tree(rng))
    low = rng.randrange(0, 6)
    high = rng.choice([None, low, low + rng.randrange(0, 8)])
    limit = rng.choice([40_000, 60])
    general = _built(lambda: _paired(machine, length_machine(low, high), limit))
    assert _built(lambda: within_lengths(machine, low, high, limit)) == general


def _paired(first: Machine, second: Machine, state_limit: int = 40_000) -> Machine:
    """The textbook product: every reachable pair of states, numbered in the order met, then
    trimmed as intersect trims (the oracle of the shortcuts)."""
    ids = {(first.start, second.start): 0}
    pairs = [(first.start, second.start)]
    rows: list[list[tuple[int, int, int]]] = []
    queue = deque([0])
    while queue:
        left, right = pairs[queue.popleft()]
        row = []
        for low_a, high_a, target_a in first.edges[left]:
            for low_b, high_b, target_b in second.edges[right]:
                low, high = max(low_a, low_b), min(high_a, high_b)
                if low > high:
                    continue
                if (target_a, target_b) not in ids:
                    if len(pairs) >= state_limit:
                        raise AutomatonTooLarge(state_limit)
                    ids[target_a, target_b] = len(pairs)
                    pairs.append((target_a, target_b))
                    queue.append(len(pairs) - 1)
                row.append((low, high, ids[target_a, target_b]))
        rows.append(row)
    accepts = {i for i, (a, b) in enumerate(pairs) if a in first.accepts and b in second.accepts}
    return _trimmed(rows, accepts)


def _trimmed(rows: list[list[tuple[int, int, int]]], accepts: set[int]) -> Machine:
    """The states from which acceptance can be reached (all are reached from state 0), in
    their order, each row sorted with adjacent ranges to one target joined."""
    useful, grew = set(accepts), True
    while grew:
        grew = False
        for state, row in enumerate(rows):
            if state not in useful and any(target in useful for _, _, target in row):
                useful.add(state)
                grew = True
    if 0 not in useful:
        return Machine(((),), 0, frozenset())
    order = sorted(useful)
    number = {state: i for i, state in enumerate(order)}
    kept = []
    for state in order:
        joined: list[tuple[int, int, int]] = []
        for low, high, target in sorted({(low, high, number[t]) for low, high, t in rows[state] if t in useful}):
            if joined and joined[-1][2] == target and joined[-1][1] + 1 >= low:
                joined[-1] = (joined[-1][0], max(joined[-1][1], high), target)
            else:
                joined.append((low, high, target))
        kept.append(tuple(joined))
    return Machine(tuple(kept), 0, frozenset(number[state] for state in accepts if state in useful))


def _same_strings(first: Machine, second: Machine) -> bool:
    """Whether the two machines accept the same strings: their subset constructions walked
    together, character range by character range, never telling one accepting and not the other."""
    start = (frozenset({first.start}), frozenset({second.start}))
    seen, stack = {start}, [start]
    while stack:
        states = stack.pop()
        if bool(states[0] & first.accepts) != bool(states[1] & second.accepts):  # (state 0 is falsy: not any())
            return False
        rows = [
            [edge for state in states[0] for edge in first.edges[state]],
            [edge for state in states[1] for edge in second.edges[state]],
        ]
        cuts = sorted({low for row in rows for low, _, _ in row} | {high + 1 for row in rows for _, high, _ in row})
        for character in cuts:
            following = tuple(frozenset(t for low, high, t in row if low <= character <= high) for row in rows)
            if any(following) and following not in seen:
                seen.add(following)
                stack.append(following)
    return True


@pytest.mark.parametrize("seed", range(300))
def test_a_product_copies_a_machine_where_the_other_accepts_every_string(seed: int) -> None:
    """With open ends (anything, from some point on) on either side or both, the product takes
    the strings the textbook product takes."""
    rng = random.Random(seed)
    anything = Repeat(Chars(rng.choice([ANY_CHAR, ((0x0, 0x10FFFF),), ((0x0, 0xD7FF),)])), 0, None)
    first, second = (machine_from_tree(seq(_tree(rng), anything) if rng.random() < 0.7 else _tree(rng)) for _ in range(2))
    product = intersect(first, second)
    assert _same_strings(product, _paired(first, second))
    # A copy keeps the copied machine's numbering and distances, and the pairs' are searched
    # from them: what the general search finds on the product's edges, state by state.
    assert ShortestMatch.machine(product) == ShortestMatch.machine(Machine(product.edges, product.start, product.accepts))


def test_a_pattern_open_at_its_end_is_read_as_a_prefix() -> None:
    """`ab` then anything, against a machine of words: its states from the prefix on are the
    words' own (cut to ANY_CHAR), and nothing else is built."""
    words = machine_from_tree(
        alt(lit("abc"), lit("abd\U0001f600"), lit("b"), seq(lit("ab"), Repeat(Chars(((0x61, 0x7A),)), 1, None)))
    )
    prefix = machine_from_tree(seq(lit("ab"), Repeat(Chars(ANY_CHAR), 0, None)))
    fast = intersect(words, prefix)
    assert _same_strings(fast, _paired(words, prefix))
    assert all(_matches(fast, text) for text in ["abc", "abd\U0001f600", "abz", "abzz"])
    assert not any(_matches(fast, text) for text in ["b", "ab", "a", "ab0", "abc\U0001f600"])


@pytest.mark.parametrize(("low", "high"), [(3, 3), (2, 5), (4, None), (0, 40), (30, None)])
def test_a_products_copy_never_entered_is_neither_counted_nor_bounded(low: int, high: int | None) -> None:
    """The copy in a product keeps every state of the machine copied (its rows are the
    machine's own): they cost no compile work, and the states never entered go before a length
    bound is read (a count's table is per state); the strings are the textbook product's."""
    words = machine_from_tree(
        alt(
            lit("abc"),
            seq(lit("xy"), Repeat(Chars(((0x30, 0x39),)), 0, None)),
            seq(lit("ab"), Repeat(Chars(((0x61, 0x7A),)), 1, None)),
        )
    )
    prefix = machine_from_tree(seq(lit("ab"), Repeat(Chars(ANY_CHAR), 0, None)))
    product, textbook = intersect(words, prefix), _paired(words, prefix)
    assert built_states(product) < len(product.edges) and _same_strings(product, textbook)
    bounded, expected = (bounded_lengths(machine, low, high) for machine in (product, textbook))
    machines = [
        body if isinstance(body, Machine) else within_lengths(body.machine, body.low, body.high) for body in (bounded, expected)
    ]
    assert _same_strings(*machines)
    sizes = [len(body.edges if isinstance(body, Machine) else body.machine.edges) for body in (bounded, expected)]
    assert sizes[0] == sizes[1]  # as many states as the textbook product's bound: none never entered


def test_excluding_machine_accepts_every_other_string() -> None:
    words = ["", "ab", "a", "\u00e9t\u00e9", "a\U0001f600"]
    machine = excluding_machine(words)
    rng = random.Random(5)
    alphabet = ["a", "b", "\u00e9", "t", "\U0001f600"]
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 4)))
        assert _matches(machine, text) == (text not in words)
    for row in machine.edges:
        assert list(row) == sorted(row)


def _matches(machine: Machine, text: str) -> bool:
    states = {machine.start}
    for character in map(ord, text):
        states = {target for state in states for low, high, target in machine.edges[state] if low <= character <= high}
    return bool(states & machine.accepts)


@pytest.mark.parametrize(
    "words",
    [
        ["", "ab", "a", "\u00e9t\u00e9", "a\U0001f600"],
        ["name", "names", "id", 'say "hi"', "back\\slash", "tab\t"],
        # every character of one byte after "x" a word's: the end of "x" is two bytes (an escaped
        # quote) from acceptance, and the distances are searched for
        ["x"] + ["x" + chr(code) for code in range(0x20, 0x80) if chr(code) not in '"\\'],
    ],
)
def test_what_the_excluding_machine_keeps_is_what_would_be_worked_out(words: list[str]) -> None:
    """Its distances and free positions, kept as it is built, are those the general searches
    find on the same edges."""
    machine = excluding_machine(words)
    plain = Machine(machine.edges, machine.start, machine.accepts)  # nothing kept on it
    assert ShortestMatch.machine(machine) == ShortestMatch.machine(plain)
    assert free_positions(machine) == free_positions(plain)


def test_excluding_machine_rows_cover_every_character_once_at_the_edges_of_its_ranges() -> None:
    """Each row, a node's one child or many, takes every character of ANY_CHAR (and a child's,
    a lone surrogate too) exactly once, in order: the characters at the ends of the ranges cut
    where a child's character lies."""
    words = ["\x00", "\x00a", "\ud7ff", "\ue000", "\U0010ffff", "\ud800", "ab", "ac", "b"]
    machine = excluding_machine(words)
    for row in machine.edges:
        assert all(earlier[1] < later[0] for earlier, later in itertools.pairwise(row))
        covered = sum(high - low + 1 for low, high, _ in row)
        children = sum(1 for low, high, _ in row if low == high and 0xD800 <= low <= 0xDFFF)
        assert covered == 0xD800 + (0x10FFFF - 0xE000 + 1) + children
    rng = random.Random(7)
    alphabet = ["\x00", "a", "b", "c", "\ud7ff", "\ue000", "\U0010ffff"]  # (no other text holds a lone surrogate)
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 3)))
        assert _matches(machine, text) == (text not in words)
    assert not _matches(machine, "\ud800")


@pytest.mark.parametrize("seed", range(300))
def test_a_length_bound_counted_as_read_takes_what_the_product_takes(seed: int) -> None:
    """The string automaton of a Counted and of the product it stands for, walked over the same
    JSON texts (strings of the machine, and others): at every byte both are dead or neither,
    at the same distance from their end, accepting alike; the fewest bytes the tree matches and
    the most a state may still need bound both the same way."""
    rng = random.Random(seed)
    machine = machine_from_tree(_tree(rng))
    low = rng.randrange(0, 8)
    high = rng.choice([None, low, low + rng.randrange(0, 12)])
    product = within_lengths(machine, low, high)
    lazy = counted(machine, low, high)
    walks = [LazyDFA(build_nfa(seq(lit('"'), body, lit('"')))) for body in (product, lazy)]
    assert GENERATED.measure(lazy) == GENERATED.measure(product)
    assert length_range(lazy) == (low, high)
    assert _same_strings(machine_from_tree(seq(lazy)), product)  # a tree holding one is built as the product
    most = max(most_to_finish(seq(lit('"'), lazy, lit('"'))), 0)
    for text in _texts(rng, machine, 60):
        data = json.dumps(text, ensure_ascii=rng.random() < 0.3).encode()
        states = [walk.start for walk in walks]
        for byte in data:
            states = [walk.walk(state, bytes([byte])) for walk, state in zip(walks, states, strict=True)]
            if DEAD in states:
                assert states == [DEAD, DEAD], (text, data)
                break
            distances = [walk.distance(state) for walk, state in zip(walks, states, strict=True)]
            assert distances[0] == distances[1] <= most
        else:
            within = low <= len(text) <= (len(text) if high is None else high)
            assert walks[0].is_accepting(states[0]) == walks[1].is_accepting(states[1]) == (_matches(machine, text) and within)


def _texts(rng: random.Random, machine: Machine, count: int) -> list[str]:
    """Strings along the machine's edges (stopping at random, accepted or not), and some
    changed by a character: most go some way into the automaton."""
    found = []
    for _ in range(count):
        state, text = machine.start, []
        for _ in range(rng.randrange(0, 24)):
            row = [edge for edge in machine.edges[state] if not 0xD800 <= edge[0] <= edge[1] <= 0xDFFF]
            if not row or (state in machine.accepts and rng.random() < 0.2):
                break
            low, high, state = rng.choice(row)
            character = rng.choice([low, high, rng.randint(low, high)])
            text.append(chr(character) if not 0xD800 <= character <= 0xDFFF else "a")
        if text and rng.random() < 0.3:
            text[rng.randrange(len(text))] = rng.choice(['"', "\\", "a", "\u00e9", "\U0001f600", "\n"])
        found.append("".join(text))
    return found


def test_a_long_bound_on_a_pattern_is_counted_a_short_one_built() -> None:
    """bounded_lengths builds the product where it is small, and counts where the product
    would hold thousands of pairs; a machine of words under a bound none reaches is the same."""
    words = machine_from_tree(seq(Repeat(seq(Repeat(Chars(((0x21, 0x7E),)), 1, None), lit(" ")), 0, 29), lit("x")))
    assert isinstance(bounded_lengths(words, 0, 3), Machine)
    long = bounded_lengths(words, 0, 300)
    assert isinstance(long, Counted)
    walk = LazyDFA(build_nfa(seq(lit('"'), long, lit('"'))))
    cases = [("x", True), ("a " * 29 + "x", True), ("a " * 30 + "x", False), ("b" * 298 + " x", True), ("b" * 299 + " x", False)]
    for text, accepted in cases:
        state = walk.walk(walk.start, json.dumps(text).encode())
        assert (state != DEAD and walk.is_accepting(state)) == accepted, text
