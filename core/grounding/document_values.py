"""The dates and numbers a document states, in the forms a JSON value writes them.

A date is a day, a month (by number, or by name: English names and abbreviations, and the
names in German, French, Spanish, Portuguese, Italian and Dutch) and a 4-digit year written
next to each other (`12 March 1990`, `March 12, 1990`, `1990-03-12`, `12/03/1990`, `12. März
1990`, `12 de marzo de 1990`);
it is kept as the ISO date `1990-03-12`. A written date that reads two ways (`04/05/2024`)
gives both; one that is no calendar date (`31 June 2024`) gives none. A number is read whole,
as written, never in pieces (core.grounding.written_numbers: `2.5e3`, `1.000.000`, `1 000 000`,
`1.234,56`); it is kept in each JSON spelling of its value (`1,267` -> `1267`; `559.40` ->
`559.40` and `559.4`; `2.5e3` -> `2500`), whatever stands around it (`€`, `million`, `%`).

A time of day is hours and minutes with a colon (`09:30`, `9:30 pm`, `21:30:15`) or an hour
before am/pm (`7 pm`, `7.30 a.m.`), kept as `HH:MM` on 24 hours; a UTC offset is one written
after UTC or GMT (`UTC+02:00`, `GMT-5`; `UTC` alone is `Z` and `+00:00`) or after a time
(`09:30+02:00`), kept as RFC 3339 writes it (`+02:00`): a grounded `date-time` takes its time
and offset from these where the document states any.

A term is what an e-mail address, a URI, a host name, an IP address or a UUID may be: a run of
characters between whitespace, angle brackets, quotes, backticks, backslashes and control or
format characters (`<ann@example.org>` gives `ann@example.org`), without the punctuation that
ends a sentence or leads a list item, a bracket or quote it does not close or open
(`(see https://example.org/a_(b)).` gives `https://example.org/a_(b)`), or a pair of them
around it; also each part of it between brackets, commas, semicolons and pipes
(`Ann,ann@example.org`), and what follows a scheme (`mailto:ann@example.org` gives
`ann@example.org`; not `2001:db8::1`, whose first part is no scheme). Terms hold no character
a JSON string escapes, so each is its own JSON body. Grounding keeps, of the terms a format
accepts, those not inside a longer one it accepts (core.grounding.value_holds).

Each value keeps the character spans of the document it was read from, for evidence. This
module reads text only; core.grounding.value_holds holds values to what it finds.
"""

from __future__ import annotations

import bisect
import datetime
import functools
import itertools
import re

import numpy as np
import numpy.typing as npt

from .labels import labeled_values
from .tables import GroundingText, byte_origins, unseen_in
from .written_numbers import document_numbers

_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
    "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
# Full names only (with and without accents): short forms in these languages are English
# words too often (`set`, `ago`, `dez`) to be read as months.
_MONTHS_ELSEWHERE = {
    1: "januar janvier enero janeiro gennaio januari",
    2: "februar février fevrier febrero fevereiro febbraio februari",
    3: "märz maerz marz mars marzo março marco maart",
    4: "avril abril aprile",
    5: "mai mayo maio maggio mei",
    6: "juni juin junio junho giugno",
    7: "juli juillet julio julho luglio",
    8: "août aout agosto augustus",
    9: "septembre septiembre setiembre setembro settembre",
    10: "oktober octobre octubre outubro ottobre",
    11: "novembre noviembre novembro",
    12: "dezember décembre decembre diciembre dezembro dicembre",
}
_MONTHS.update((name, number) for number, names in _MONTHS_ELSEWHERE.items() for name in names.split())
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\b\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th|er|º)?"  # `1er janvier`, `1º de mayo`
_YEAR = r"(?P<year>\d{4})(?!\d)"
_NOT_AFTER_DIGIT = r"(?<![\d.,/-])"  # `112 March` is no day; `1.2.2024` no `2.2024`
_DATES = [
    re.compile(rf"{_NOT_AFTER_DIGIT}\b{_DAY}(?:\s+(?:of|de))?[\s./-]+{_MONTH},?(?:\s+del?)?[\s./-]+{_YEAR}", re.IGNORECASE),
    re.compile(rf"\b{_MONTH}[\s.-]*{_DAY},?\s+{_YEAR}", re.IGNORECASE),
    re.compile(rf"{_NOT_AFTER_DIGIT}(?P<year>\d{{4}})(?P<sep>[-/.])(?P<month>\d{{1,2}})(?P=sep)(?P<day>\d{{1,2}})(?!\d)"),
]
# Day and month in either order before the year (`12/03/1990`, `03.12.1990`).
_NUMERIC_DATE = re.compile(rf"{_NOT_AFTER_DIGIT}(?P<first>\d{{1,2}})(?P<sep>[-/.])(?P<second>\d{{1,2}})(?P=sep){_YEAR}")
# A time: `09:30`, `9:30 pm`, `21:30:15` (not inside a longer run of digits, colons and points:
# `1:2:30:45`, `10.09:30`; nor an offset read below), or an hour before am/pm (`7 pm`, `7.30 a.m.`).
_HALF = r"(?P<half>[ap])\.?\s?m\b\.?"
_TIMES = [
    re.compile(
        rf"(?<![\d:.])(?P<hour>[01]?\d|2[0-3]):(?P<minute>[0-5]\d)(?::[0-5]\d(?:\.\d+)?)?(?![\d:])(?:\s?{_HALF})?",
        re.IGNORECASE,
    ),
    re.compile(rf"(?<![\d:.])(?P<hour>1[0-2]|0?[1-9])(?:\.(?P<minute>[0-5]\d))?\s?{_HALF}", re.IGNORECASE),
]
# A UTC offset after UTC or GMT (`UTC+02:00`, `GMT-5`, `UTC` alone), or after a time as RFC
# 3339 writes it: after its seconds (`09:30:00+02:00`, `09:30:00.5 -05:00`, `09:30:00Z`), or a
# plus after its minutes (`09:30+02:00`; a minus there reads as a range, `09:30-16:00`).
_OFFSETS = [
    re.compile(r"\b(?:UTC|GMT)(?:\s?(?P<sign>[+\-\u2212])\s?(?P<hours>\d{1,2})(?::?(?P<minutes>[0-5]\d))?)?(?![\w:+\-])"),
    re.compile(r"(?<=\d\d:\d\d:\d\d)(?:\.\d+)?(?:(?P<zulu>Z)|\s?(?P<sign>[+\-])(?P<hours>[01]\d):?(?P<minutes>[0-5]\d))(?!\d)"),
    re.compile(r"(?<=\d\d:\d\d)(?P<sign>\+)(?P<hours>[01]\d):?(?P<minutes>[0-5]\d)(?!\d)"),
]
# What separates terms: whitespace, angle brackets, quotes, backticks and backslashes (controls,
# format characters and lone surrogates too: see document_terms).
_TERM_SEPARATORS = "\\s<>\"`\\\\"
# Within a term, what separates its parts.
_TERM_PART = re.compile(r"[^()\[\]{},;|]+")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:(?!//)")
_TERM_ENDS = ".,;:!?*"  # sentence ends, list marks: read off either end of a term
_CLOSING = {")": "(", "]": "[", "}": "{"}
_OPENING = {opening: closing for closing, opening in _CLOSING.items()}
# The longest term kept: an address or URI longer is no value a schema limits sensibly, and
# each term is walked through the automaton where a held value begins.
MOST_TERM_CHARACTERS = 512

Span = tuple[int, int]


class DocumentValues:
    """Per JSON spelling, the spans of the document it was read from. Each kind is read on first
    use: a schema that asks for no date-time never has the document's times read."""

    def __init__(self, document: str) -> None:
        self._document = document

    @functools.cached_property
    def dates(self) -> dict[str, list[Span]]:
        return document_dates(self._document)

    @functools.cached_property
    def numbers(self) -> dict[str, list[Span]]:
        return document_numbers(self._document)

    @functools.cached_property
    def times(self) -> dict[str, list[Span]]:
        return document_times(self._document, self.offsets)

    @functools.cached_property
    def offsets(self) -> dict[str, list[Span]]:
        return document_offsets(self._document)

    @functools.cached_property
    def terms(self) -> dict[str, list[Span]]:
        return document_terms(self._document)

    @functools.cached_property
    def laid_out(self) -> GroundingText:
        """The document as the bytes of a JSON string body (what grounded strings, and the
        spans a pattern string may be, are read from)."""
        return GroundingText.of(self._document)

    @functools.cached_property
    def origins(self) -> npt.NDArray[np.intp]:
        """Where each byte of `laid_out` comes from in the document (tables.byte_origins)."""
        return byte_origins(self._document)

    @functools.cached_property
    def labeled(self) -> dict[str, list[Span]]:
        """Per normalized label, the spans of the values stated under it (core.grounding.labels)."""
        return labeled_values(self._document)


def document_dates(document: str) -> dict[str, list[Span]]:
    """The ISO dates the document writes in any form above, with their spans (each once, in
    the order found: kept as dict keys, so a document stating one date many times is read in
    linear time)."""
    found: dict[str, dict[Span, None]] = {}
    for pattern in _DATES:
        for match in pattern.finditer(document):
            month = match["month"]
            # Case folded, as the pattern matched: the long s of old prints matches `s`.
            month_number = int(month) if month.isdigit() else _MONTHS.get(month.casefold())
            if month_number is None:  # a letter that matches ignoring case but folds otherwise (dotted I)
                continue
            _add_date(found, int(match["year"]), month_number, int(match["day"]), match.span())
    for match in _NUMERIC_DATE.finditer(document):
        first, second, year = int(match["first"]), int(match["second"]), int(match["year"])
        _add_date(found, year, second, first, match.span())
        _add_date(found, year, first, second, match.span())
    return {text: list(spans) for text, spans in found.items()}


def _add_date(found: dict[str, dict[Span, None]], year: int, month: int, day: int, span: Span) -> None:
    try:
        text = datetime.date(year, month, day).isoformat()
    except ValueError:
        return  # no calendar date (month 13, 31 June)
    found.setdefault(text, {})[span] = None


def document_times(document: str, offsets_read: dict[str, list[Span]] | None = None) -> dict[str, list[Span]]:
    """The times of day the document writes, as `HH:MM` on 24 hours, with their spans (not the
    digits of an offset: `+02:00`; `offsets_read`: document_offsets(document), where read already)."""
    read = document_offsets(document) if offsets_read is None else offsets_read
    offsets = sorted(span for spans in read.values() for span in spans)
    starts = [start for start, _ in offsets]
    reach = list(itertools.accumulate((end for _, end in offsets), max))  # the furthest end up to each
    found: dict[str, dict[Span, None]] = {}
    for pattern in _TIMES:
        for match in pattern.finditer(document):
            before = bisect.bisect_right(starts, match.start()) - 1
            if before >= 0 and reach[before] >= match.end():
                continue  # inside an offset
            hour, half = int(match["hour"]), (match["half"] or "").lower()
            if half and not 1 <= hour <= 12:
                continue  # `13:00 pm` is no time
            hour = hour % 12 + (12 if half == "p" else 0) if half else hour
            found.setdefault(f"{hour:02d}:{match['minute'] or '00'}", {})[match.span()] = None
    return {text: list(spans) for text, spans in found.items()}


def document_offsets(document: str) -> dict[str, list[Span]]:
    """The UTC offsets the document writes, as RFC 3339 writes them (`+02:00`; a zero offset
    also as `Z`), with their spans."""
    found: dict[str, dict[Span, None]] = {}
    for pattern in _OFFSETS:
        for match in pattern.finditer(document):
            hours, minutes = int(match["hours"] or 0), int(match["minutes"] or 0)
            if hours > 23:
                continue
            sign = "-" if match["sign"] in ("-", "\u2212") else "+"
            spellings = [f"{sign}{hours:02d}:{minutes:02d}"]
            if hours == minutes == 0:
                spellings = ["Z", "+00:00"]
            for spelling in spellings:
                found.setdefault(spelling, {})[match.span()] = None
    return {text: list(spans) for text, spans in found.items()}


def document_terms(document: str) -> dict[str, list[Span]]:
    """The terms the document writes (see above), each with its spans, in the order found."""
    runs = re.compile(f"[^{_TERM_SEPARATORS}{re.escape(unseen_in(document))}]+")
    found: dict[str, dict[Span, None]] = {}
    for match in runs.finditer(document):
        start, end = match.span()
        if end - start > MOST_TERM_CHARACTERS:
            continue
        text = match.group()
        forms = [_trimmed(text, 0, len(text))]
        forms += [_trimmed(text, *part.span()) for part in _TERM_PART.finditer(text) if part.span() != (0, len(text))]
        for form_start, form_end in list(forms):
            scheme = _SCHEME.match(text, form_start, form_end)
            if scheme is not None:
                forms.append(_trimmed(text, scheme.end(), form_end))
        for form_start, form_end in forms:
            if form_start < form_end:
                found.setdefault(text[form_start:form_end], {})[(start + form_start, start + form_end)] = None
    return {text: list(spans) for text, spans in found.items()}


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """`text[start:end]` without sentence ends and list marks at either end, a closing bracket
    or quote it does not open (or an opening one it does not close), or a pair around it."""
    while start < end:
        first, last = text[start], text[end - 1]
        if last in _TERM_ENDS or _unmatched(text, start, end, last):
            end -= 1
        elif first in _TERM_ENDS or _unmatched(text, start, end, first):
            start += 1
        elif end - start >= 2 and (_OPENING.get(first) == last or first == last == "'"):
            start, end = start + 1, end - 1
        else:
            break
    return start, end


def _unmatched(text: str, start: int, end: int, bracket: str) -> bool:
    if bracket == "'":
        return text.count("'", start, end) % 2 == 1
    if bracket in _CLOSING:
        return text.count(_CLOSING[bracket], start, end) < text.count(bracket, start, end)
    if bracket in _OPENING:
        return text.count(_OPENING[bracket], start, end) < text.count(bracket, start, end)
    return False
