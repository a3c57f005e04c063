"""--indent re-lays out the canonical stream exactly as json.dumps(indent=N) does, whatever
the chunk boundaries."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_extract.core.results.indent import Indenter

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(values, st.integers(0, 4), st.lists(st.integers(1, 7), min_size=1, max_size=30))
def test_streamed_indentation_equals_json_dumps(value: Any, indent: int, cuts: list[int]) -> None:
    canonical = json.dumps(value, ensure_ascii=False)
    indenter = Indenter(indent)
    pieces, position, index = [], 0, 0
    while position < len(canonical):
        size = cuts[index % len(cuts)]
        pieces.append(indenter.feed(canonical[position : position + size]))
        position += size
        index += 1
    pieces.append(indenter.finish())
    assert "".join(pieces) == json.dumps(value, ensure_ascii=False, indent=indent)


def test_strings_with_brackets_commas_and_escaped_quotes_are_left_alone() -> None:
    value = {"a": 'x, [y] {z}: "q" \\', "b": [[], {}, [1, {"c": []}]]}
    indenter = Indenter(2)
    text = indenter.feed(json.dumps(value, ensure_ascii=False)) + indenter.finish()
    assert text == json.dumps(value, ensure_ascii=False, indent=2)
