"""Number texts: no leading zeros, bounded digits, and the forms documents write stay writable.

Forbidding a form a document uses (a trailing zero in `559.40`, an exponent `1.5E+05`) makes a
small model write other digits instead of dropping the extra ones (see core/schema/lexical.py),
so these forms are kept; padding is bounded by the digit limits.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from gguf_extract.core.automaton.dfa import DEAD, LazyDFA
from gguf_extract.core.automaton.nfa import build_nfa
from gguf_extract.core.automaton.regex import Node, length_range
from gguf_extract.core.schema.lexical import (
    MAX_EXPONENT_DIGITS,
    MAX_FRACTION_DIGITS,
    MAX_INTEGER_DIGITS,
    number_node,
    number_range,
)


def _accepts(node: Node, text: str) -> bool:
    dfa = LazyDFA(build_nfa(node))
    state = dfa.walk(dfa.start, text.encode())
    return state != DEAD and dfa.is_accepting(state)


@pytest.mark.parametrize(
    ("node", "written", "never"),
    [
        (number_node(), ["559.40", "189.00", "1.5E+05", "2.5e-7", "0", "-0.5", "10.5"], ["007", "-01.5", "+1", ".5", "1.", "1e"]),
        (number_range(Decimal(0), None, False, False), ["559.40", "189.00", "0.25", "0"], ["00.5", "-1", "1e5"]),
        (number_range(Decimal(0), Decimal(1), True, False), ["0.50", "1.0", "0.00001"], ["0", "0.0", "1.00001"]),
    ],
)
def test_number_texts(node: Node, written: list[str], never: list[str]) -> None:
    assert [text for text in written if not _accepts(node, text)] == []
    assert [text for text in never if _accepts(node, text)] == []


def test_padding_is_bounded_by_the_digit_limits() -> None:
    longest = 1 + MAX_INTEGER_DIGITS + 1 + MAX_FRACTION_DIGITS + 2 + MAX_EXPONENT_DIGITS  # -I.FE+X
    assert length_range(number_node()) == (1, longest)
