"""Grounding, the follower of a decoding that holds a document's grounded values: plain string
values held to verbatim spans of the document (here), dates, numbers, terms and patterns to the
values it states (core.grounding.value_holds, which this follows too).

The schema's automaton is shared by every document; grounding is a per-document filter on
top of it, applied by the decoder where a grounded string's body is being written. The
document is laid out once as the bytes a JSON string body would hold for it (`GroundingText`:
every run of whitespace one space, quote and backslash escaped, each run of controls and
format characters one NUL, which no string body holds raw: a value never holds them, nor
joins the words on either side), and a string being written is allowed to continue only
along an occurrence of what it holds so far in those bytes, starting, and closing, only
where a value may: never inside a word, never at a space (core/grounding/tables.py,
`word_edges`). So the value, once closed, is a span of the document up to whitespace runs,
by construction.

Where the document states values under a label naming the string's property (`Version:
2.0.1` for `version`, core.grounding.labels), the string is held to those values instead, each
up to the end of its line or a gap between columns, of those the schema takes whole there; the
model chooses among them and where to close, and its confidence is its share among the tokens
they allow (core.decode.decoder). On the development set, field accuracy went from 57.5% to
64.0% with grounding (package metadata's `requires_python` 2/24 -> 11/24: the model wrote
`3.9` for `Requires-Python: >=3.9`).

Where no allowed token continues any occurrence (a minLength the document's tail cannot
reach, a budget too small for the occurrence's bytes), the string is released from
grounding rather than leaving the decoder without a way to finish: validity comes first,
and the evidence then says the value is not grounded.

What each token holds of a string body is read escape-aware (core/grounding/tables.py holds
the tables: over the vocabulary once, per document only the tokens met at each position).
Inside a body, the tokens the document allows are picked out of the decoder's candidates by
their positions in the list (core/grounding/positions.py), not by a pass over every candidate.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..automaton.dfa import DEAD, LazyDFA
from ..automaton.regex import Node, TextLabel, text_nodes
from ..json_reader import body_part
from ..vocab.token_table import IdArray, Vocabulary
from .document_values import DocumentValues
from .labels import normalized_name, property_name
from .positions import CandidatePositions, Indices
from .record import GroundedBody, GroundingRecord
from .tables import BARRIER, DocumentTokens, GroundingText, vocabulary_bodies
from .value_holds import READ_LISTS_KEPT_UP_TO, ValueGrounding, ValuePlace

_BARRIER_BYTE = BARRIER.encode()


def grounds(label: TextLabel | None, default: bool) -> bool:
    """Whether the string body `label` marks is grounded: its `x-grounded`, else `default`."""
    if label is None:
        return False
    return label.grounded if label.grounded is not None else default


def text_labels(tree: Node) -> list[TextLabel]:
    """The labels of the plain string values in `tree`, each once, in order."""
    return list(dict.fromkeys(node.label for node in text_nodes(tree) if node.label is not None))


@dataclass(frozen=True)
class Labeled:
    """The values the document states under a label naming a string's property
    (core.grounding.labels), as byte ranges of `GroundingText.escaped`: where each starts (where a
    value may start) and where its line ends, both ascending."""

    starts: tuple[int, ...]
    stops: tuple[int, ...]

    def stop(self, offset: int) -> int:
        """Where the labeled value holding `offset` (at or after its start) ends."""
        return self.stops[bisect.bisect_right(self.starts, offset) - 1]


@dataclass(frozen=True)
class _Place:
    """What a Grounding knows of the output at one point (its snapshot)."""

    state: int
    written: int
    body_start: int | None
    escaped: bool
    ends: tuple[int, ...] | None
    released: bool
    labeled: Labeled | None
    bodies: int  # how many bodies had closed
    values: ValuePlace | None  # where the dates and numbers stand


class Grounding:
    """Follows one generation's output and filters the tokens allowed inside grounded string
    bodies. `feed` every byte written, in order; `restrict` the candidates at each choice. A
    follower of the decoding (core.decode.state): `restrict` may release the open body, so a
    snapshot covers that too."""

    def __init__(self, dfa: LazyDFA, vocab: Vocabulary, document: str, default: bool, hold_values: bool = False) -> None:
        """`hold_values`: the schema grounds some date, number, term or pattern string
        (core.grounding.value_holds), which this follows too."""
        self._dfa = dfa
        self._pieces = vocab.pieces
        self._found = DocumentValues(document)  # what the document states, each kind read on first use
        bodies = vocabulary_bodies(vocab)
        self._tokens = DocumentTokens(self._found.laid_out, bodies, vocab.size)
        self._default = default
        self._state = dfa.start
        self._written = 0
        self._body_start: int | None = None  # output offset where the open grounded body began
        self._escaped = False  # the open body ends inside an escape
        self._ends: tuple[int, ...] | None = None  # None: the body is empty, any start is open
        self._released = False
        self._labeled: Labeled | None = None  # the open body is held to these labeled values
        # What the last `restrict` kept for a body held to labeled values: all it kept (inside
        # one), or the tokens opening one (outside).
        self._labeled_inside = False
        self._labeled_openers: frozenset[int] = frozenset()
        self._labeled_for: dict[int, Labeled | None] = {}  # per state opening a body
        self._positions = CandidatePositions(vocab.size)
        # Per (state, pending): what each quoted token would write into a body it opens.
        self._opened: dict[tuple[int, bytes], dict[int, tuple[bytes, bool, Labeled | None] | None]] = {}
        self._occurring: dict[tuple[bytes, bool], bool] = {}
        self._continuing: dict[tuple[tuple[int, ...], Labeled | None], IdArray] = {}
        self._read: dict[tuple[bytes, bool, tuple[int, ...] | None, Labeled | None, bytes], IdArray] = {}
        self.bodies: list[tuple[int, int, bool]] = []  # output byte range of each body, and grounded or not
        # Per body of `bodies`: where in the document's bytes (`text.escaped`) each occurrence it
        # may have been copied from ends, those the decoder followed to its close (none where
        # released or empty).
        self.followed: list[tuple[int, ...]] = []
        self.values = ValueGrounding(dfa, vocab.pieces, self._found, default, bodies) if hold_values else None

    @property
    def text(self) -> GroundingText:
        return self._tokens.text

    @property
    def inside_body(self) -> bool:
        """Whether a grounded string's body is open at the end of the output so far."""
        return self._body_start is not None

    @property
    def holding_value(self) -> bool:
        """Whether a grounded date, term or number is open and held to the document's (not
        released) at the end of the output so far."""
        return self.values is not None and self.values.holding

    def applies(self, label: TextLabel | None) -> bool:
        return grounds(label, self._default)

    # -- following the output ----------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Take in bytes just written to the output."""
        if self.values is not None:
            self.values.feed(data)
        while data:
            if self._body_start is not None:
                data = self._feed_body(data)
                continue
            byte, data = data[0], data[1:]
            self._state = self._dfa.step(self._state, byte)
            self._written += 1
            self._enter_if_grounded()

    def _feed_body(self, data: bytes) -> bytes:
        part, closed, self._escaped = body_part(data, self._escaped)
        if part:
            self._extend(part)
        for byte in part:
            self._state = self._dfa.step(self._state, byte)
        self._written += len(part)
        if closed:
            assert self._body_start is not None
            empty = self._written == self._body_start
            ends = () if self._ends is None or empty else tuple(end for end in self._ends if self._tokens.text.ends[end])
            if self._ends is not None and not empty and not ends:
                self._released = True  # closed where the schema left no other way (a maxLength inside a word)
            self.bodies.append((self._body_start, self._written, not self._released))
            self.followed.append(() if self._released else ends)
            self._body_start = None
        return data[len(part) :]

    def _extend(self, part: bytes) -> None:
        if self._released:
            return
        text = self._tokens.text
        if self._labeled is not None and self._ends == self._labeled.starts and not self._opens(part, False, self._labeled):
            self._labeled, self._ends = None, None  # written where the labeled values were not kept
        if self._ends is None:
            self._ends = tuple(text.occurrences(part))
        else:
            escaped, labeled = text.escaped, self._labeled
            self._ends = tuple(
                end + len(part)
                for end in self._ends
                if escaped.startswith(part, end) and (labeled is None or end + len(part) <= labeled.stop(end))
            )
        if not self._ends:
            self._released = True

    def _enter_if_grounded(self) -> None:
        if self._dfa.starts_text(self._state):
            label = self._dfa.text_label(self._state)
            if self.applies(label):
                assert label is not None
                self._body_start, self._escaped, self._released = self._written, False, False
                self._labeled = self._labeled_values(label.pointer, self._state)
                self._ends = None if self._labeled is None else self._labeled.starts

    def _labeled_values(self, pointer: str, state: int) -> Labeled | None:
        """The values the document states under a label naming the property at `pointer`, of
        those the schema takes whole as the body opened at `state` (the other labeled values
        would lead the body where it could not close)."""
        if state in self._labeled_for:
            return self._labeled_for[state]
        name = property_name(pointer)
        labeled = None if name is None else self._under_label(normalized_name(name))
        found = None
        if labeled is not None:
            escaped, dfa = self._tokens.text.escaped, self._dfa
            taken = [
                (start, stop)
                for start, stop in zip(labeled.starts, labeled.stops, strict=True)
                if dfa.walk(state, escaped[start:stop] + b'"') != DEAD
            ]
            found = Labeled(tuple(start for start, _ in taken), tuple(stop for _, stop in taken)) if taken else None
        self._labeled_for[state] = found
        return found

    def _under_label(self, name: str) -> Labeled | None:
        """The values the document states under the label `name` (normalized) where a value may
        start, as byte ranges (the map of the document's bytes is built only where one is)."""
        spans = self._found.labeled.get(name)
        if not spans:
            return None
        origins, text = self._byte_origins(), self._tokens.text
        starts, stops = [], []
        for start, stop in spans:
            first = int(np.searchsorted(origins, start))
            if first < len(origins) and origins[first] == start and text.starts[first]:
                last = int(np.searchsorted(origins, stop))
                gap = text.escaped.find(_BARRIER_BYTE, first, last)  # a column gap ends the value
                starts.append(first)
                stops.append(last if gap < 0 else gap)
        return Labeled(tuple(starts), tuple(stops)) if starts else None

    def _byte_origins(self) -> npt.NDArray[np.intp]:
        return self._found.origins

    def snapshot(self) -> _Place:
        """Where the output stands (the caches are kept: they depend on the document only)."""
        values = None if self.values is None else self.values.snapshot()
        body = (self._body_start, self._escaped, self._ends, self._released, self._labeled)
        return _Place(self._state, self._written, *body, len(self.bodies), values)

    def restore(self, snapshot: _Place) -> None:
        self._state, self._written, self._body_start = snapshot.state, snapshot.written, snapshot.body_start
        self._escaped, self._ends, self._released = snapshot.escaped, snapshot.ends, snapshot.released
        self._labeled = snapshot.labeled
        del self.bodies[snapshot.bodies :]
        del self.followed[snapshot.bodies :]
        if self.values is not None and snapshot.values is not None:
            self.values.restore(snapshot.values)

    def followed_spans(self) -> list[tuple[tuple[int, int], ...]]:
        """Per body of `bodies`: the document spans (character offsets, as evidence gives them)
        of the occurrences it may have been copied from, those the decoder followed while
        writing it; none for a body released from grounding, or empty. Builds a map of the
        document's bytes on first call (a few passes over the document), where there is a body."""
        if not self.bodies:
            return []
        origins = self._byte_origins()
        found: list[tuple[tuple[int, int], ...]] = []
        for (start, end, _), ends in zip(self.bodies, self.followed, strict=True):
            found.append(tuple((int(origins[stop - (end - start)]), int(origins[stop - 1]) + 1) for stop in ends))
        return found

    def record(self) -> GroundingRecord:
        """What this grounding recorded of the output so far, for its evidence
        (core.results.evidence): each body with the occurrences followed to its close
        (`followed_spans`, which builds a map of the document's bytes on first call), each held
        date and number with the labeled values it was narrowed to, and the document's dates
        and numbers as read here."""
        bodies = tuple(
            GroundedBody(start, end, grounded, spans)
            for (start, end, grounded), spans in zip(self.bodies, self.followed_spans(), strict=True)
        )
        held = self.values
        values = () if held is None else held.record()
        return GroundingRecord(bodies, values, self._found)

    # -- filtering -----------------------------------------------------------------------

    def restrict(self, pending: bytes, ids: IdArray, held: bytes = b"") -> IdArray:
        """The candidates (each starting with `pending`, already fed) that keep a grounded body
        on a span of the document: inside one, those continuing an occurrence; outside, those
        that open one and write in it only what the document holds. All of them where none
        would (the body is then released). Inside a grounded date or number, those keeping it
        on one the document states (`held`: bytes evaluated but held back, core.decode.held_zeros;
        see core.grounding.value_holds). The array returned may be read-only: kept, and given
        again when the same candidates come back."""
        self._labeled_inside, self._labeled_openers = False, frozenset()
        if self.values is not None and self.values.holding:
            return self.values.restrict(pending, ids, held)
        inside = self._body_start is not None
        if len(ids) == 0 or (inside and self._released):
            return ids
        if inside:
            kept = self._kept_inside(pending, ids)
        else:
            outside = self._kept_outside(pending, ids)
            if outside is None:
                return ids
            keep, self._labeled_openers = outside
            kept = ids.take(keep)
        if len(kept) == 0 and inside and self._labeled is not None and self._ends == self._labeled.starts:
            # The schema takes none of the labeled values here: any span of the document then.
            self._labeled, self._ends = None, None
            kept = self._kept_inside(pending, ids)
        if len(kept) == 0:
            self._released = inside
            self._labeled_openers = frozenset()
            return ids
        self._labeled_inside = inside and self._labeled is not None
        return kept

    def labeled_choice(self, token: int) -> bool:
        """Whether `token`, chosen among the candidates the last `restrict` kept, writes a string
        held to labeled values (opens one, or goes on in one): its choice was among the few
        tokens those values allow."""
        return self._labeled_inside or token in self._labeled_openers

    def keeps_beside_another(self, token: int, allowed: Callable[[int], bool]) -> bool:
        """Whether `restrict(b"", ids)` keeps `token` and another candidate besides, for the
        candidates `ids` of a state whose single-byte tokens `allowed` (which says whether the
        automaton allows a token) holds two of: told without the list, changing nothing.
        Outside a body every single-byte token is kept, so those two are. False also where
        it takes the list (an escape open in a body; a date or number held to the document's)."""
        if self.values is not None and self.values.holding:
            return False
        if self._body_start is None:
            outside = self._kept_outside(b"", np.array([token], dtype=np.int32))
            return outside is None or (len(outside[0]) == 1 and not outside[1])
        if self._released:
            return True
        if self._escaped:
            return False
        ends = self._ends
        if self._labeled is not None:
            return False  # the list decides whether the labeled values are kept, and the confidence
        continuing = self._tokens.anywhere_ids() if ends is None else self._after(ends)
        if not np.any(continuing == token):
            return False
        for start in range(0, len(continuing), 64):  # the first few nearly always do: no list of thousands made
            if any(other != token and allowed(other) for other in continuing[start : start + 64].tolist()):
                return True
        return False

    def _kept_inside(self, pending: bytes, ids: IdArray) -> IdArray:
        """The candidates that continue the body (an array that may be shared: not to be
        written). Where the body is open with no byte pending, the tokens the document allows
        are known (all those occurring in it, or the few continuing the occurrences so far) and
        picked out of `ids` (by their positions in it where the list comes back, as it does at
        every character)."""
        if pending or self._escaped:
            return self._kept_one_by_one(pending, ids)
        ends = self._ends
        allowed = self._tokens.anywhere_ids() if ends is None else self._after(ends)
        return self._positions.kept(ids, allowed, (ends, self._labeled))

    def _after(self, ends: tuple[int, ...]) -> IdArray:
        """The tokens that continue the document at one of `ends` (a repeated value meets the
        same occurrences again: kept)."""
        labeled = self._labeled
        found = self._continuing.get((ends, labeled))
        if found is None:
            at = self._tokens.at if labeled is None else self._at_within
            found = at(ends[0]) if len(ends) == 1 else np.concatenate([np.zeros(0, np.int32), *(at(end) for end in ends)])
            self._continuing[(ends, labeled)] = found
        return found

    def _at_within(self, end: int) -> IdArray:
        """The tokens continuing the document at `end` that stay inside its labeled value."""
        assert self._labeled is not None
        room = self._labeled.stop(end) - end
        found = self._tokens.at(end)
        return found.take(np.flatnonzero([len(body_part(self._pieces[token])[0]) <= room for token in found.tolist()]))

    def _kept_one_by_one(self, pending: bytes, ids: IdArray) -> IdArray:
        """Where a byte is pending or an escape is open: each candidate's body part, read. The
        few candidates after a token that opens a body come back at every such string: kept
        (a short list only, as it is part of the key; read-only, as it is shared)."""
        key = (pending, self._escaped, self._ends, self._labeled, ids.tobytes()) if len(ids) <= READ_LISTS_KEPT_UP_TO else None
        found = None if key is None else self._read.get(key)
        if found is None:
            found = ids.take(np.flatnonzero([self._continues(self._pieces[token][len(pending) :]) for token in ids.tolist()]))
            if key is not None:
                found.flags.writeable = False
                self._read[key] = found
        return found

    def _continues(self, data: bytes) -> bool:
        """Whether `data`, written into the open body, keeps it on a span of the document
        (and, where it closes the body, ends it where a value may end)."""
        part, closed, _ = body_part(data, self._escaped)
        if self._ends is None:
            return not part or self._occurs(part, closed)
        text, labeled = self._tokens.text, self._labeled
        return any(
            text.escaped.startswith(part, end)
            and (not closed or text.ends[end + len(part)])
            and (labeled is None or end + len(part) <= labeled.stop(end))
            for end in self._ends
        )

    def _kept_outside(self, pending: bytes, ids: IdArray) -> tuple[Indices, frozenset[int]] | None:
        """Outside a body, only tokens with a quote may open one; each is walked to see. The
        indices kept, and the kept tokens that open a body held to labeled values."""
        with_quote = np.flatnonzero(self._tokens.bodies.quoted[ids])
        quoted = [int(i) for i in with_quote if b'"' in self._pieces[int(ids[i])][len(pending) :]]
        if not quoted:
            return None
        opened = self._opened.setdefault((self._state, pending), {})
        keep = np.ones(len(ids), dtype=bool)
        openers: set[int] = set()
        for index in quoted:
            token = int(ids[index])
            if token not in opened:
                opened[token] = self._opened_body(self._pieces[token][len(pending) :])
            opening = opened[token]
            keep[index] = opening is None or not opening[0] or self._opens(*opening)
            if keep[index] and opening is not None and opening[2] is not None:
                openers.add(token)
        return np.flatnonzero(keep), frozenset(openers)

    def _opens(self, part: bytes, closed: bool, labeled: Labeled | None) -> bool:
        """Whether `part` may open a value (`closed`: and be all of it): one of `labeled`,
        where the document has some for its property, else any span of the document."""
        if labeled is None:
            return self._occurs(part, closed)
        text = self._tokens.text
        return any(
            text.escaped.startswith(part, start) and start + len(part) <= stop and (not closed or text.ends[start + len(part)])
            for start, stop in zip(labeled.starts, labeled.stops, strict=True)
        )

    def _occurs(self, part: bytes, closed: bool) -> bool:
        """Whether `part` may open a value (`closed`: and be all of it)."""
        found = self._occurring.get((part, closed))
        if found is None:
            found = self._occurring[(part, closed)] = self._tokens.text.occurs(part, whole=closed)
        return found

    def _opened_body(self, data: bytes) -> tuple[bytes, bool, Labeled | None] | None:
        """What `data`, written from here, puts into a grounded body it opens, whether it
        closes it too, and the labeled values of the body's property (None: it opens none)."""
        state, dfa = self._state, self._dfa
        for index, byte in enumerate(data):
            state = dfa.step(state, byte)
            label = dfa.text_label(state) if dfa.starts_text(state) else None
            if label is not None and self.applies(label):
                part, closed, _ = body_part(data[index + 1 :])
                return part, closed, self._labeled_values(label.pointer, state)
        return None
