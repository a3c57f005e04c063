"""A number the document states is read whole, as written: exponents (`2.5e3`), thousands
grouped by `.`, `,`, a space of any kind, an apostrophe or an underscore (`1.000.000`,
`1 000 000`, `1'000'000`, `1_000`), a decimal comma where the document writes one (`1.234,56`),
a fraction led by its point (`.5`). A grounded number is one of those whole numbers, never
a piece of one (`2.5` of `2.5e3`, `1` of `1 000 000`), and its evidence spans the whole
number as written. Reading and evidence without a model; the values held while written with
the fake model over the hand-made vocabulary; the command with the bundled model."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from conftest import FakeModel, searched_record
from hypothesis import given
from hypothesis import strategies as st

from gguf_extract.core.decode.decoder import Decoder
from gguf_extract.core.decode.types import SamplingSettings
from gguf_extract.core.grounding.document_values import document_numbers
from gguf_extract.core.index.compiled import compile_schema
from gguf_extract.core.results.evidence import ValueEvidence, gather
from gguf_extract.core.vocab.token_table import Vocabulary

# The examples of the report: each a document, the number it states, and that number's span.
STATED = [
    ("Total: 2.5e3", "2500", (7, 12)),
    ("Amount: 7E2", "700", (8, 11)),
    ("Amount: 1.000.000", "1000000", (8, 17)),
    ("Total: 1.234,56 EUR", "1234.56", (7, 15)),
    ("Amount: 1 000 000", "1000000", (8, 17)),
]

# -- reading the document -----------------------------------------------------------------


@pytest.mark.parametrize(("text", "number", "span"), STATED)
def test_a_number_is_read_whole_and_never_in_pieces(text: str, number: str, span: tuple[int, int]) -> None:
    assert document_numbers(text) == {number: [span]}


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("1,234,567 units", {"1234567": [(0, 9)]}),
        ("1\u2009000\u2009000 and 1\u202f000 and 1\u00a0500", {"1000000": [(0, 9)], "1000": [(14, 19)], "1500": [(24, 29)]}),
        ("Prix : 1 234,56 €", {"1234.56": [(7, 15)]}),  # after groups of spaces, a comma is a decimal mark
        ("-1 000 and \u22122.5e3", {"-1000": [(0, 6)], "-2500": [(11, 17)]}),
        ("1.5e-3, 1.50E+1 and 0e5", {"0.0015": [(0, 6)], "15.0": [(8, 15)], "15": [(8, 15)], "0": [(20, 23)]}),
        ("6.022e23 per mole", {"6.022e23": [(0, 8)]}),  # written out, too many digits for a JSON number: kept so
        ("1,5e3", {"1500": [(0, 5)]}),  # a comma before an exponent is a decimal comma
    ],
)
def test_exponents_and_thousands_in_every_grouping(text: str, numbers: dict[str, list[tuple[int, int]]]) -> None:
    assert document_numbers(text) == numbers


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("1,234 and 1.234", ["1234", "1.234"]),  # no decimal comma anywhere: the English way
        ("1,234 and 1.234; 12,5", ["1.234", "1234", "12.5"]),  # a decimal comma read elsewhere
        ("1,234 and 1.234; 1.000.000", ["1.234", "1234", "1000000"]),
        ("1,234; 12,5 and 12.5", ["1234", "1.234", "12.5"]),  # both marks written: both readings, each a choice
        ("3.10 and 1.234,56", ["3.10", "3.1", "1234.56"]),  # a number that reads one way reads so anywhere
    ],
)
def test_the_decimal_mark_is_the_documents(text: str, numbers: list[str]) -> None:
    assert list(document_numbers(text)) == numbers


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Version 1.2.3, host 192.168.0.1, on 12.03.1990", []),  # no number, nor a piece of one
        ("Copyright 2010,2011 and 2020, 2021", ["2010", "2011", "2020", "2021"]),  # a list, each a number
        ("call 555 123 4567", ["555", "123", "4567"]),
        ("1.5,2.5", ["1.5", "2.5"]),
        ("06 and 05e3 and 007", []),  # led by a zero: no JSON number's spelling
    ],
)
def test_digits_that_read_as_no_one_number(text: str, numbers: list[str]) -> None:
    assert list(document_numbers(text)) == numbers


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Total: 1'000'000 CHF", {"1000000": [(7, 16)]}),
        ("Total: 12'345.50 CHF", {"12345.50": [(7, 16)], "12345.5": [(7, 16)]}),
        ("Total: 12'345,50 CHF", {"12345.50": [(7, 16)], "12345.5": [(7, 16)]}),  # a comma after the groups
        ("Total: 12\u2019345.50", {"12345.50": [(7, 16)], "12345.5": [(7, 16)]}),  # a right single quote
        ("Total: 12\u02bc345", {"12345": [(7, 13)]}),  # a modifier apostrophe
        ("-1'000 and 1'000, 2'000", {"-1000": [(0, 6)], "1000": [(11, 16)], "2000": [(18, 23)]}),
        ("Total: 1_000 and 1_000_000.5", {"1000": [(7, 12)], "1000000.5": [(17, 28)]}),
    ],
)
def test_thousands_grouped_by_apostrophes_and_underscores(text: str, numbers: dict[str, list[tuple[int, int]]]) -> None:
    assert document_numbers(text) == numbers


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("'42' and it's 5 in the '90s", {"42": [(1, 3)], "5": [(14, 15)], "90": [(24, 26)]}),  # quotes group nothing
        ("5'10\" tall, 1'00, 1234'567, 1'0000, 12'345'67", {}),  # marks that group no thousands: no number
        ("1.5'123 and 1,000'000 and 1_00 and 1_000_0", {}),  # nor one of their pieces
        ("Size 2.5e3x, 1'000e3 and 7E2.5", {}),  # an exponent inside a word: no number, not its `2.5`
        ("1.5,2.5e3x", {"1.5": [(0, 3)]}),  # a list's item before one
    ],
)
def test_marks_and_letters_that_make_no_number_give_none_of_its_pieces(
    text: str, numbers: dict[str, list[tuple[int, int]]]
) -> None:
    assert document_numbers(text) == numbers


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Total: .5", {"0.5": [(7, 9)]}),
        ("(.25) at $.50, -.5", {"0.25": [(1, 4)], "0.50": [(10, 13)], "0.5": [(10, 13)], "-0.5": [(15, 18)]}),
        (".05 alone", {"0.05": [(0, 3)]}),
        ("v1.5, x.5, a..5, .5.3, .5e3", {}),  # a piece of a version, a word, a path or an exponent: none
    ],
)
def test_a_fraction_led_by_its_point_where_it_stands_alone(text: str, numbers: dict[str, list[tuple[int, int]]]) -> None:
    assert document_numbers(text) == numbers


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Grand total: 1,00,000 only.", {"100000": [(13, 21)]}),
        ("Grand total: 10,00,000.50 only.", {"1000000.50": [(13, 25)], "1000000.5": [(13, 25)]}),
        ("Grand total: 12,34,567 only.", {"1234567": [(13, 22)]}),
        ("Grand total: 1,23,45,678.90 only.", {"12345678.90": [(13, 27)], "12345678.9": [(13, 27)]}),
        ("1,00,000 and 1.234,56", {"100000": [(0, 8)], "1234.56": [(13, 21)]}),  # in any document
    ],
)
def test_thousands_grouped_the_indian_way(text: str, numbers: dict[str, list[tuple[int, int]]]) -> None:
    assert document_numbers(text) == numbers


JOINED_INTO_NO_NUMBER = [
    *["1,000,00", "100,000,0", "00,5", "1,234.56.78", "1 000 000.123.4"],  # a list with an item that is none
    *["1..5", "1,,000", "1__000", ".5..5", "1.e3x"],  # marks doubled, a point before an exponent in a word
    *["0x1F", "0b101", "0o17", "-0x1F", "0xff"],  # hexadecimal, binary, octal
    *["10\u2076", "5\u00b2", "10^6", "10**6", "2*3"],  # powers
    *["1/2", "3 1/2", "2\u00bd", "1 \u00bd", "1\u20442", "12/03/2024"],  # fractions
    *["1\u066b5", "1\u066c234", "1\u00b7234"],  # an Arabic decimal or thousands mark, a middle dot
]


@pytest.mark.parametrize("written", JOINED_INTO_NO_NUMBER)
def test_digits_joined_into_no_number_give_none_of_its_pieces(written: str) -> None:
    assert document_numbers(f"Invoice\nGrand total: {written} only.\n") == {}


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Grand total: 1.e3 only.", {"1000": [(13, 17)]}),  # a point before the exponent: read whole
        ("**5** and **6**, 0 x 5, 0 b", {"5": [(2, 3), (21, 22)], "6": [(12, 13)], "0": [(17, 18), (24, 25)]}),
        ("5. 6, 7.", {"5": [(0, 1)], "6": [(3, 4)], "7": [(6, 7)]}),  # marks that end sentences and items
        ("1 1/2 cups, 2 ½ and 1, ½", {"1": [(20, 21)]}),
    ],
)
def test_marks_that_join_no_digits_leave_numbers_whole(text: str, numbers: dict[str, list[tuple[int, int]]]) -> None:
    assert document_numbers(text) == numbers


@pytest.mark.parametrize(
    ("unit", "copies"),
    [
        ("1'", 5000),
        ("1'000", 2000),
        ("1_", 5000),
        (".5 ", 2000),
        ("2.5e3x ", 1000),
        ("1/", 5000),
        ("1,00", 2500),
        ("1 00", 2500),
    ],
)
def test_reading_stays_linear(unit: str, copies: int) -> None:
    """Adversarial runs of marks are read in work about linear in their length: eight times
    the text takes under 32 times the lines of Python and the time (measured 10 to 13 times; a
    quadratic reading takes 64), the time the least of a few runs of this process's own CPU time
    (a machine busy with other work does not stretch it), compared with each other on the same
    machine in the same moment, never with a fixed duration."""
    assert growth(unit * copies, unit * (8 * copies)) < 32


@pytest.mark.parametrize("mark", ["/", "*"])
def test_a_long_run_of_one_mark_stays_linear(mark: str) -> None:
    assert growth("1" + mark * 10000 + "2", "1" + mark * 80000 + "2") < 32


def growth(small: str, large: str) -> float:
    """How many times the work of reading `small`'s numbers reading `large`'s takes: the larger
    of the ratios of Python lines run and of least times over five runs."""
    return max(lines_run(large) / lines_run(small), least_time(large) / least_time(small))


def least_time(text: str) -> float:
    times = []
    for _ in range(5):
        start = time.process_time()
        document_numbers(text)
        times.append(time.process_time() - start)
    return max(min(times), 1e-6)


def lines_run(text: str) -> int:
    """How many lines of Python reading `text`'s numbers runs (a measure of its work that does
    not depend on the machine's speed or load)."""
    document_numbers(text)  # once untraced: what is built on first use is not the reading's work
    count = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        document_numbers(text)
    finally:
        sys.settrace(None)
    return count


STYLES = {  # how a number is written: thousands mark, decimal mark
    "english": (",", "."),
    "european": (".", ","),
    "si": ("\u2009", "."),
    "french": ("\u202f", ","),
    "spaced": (" ", ","),
}


def written(value: Decimal, style: str) -> str:
    group, decimal = STYLES[style]
    whole, _, fraction = f"{value:f}".partition(".")
    grouped = f"{int(whole):,}".replace(",", group)
    return grouped + (decimal + fraction if fraction else "")


@given(
    st.decimals(min_value=0, max_value=10**12, places=2, allow_nan=False, allow_infinity=False),
    st.sampled_from(sorted(STYLES)),
)
def test_every_number_read_is_a_whole_written_one(value: Decimal, style: str) -> None:
    """An amount written in any style, with a fee in the same style saying which decimal mark
    the document writes: the amount is read as its value, and nothing read is a piece of it."""
    amount, fee = written(value, style), written(Decimal("0.50"), style)
    text = f"Amount: {amount} EUR\nFee: {fee} EUR"
    spans = {(8, 8 + len(amount)), (len(text) - len(fee) - 4, len(text) - 4)}
    found = document_numbers(text)
    assert {span for found_spans in found.values() for span in found_spans} == spans
    assert any(Decimal(number) == value for number, found_spans in found.items() if (8, 8 + len(amount)) in found_spans)


# -- evidence -------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "number", "span"), STATED)
def test_the_evidence_of_a_stated_number_spans_all_of_it(text: str, number: str, span: tuple[int, int]) -> None:
    evidence = gather(b'{"n": ' + number.encode() + b"}", text, [])
    assert evidence["/n"].span == span


@pytest.mark.parametrize(
    ("text", "piece"),
    [
        ("Amount: 1 000 000", "1"),
        ("Total: 1.234,56 EUR", "1.234"),
        ("Sum: 1,234,567", "1"),
        ("Total: 2.5e3", "2.5"),
        ("Total: 1'000'000 CHF", "1"),
        ("Total: 12\u2019345.50 CHF", "345.50"),
    ],
)
def test_a_piece_of_a_number_has_no_span(text: str, piece: str) -> None:
    """Written without grounding, a piece of a stated number is not found in it: a span there
    would make it look sourced."""
    assert gather(b'{"n": ' + piece.encode() + b"}", text, [])["/n"].span is None


# -- held while written ---------------------------------------------------------------------

SEEDS = range(12)
MIXED = "Total: 1.234,56 EUR, then 2.5e3 and 7E2 units, 1 000 000 in all."


def run(vocab: Vocabulary, schema: Any, document: str, seed: int) -> tuple[Any, dict[str, ValueEvidence]]:
    compiled = compile_schema(schema, vocab, grounded=True)
    grounding = compiled.grounding(document)
    assert grounding is not None and grounding.values is not None
    settings = SamplingSettings(max_tokens=200, temperature=1.0, seed=seed, draft_tokens=4)
    decoder = Decoder(FakeModel(vocab, seed), compiled, settings, grounding=grounding)
    output = b"".join(decoder.run())
    evidence = gather(output, document, decoder.choices, searched_record(grounding, within=False))
    return compiled.validate(output.decode()), evidence


def test_a_grounded_number_is_a_whole_one_the_document_states(vocab: Vocabulary) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}
    spans = {1234.56: (7, 15), 2500: (26, 31), 700: (36, 39), 1000000: (47, 56)}
    for seed in SEEDS:
        value, evidence = run(vocab, schema, MIXED, seed)
        assert value["n"] in spans, value  # never 1.234, 2.5, 7 or 1
        assert evidence["/n"].grounded is True and evidence["/n"].span == spans[value["n"]]


def test_a_grounded_integer_is_a_whole_one_written_without_exponent(vocab: Vocabulary) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    for seed in SEEDS:
        value, _ = run(vocab, schema, "Total: 2.5e3 and 7E2", seed)
        assert value["n"] in (2500, 700), value


# -- the command, with the bundled model ------------------------------------------------------


@pytest.mark.model
@pytest.mark.parametrize(("text", "number", "span"), [*STATED, ("Total: 1'000'000 CHF", "1000000", (7, 16))])
def test_the_command_writes_the_whole_number(tmp_path: Path, text: str, number: str, span: tuple[int, int]) -> None:
    name = text.split(":")[0].lower()
    schema, document = tmp_path / "schema.json", tmp_path / "document.txt"
    schema.write_text(json.dumps({"type": "object", "properties": {name: {"type": "number"}}, "required": [name]}))
    document.write_text(text + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "gguf_extract", "--schema", str(schema), str(document), "--grounded", "--evidence"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    envelope = json.loads(result.stdout)
    assert Decimal(str(envelope["data"][name])) == Decimal(number), envelope
    assert envelope["evidence"][f"/{name}"] | {"confidence": None} == {"span": list(span), "confidence": None, "grounded": True}
