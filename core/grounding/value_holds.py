"""Grounded dates, terms, numbers and pattern strings: values held to the ones the document states.

The schema's automaton marks where a date (`format: date`, `date-time`), a term (an e-mail
address, URI, host name, IP address or UUID format) or a number (`integer`, `number`) value
begins (a Mark, core.automaton.regex). A date-time's date is held, and its `HH:MM` and UTC
offset too where the document states any (`09:30`, `UTC+02:00`). Per document, the values it
may take are known up front (core.grounding.document_values: `12 March 1990` gives
`1990-03-12`, `1,267` gives `1267`, `<ann@example.org>` the term `ann@example.org`). Where the
document states some of them under a label naming the value's property (`Date: 2024-03-05`
for `date`, core.grounding.labels), those are the ones it may take. Where a
grounded value begins, those are cut to the ones the automaton accepts there (a date's or a
term's closing quote or a date-time's `T` after it, a number followed by what may end it),
and while the value is written only tokens that continue one of them are allowed, and it may
end only on a whole one: the decoder enforces it as it does the schema. Where none is left
(the document states no date, or no number the schema accepts), the value is released,
written as the schema alone allows, and the evidence says it is not grounded; a document
never fails for it. A value reached inside a token that the filter was not asked about (one
token writing a separator and a value's first digits) is held from there on where it can
still be, else released.

A string with a `pattern`, or a format held no other way (`time`, `duration`), is held the
same way (kind "pattern") to the spans of the document the schema's automaton accepts there,
found by walking the document through it (core.grounding.pattern_spans, bounded: where a bound
is met the value is released). Its candidates may hold a quote or a backslash, escaped as the
document's bytes are; the other kinds' never do.

Zeros that end a number's fraction may be held back by the decoder (core.decode.held_zeros): they
count as written here (`559.40` continues along `559.40`), and a number compares by its
shortest form when it ends (`559.40` then `,` leaves `559.4`).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..automaton.dfa import DEAD, LazyDFA
from ..automaton.regex import Mark, Node, ValueLabel, generated_nodes
from ..json_reader import body_part
from ..vocab.token_table import IdArray
from .document_values import DocumentValues, Span
from .labels import normalized_name, on_lines, property_name
from .pattern_spans import PatternSpans, ScanBudget, document_spans, pattern_spans, tokens_continuing
from .record import HeldValue
from .tables import VocabularyBodies
from .written_numbers import shortest_number

_NUMBER_BYTES = frozenset(b"0123456789+-.eE")
_NOT_IN_NUMBER = np.array([byte not in _NUMBER_BYTES for byte in range(256)], dtype=bool)
_QUOTE = ord('"')
_DATE_LENGTH = 10  # `1990-03-12`
_CLOCK = slice(11, 16)  # a date-time's `HH:MM`, after its `T`
_SECONDS_END = 19  # `1990-03-12T09:30:00`: a fraction or the offset follows
# Candidates read one by one are remembered for lists up to this long (the list is in the key).
READ_LISTS_KEPT_UP_TO = 256
# The kind of a value begun where grounding may not hold it (a date or a term may begin there):
# written as the schema alone allows, its evidence saying it is not grounded.
_RELEASED = "released"


def value_labels(tree: Node) -> list[ValueLabel]:
    """The labels of the held values (dates, numbers, terms, pattern strings) in `tree` the
    generator may write, each once, in order."""
    return list(dict.fromkeys(node.label for node in generated_nodes(tree) if isinstance(node, Mark)))


def holds(label: ValueLabel, default: bool) -> bool:
    """Whether the value `label` marks is grounded: its `x-grounded`, else `default`."""
    return label.grounded if label.grounded is not None else default


@dataclass(frozen=True)
class _Choices:
    """What a held value may be: its spellings, every prefix of them, and, for numbers, their
    shortest forms (how a finished number compares). A date-time's spellings are its dates;
    its `HH:MM` is one of `times` and its offset one of `offsets` where the document states
    any (else they are the model's). `within`: the document spans of the labeled values the
    spellings were narrowed to (none where no label narrowed them)."""

    kind: str  # "date", "date-time", "term", "pattern" or "number"
    spellings: frozenset[bytes]
    prefixes: frozenset[bytes]
    shortest: frozenset[bytes]
    times: frozenset[bytes] = frozenset()
    offsets: frozenset[bytes] = frozenset()
    time_prefixes: frozenset[bytes] = frozenset()
    offset_prefixes: frozenset[bytes] = frozenset()
    within: tuple[Span, ...] = ()
    # A pattern's spellings, sorted, in place of their prefixes: up to thousands of spans of
    # hundreds of bytes each, whose prefixes would be a set of millions.
    ordered: tuple[bytes, ...] = ()

    @staticmethod
    def of(
        kind: str,
        spellings: Iterable[bytes],
        times: Iterable[bytes] = (),
        offsets: Iterable[bytes] = (),
        within: tuple[Span, ...] = (),
    ) -> _Choices:
        kept = frozenset(spellings)
        shortest = frozenset(shortest_number(s.decode()).encode() for s in kept) if kind == "number" else kept
        held_times, held_offsets = frozenset(times), frozenset(offsets)
        held = (held_times, held_offsets, _prefixes(held_times), _prefixes(held_offsets))
        if kind == "pattern":
            return _Choices(kind, kept, frozenset(), shortest, *held, within, tuple(sorted(kept)))
        return _Choices(kind, kept, _prefixes(kept), shortest, *held, within)

    @property
    def holds_past_date(self) -> bool:
        """Whether a date-time is held beyond its date (its time or offset)."""
        return bool(self.times or self.offsets)

    def allows(self, value: bytes, data: bytes) -> bool:
        """Whether writing `data` into the value written so far as `value` keeps it on one of
        the spellings (and, where `data` ends the value, on a whole one)."""
        part, closed = self.part(data, value)
        value += part
        if self.kind == "date-time":
            return self._date_time_allows(value, closed)
        if not closed:
            return self._begins(value)
        if self.kind == "number":
            return not value or shortest_number(value.decode("ascii", "replace")).encode() in self.shortest
        return value in self.spellings

    def _date_time_allows(self, value: bytes, closed: bool) -> bool:
        if len(value) < _DATE_LENGTH:
            return not closed and value in self.prefixes
        if value[:_DATE_LENGTH] not in self.spellings:
            return False
        clock = value[_CLOCK]
        if self.times and clock not in (self.times if len(value) >= _CLOCK.stop else self.time_prefixes):
            return False
        zone = _offset(value)
        if not self.offsets or zone is None:
            return True
        return zone in self.offsets if closed else zone in self.offset_prefixes

    def _begins(self, value: bytes) -> bool:
        """Whether `value` is a prefix of one of the spellings."""
        if self.kind != "pattern":
            return value in self.prefixes
        ordered = self.ordered
        at = bisect.bisect_left(ordered, value)  # the first spelling `value` may begin
        return at < len(ordered) and ordered[at].startswith(value)

    def part(self, data: bytes, value: bytes = b"") -> tuple[bytes, bool]:
        """The bytes of `data` inside the value (written so far as `value`), and whether `data`
        ends it."""
        if self.kind == "number":
            for index, byte in enumerate(data):
                if byte not in _NUMBER_BYTES:
                    return data[:index], True
            return data, False
        if self.kind == "pattern":
            part, closed, _ = body_part(data, _in_escape(value))
            return part, closed
        end = data.find(b'"')  # a date's or a term's characters are never escaped
        return (data, False) if end < 0 else (data[:end], True)


def _in_escape(body: bytes) -> bool:
    """Whether the string body `body` ends inside an escape (an odd run of backslashes)."""
    return (len(body) - len(body.rstrip(b"\\"))) % 2 == 1


def _outermost(texts: list[str], spans: dict[str, list[tuple[int, int]]]) -> list[str]:
    """Of `texts`, those with a span inside no longer span of another of them: of a URI
    `https://example.org/a_(b)`, not its part `https://example.org/a_`; of `urn:isbn:0451450523`,
    not `isbn:0451450523`."""
    # By start, the longer first: a span is inside another where an earlier one reaches its end.
    ordered = sorted((start, -end, text) for text in texts for start, end in spans[text])
    reach, outside = -1, set()
    for _, negative_end, text in ordered:
        if -negative_end > reach:
            outside.add(text)
        reach = max(reach, -negative_end)
    return [text for text in texts if text in outside]


def _under(values: dict[str, list[Span]], labeled: list[Span]) -> dict[str, list[Span]]:
    """Of `values`, those the document states inside one of the `labeled` spans (ascending,
    apart: lines), with their spans there, where it states any; else all of them."""
    if not labeled:
        return values
    found = {text: kept for text, spans in values.items() if (kept := on_lines(spans, labeled))}
    return found or values


def _prefixes(spellings: frozenset[bytes]) -> frozenset[bytes]:
    return frozenset(spelling[:n] for spelling in spellings for n in range(len(spelling) + 1))


def _offset(value: bytes) -> bytes | None:
    """The UTC offset written so far in the date-time `value` (`Z` for `z`), None before it
    begins: it follows the seconds and any fraction."""
    at = _SECONDS_END
    if len(value) > at and value[at : at + 1] == b".":
        at += 1
        while at < len(value) and value[at : at + 1].isdigit():
            at += 1
    return value[at:].upper() if len(value) > at else None


@dataclass(frozen=True)
class _Open:
    """A held value being written: where it began in the output, its kind, what it holds so
    far, what it may be (None: released)."""

    start: int
    kind: str
    text: bytes
    choices: _Choices | None


@dataclass(frozen=True)
class ValuePlace:
    """Where a ValueGrounding stands (its snapshot)."""

    state: int
    written: int
    open: _Open | None
    values: int


class ValueGrounding:
    """Follows one generation's output and filters the tokens allowed inside grounded dates
    and numbers. `feed` every byte written, in order; `restrict` the candidates at each
    choice. A follower of the decoding (core.decode.state), through core.grounding."""

    def __init__(
        self, dfa: LazyDFA, pieces: Sequence[bytes], found: DocumentValues, default: bool, bodies: VocabularyBodies | None = None
    ) -> None:
        """`found`: what the document states; `bodies`: the vocabulary's body tables (where
        given, the tokens a pattern string allows are found from its spellings)."""
        self._dfa = dfa
        self._pieces = pieces
        self._bodies = bodies
        self._tokens_after: dict[tuple[int, bytes], IdArray] = {}
        self._found = found
        self._default = default
        self._state = dfa.start
        self._written = 0
        self._open: _Open | None = None
        self._kinds: dict[int, str | None] = {}  # per automaton state: the kind of value held from it
        self._choices: dict[int, _Choices | None] = {}  # per automaton state where a value begins
        self._read: dict[tuple[int, bytes, bytes, bytes], IdArray] = {}
        # Per set of pattern labels: the spans found where a value of theirs first began.
        self._scans: dict[frozenset[ValueLabel], PatternSpans | None] = {}
        self.budget = ScanBudget()  # the steps this document's pattern scans may take, and took
        self.values: list[tuple[int, int, bool]] = []  # output byte range of each held value, and grounded or not
        # Per value of `values`: the document spans of the labeled values it was held to (none
        # where its label did not narrow it), where evidence looks for it.
        self.within: list[tuple[Span, ...]] = []

    def record(self) -> tuple[HeldValue, ...]:
        """Each value held so far, with the labeled values it was narrowed to (core.grounding.record)."""
        pairs = zip(self.values, self.within, strict=True)  # one `within` per value: appended together
        return tuple(HeldValue(start, end, grounded, within) for (start, end, grounded), within in pairs)

    # -- following the output ----------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Take in bytes just written to the output."""
        for byte in data:
            if self._open is not None:
                self._feed_value(byte)
            self._state = self._dfa.step(self._state, byte)
            self._written += 1
            if self._open is None:
                self._open_if_held()

    def _feed_value(self, byte: int) -> None:
        value = self._open
        assert value is not None
        choices = value.choices
        if choices is not None and not choices.allows(value.text, bytes((byte,))):
            choices = None  # written past what the filter allowed (a token it was not asked about)
        if value.kind == "number":
            ends = byte not in _NUMBER_BYTES
        else:  # only a pattern's spans may hold an escaped quote
            ends = byte == _QUOTE and not (value.kind == "pattern" and _in_escape(value.text))
        if not ends:
            self._open = _Open(value.start, value.kind, value.text + bytes((byte,)), choices)
            return
        if value.text or value.kind != "number":  # a number's mark passed by another value (`null`) holds nothing
            self.values.append((value.start, self._written, choices is not None))
            self.within.append(() if choices is None else choices.within)
        self._open = None

    def _open_if_held(self) -> None:
        kind = self._kind(self._state)
        if kind is not None:
            self._open = _Open(self._written, kind, b"", self._choices_at(self._state, kind))

    def _kind(self, state: int) -> str | None:
        """The kind of grounded value that begins at `state`, if one does."""
        if state not in self._kinds:
            self._kinds[state] = self._find_kind(state)
        return self._kinds[state]

    def _find_kind(self, state: int) -> str | None:
        labels = [label for label in self._labels(state) if holds(label, self._default)]
        kinds = {"number" if label.kind in ("integer", "number") else label.kind for label in labels}
        for kind in ("term", "pattern"):  # beside another kind, neither's candidates are all the value may be: released
            if kind in kinds:
                return kind if kinds == {kind} else _RELEASED
        if not kinds:
            return None
        return "number" if "number" in kinds else "date-time" if "date-time" in kinds else "date"

    def _labels(self, state: int) -> list[ValueLabel]:
        """The labels of the Marks among the NFA states `state` stands for, closed under
        epsilon edges (a mark lies behind the Seq or Alt naming a value)."""
        nfa = self._dfa.nfa
        seen: set[int] = set()
        stack = list(self._dfa.nfa_states(state))
        labels: list[ValueLabel] = []
        while stack:
            member = stack.pop()
            if member in seen:
                continue
            seen.add(member)
            label = nfa.value_label(member)
            if label is not None:
                labels.append(label)
            stack.extend(nfa.epsilons_of(member))
        return labels

    def _choices_at(self, state: int, kind: str) -> _Choices | None:
        """The document's values of `kind` the automaton accepts from `state` (None: none)."""
        if state not in self._choices:
            self._choices[state] = None if kind == _RELEASED else self._accepted(state, kind)
        return self._choices[state]

    def _accepted(self, state: int, kind: str) -> _Choices | None:
        dfa, labeled = self._dfa, self._labeled(state)
        # The schema's filter first, then the label's: a label stating no value the schema takes
        # here (`Author-email: UNKNOWN`) leaves every one the document states open.
        if kind == "number":
            accepted = {
                text: spans for text, spans in self._found.numbers.items() if self._number_may_end(dfa.walk(state, text.encode()))
            }
        elif kind == "term":
            accepted = {text: spans for text, spans in self._found.terms.items() if dfa.walk(state, text.encode() + b'"') != DEAD}
        elif kind == "pattern":
            found = self._pattern_spans(state)
            if found is None:
                return None
            accepted = document_spans(found, self._found.origins) if labeled else {body.decode(): [] for body in found.spans}
        else:
            after = b'"' if kind == "date" else b"T"
            dates = self._found.dates
            accepted = {text: spans for text, spans in dates.items() if dfa.walk(state, text.encode() + after) != DEAD}
        narrowed = _under(accepted, labeled)
        within = tuple(labeled) if narrowed is not accepted else ()
        kept = [text.encode() for text in (_outermost(list(narrowed), narrowed) if kind == "term" else narrowed)]
        if not kept:
            return None
        if kind == "date-time":
            times, offsets = (text.encode() for text in self._found.times), (text.encode() for text in self._found.offsets)
            return _Choices.of(kind, kept, times, offsets, within)
        return _Choices.of(kind, kept, within=within)

    def _pattern_spans(self, state: int) -> PatternSpans | None:
        """The document's spans a pattern string begun at `state` may be (None: a bound was met,
        core.grounding.pattern_spans). A value met again at another state (the next item of an
        array) looks again only where the first one's spans start."""
        key = frozenset(label for label in self._labels(state) if holds(label, self._default))
        if key in self._scans:
            first = self._scans[key]
            return None if first is None else pattern_spans(self._dfa, state, self._found.laid_out, self.budget, first.starts)
        found = self._scans[key] = pattern_spans(self._dfa, state, self._found.laid_out, self.budget)
        return found

    def _labeled(self, state: int) -> list[Span]:
        """The spans of the values the document states under a label naming the property of
        the value begun at `state` (none where no label, or more than one property, names it)."""
        names = {property_name(label.pointer) for label in self._labels(state) if holds(label, self._default)}
        name = names.pop() if len(names) == 1 else None
        return [] if name is None else self._found.labeled.get(normalized_name(name), [])

    def _number_may_end(self, state: int) -> bool:
        return state != DEAD and (self._dfa.is_accepting(state) or bool(self._dfa.row(state)[_NOT_IN_NUMBER].any()))

    def snapshot(self) -> ValuePlace:
        return ValuePlace(self._state, self._written, self._open, len(self.values))

    def restore(self, snapshot: ValuePlace) -> None:
        self._state, self._written, self._open = snapshot.state, snapshot.written, snapshot.open
        del self.values[snapshot.values :]
        del self.within[snapshot.values :]

    # -- filtering -----------------------------------------------------------------------

    @property
    def holding(self) -> bool:
        """Whether a grounded value that is not released is open at the end of the output.
        The decoder scores a choice made while one is as the model's share among the tokens
        allowed there (core.decode.decoder). A pattern string's too, as a term's: both are held
        to the document's strings the schema accepts, so what its confidence should tell is
        which of those the model prefers; the unmasked probability would mostly score the
        model's doubt about writing such a string at all (a CVE id it would not have written
        unasked), which the mask has settled. Not measured on the development set (it has no
        pattern fields); for terms and numbers this took AUROC up (0.533 to 1.000 for numbers)."""
        return self._open is not None and self._open.choices is not None

    def _continuing(self, choices: _Choices, text: bytes) -> IdArray:
        """The tokens that keep a pattern string written so far as `text` (no escape open) on one
        of its spellings (pattern_spans.tokens_continuing), kept per set of choices and text."""
        key = (id(choices), text)
        found = self._tokens_after.get(key)
        if found is None:
            assert self._bodies is not None
            found = self._tokens_after[key] = tokens_continuing(self._bodies, choices.ordered, text)
        return found

    def restrict(self, pending: bytes, ids: IdArray, held: bytes = b"") -> IdArray:
        """The candidates (each starting with `pending`, already fed) that keep the open value
        on one the document states; `held`: bytes the decoder evaluated but holds back (zeros
        ending a number's fraction). All of them where none would (the value is then
        released). The array returned may be read-only: kept, and given again."""
        value = self._open
        if value is None or value.choices is None or len(ids) == 0:
            return ids
        choices, text = value.choices, value.text + held
        if choices.kind == "date-time" and len(text) >= _DATE_LENGTH and not choices.holds_past_date:
            return ids
        # Per set of choices too: two values of one kind may hold to different ones (each its
        # label's). A set lives as long as this object (`_choices`), so its id is not reused.
        key = (id(choices), text, pending, ids.tobytes()) if len(ids) <= READ_LISTS_KEPT_UP_TO else None
        found = None if key is None else self._read.get(key)
        if found is None and choices.kind == "pattern" and self._bodies is not None and not pending and not _in_escape(text):
            found = ids.take(np.flatnonzero(np.isin(ids, self._continuing(choices, text))))
        if found is None:
            skip = len(pending)
            found = ids.take(np.flatnonzero([choices.allows(text, self._pieces[token][skip:]) for token in ids.tolist()]))
            if key is not None:
                found.flags.writeable = False
                self._read[key] = found
        if len(found) == 0:
            self._open = _Open(value.start, value.kind, value.text, None)
            return ids
        return found
