"""Compiling leaves no reference cycle behind, refused or not: a cycle through a refusal's
traceback would keep every frame of the compilation, and all they hold, alive until the
cyclic collector found it, whose pause then lands in whatever runs next."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import compile_for

from gguf_extract.core.errors import SchemaError
from gguf_extract.core.index.compiled import compile_automaton
from gguf_extract.core.index.guide import new_bitmask
from gguf_extract.core.vocab.token_table import Vocabulary

_REFUSED = {"type": "object", "properties": {"a": {"type": "string", "format": "no-such-format-here"}}, "required": ["a"]}
# An anyOf branch that no value satisfies is left out (the failure is kept, then dropped).
_BRANCH_LEFT_OUT = {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 5, "maximum": 1}]}
# A recursion that cannot stop: refused again after lenient compilation reads the $ref as absent.
_ENDLESS = {
    "$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}, "required": ["next"]}},
    "$ref": "#/$defs/n",
}

# A branch cut at the recursion depth (the failure kept), then a later branch refused: the
# refusal leaves through the frame that holds the failure.
_CUT_THEN_REFUSED = {
    "definitions": {"a": {"type": "object", "properties": {"x": {"$ref": "#/definitions/a"}}, "required": ["x"]}},
    "anyOf": [{"$ref": "#/definitions/a"}, {"type": "string", "pattern": "(a)\\1"}],
}

# An id that is not a string, refused where the subschema is read (outside any keyword, where
# the meta-schema does not look, and reached through a reference).
_ID_NOT_A_STRING = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "properties": {"list": {"$ref": "#/elsewhere"}},
    "elsewhere": {"type": "array", "items": {"id": {"type": "integer"}}},
}


@pytest.fixture
def collector_paused() -> Iterator[None]:
    """Nothing collected but by the test's own `gc.collect()` (pytest runs with the collector on)."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()


@pytest.mark.parametrize(
    ("schema", "lenient"),
    [
        (_REFUSED, False),
        (_BRANCH_LEFT_OUT, False),
        (_ENDLESS, False),
        (_ENDLESS, True),
        (_CUT_THEN_REFUSED, False),
        (_ID_NOT_A_STRING, False),
    ],
)
def test_compiling_leaves_no_reference_cycle(collector_paused: None, schema: Any, lenient: bool) -> None:
    with contextlib.suppress(SchemaError):  # no name bound to the error: this frame holds nothing of it
        compile_automaton(schema, lenient=lenient)
    assert gc.collect() == 0


def _walk_guide(vocab: Vocabulary, every_valid_text: bool) -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}, "required": ["name"]}
    compiled = compile_for(schema, vocab)
    guide = compiled.guide(every_valid_text=every_valid_text)
    bitmask = new_bitmask(vocab.size)
    for byte in b'{"name": "ab", "n": 12}':
        guide.fill_mask(bitmask)
        guide.allowed_token_ids()
        guide.advance(2 + byte)  # the hand vocabulary's one-byte tokens (tests/conftest.py)


@pytest.mark.parametrize("every_valid_text", [False, True])
def test_guides_walked_leave_no_reference_cycle(vocab: Vocabulary, every_valid_text: bool) -> None:
    """A schema's automata, token index and kept masks are freed with their last reference:
    walked through a Guide (masks, the token index's walks), they hold no cycle either."""
    _walk_guide(vocab, every_valid_text)  # first: what a process makes once (cached parsers) is made
    gc.collect()
    gc.disable()
    try:
        _walk_guide(vocab, every_valid_text)
        assert gc.collect() == 0
    finally:
        gc.enable()
