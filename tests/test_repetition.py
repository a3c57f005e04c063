"""Runaway values (core.decode.repetition): the loop test agrees with the bench's definition, the
scanner reads arrays' items as json.dumps writes them, candidates are chosen around loops and
copies, and a decoder driven by a model that loves to repeat itself stops doing so while its
output stays valid."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import numpy.typing as npt
import pytest
from bench_modules import bench_module
from conftest import FakeModel, compile_for
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_extract.core.decode.decoder import Decoder
from gguf_extract.core.decode.item_copies import same_value, written_fields
from gguf_extract.core.decode.repetition import (
    RUNAWAY_WINDOW,
    ItemWatch,
    JsonScanner,
    RepetitionGuard,
    loops,
    near_repeats,
)
from gguf_extract.core.decode.repetition_policy import avoid
from gguf_extract.core.decode.types import SamplingSettings
from gguf_extract.core.vocab.token_table import Vocabulary

scoring = bench_module("accuracy_scoring")

# ---- the loop test ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "looping"),
    [
        ("2019-12-29, 2019-12-29, 2019-12-29, ", True),
        ("2019-12-29, 2019-12-29, 2019-12-29", False),  # 34 bytes of period 12: under three copies
        ("nproc_usage_source_list_list_list", True),
        ("nproc_usage_source_list_list", False),
        ("aaaaaaaaaaaa", True),
        ("aaaaaaaaaaa", False),  # a short run is more likely the value itself
        ("1.1.1", False),
        ("abcdefghijklmnopqrstu" * 3, False),  # a period of 21
        ("", False),
    ],
)
def test_loops_on_hand_made_values(text: str, looping: bool) -> None:
    assert loops(text.encode()) is looping


@given(st.text(alphabet="ab-_.", max_size=80), st.text(alphabet="ab.", min_size=1, max_size=6), st.integers(0, 8))
@settings(max_examples=400)
def test_loops_agrees_with_the_benchs_definition(head: str, unit: str, copies: int) -> None:
    text = head + unit * copies
    assert loops(text.encode()) is (scoring.looping_tail(text) is not None)


# ---- near-repeats -------------------------------------------------------------------------

RUNAWAYS = [  # the shapes the bundled model wrote, as no exact period catches them
    "./KDE/KDE/KDF/KDE/KDE/KDF/KDE/KDE/KDE/KDF/KDE/KDE/KDE/MAGIC_MICROSOFT_MICROSOFIT_MICROSOFT_MAGIC/KDE/KDE/KDF/KDE/KDE/KDF/KDE"
    "/KDE/KDF/KDE/KDF/KDE/KDE",
    "A.1.1.1.1.1.2.2.2.2.2.1.2.2.2.2.2.1.2.2.2.2.1.2.2.2.2.2.1.2.2.2.2.1.1.1.2.2.2.2.1.2.1.1.2.2.2.1.2.1.1.1.2.2.2.2.1.2.2.2.1.2.1.1.2.1",
    "BEGINNING_LICENSE_BEGINING_LICENSE_BEGINING_LICENSE_BEGING_LICENSE_BEGINNING_LICENSE_BEGINING_LICENSE_BEGINING_LICENSE_BEGI"
    "NNING_LICENSE_BEGINS",
    "S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.T.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.S.T.S.U",
]
PROSE = [  # ordinary values of that length
    "Python bindings for the llama.cpp library: a high-level API for text completion, an OpenAI-compatible web server, and more"
    " besides, such as grammars.",
    "Copyright (c) 2023 Andrei Betlen. Permission is hereby granted, free of charge, to any person obtaining a copy of this"
    " software and",
    "https://github.com/abetlen/llama-cpp-python/blob/main/CHANGELOG.md#0336-2026-10-01-fixes-for-cuda-13-and-a-new-chat-template-for-all",
]


@pytest.mark.parametrize("text", RUNAWAYS)
def test_runaways_near_repeat(text: str) -> None:
    assert len(text) >= RUNAWAY_WINDOW and near_repeats(text.encode()) and not loops(text.encode())


@pytest.mark.parametrize("text", PROSE)
def test_prose_does_not_near_repeat(text: str) -> None:
    assert len(text) >= RUNAWAY_WINDOW and not near_repeats(text.encode())


def test_a_string_is_a_runaway_only_after_loops_were_ruled_out_in_it() -> None:
    guard = RepetitionGuard()
    guard.feed(b'{"a": "' + RUNAWAYS[3].encode())
    for stops in range(3):
        assert not guard.runaway(), stops
        guard.note_stop()
    assert guard.runaway()
    assert guard.closes_string(b'",') and not guard.closes_string(b"S.")
    guard.feed(b'", "b": "')  # a new string starts with no stops counted
    guard.feed(RUNAWAYS[3].encode())
    assert not guard.runaway()


# ---- the scanner --------------------------------------------------------------------------

LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**6), 10**6), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8)
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=12,
)


def feed_in_pieces(scanner: JsonScanner, data: bytes, cuts: list[int]) -> None:
    start = 0
    for cut in [*sorted({c % (len(data) + 1) for c in cuts}), len(data)]:
        scanner.feed(data[start:cut])
        start = cut


@given(st.lists(VALUES, min_size=1, max_size=5), st.lists(st.integers(0, 10**4), max_size=12), st.booleans())
@settings(max_examples=300)
def test_the_scanner_reads_an_arrays_items_as_json_writes_them(items: list[Any], cuts: list[int], compact: bool) -> None:
    separators = (",", ":") if compact else (", ", ": ")
    text = json.dumps({"k": items}, separators=separators, ensure_ascii=False)
    scanner = JsonScanner()
    feed_in_pieces(scanner, text[: -len("]}")].encode(), cuts)  # the array still open
    (array,) = [frame for frame in scanner.stack if frame is not None]
    assert array.items == [json.dumps(item, separators=separators, ensure_ascii=False).encode() for item in items[:-1]]
    assert array.start is not None
    last = json.dumps(items[-1], separators=separators, ensure_ascii=False).encode()
    assert bytes(scanner.output[array.start :]) == last
    assert not scanner.in_string


def test_the_scanner_follows_string_bodies_and_escapes() -> None:
    scanner = JsonScanner()
    scanner.feed(b'{"a": "x\\"y')
    assert scanner.in_string and bytes(scanner.output[scanner.body_start :]) == b'x\\"y'
    scanner.feed(b'\\\\"')
    assert not scanner.in_string


# ---- choosing around loops and copies -----------------------------------------------------


def argmax(scores: npt.NDArray[np.float32]) -> int:
    return int(np.argmax(scores))


@given(st.lists(st.floats(-50, 50), min_size=1, max_size=20), st.sets(st.integers(0, 19)))
def test_avoid_takes_the_best_candidate_not_ruled_out_and_never_none(values: list[float], ruled: set[int]) -> None:
    scores = np.array(values, dtype=np.float32)
    chosen = avoid(scores, argmax(scores), argmax, lambda index: index in ruled)
    allowed = [i for i in range(len(values)) if i not in ruled]
    if allowed:
        assert chosen not in ruled and scores[chosen] == max(scores[allowed])
    else:
        assert chosen == argmax(scores)  # every candidate would repeat: the model's own choice


def guard_after(text: bytes) -> RepetitionGuard:
    guard = RepetitionGuard()
    guard.feed(text)
    return guard


def test_a_token_is_ruled_out_only_where_it_makes_the_open_string_loop() -> None:
    guard = guard_after(b'{"source": "2019-12-29, 2019-12-29, 2019-12-29')
    assert guard.loops(b", ")
    assert not guard.loops(b",")  # the comma alone is fine
    assert not guard.loops(b',", ')  # so is this token: the rest is not in the string
    assert guard.loops(b", 2019")
    assert not guard.loops(b'"')  # closing the string is always fine
    assert not guard.loops(b'", "date')
    assert not guard_after(b'{"a": ["ab", "ab", "ab", "ab", "ab"').loops(b', "ab')  # outside strings: items, not loops


def test_a_comma_continues_an_array_only_after_a_string_object_or_array() -> None:
    guard = guard_after(b'{"names": ["grep", "egrep"')
    array = guard.continued_array(b", ")
    assert array is not None and guard.continued_array(b'", "') is None  # no comma at the array's level there...
    assert guard_after(b'{"names": ["grep", "egrep').continued_array(b'", "') == array  # ...but here
    assert guard.continued_array(b"]") is None
    assert guard.closes(b"]", array) and guard.closes(b"]}", array) and not guard.closes(b", ", array)
    assert guard_after(b'{"n": [1, 2').continued_array(b", ") is None  # numbers repeat legitimately
    assert guard_after(b'{"n": [{"a": 1}').continued_array(b", ") is not None
    assert guard_after(b'{"n": "a, b", "m": "c').continued_array(b', "') is None  # an object goes on


def test_a_watch_says_whether_the_next_item_copies_an_earlier_one() -> None:
    guard = guard_after(b'{"names": ["grep", "egrep", "lzcmp')
    array = guard.continued_array(b'", "')
    assert array is not None
    copying = guard.watch(array)
    for piece in (b'", "', b"lz", b"cmp"):
        copying.feed(piece)
        assert copying.wants_more and not copying.repeats
    copying.feed(b'"')
    assert copying.repeats and not copying.wants_more
    different = guard.watch(array)
    different.feed(b'", "lzd')
    assert not different.wants_more and not different.repeats
    longer = guard.watch(array)
    longer.feed(b'", "grep -')
    assert not longer.wants_more and not longer.repeats
    closed = guard.watch(array)
    closed.feed(b'"]')
    assert not closed.wants_more and not closed.repeats
    last = guard.watch(array)  # a copy, then the end of the array, in one token
    last.feed(b'", "lzcmp"],')
    assert last.repeats and not last.wants_more


def test_a_watch_reads_copies_as_json_values_and_objects_by_their_fields() -> None:
    """An item copies an earlier one when it is the same JSON value however spaced or ordered,
    or an object each of whose fields copies the same field of one earlier item."""
    guard = guard_after(b'{"people": [{"name": "ann", "mail": "a@x.org"}, {"name":"bo","mail":"b@y.org"}')
    array = guard.continued_array(b", ")
    assert array is not None

    def watched(text: bytes) -> ItemWatch:
        watch = guard.watch(array)
        watch.feed(text)
        return watch

    assert watched(b', {"mail": "a@x.org", "name": "ann"}').repeats  # the first, its keys the other way round
    assert watched(b',{"name":"ann","mail":"a@x.org"}').repeats  # spaced otherwise
    assert not watched(b', {"name": "ann", "mail": "b@y.org"}').repeats  # one's name, another's e-mail: a record of its own
    assert watched(b', {"name": "bo"}').repeats  # fewer fields, each a copy
    assert not watched(b', {"name": "ann", "mail": "c@z.org"}').repeats
    assert not watched(b', {"name": "cy", "mail": "a@x.org"}').repeats
    assert not watched(b", {}").repeats  # no field copies anything
    begun = watched(b', {"name": "bo", "mail": "b@')
    assert begun.wants_more and begun.copying  # each whole field so far is a copy: watch on
    assert not watched(b', {"name": "cy", "mail": "b@').wants_more
    numbers = guard_after(b'{"p": [{"n": 1}')
    ones = numbers.watch(numbers.continued_array(b", ") or -1)
    ones.feed(b', {"n": true}')
    assert not ones.repeats  # true is not 1


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (1, 1.0, True),
        (True, 1, False),
        (False, 0, False),
        ("1", 1, False),
        ({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ([1, 2], [2, 1], False),
        (None, None, True),
    ],
)
def test_same_value_is_json_equality(a: Any, b: Any, same: bool) -> None:
    assert same_value(a, b) is same and same_value(b, a) is same


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        (b'{"a": "x", "b": [1, 2], "c": "ab', {"a": "x", "b": [1, 2]}),
        (b'{"a": "x, y", "b": "c', {"a": "x, y"}),  # a comma inside a string is no field's end
        (b'{"a": {"b": 1, "c": 2}, "d', {"a": {"b": 1, "c": 2}}),
        (b'{"a": "x', {}),
        (b'"abc', {}),
    ],
)
def test_written_fields_are_those_complete_so_far(text: bytes, fields: dict[str, Any]) -> None:
    assert written_fields(text) == fields


def test_the_end_of_an_item_is_what_comes_before_the_next_ones_comma() -> None:
    guard = guard_after(b'{"people": [{"name": "ann"}, {"name": "ann')
    array = guard.continued_array(b'"}, {"')
    assert array is not None
    assert guard.item_end(b'"}, {"', array) == b'"}'
    assert not guard.closing(array)
    guard.close_later(array)
    assert guard.closing(array)
    guard.feed(b'"}, {"name": "bo')  # an item started after all: the mark goes with it
    assert not guard.closing(array)


def test_a_guard_taken_back_to_a_snapshot_sees_the_output_as_it_was() -> None:
    """The decoder feeds guessed text to the guard (a guess starting another item ends the
    draft) and restores it after: what it says is then as before the guesses."""
    guard = guard_after(b'{"names": ["grep", "egrep')
    mark = guard.snapshot()
    assert guard.continued_array(b'"') is None
    guard.feed(b'"')
    array = guard.continued_array(b", ")
    assert array is not None
    guard.feed(b', "grep')
    guard.restore(mark)
    assert guard.continued_array(b'", ') == array and guard.continued_array(b", ") is None
    guard.feed(b'"]')
    assert guard.scanner.array(array) is None  # restoring again gives the snapshot, as many times as needed
    guard.restore(mark)
    assert guard.scanner.array(array) is not None and bytes(guard.scanner.output) == b'{"names": ["grep", "egrep'


# ---- the decoder with a model that loves to repeat ----------------------------------------


class FavouringModel(FakeModel):
    """Small random logits plus a large bonus for the tokens it favours after its last token
    (`after`, else `usual`): it writes them wherever the schema lets it, as a small model
    copies itself."""

    def __init__(self, vocab: Vocabulary, seed: int, usual: list[bytes], after: dict[bytes, list[bytes]] | None = None) -> None:
        super().__init__(vocab, seed)
        self.usual, self.after = self._bonus(usual), {last: self._bonus(next) for last, next in (after or {}).items()}

    def _bonus(self, favourites: list[bytes]) -> npt.NDArray[np.float32]:
        bonus = np.zeros(self.vocab.size, dtype=np.float32)
        for rank, piece in enumerate(favourites):
            bonus[self.vocab.pieces.index(piece)] = 40.0 - rank
        return bonus

    def _logits_after(self, length: int) -> npt.NDArray[np.float32]:
        last = self.vocab.pieces[self.evaluated[length - 1]] if length else b""
        return super()._logits_after(length) * 0.1 + self.after.get(last, self.usual)


def generate(vocab: Vocabulary, schema: dict[str, Any], model: FakeModel, guard: bool, budget: int = 120) -> Any:
    settings = SamplingSettings(max_tokens=budget, temperature=0.0, seed=model.seed, stop_repeats=guard)
    decoder = Decoder(model, compile_for(schema, vocab), settings)
    value = json.loads(b"".join(decoder.run()))
    jsonschema.validate(value, schema)
    assert decoder.stats.output_tokens <= budget
    return value


NAMES = {
    "type": "object",
    "properties": {"names": {"type": "array", "items": {"type": "string"}, "maxItems": 10}},
    "required": ["names"],
}


@pytest.mark.parametrize("seed", range(6))
def test_an_array_is_closed_where_the_model_would_copy_an_item(vocab: Vocabulary, seed: int) -> None:
    def model() -> FavouringModel:
        return FavouringModel(vocab, seed, [b"abc", b'["'], {b"abc": [b'", "']})

    unguarded = generate(vocab, NAMES, model(), guard=False)["names"]
    assert unguarded[:9] == ["abc"] * 9 and len(unguarded) == 10  # the tenth, at maxItems, cannot close with `", "`
    assert generate(vocab, NAMES, model(), guard=True)["names"] == ["abc"]


@pytest.mark.parametrize("seed", range(6))
def test_a_string_stops_looping(vocab: Vocabulary, seed: int) -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    assert "ab" * 40 in generate(vocab, schema, FavouringModel(vocab, seed, [b"ab"]), guard=False)["name"]
    value = generate(vocab, schema, FavouringModel(vocab, seed, [b"ab"]), guard=True)["name"]
    # Tokens are checked whole: a run may pass the limit inside a token that then ends it ("abc").
    assert "ababababab" in value and "ab" * 7 not in value and not scoring.looping_tail(value)


@pytest.mark.parametrize("seed", range(4))
def test_a_string_that_keeps_near_repeating_is_closed(vocab: Vocabulary, seed: int) -> None:
    """The model writes `S.S.S.`, then (that ruled out as a loop) `S,S.`, `T.S`...: near-repeats
    no exact period catches. The string is closed once its tail near-repeats; unguarded, the
    budget ends it."""
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}

    separators = [b".", b",", b"-", b"_", b"~", b"+", b"*", b"/", b":", b";"]

    def model() -> FavouringModel:
        after = {letter: separators for letter in (b"S", b"T", b"U")} | {sep: [b"S", b"T", b"U"] for sep in separators}
        return FavouringModel(vocab, seed, [b"S"], after)

    unguarded = generate(vocab, schema, model(), guard=False, budget=400)["name"]
    assert len(unguarded) > 300
    settings = SamplingSettings(max_tokens=400, temperature=0.0, seed=seed, stop_repeats=True)
    decoder = Decoder(model(), compile_for(schema, vocab), settings)
    value = json.loads(b"".join(decoder.run()))["name"]
    assert decoder.stats.runaways_closed == 1 and decoder.stats.loops_stopped >= 3
    assert RUNAWAY_WINDOW <= len(value) < RUNAWAY_WINDOW + 40 and near_repeats(value.encode())


def test_a_schema_that_needs_copies_still_gets_them(vocab: Vocabulary) -> None:
    schema = {
        "type": "object",
        "properties": {
            "names": {"type": "array", "items": {"enum": ["abc"]}, "minItems": 3, "maxItems": 5},
            "code": {"type": "string", "pattern": "^(ab){8,}$", "maxLength": 20},
        },
        "required": ["names", "code"],
    }
    model = FavouringModel(vocab, 0, [b"abc", b"ab", b'["'], {b"abc": [b'", "']})
    value = generate(vocab, schema, model, guard=True)
    assert value["names"] == ["abc"] * 3 and value["code"].startswith("abababababababab")


class CopyOnceModel(FavouringModel):
    """Writes `["abc", "abc"]`: after its first `abc` it favours another item, after its second
    the end of the array (in one token with the quote)."""

    def _logits_after(self, length: int) -> npt.NDArray[np.float32]:
        logits = super()._logits_after(length)
        abc = self.vocab.pieces.index(b"abc")
        if length and self.evaluated[length - 1] == abc and self.evaluated[:length].count(abc) >= 2:
            logits[self.vocab.pieces.index(b'"]')] += 100.0
        return logits


def test_a_copy_that_would_end_the_array_is_left_out_too(vocab: Vocabulary) -> None:
    def model() -> FavouringModel:
        return CopyOnceModel(vocab, 0, [b"abc", b'["'], {b"abc": [b'", "']})

    assert generate(vocab, NAMES, model(), guard=False)["names"] == ["abc", "abc"]
    assert generate(vocab, NAMES, model(), guard=True)["names"] == ["abc"]


def test_where_the_remedy_stops_nothing_it_leaves_no_trace(vocab: Vocabulary) -> None:
    """Previews are taken back whole: where no token was ruled out and no array closed, the
    output, the model's context and the random draws are those of a run without the remedy."""
    schema = {"type": "object", "properties": {"tags": {"type": "array", "items": {"enum": ["ab", "abc", "日本"]}}}}
    previewed = 0
    for seed in range(30):
        runs = []
        for guard in (False, True):
            model = FakeModel(vocab, seed)
            settings = SamplingSettings(max_tokens=80, temperature=1.0, seed=seed, stop_repeats=guard)
            decoder = Decoder(model, compile_for(schema, vocab), settings)
            runs.append((b"".join(decoder.run()), model.evaluated, decoder))
        (text, evaluated, _), (guarded_text, guarded_evaluated, decoder) = runs
        previewed += decoder.stats.preview_tokens
        if decoder.stats.loops_stopped == decoder.stats.repeats_stopped == 0:
            assert (guarded_text, guarded_evaluated) == (text, evaluated)
    assert previewed > 0


def test_an_item_whose_number_ends_in_held_zeros_is_reviewed_too(vocab: Vocabulary) -> None:
    """`.0` after 12 is held (core.decode.held_zeros) and dropped when `}, ` ends the number and
    starts the next item in one token: the review comes after the held text is settled. (The
    last item allows no `}, `: the model's next choice, `}]`, ends the array.)"""
    merged = Vocabulary.from_pieces([*vocab.pieces, b"}, ", b"}]"], vocab.eog_ids)
    item = {"type": "object", "properties": {"p": {"type": "number"}}, "required": ["p"]}
    schema = {"type": "object", "properties": {"items": {"type": "array", "items": item, "maxItems": 6}}, "required": ["items"]}

    def model() -> FavouringModel:
        return FavouringModel(merged, 0, [b"12", b"[", b"{"], {b"12": [b"."], b".": [b"0"], b"0": [b"}, ", b"}]"]})

    assert generate(merged, schema, model(), guard=False)["items"] == [{"p": 12}] * 6
    assert generate(merged, schema, model(), guard=True)["items"] == [{"p": 12}]


PEOPLE = {
    "type": "object",
    "properties": {
        "people": {
            "type": "array",
            "maxItems": 6,
            "items": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        }
    },
    "required": ["people"],
}


@pytest.mark.parametrize("seed", range(4))
def test_object_items_stop_where_one_token_ends_an_item_and_starts_the_next(vocab: Vocabulary, seed: int) -> None:
    """`"}, {"` ends an item and starts the next in one token, and no token holds `"}]`: the
    guard takes `"}` on the way to the array's end (then `]`), where the model would copy."""
    merged = Vocabulary.from_pieces([*vocab.pieces, b'"}, {"'], vocab.eog_ids)

    def model() -> FavouringModel:  # after `"}` it would go on (`,`): the guard closes instead
        return FavouringModel(merged, seed, [b"abc", b"[", b'{"', b'"'], {b"abc": [b'"}, {"', b'"}'], b'"}': [b",", b"]"]})

    assert generate(merged, PEOPLE, model(), guard=False)["people"] == [{"name": "abc"}] * 6
    settings = SamplingSettings(max_tokens=120, temperature=0.0, seed=seed, stop_repeats=True)
    decoder = Decoder(model(), compile_for(PEOPLE, merged), settings)
    value = json.loads(b"".join(decoder.run()))
    assert value == {"people": [{"name": "abc"}]} and decoder.stats.repeats_stopped == 1


def test_a_long_item_copied_past_the_preview_is_stopped_too(vocab: Vocabulary, monkeypatch: pytest.MonkeyPatch) -> None:
    """A preview that runs out of choices while the item still copies an earlier one counts it
    a copy: the model was writing one."""
    from gguf_extract.core.decode import repetition_policy as decoding

    monkeypatch.setattr(decoding, "_PREVIEW_CHOICES", 2)
    after = {b"a": [b"b"], b"b": [b"c"], b"c": [b"d"], b"d": [b'", "']}

    def model() -> FavouringModel:
        return FavouringModel(vocab, 0, [b"a", b'["'], after)

    assert generate(vocab, NAMES, model(), guard=True)["names"] == ["abcd"]


COPYRIGHT = """Upstream-Name: tinyparse
Source: https://tinyparse.example.net

Files: *
Copyright: 2011 john
License: BSD-3-Clause

License: BSD-3-Clause
 Redistribution and use in source and binary forms, with or without
 modification, are permitted provided that the following conditions
 are met.
"""
HOLDERS = {
    "type": "object",
    "properties": {
        "people": {
            "type": "array",
            "maxItems": 4,
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
                "required": ["name", "email"],
            },
        }
    },
    "required": ["people"],
}


@pytest.mark.model
@pytest.mark.parametrize("grounded", [(), ("--grounded",)])
def test_the_bundled_model_writes_no_copied_holder(tmp_path: Path, grounded: tuple[str, ...]) -> None:
    """A licence file naming one holder, a list of up to four: the bundled model, unguarded,
    wrote `{"name": "john", "email": "john@example.com"}` three times (one token ending an item
    and starting the next, `"},`, closed no array)."""
    schema, document = tmp_path / "holders.json", tmp_path / "copyright.txt"
    schema.write_text(json.dumps(HOLDERS))
    document.write_text(COPYRIGHT)
    command = [sys.executable, "-m", "gguf_extract", "--schema", str(schema), str(document), "--stats", *grounded]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    people = json.loads(result.stdout)["people"]
    jsonschema.validate({"people": people}, HOLDERS)
    assert people and all(not same_value(item, earlier) for at, item in enumerate(people) for earlier in people[:at])


def test_an_item_the_array_must_have_differs_from_earlier_ones(vocab: Vocabulary) -> None:
    """Where `minItems` keeps the array open, the item the model would copy is written
    otherwise: the token ending it as a copy is passed over for the next choice."""
    schema = {
        "type": "object",
        "properties": {"names": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 10}},
        "required": ["names"],
    }

    def model() -> FavouringModel:
        return FavouringModel(vocab, 0, [b"abc", b'["'], {b"abc": [b'", "']})

    assert generate(vocab, schema, model(), guard=False)["names"][:3] == ["abc"] * 3
    names = generate(vocab, schema, model(), guard=True)["names"]
    assert len(names) == 3 and len(set(names)) == 3 and names[0] == "abc"


def test_a_record_pairing_values_of_two_earlier_records_is_kept(vocab: Vocabulary) -> None:
    """`Bob, maintainer` after `Alice, maintainer` and `Bob, reviewer` is what a list of roles
    says, not a copy: each of its fields is met before, but not in one item."""
    guard = guard_after(b'{"people": [{"n": "alice", "r": "m"}, {"n": "bob", "r": "r"}')
    watch = guard.watch(guard.continued_array(b", ") or -1)
    watch.feed(b', {"n": "bob", "r": "m"}')
    assert not watch.repeats


def test_an_object_item_minitems_forces_is_written_otherwise_where_one_token_would_close_it_a_copy(
    vocab: Vocabulary,
) -> None:
    """The comma and the next item's start are forced (`minItems`), and after the copy's last
    value only `}` may follow: the token that would end that value as a copy's is passed over."""
    schema = {
        "type": "object",
        "properties": {
            "names": {
                "type": "array",
                "minItems": 3,
                "maxItems": 3,
                "items": {"type": "object", "properties": {"n": {"type": "string"}}, "required": ["n"]},
            }
        },
        "required": ["names"],
    }

    def model() -> FavouringModel:
        return FavouringModel(vocab, 0, [b"abc", b"[", b'{"', b'"'], {b"abc": [b'"}', b'"']})

    assert generate(vocab, schema, model(), guard=False)["names"] == [{"n": "abc"}] * 3
    names = [item["n"] for item in generate(vocab, schema, model(), guard=True)["names"]]
    assert names[0] == "abc" and len(set(names)) == 3
