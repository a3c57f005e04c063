"""The numbers a document writes, each read whole, in the forms a JSON value writes them.

A number is read as the document writes it, never in pieces: the `2500` of `2.5e3`, never its
`2.5`; the `1000000` of `1.000.000` or `1 000 000`, never their `1`; the `1234.56` of
`1.234,56`, never its `1.234`; the `1000000` of `1'000'000`. What a number may be written as:

- digits, not inside a word (`DOC1`, `x86`) nor led by a zero (`06` is a month or a code,
  no JSON number's spelling), with a minus sign before them where it is not a hyphen joining
  words (`-5`, not the `-06` of `2024-06`);
- thousands grouped by the mark that is not the decimal one (below) or by one kind of space:
  a space, a no-break space, a thin space or a narrow no-break space (U+0020, U+00A0, U+2009,
  U+202F), in groups of three after one to three digits (`1,234,567`, `1.000.000`,
  `1 000 000`); after groups of spaces, a point or a comma is a decimal mark (`1 234,56`);
- thousands grouped by one kind of apostrophe (U+0027, U+2019, U+02BC) or by underscores, in
  groups of three after one to three digits, then maybe a fraction after a point or a comma
  (`1'000'000`, `12'345.50`, `12'345,50`, `1_000`); digits such marks join that read as no
  such number are no number (`5'10"`, `1234'567`), and a mark not between digits joins none
  (`'42'`, `'90s`);
- a fraction after the decimal mark (`559.40`; `12,5` where the comma is one), or led by its
  point where it stands alone, after a space, a colon, a bracket, a sign or a currency
  (`Total: .5` is 0.5; not the `.5` of `v1.5` or `x.5`);
- an exponent after digits with or without a fraction (`2.5e3`, `7E2`, `1,5e-3`), ending
  where the word does: `2.5e3x` is no number, and gives no piece (letters after digits alone
  are a unit: `5kg` is 5).

Which of `.` and `,` is the decimal mark is read per document, from its numbers that read
only one way: a comma where one of them is written with a decimal comma (`1.234,56`,
`1.000.000`, `12,5`, `0,75`) and none with a decimal point (`1,234.56`, `1,000,000`, `12.5`,
`3.14159`, `0.75`); a point where the reverse holds or where none reads only one way (the
English way: `1,267 million` is 1267). A document writing both reads each number both ways,
every reading a choice (`1,234` is 1234 and 1.234).

Digits that read as no one number are not a number, and never give one of their pieces: a
version, an address or a date written with points (`1.2.3`, `192.168.0.1`, `12.03.1990`);
digits joined by a slash, a power, marks doubled, an Arabic mark or a middle dot (`1/2`,
`10^6`, `1..5`, U+066B), or with a superscript or a one-character fraction after them
(`10\u2076`, `2\u00bd`, `1 \u00bd`); the `0` of `0x1F`. Digits joined by commas or spaces that
read as no one number are a list, each item a number of its own (`2010,2011`,
`555 123 4567`), where every item reads as one; else none (`00,5`, `1 000 000.123.4`).
Thousands may also be grouped the Indian way (`12,34,567`, `1,23,45,678.90`), read so in
any document. The cost, by choice: digits grouped in threes after
one space read as one number, so `100 200 300` is 100200300, never three numbers.

Each number is kept in each JSON spelling of its value, digits as written: `559.40` as
`559.40` and `559.4`, `1.234,56` as `1234.56`, `2.5e3` as `2500` (an exponent is written out,
where the digits stay within what a JSON number may hold: core.schema.lexical.scalars; else the
value keeps it, `6.022e23`). Each spelling keeps the character spans of the numbers it was
read from, the whole number as written (sign and exponent included), for evidence.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from decimal import Decimal
from typing import NamedTuple

from ..schema.lexical.scalars import MAX_EXPONENT_DIGITS, MAX_FRACTION_DIGITS, MAX_INTEGER_DIGITS

Span = tuple[int, int]

# One kind of space may group thousands: a space, a no-break space, a thin space, a narrow
# no-break space (the last two are what SI and many style guides write).
_SPACES = " \u00a0\u2009\u202f"
# Marks that group thousands the Swiss way (`1'000'000`: an apostrophe, a right single quote,
# a modifier apostrophe, as word processors turn one into the others) or a programmer's
# (`1_000`). They join digits into one part, read whole or not at all: never in pieces.
_MARKS = "'\u2019\u02bc_"
# A number as written, not inside a word (see the module's docstring): an exponent's digits
# (not followed by a word character, nor by more digits after a point, a comma or a mark),
# else a run of digits joined by single points, commas and marks and one kind of space, read
# whole or in items below, else a fraction led by its point (`.5`) where it stands alone,
# after a space, a colon, a bracket, a sign or a currency (not the `.5` of `v1.5`, `x.5`).
_PART = rf"[0-9]+(?:[.,{_MARKS}][0-9]+)*"  # digits joined by single points, commas and marks
_NUMERAL = re.compile(
    r"(?<![\w.,])(?<![0-9]['\u2019\u02bc])(?P<sign>(?<![\w-])[-\u2212])?"
    r"(?:(?P<mantissa>[0-9]+(?:[.,][0-9]+|\.)?)[eE](?P<exponent>[-+]?[0-9]+)(?!\w|[.,'\u2019\u02bc][0-9])"
    rf"|(?P<run>{_PART}(?:(?P<space>[{_SPACES}]){_PART}(?:(?P=space){_PART})*)?)"
    rf"|(?<![^\s:(\[$\u20ac\u00a3\u00a5\-\u2212])(?P<bare>\.[0-9]+)(?![0-9]|[.,{_MARKS}][0-9])"
    r")"
)
# What continues a numeral into no number: an exponent inside a word (`2.5e3x`, `1'000e3`).
_CONTINUED = re.compile(r"[eE][-+]?[0-9]")
# Marks that join digits into no number where they stand between them, alone or in runs: a
# fraction (`1/2`, or a fraction or division slash, U+2044, U+2215), a power (`10^6`, `10**6`),
# marks doubled (`1..5`, `1,,000`, `1__000`), an Arabic decimal or thousands mark or a middle
# dot (U+066B, U+066C, U+00B7).
_JOINS = "._,/^\u066b\u066c\u00b7\u2044\u2215"
_JOINED_MARKS = re.compile(rf"[{_JOINS}]+|\*\*?")
# What joins a numeral to what follows it into no number: marks before more digits (above), a
# point before an exponent (`1.e3x`), a letter of a hexadecimal, binary or octal literal
# after a lone zero (`0x1F`, `0b101`, `0o17`).
_JOINED_AFTER = re.compile(rf"(?:[{_JOINS}]+|\*\*?)[0-9]|\.[eE][-+]?[0-9]")
_LITERAL = re.compile(r"[xX][0-9a-fA-F]|[bBoO][0-9]")
# Thousands grouped the Indian way (lakh, crore): one or two digits, groups of two, a last group
# of three, then maybe a fraction after a point: `1,00,000`, `12,34,567`, `1,23,45,678.90`. At
# least one group is of two digits, so no run read as thousands grouped in threes reads so.
_INDIAN = re.compile(r"(?P<whole>[1-9][0-9]?(?:,[0-9]{2})+,[0-9]{3})(?:\.(?P<fraction>[0-9]+))?")
_SPACE_RUN = re.compile(f"[^{_SPACES}]+")
_LEAD = r"[1-9][0-9]{0,2}"  # the digits before the first group of three
_WHOLE = "(?:0|[1-9][0-9]*)"  # digits not led by a zero
_DIGITS = re.compile(_WHOLE)
# Thousands grouped by one kind of mark, after one to three digits, then maybe a fraction after
# a point or a comma: no other mark is read so (`1'000,50` is 1000.5 as `1'000.50` is).
_MARK_GROUPED = re.compile(
    rf"(?P<whole>{_LEAD}(?P<mark>[{_MARKS}])[0-9]{{3}}(?:(?P=mark)[0-9]{{3}})*)(?:[.,](?P<fraction>[0-9]+))?"
)


def _only_with(mark: str) -> re.Pattern[str]:
    """The numbers that read only with `mark` as the decimal mark (the other one grouping
    thousands): they decide a document's decimal mark. Three digits after a single mark read
    both ways (`1,234`, `1.234`), as do four or more after a comma (`2010,2011` is as often two
    years as a number)."""
    decimal, group = re.escape(mark), re.escape("," if mark == "." else ".")
    shapes = [
        rf"{_LEAD}(?:{group}[0-9]{{3}})+{decimal}[0-9]+",  # grouped, then a fraction: `1.234,56`
        rf"{_LEAD}(?:{group}[0-9]{{3}}){{2,}}",  # grouped twice or more: `1.000.000`
        rf"{_WHOLE}{decimal}[0-9]{{1,2}}",  # a fraction of one or two digits: `12,5`
        rf"0{decimal}[0-9]+",  # after a zero, no group: `0,750`
    ]
    if mark == ".":
        shapes.append(rf"{_WHOLE}\.[0-9]{{4,}}")  # `3.14159`
    return re.compile("|".join(shapes))


_ONLY_COMMA, _ONLY_POINT = _only_with(","), _only_with(".")


class _Reading(NamedTuple):
    """A number read: its value as a JSON text without sign (`1234.56`), and where it stands
    in the numeral it was read from."""

    text: str
    start: int
    end: int


def document_numbers(document: str) -> dict[str, list[Span]]:
    """Each JSON spelling of the numbers the document writes (see the module's docstring),
    with their spans, in the order found."""
    numerals = list(_NUMERAL.finditer(document))
    marks = _decimal_marks(numeral["run"] for numeral in numerals if numeral["run"])
    found: dict[str, dict[Span, None]] = {}
    for numeral in numerals:
        if _joined(document, numeral):
            continue  # the `1` of `1/2`, `10^6`, `1..5`, `0x1F`: a piece of what reads as no number
        base = numeral.start(next(name for name in ("run", "mantissa", "bare") if numeral[name]))
        continued = _CONTINUED.match(document, numeral.end()) is not None
        for reading in _readings(numeral, marks):
            if continued and base + reading.end == numeral.end():
                continue  # the `2.5` of `2.5e3x`: a piece of what reads as no number
            signed = bool(numeral["sign"]) and reading.start == 0  # a list's first item only
            span = (numeral.start() if signed else base + reading.start, base + reading.end)
            for spelling in _spellings(reading.text):
                text = "-" + spelling if signed and spelling.strip("0.") else spelling  # never `-0`
                found.setdefault(text, {})[span] = None
    return {text: list(spans) for text, spans in found.items()}


def _joined(document: str, numeral: re.Match[str]) -> bool:
    """Whether `numeral` is joined to the digits before or after it into what reads as no
    number: by the marks `_JOINS` (`1/2`, `10^6`, `1..5`), by a superscript or a fraction
    written as one character after it (`10⁶`, `2½`, and `1 ½` after one space), as the zero
    of a hexadecimal, binary or octal literal (`0x1F`), or by a point before an exponent."""
    start, end = numeral.start(), numeral.end()
    if _JOINED_AFTER.match(document, end):
        return True
    if numeral["run"] == "0" and _LITERAL.match(document, end):
        return True
    after = document[end : end + 2]
    if after[:1] and unicodedata.category(after[0]) == "No":
        return True  # a power or a fraction: `10⁶`, `5²`, `2½`
    if len(after) == 2 and after[0] in _SPACES and unicodedata.decomposition(after[1]).startswith("<fraction>"):
        return True  # a whole and a fraction: `1 ½`
    before = start
    while before > 0 and (document[before - 1] in _JOINS or document[before - 1] == "*"):
        before -= 1
    return (
        before < start
        and before > 0
        and document[before - 1] in "0123456789"
        and _JOINED_MARKS.fullmatch(document, before, start) is not None
    )


def _decimal_marks(runs: Iterable[str]) -> str:
    """The decimal marks a document's runs of digits are read with: `.`, `,`, or both (`.,`)
    where some of them read only one way and some only the other."""
    comma = point = False
    for run in runs:
        for part in _SPACE_RUN.findall(run):
            comma = comma or _ONLY_COMMA.fullmatch(part) is not None
            point = point or _ONLY_POINT.fullmatch(part) is not None
    return ".," if comma and point else "," if comma else "."


def _readings(numeral: re.Match[str], marks: str) -> list[_Reading]:
    """The numbers one numeral reads as: with an exponent, its value; led by its point, its
    fraction (`.5` is 0.5); else its run, whole or in items, with the decimal marks `marks`."""
    if numeral["bare"]:
        return [_Reading("0" + numeral["bare"], 0, len(numeral["bare"]))]
    if numeral["mantissa"]:
        text = _scientific(numeral["mantissa"], numeral["exponent"])
        return [] if text is None else [_Reading(text, 0, numeral.end() - numeral.start("mantissa"))]
    return _read_run(numeral["run"], marks)


def _scientific(mantissa: str, exponent: str) -> str | None:
    """The value of `mantissa`e`exponent` written out (`2.5`, `3` -> `2500`), where it stays
    within a JSON number's digits; else in JSON's exponent form (`6.022e23`). A comma in the
    mantissa is a decimal comma: an exponent never follows thousands. None for a mantissa led
    by a zero (`05e3`)."""
    mantissa = mantissa.replace(",", ".")
    if _DIGITS.fullmatch(mantissa.partition(".")[0]) is None:
        return None
    written = f"{mantissa}e{exponent}"
    if len(exponent.lstrip("+-")) > MAX_EXPONENT_DIGITS:
        return written  # no JSON value the schema's automaton takes: filtered there
    whole, _, fraction = format(Decimal(written), "f").partition(".")
    if len(whole) > MAX_INTEGER_DIGITS or len(fraction) > MAX_FRACTION_DIGITS:
        return written
    return f"{whole}.{fraction}" if fraction else whole


def _read_run(run: str, marks: str) -> list[_Reading]:
    """A run of digits read with the decimal marks `marks`: whole, else in items between its
    spaces (each read whole, else in items between its commas)."""
    if not any(space in run for space in _SPACES):
        return list(_read_part(run, marks))
    whole = _grouped_by_space(run)
    if whole is not None:
        return [_Reading(whole, 0, len(run))]
    found: list[_Reading] = []
    for part in _SPACE_RUN.finditer(run):
        items = _read_part(part.group(), marks)
        if not items:
            return []  # an item that reads as no number: the run is none (`1 000 000.123.4`)
        found += [_Reading(r.text, part.start() + r.start, part.start() + r.end) for r in items]
    return found


@functools.lru_cache(maxsize=4096)
def _read_part(part: str, marks: str) -> tuple[_Reading, ...]:
    """Digits joined by points and commas, read with the decimal mark each of `marks` is (its
    own where it reads only one way): whole, else, where commas join them, each item between
    the commas that reads whole; else none (`1.2.3`). Kept for the parts read lately: a
    document writes its years, amounts and counts again and again."""
    if part.isdigit():  # most parts: no mark to read
        return (_Reading(part, 0, len(part)),) if _DIGITS.fullmatch(part) else ()
    if any(mark in part for mark in _MARKS):  # whole, or no number: `5'10`, `1,000'000` give none
        grouped = _MARK_GROUPED.fullmatch(part)
        if grouped is None:
            return ()
        whole, fraction = grouped["whole"].replace(grouped["mark"], ""), grouped["fraction"]
        return (_Reading(f"{whole}.{fraction}" if fraction else whole, 0, len(part)),)
    indian = _INDIAN.fullmatch(part)
    if indian is not None:  # read so in any document: no run grouped in threes reads so
        whole, fraction = indian["whole"].replace(",", ""), indian["fraction"]
        return (_Reading(f"{whole}.{fraction}" if fraction else whole, 0, len(part)),)
    own = "," if _ONLY_COMMA.fullmatch(part) else "." if _ONLY_POINT.fullmatch(part) else marks
    found: list[_Reading] = []
    for mark in own:
        whole = _marked(part, mark)
        if whole is not None:
            found.append(_Reading(whole, 0, len(part)))
            continue
        start, listed = 0, list[_Reading]()
        for item in part.split(",") if "," in part else ():
            items = _read_part(item, marks)
            if not items:  # an item that reads as no number: the list is none (`00,5`, `1,000,00`)
                listed = []
                break
            listed += [_Reading(r.text, start + r.start, start + r.end) for r in items]
            start += len(item) + 1
        found += listed
    return tuple(dict.fromkeys(found))


def _marked(part: str, mark: str) -> str | None:
    """`part` (digits, points and commas) as one number with the decimal mark `mark` and the
    other mark grouping thousands, as a JSON text; None where it reads so as no number."""
    group = "," if mark == "." else "."
    whole, _, fraction = part.partition(mark)
    if mark in fraction or group in fraction:
        return None
    if group in whole:
        if re.fullmatch(rf"{_LEAD}(?:{re.escape(group)}[0-9]{{3}})+", whole) is None:
            return None
        whole = whole.replace(group, "")
    elif _DIGITS.fullmatch(whole) is None:
        return None  # led by a zero
    return f"{whole}.{fraction}" if fraction else whole


def _grouped_by_space(run: str) -> str | None:
    """`run` (joined by one kind of space) as one number whose thousands that space groups (a
    point or a comma after the last group is its decimal mark), as a JSON text; None where it
    is not one."""
    lead, *groups, last = re.split(f"[{_SPACES}]", run)
    ending = re.fullmatch(r"([0-9]{3})(?:[.,]([0-9]+))?", last)
    if re.fullmatch(_LEAD, lead) is None or ending is None or not all(re.fullmatch("[0-9]{3}", g) for g in groups):
        return None
    whole = lead + "".join(groups) + ending[1]
    return f"{whole}.{ending[2]}" if ending[2] else whole


def _spellings(text: str) -> list[str]:
    """The JSON spellings of a number's value: as read, and without the zeros ending its
    fraction (`559.40`, `559.4`)."""
    return list(dict.fromkeys([text, shortest_number(text)]))


def shortest_number(text: str) -> str:
    """A JSON number's text without the zeros ending its fraction, nor a point left bare:
    how two spellings of one number compare (`559.40` and `559.4`)."""
    if "." not in text or "e" in text.lower():
        return text
    return text.rstrip("0").rstrip(".")
