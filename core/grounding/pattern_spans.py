"""The document's spans a string's own automaton accepts: what a grounded `pattern` string may be.

A string with a `pattern` keyword, or a `format` grounding reads no other way (`time`,
`duration`), is held under grounding to spans of the document (core.grounding.value_holds,
kind "pattern"). Unlike dates, numbers and terms, such spans cannot be read up front by the
document's own rules: what they are is the schema's. So the document is read as the bytes of
a JSON string body (core.grounding.tables, GroundingText: whitespace runs as one space, quote
and backslash escaped, controls and gaps between columns as a BARRIER no string body holds),
and every place a value may start (a word edge, as for grounded plain strings, but `.` and
`-` joining no words: `2019` of `2019-2024` is a value `^\\d{4}$` names) is walked
through the schema's automaton from where the value begins, all of them at once: one array
gather per byte of depth. A span is kept where a value may end (a word edge) and the
automaton may close the string there (its quote allowed next).

The work is bounded, so a hostile document or pattern (a megabyte of `a a a ...`, `.*`,
`^(a|aa)+$`) costs little: spans longer than MOST_SPAN_BYTES are not read; a scan gives up
past MOST_SPANS distinct spans (MOST_OCCURRENCES in all), past MOST_NEW_STATES automaton
states made while scanning, or where the document's budget of steps (one start walked one
byte: a ScanBudget, MOST_STEPS per document) runs out. A scan that gives up finds nothing, and
the value is then released (written as the schema alone allows, its evidence saying it is not
grounded): never a failure, never a hang.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..automaton.dfa import DEAD, LazyDFA
from ..vocab.token_table import IdArray
from .tables import GroundingText, VocabularyBodies

# A span longer than this (in bytes of the JSON body) is no value a pattern names sensibly
# (identifiers, codes, times); as for terms (document_values.MOST_TERM_CHARACTERS).
MOST_SPAN_BYTES = 512
# More distinct spans than this and the pattern says little about which one the value is (an
# unanchored pattern on a long document accepts nearly every span): the value is released.
MOST_SPANS = 4096
# Spans in all, a body stated many times counted each time (memory for their places).
MOST_OCCURRENCES = 65536
# Steps (one start walked one byte) per document, over all its scans: a few arrays of this
# many elements, so tens of milliseconds at most.
MOST_STEPS = 4_000_000
# Automaton states made while scanning, per scan: a pattern's own automaton is bounded when
# the schema compiles, and this keeps a scan from growing the shared automaton much further.
MOST_NEW_STATES = 4096
_QUOTE = ord('"')

ByteSpan = tuple[int, int]


@dataclass
class ScanBudget:
    """The steps a document's scans may still take, and those taken (what a test counts)."""

    left: int = MOST_STEPS
    taken: int = 0

    def take(self, steps: int) -> bool:
        """Spend `steps`; False (spending nothing) where fewer are left."""
        if steps > self.left:
            self.left = 0
            return False
        self.left -= steps
        self.taken += steps
        return True


@dataclass(frozen=True)
class PatternSpans:
    """Per JSON body the automaton accepts, the byte ranges of `GroundingText.escaped` it was
    read from (in the order found); `starts`: where those ranges start (ascending, each once),
    where another state of the same value need only look again."""

    spans: dict[bytes, list[ByteSpan]]
    starts: npt.NDArray[np.intp]


def pattern_spans(
    dfa: LazyDFA, state: int, text: GroundingText, budget: ScanBudget, starts: npt.NDArray[np.intp] | None = None
) -> PatternSpans | None:
    """The spans of `text` the automaton accepts as a string body from `state` (the state after
    the opening quote), starting at `starts` (None: every place a value may start) and ending
    where a value may end. None where a bound is met (see the module's docstring). Builds the
    automaton's rows it walks (at most MOST_NEW_STATES new states)."""
    data = np.frombuffer(text.escaped, dtype=np.uint8)
    size = len(data)
    begun = np.flatnonzero(text.piece_starts[:size]) if starts is None else starts
    at, states = begun.copy(), np.full(len(begun), state, dtype=np.int32)
    states_before = dfa.state_count
    dfa.ensure_rows({state})
    found_starts: list[npt.NDArray[np.intp]] = []
    found_ends: list[npt.NDArray[np.intp]] = []
    count = 0
    for _ in range(MOST_SPAN_BYTES):
        inside = at < size
        begun, at, states = begun[inside], at[inside], states[inside]
        if len(at) == 0:
            break
        if not budget.take(len(at)):
            return None
        states = dfa.table[states, data[at]]
        live = states != DEAD
        begun, at, states = begun[live], at[live] + 1, states[live]
        dfa.ensure_rows(set(np.unique(states).tolist()))
        if dfa.state_count - states_before > MOST_NEW_STATES:
            return None
        closing = (dfa.table[states, _QUOTE] != DEAD) & text.piece_ends[at]
        if closing.any():
            found_starts.append(begun[closing])
            found_ends.append(at[closing])
            count += int(closing.sum())
            if count > MOST_OCCURRENCES:
                return None
    return _gathered(text.escaped, found_starts, found_ends)


def _gathered(escaped: bytes, starts: list[npt.NDArray[np.intp]], ends: list[npt.NDArray[np.intp]]) -> PatternSpans | None:
    """The spans found, by body, in document order; None past MOST_SPANS distinct bodies."""
    if not starts:
        return PatternSpans({}, np.zeros(0, dtype=np.intp))
    first, last = np.concatenate(starts), np.concatenate(ends)
    order = np.lexsort((last, first))
    spans: dict[bytes, list[ByteSpan]] = {}
    for start, end in zip(first[order].tolist(), last[order].tolist(), strict=True):
        spans.setdefault(escaped[start:end], []).append((start, end))
        if len(spans) > MOST_SPANS:
            return None
    return PatternSpans(spans, np.unique(first))


def document_spans(found: PatternSpans, origins: npt.NDArray[np.intp]) -> dict[str, list[tuple[int, int]]]:
    """`found`'s spans as character spans of the document, by body; `origins`: where each byte
    of the laid-out document comes from (tables.byte_origins)."""
    return {
        body.decode(): [(int(origins[start]), int(origins[end - 1]) + 1) for start, end in spans]
        for body, spans in found.spans.items()
    }


def tokens_continuing(bodies: VocabularyBodies, spellings: tuple[bytes, ...], text: bytes) -> IdArray:
    """The tokens that keep a string body written so far as `text` (no escape open) on one of
    `spellings` (sorted): those whose body part is a prefix of what follows `text` in one, and
    those closing the body on a whole one. Found from the spellings' rests in the vocabulary's
    body tables (as DocumentTokens finds the tokens at a place of the document), not by reading
    each candidate token: a broad pattern (`^.*$`) allows most of the vocabulary at every
    character (read token by token, a 240-character value of one took 4.9 s with the bundled
    model, not 1.6 s)."""
    width = max(bodies.longest, bodies.longest_closing) + 1  # a rest cut to this is whole where shorter
    rests = set()
    for spelling in spellings[bisect.bisect_left(spellings, text) :]:
        if not spelling.startswith(text):
            break
        rests.add(spelling[len(text) : len(text) + width])
    tokens: list[int] = []
    for rest in rests:
        tokens += bodies.closing.get(rest, []) if len(rest) < width else []
        for length in range(1, len(rest) + 1):
            whole = bodies.prefixes.get(rest[:length])
            if whole is None:
                break
            tokens += whole
    return np.unique(np.array(tokens, dtype=np.int32))
