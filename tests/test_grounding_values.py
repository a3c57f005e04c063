"""Grounded dates and numbers, with a fake model over the hand-made vocabulary: the dates and
numbers a document states, a grounded value held to them while it is written (whatever the
fake model would pick), released where the document has none the schema accepts, and the
evidence pointing at the statement."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from conftest import grounded_decode, searched_record, spy_on_shares

from gguf_extract.core.grounding.document_values import (
    DocumentValues,
    document_dates,
    document_numbers,
    document_offsets,
    document_terms,
    document_times,
)
from gguf_extract.core.index.compiled import compile_schema
from gguf_extract.core.results.evidence import CONFIDENCE_EXPONENT, ValueEvidence, gather
from gguf_extract.core.vocab.token_table import Vocabulary

SEEDS = range(12)
DOCUMENT = "Maria was born on 12 March 1990. The order of 1,267 units cost €559.40 in total."


def run(vocab: Vocabulary, schema: Any, document: str, seed: int, grounded: bool = True) -> tuple[Any, dict[str, ValueEvidence]]:
    compiled, output, decoder, grounding = grounded_decode(vocab, schema, document, seed, 200, grounded)
    return compiled.validate(output.decode()), gather(output, document, decoder.choices, searched_record(grounding, within=False))


def object_of(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


# -- what a document states -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        ("born 12 March 1990.", ["1990-03-12"]),
        ("on March 12, 1990", ["1990-03-12"]),
        ("Friday, 14th of June 2024", ["2024-06-14"]),
        ("Sept. 3 2021", ["2021-09-03"]),
        ("12-Mar-1990", ["1990-03-12"]),
        ("at 2024-06-14T09:30", ["2024-06-14"]),
        ("04/05/2024", ["2024-05-04", "2024-04-05"]),  # read both ways
        ("31/12/2023", ["2023-12-31"]),  # month 31 is no month
        ("31 June 2024, 2024-13-01, March 1990, 12 1990", []),  # no calendar date, no day, no month
        ("112 March 1990, version 1.12.03.1990", []),  # digits of a longer number
        ("am 12. März 1990", ["1990-03-12"]),
        ("le 1er août 2021", ["2021-08-01"]),
        ("el 12 de marzo de 1990", ["1990-03-12"]),
        ("em 5 de março de 2020", ["2020-03-05"]),
        ("il 1 settembre 2019, op 2 mei 2023", ["2019-09-01", "2023-05-02"]),
        ("1º de mayo del 2024", ["2024-05-01"]),
        ("12 set 2024, 3 ago 2020, 5 dez 2021", []),  # short forms that are English words too are no months
        ("3 Augu\u017ft 1799, 12 apr\u0130l 1990", ["1799-08-03"]),  # the long s folds to s; a dotted I matches no name
    ],
)
def test_the_dates_a_document_states(text: str, dates: list[str]) -> None:
    assert list(document_dates(text)) == dates


def test_a_date_keeps_the_span_it_was_read_from() -> None:
    text = "Born 12 March 1990; renewed on 1990-03-12."
    assert document_dates(text) == {"1990-03-12": [(5, 18), (31, 41)]}


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("1,267 million", ["1267"]),
        ("€559.40", ["559.40", "559.4"]),
        ("12.0 and 06", ["12.0", "12"]),  # `06` is no JSON number
        ("-5 degrees, -0.0", ["-5", "0.0", "0"]),  # never `-0`
        ("a 34-year-old, 2024-06-14", ["34", "2024", "14"]),  # a hyphen between words is no sign
        ("DOC1 x86 3.10", ["3.10", "3.1"]),  # no digits inside a word
    ],
)
def test_the_numbers_a_document_writes_in_each_json_spelling(text: str, numbers: list[str]) -> None:
    assert list(document_numbers(text)) == numbers


# -- held while written -------------------------------------------------------------------


def test_a_grounded_date_is_the_one_the_document_states(vocab: Vocabulary) -> None:
    schema = object_of(born={"type": "string", "format": "date"})
    for seed in SEEDS:
        value, evidence = run(vocab, schema, DOCUMENT, seed)
        assert value == {"born": "1990-03-12"}
        assert evidence["/born"].span == (18, 31) and evidence["/born"].grounded is True
        assert DOCUMENT[18:31] == "12 March 1990"


def test_without_grounding_the_fake_model_writes_other_dates(vocab: Vocabulary) -> None:
    """The control for the test above: the model alone does not find the date."""
    schema = object_of(born={"type": "string", "format": "date"})
    values = [run(vocab, schema, DOCUMENT, seed, grounded=False)[0]["born"] for seed in SEEDS]
    assert sum(value != "1990-03-12" for value in values) >= len(values) // 2


@pytest.mark.parametrize(
    ("text", "times", "offsets"),
    [
        ("from 09:30 to 16:00 (Central European Summer Time, UTC+02:00)", ["09:30", "16:00"], ["+02:00"]),
        ("at 9:30 pm, 7 pm and 7.30 a.m.; 12 am", ["21:30", "19:00", "07:30", "00:00"], []),
        ("2024-06-14T09:30:00+02:00 and 10:30:15Z", ["09:30", "10:30"], ["+02:00", "Z", "+00:00"]),
        ("09:30-16:00, GMT-5, UTC", ["09:30", "16:00"], ["-05:00", "Z", "+00:00"]),
        ("09:30+02:00; 10:00:00.5 -05:00", ["09:30", "10:00"], ["-05:00", "+02:00"]),  # an offset's digits are no time
        ("ratio 3:4, version 1.2:30, 25:00, 13 pm", [], []),  # no time of day
    ],
)
def test_the_times_and_utc_offsets_a_document_states(text: str, times: list[str], offsets: list[str]) -> None:
    assert list(document_times(text)) == times
    assert list(document_offsets(text)) == offsets


EVENT = "The workshop on 14 June 2024 runs from 09:30 to 16:00 (UTC+02:00)."


def test_a_date_times_time_and_offset_are_the_documents_where_it_states_them(vocab: Vocabulary) -> None:
    schema = object_of(at={"type": "string", "format": "date-time"})
    for seed in SEEDS:
        value, evidence = run(vocab, schema, EVENT, seed)
        at = value["at"]
        assert at[:11] == "2024-06-14T" and at[11:16] in ("09:30", "16:00") and at.endswith("+02:00"), at
        assert evidence["/at"].grounded is True
    free = [run(vocab, schema, EVENT, seed, grounded=False)[0]["at"] for seed in SEEDS]  # the control
    assert sum(at[11:16] not in ("09:30", "16:00") or not at.endswith("+02:00") for at in free) >= len(free) // 2


def test_a_date_times_date_part_is_grounded_and_its_time_is_free(vocab: Vocabulary) -> None:
    schema = object_of(at={"type": "string", "format": "date-time"})
    for seed in SEEDS:
        value, evidence = run(vocab, schema, DOCUMENT, seed)
        assert value["at"].startswith("1990-03-12T"), value
        assert evidence["/at"].grounded is True


def test_grounded_numbers_are_those_the_document_writes(vocab: Vocabulary) -> None:
    schema = object_of(count={"type": "integer"}, price={"type": "number"})
    stated = {12, 1990, 1267, 559.4}
    for seed in SEEDS:
        value, evidence = run(vocab, schema, DOCUMENT, seed)
        assert value["count"] in stated and value["price"] in stated, value
        assert evidence["/count"].grounded is True and evidence["/price"].grounded is True
        assert evidence["/count"].span is not None and evidence["/price"].span is not None


def test_a_number_written_with_separators_points_at_its_statement(vocab: Vocabulary) -> None:
    evidence = gather(b'{"n": 1267, "p": 559.4, "d": "1990-03-12"}', DOCUMENT, [])
    assert [DOCUMENT[slice(*evidence[p].span)] for p in ("/n", "/p", "/d") if evidence[p].span] == [
        "1,267",
        "559.40",
        "12 March 1990",
    ]


def test_the_schema_bounds_cut_the_documents_numbers(vocab: Vocabulary) -> None:
    """Only the numbers the automaton accepts there are offered: 1990 alone is in the bounds."""
    schema = object_of(year={"type": "integer", "minimum": 1900, "maximum": 2100})
    for seed in SEEDS:
        value, evidence = run(vocab, schema, DOCUMENT, seed)
        assert value == {"year": 1990} and evidence["/year"].grounded is True


def test_released_where_the_document_states_none(vocab: Vocabulary) -> None:
    """No date in the document, no number in the bounds: the values are written as the schema
    alone allows, the evidence says they are not grounded, and the document never fails."""
    schema = object_of(born={"type": "string", "format": "date"}, big={"type": "integer", "minimum": 5000})
    for seed in SEEDS:
        value, evidence = run(vocab, schema, "Nothing dated here, only 12 and 34.", seed)
        assert value["big"] >= 5000
        assert evidence["/born"].grounded is False and evidence["/big"].grounded is False


def test_x_grounded_opts_a_value_in_or_out(vocab: Vocabulary) -> None:
    schema = object_of(held={"type": "integer", "x-grounded": True}, free={"type": "integer", "x-grounded": False})
    compiled = compile_schema(schema, vocab)
    assert compiled.grounded_pointers == ["/properties/held"]
    for seed in SEEDS:
        value, evidence = run(vocab, schema, "Only 1267 here.", seed, grounded=False)
        assert value["held"] == 1267 and evidence["/held"].grounded is True
        assert evidence["/free"].grounded is None


def test_numbers_in_an_array_and_a_nullable_number_are_held(vocab: Vocabulary) -> None:
    schema = object_of(
        all={"type": "array", "items": {"type": "number"}, "minItems": 1, "maxItems": 3},
        maybe={"type": ["number", "null"]},
    )
    stated = {12, 1990, 1267, 559.4}
    for seed in SEEDS:
        value, _ = run(vocab, schema, DOCUMENT, seed)
        assert set(value["all"]) <= stated and value["maybe"] in stated | {None}, value


def test_grounded_output_is_the_same_json_text_the_schema_validates(vocab: Vocabulary) -> None:
    schema = object_of(n={"type": "number"}, d={"type": "string", "format": "date"})
    for seed in SEEDS:
        value, _ = run(vocab, schema, "On 2024-06-14 it was 0.50 and 10.00.", seed)
        assert value["d"] == "2024-06-14" and value["n"] in {0.5, 10, 2024, 14}, json.dumps(value)


def test_a_date_stated_once_or_many_times_has_one_span_per_statement() -> None:
    """`04/04/2024` reads the same both ways: one date, one span; a date stated n times has n
    spans, in order (each kept once without a scan of the ones before it)."""
    assert document_dates("on 04/04/2024") == {"2024-04-04": [(3, 13)]}
    spans = document_dates("03/03/2024 " * 500)["2024-03-03"]
    assert spans == [(11 * i, 11 * i + 10) for i in range(500)]


def test_the_document_is_read_only_for_the_kinds_of_value_asked_for() -> None:
    """A schema asking for numbers never has the document's dates, times or offsets read."""
    values = DocumentValues("Paid 1,267.50 EUR on 12 March 1990 at 14:30.")
    assert values.numbers["1267.50"] == [(5, 13)]
    assert {"dates", "times", "offsets"}.isdisjoint(vars(values))
    assert values.dates == {"1990-03-12": [(21, 34)]} and values.times == {"14:30": [(38, 43)]}


# -- terms: e-mail addresses, URIs, host names, IP addresses, UUIDs ---------------------------

CONTACT = (
    "Contact: Ann Lee <ann.lee@example.org>, mailto:bob@example.com; docs at https://example.org/docs/x. "
    "Server 10.0.0.12 (db.example.org), id 123e4567-e89b-12d3-a456-426614174000."
)


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("<ann@example.org>,", ["ann@example.org"]),
        ("mailto:bob@x.de;", ["mailto:bob@x.de", "bob@x.de"]),
        ("see https://a.b/c.", ["see", "https://a.b/c"]),
        ("*item* (x)", ["item", "x"]),
        ("(see https://x.org/a_(b)).", ["see", "https://x.org/a_(b)", "https://x.org/a_", "b"]),
        ("Ann,ann@x.org 'bob@x.org' 2001:db8::1", ["Ann,ann@x.org", "Ann", "ann@x.org", "bob@x.org", "2001:db8::1"]),
        ('say "q" a\\b x\u200by', ["say", "q", "a", "b", "x", "y"]),  # never a character a JSON string escapes
        ("to ann\udcff@x.org", ["to", "ann", "@x.org"]),  # nor a lone surrogate
    ],
)
def test_the_terms_a_document_writes(text: str, terms: list[str]) -> None:
    assert list(document_terms(text)) == terms


def test_grounded_terms_are_the_ones_the_document_writes_in_their_format(vocab: Vocabulary) -> None:
    schema = object_of(
        email={"type": "string", "format": "email"},
        site={"type": "string", "format": "uri"},
        host={"type": "string", "format": "ipv4"},
        id={"type": "string", "format": "uuid"},
    )
    for seed in SEEDS:
        value, evidence = run(vocab, schema, CONTACT, seed)
        assert value["email"] in ("ann.lee@example.org", "bob@example.com"), value
        assert value["site"] in ("https://example.org/docs/x", "mailto:bob@example.com"), value  # a mailto URI is a URI
        assert value == value | {"host": "10.0.0.12", "id": "123e4567-e89b-12d3-a456-426614174000"}, value
        for pointer in ("/email", "/site", "/host", "/id"):
            span = evidence[pointer].span
            assert evidence[pointer].grounded is True and span is not None
            assert CONTACT[span[0] : span[1]] == value[pointer[1:]]
    free = [run(vocab, schema, CONTACT, seed, grounded=False)[0]["email"] for seed in SEEDS]  # the control
    assert sum(email not in ("ann.lee@example.org", "bob@example.com") for email in free) >= len(free) // 2


def test_a_term_is_never_a_part_of_a_longer_one_its_format_accepts(vocab: Vocabulary) -> None:
    """A URI holding brackets, commas or a scheme's colons is written whole, never cut at them;
    an IPv6 address is not read as a scheme and the rest."""
    document = "See https://en.wikipedia.org/wiki/Foo_(bar), urn:isbn:0451450523 and host 2001:db8::1 (v6)."
    schema = object_of(link={"type": "string", "format": "uri"}, host={"type": "string", "format": "ipv6"})
    for seed in SEEDS:
        value, evidence = run(vocab, schema, document, seed)
        assert value["link"] in ("https://en.wikipedia.org/wiki/Foo_(bar)", "urn:isbn:0451450523"), value
        assert value["host"] == "2001:db8::1" and evidence["/host"].grounded is True


def test_a_term_is_released_where_the_document_writes_none_in_its_format(vocab: Vocabulary) -> None:
    schema = object_of(email={"type": "string", "format": "email"}, name={"type": "string", "maxLength": 20})
    for seed in SEEDS:
        value, evidence = run(vocab, schema, "No address here, only Ann Lee.", seed)
        assert "@" in value["email"] and evidence["/email"].grounded is False


def test_an_email_beside_a_date_in_one_place_is_released_not_cut_to_dates(vocab: Vocabulary) -> None:
    schema = object_of(either={"anyOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "email"}]})
    compiled = compile_schema(schema, vocab, grounded=True)
    runs = [run(vocab, schema, CONTACT + " " + DOCUMENT, seed) for seed in SEEDS]
    assert compiled.grounded_pointers and all(compiled.validate(json.dumps(value)) for value, _ in runs)
    assert all(evidence["/either"].grounded is False for _, evidence in runs)


def test_a_held_values_confidence_is_the_models_choice_among_the_documents_candidates(
    vocab: Vocabulary, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each choice inside a held term is scored among the tokens allowed there (the ones that
    keep it on one of the document's terms), and the value's confidence is made of those."""
    shares = spy_on_shares(monkeypatch)
    schema = object_of(email={"type": "string", "format": "email"})
    for seed in SEEDS:
        shares.clear()
        value, evidence = run(vocab, schema, CONTACT, seed)
        assert shares and all(allowed < len(vocab.pieces) // 10 for allowed, _ in shares)
        product = float(np.prod([found for _, found in shares]))
        assert evidence["/email"].confidence == pytest.approx(product**CONFIDENCE_EXPONENT, abs=1e-6), value
