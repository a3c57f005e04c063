"""The pairs of a product compiled at install (core/automaton/_product.c) are the ones Python
walks (core/automaton/product_pairs.py): the same pairs in the same order, the same rows, the
same blocks of copied states, the same limit; bad input is refused with an error, never read past."""

from __future__ import annotations

import random

import pytest
from test_charnfa_products import _tree

from gguf_extract.core.automaton import measure as measure_module
from gguf_extract.core.automaton import product_pairs as product_module
from gguf_extract.core.automaton.charnfa import AutomatonTooLarge, _open_ends, _trimmed, intersect, machine_from_tree
from gguf_extract.core.automaton.excluded_words import ANY_CHAR
from gguf_extract.core.automaton.regex import Chars, Machine, Repeat, seq
from gguf_extract.core.schema.lexical.format_machines import format_machine

compiled_product = pytest.importorskip("gguf_extract.core.automaton._product", reason="built without a C compiler")


def _both(first: Machine, second: Machine, limit: int, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    ends = (_open_ends(first), _open_ends(second))
    compiled = product_module.product_pairs(first, second, ends, limit)
    with monkeypatch.context() as patched:
        patched.setattr(product_module, "_product", None)
        in_python = product_module.product_pairs(first, second, ends, limit)
    return compiled, in_python


@pytest.mark.parametrize("seed", range(300))
def test_pairs_rows_and_copies_are_the_same_with_either_build(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    anything = Repeat(Chars(rng.choice([ANY_CHAR, ((0x0, 0x10FFFF),)])), 0, None)
    first, second = (machine_from_tree(seq(_tree(rng), anything) if rng.random() < 0.5 else _tree(rng)) for _ in range(2))
    limit = rng.choice([40_000, 40_000, 12, 3])  # a product cut short at its limit, on either path
    compiled, in_python = _both(first, second, limit, monkeypatch)
    assert compiled == in_python
    assert _machine(first, second, monkeypatch, in_c=True) == _machine(first, second, monkeypatch, in_c=False)


def _machine(first: Machine, second: Machine, monkeypatch: pytest.MonkeyPatch, in_c: bool) -> object:
    """intersect's machine (its pairs and the pairs that can finish, after a copy, found in C or
    in Python), or that it was too large."""
    with monkeypatch.context() as patched:
        if not in_c:
            patched.setattr(product_module, "_product", None)
        try:
            found = intersect(first, second, state_limit=60)
        except AutomatonTooLarge:
            return "too large"
    return found.edges, found.start, found.accepts


@pytest.mark.parametrize("seed", range(200))
@pytest.mark.parametrize("in_c", [True, False])
def test_pairs_alone_are_kept_as_trimming_keeps_them(seed: int, in_c: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # No open end: the pairs that can finish, numbered in order, rows sorted and joined, as the
    # general trimming of a machine keeps them.
    rng = random.Random(seed)
    first, second = machine_from_tree(_tree(rng)), machine_from_tree(_tree(rng))
    if not in_c:
        monkeypatch.setattr(product_module, "_product", None)
    found = product_module.product_pairs(first, second, (frozenset(), frozenset()), 40_000)
    assert found is not None
    edges, pairs, _ = found
    accepts = {i for i, (a, b) in enumerate(pairs) if a in first.accepts and b in second.accepts}
    expected = _trimmed(edges, 0, accepts)
    if _open_ends(first) or _open_ends(second):
        return  # intersect would copy
    product = intersect(first, second)
    assert (product.edges, product.start, product.accepts) == (expected.edges, expected.start, expected.accepts)


@pytest.mark.parametrize("seed", range(200))
def test_distances_are_the_same_with_either_build(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every state's fewest bytes to acceptance, of a machine and of a product after a copy (the
    # copy's read from its machine, the pairs' searched): C and Python alike, state by state.
    rng = random.Random(seed)
    anything = Repeat(Chars(rng.choice([ANY_CHAR, ((0x0, 0x10FFFF),)])), 0, None)
    first, second = (machine_from_tree(seq(_tree(rng), anything) if rng.random() < 0.6 else _tree(rng)) for _ in range(2))
    found = []
    for in_c in (True, False):
        with monkeypatch.context() as patched:
            if not in_c:
                patched.setattr(measure_module, "_product", None)
                patched.setattr(product_module, "_product", None)
            product = intersect(first, second)
            plain = Machine(product.edges, product.start, product.accepts)  # nothing kept on it
            found.append((measure_module.machine_distances(product), measure_module.machine_distances(plain)))
    assert found[0] == found[1]
    assert found[0][0] == found[0][1]


@pytest.mark.parametrize("pattern", ["^https?://", "^https?://.*/.+", "^[a-z]+:[^ ]*\\.(gif|jpg)$"])
def test_a_formats_products_are_the_same_with_either_build(pattern: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from gguf_extract.core.schema.lexical.pattern import pattern_tree

    uri = format_machine("uri")
    other = machine_from_tree(pattern_tree(pattern))
    for first, second in ((uri, other), (other, uri)):
        compiled, in_python = _both(first, second, 40_000, monkeypatch)
        assert compiled is not None and compiled == in_python
        with monkeypatch.context() as patched:
            patched.setattr(product_module, "_product", None)
            slow = intersect(first, second)
        fast = intersect(first, second)
        assert (fast.edges, fast.start, fast.accepts) == (slow.edges, slow.start, slow.accepts)


def test_past_the_limit_neither_build_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    # Anything, then an `x`: paired with nearly every state of a uri's machine.
    ending = machine_from_tree(seq(Repeat(Chars(ANY_CHAR), 0, None), Chars(((0x78, 0x78),))))
    uri = format_machine("uri")
    assert len(intersect(uri, ending).edges) > 1000
    with pytest.raises(AutomatonTooLarge):
        intersect(uri, ending, state_limit=1000)
    monkeypatch.setattr(product_module, "_product", None)
    with pytest.raises(AutomatonTooLarge):
        intersect(uri, ending, state_limit=1000)


@pytest.mark.parametrize(
    "edges",
    [
        [((0, 10, 0),)],  # a list, not a tuple
        (((0, 10, 5),),),  # a target that is no state
        (((0, 10),),),  # an edge of two numbers
        ((("a", 10, 0),),),  # a low that is no number
    ],
)
def test_bad_machines_are_refused_with_an_error(edges: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        compiled_product.finished_pairs([list(row) for row in edges] if isinstance(edges, tuple) else [edges], set(), 0, 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        compiled_product.finished_pairs([[(0, 10, 0)]], set(), 0, 2)  # a copy past the product's states
    good = (((0, 10, 0),),)
    with pytest.raises((TypeError, ValueError)):
        compiled_product.product_pairs(edges, 0, good, 0, frozenset(), frozenset(), 100)
    with pytest.raises((TypeError, ValueError)):
        compiled_product.product_pairs(good, 0, edges, 0, frozenset(), frozenset(), 100)
    with pytest.raises(ValueError):
        compiled_product.product_pairs(good, 3, good, 0, frozenset(), frozenset(), 100)


def test_bad_distance_questions_are_refused_with_an_error() -> None:
    good = (((0x61, 0x61, 1),), ())

    def failing(low: int, high: int) -> int | None:
        raise RuntimeError("no cost")

    assert compiled_product.fewest_bytes(good, {1}, lambda low, high: 1, 0, []) == [1, 0]
    with pytest.raises(ValueError):
        compiled_product.fewest_bytes(good, {1}, lambda low, high: 1, 1, [])  # one state known, none given
    with pytest.raises(ValueError):
        compiled_product.fewest_bytes((((0x61, 0x61, 7),), ()), {1}, lambda low, high: 1, 0, [])
    with pytest.raises(TypeError):
        compiled_product.fewest_bytes(([(0x61, 0x61, 1)], ()), {1}, lambda low, high: 1, 0, [])  # type: ignore[arg-type]
    with pytest.raises(RuntimeError):
        compiled_product.fewest_bytes(good, {1}, failing, 0, [])
