"""The model's sequences as the scheduler (core.runtime.scheduler) uses them: one loaded model's
own context, one document at a time (`OneSequence`), or one llama.cpp context of several
sequences sharing a prompt prefix (`SharedSequences`).

OneSequence evaluates exactly as a lone extraction always has (each evaluation one llama_decode
of its tokens, a long one cut into n_batch batches from its start), so a batch one at a time
writes what one document at a time writes. Its context grows with the documents (the loader
makes it again when one needs more room), and what it holds stays from one document to the
next, so the shared prefix of the next prompt is found there and kept.

SharedSequences: the prefix (instructions and schema outline) is evaluated once, on sequence 0,
and copied to every other (llama_memory_seq_cp: the cells are held once, in the one cache of
core.model.SequenceContext). Beside it each sequence has a slot of cells for a document's own
prompt part and output, sized from the first documents (rounded up to 256). A document that
needs a larger slot waits (the scheduler admits nobody meanwhile) until the documents in
flight are done; then the context is made again with slots large enough for every waiting
document. Where llama.cpp cannot make that context, the documents needing that size alone fail
(SequenceSlotRefused) and the context is made at the size before for the others; only where no
context at all can be made is it the model's failure (ModelError), every waiting document's.
"""

from __future__ import annotations

from collections.abc import Callable

from ..decode.types import Logits
from ..errors import ModelError, SequenceSlotRefused
from ..model import GGUFModel, SequenceContext

# Cells kept free in a slot beyond a document's prompt and budget: drafts and previews are
# evaluated past the budget before being taken back.
SLOT_MARGIN = 64
_SLOT_STEP = 256


class OneSequence:
    """One sequence: the loaded model's own context, as large as the documents need.
    `model_for(n_tokens)` gives the model with room for `n_tokens` (loading it, or loading it
    again larger; raising the document's error where no context can hold that many)."""

    slots = 1

    def __init__(self, model_for: Callable[[int], GGUFModel]) -> None:
        self._model_for = model_for
        self._model: GGUFModel | None = None

    @property
    def n_batch(self) -> int:
        return self._loaded.n_batch

    @property
    def _loaded(self) -> GGUFModel:
        if self._model is None:
            raise RuntimeError("no model: a document's room is made before anything is evaluated")
        return self._model

    def fits(self, seq: int, room: int) -> bool:
        self._model = self._model_for(room)
        return True

    def make_room(self, rooms: dict[int, int]) -> dict[int, Exception]:
        return {}  # fits always makes the room: nothing ever waits for it

    def holds(self, seq: int, tokens: list[int]) -> bool:
        return self._loaded.holds(tokens)

    def length(self, seq: int) -> int:
        return self._loaded.n_past

    def decode(self, parts: list[tuple[int, int, list[int], list[int]]]) -> list[Logits]:
        """The one part's logits rows: evaluated as a plain evaluation is (the logits after its
        last token computed, whether wanted or not), so the numbers are the same either way."""
        ((_, start, tokens, rows),) = parts
        model = self._loaded
        model.rollback(start)
        logits = model.eval_with_logits(tokens, rows or [len(tokens) - 1])
        return [logits if rows else logits[:0]]


class SharedSequences:
    """`n_seq` sequences of one context, `prefix` evaluated once and copied to all.
    `open_context(n_seq, n_ctx)` makes the context (on first use, and again when a document
    needs larger slots); `unified`: one cache for every sequence (the prefix held once), else a
    stream of cells each (the prefix copied into each). Close it when done.

    Which layout is faster was measured through the command (bench/kv_layout.py, 24
    development-set documents, 8 and 64 at a time): on this 2-core CPU one stream a sequence
    took x0.91 and x0.74 of one cache's run. In one cache a token's attention spans every sequence's cells,
    masked, so each token of a prompt at 8 sequences passes over 8 documents' cells; a stream
    holds its own. On a GPU one cache was the faster (llama.cpp cuts a decode of several
    streams into passes of sequences taking equal numbers of tokens: sequences writing 1, 12
    and 40 tokens took several passes over the weights), so there it is one cache."""

    def __init__(
        self, open_context: Callable[[int, int], SequenceContext], n_seq: int, prefix: list[int], unified: bool = True
    ) -> None:
        self._open_context = open_context
        self._unified = unified
        self._context: SequenceContext | None = None
        self.prefix = prefix
        self.slots = n_seq
        self.slot = 0  # cells each sequence may use beyond the prefix
        self._cells: list[list[int]] = [[] for _ in range(n_seq)]  # each sequence's tokens, by position

    @property
    def n_batch(self) -> int:
        if self._context is None:
            raise RuntimeError("no context: a document's room is made before anything is evaluated")
        return self._context.n_batch

    def _room(self, n_tokens: int) -> int:
        return n_tokens - len(self.prefix) + SLOT_MARGIN

    def fits(self, seq: int, room: int) -> bool:
        return self._context is not None and self._room(room) <= self.slot

    def make_room(self, rooms: dict[int, int]) -> dict[int, Exception]:
        """Slots for every waiting document at once (none is in flight). Where llama.cpp cannot
        make slots that large, the documents needing that much are refused and the context is
        made for the others, at least at the size before; where even that cannot be made, the
        model fails (its ModelError raised)."""
        needed = {seq: self._room(room) for seq, room in rooms.items()}
        refused: dict[int, Exception] = {}
        while True:
            most = max(needed.values(), default=0)
            if self._context is not None and most <= self.slot:
                return refused
            # The size before where nobody needs more; with none before and nobody waiting,
            # the smallest: whether any context can be made tells the model's fault from a size's.
            size = max(most, self.slot) or _SLOT_STEP
            try:
                self._remake(size)
            except ModelError as refusal:
                too_large = [seq for seq, room in needed.items() if room == size]
                if not too_large:
                    raise
                for seq in too_large:
                    del needed[seq]
                    refused[seq] = SequenceSlotRefused(size + len(self.prefix) - SLOT_MARGIN, self.slots, str(refusal))

    def _remake(self, room: int) -> None:
        """A new context with slots of at least `room` cells: the prefix evaluated on sequence
        0, in n_batch pieces, and shared with the others."""
        self.close()
        slot = -(-room // _SLOT_STEP) * _SLOT_STEP
        held = len(self.prefix) + self.slots * slot if self._unified else self.slots * (len(self.prefix) + slot)
        context = self._open_context(self.slots, held)
        try:
            for start in range(0, len(self.prefix), context.n_batch):
                piece = self.prefix[start : start + context.n_batch]
                context.decode([(0, start, piece, [len(piece) - 1])])
            for seq in range(1, self.slots):
                context.copy_sequence(0, seq)
        except BaseException:
            context.close()
            raise
        self._cells = [list(self.prefix) for _ in range(self.slots)]
        self._context, self.slot = context, slot

    def holds(self, seq: int, tokens: list[int]) -> bool:
        return bool(tokens) and self._cells[seq][: len(tokens)] == tokens

    def length(self, seq: int) -> int:
        return len(self._cells[seq])

    def decode(self, parts: list[tuple[int, int, list[int], list[int]]]) -> list[Logits]:
        if self._context is None:
            raise RuntimeError("no context to decode in")
        for seq, start, _, _ in parts:  # gone from here on, whether or not the decode succeeds
            del self._cells[seq][start:]
        found = self._context.decode(parts)
        for seq, _, tokens, _ in parts:
            self._cells[seq].extend(tokens)
        return found

    def close(self) -> None:
        if self._context is not None:
            self._context.close()
            self._context = None
