"""`--chunk` with `--parallel`: a long document's pieces decoded together as sequences of one
context, on a fake context over the bundled model's vocabulary (its tokenizer only, no
weights). Each sequence's logits depend on its own tokens alone, so the merged value, evidence
and figures must be those of the pieces run one after another."""

from __future__ import annotations

import threading
import zlib
from dataclasses import fields
from typing import Any

import numpy as np
import pytest
from test_chunked import MEMBERS, minutes

from gguf_extract.core.decode.types import SamplingSettings
from gguf_extract.core.extract.chunked import ChunkedExtraction, ChunkedStats
from gguf_extract.core.extract.extractor import Extractor, ModelOptions
from gguf_extract.core.runtime.scheduler import Scheduler, in_order
from gguf_extract.core.runtime.sequences import SharedSequences


class FakeContext:
    """`n_seq` sequences whose logits after a token are noise seeded by the sequence's whole
    history: outputs depend on a sequence's own tokens alone. Logs the sequences of each decode."""

    def __init__(self, n_seq: int, n_ctx: int, n_vocab: int, log: list[list[int]], n_batch: int = 512) -> None:
        self.n_seq, self.n_ctx, self.n_vocab, self.n_batch = n_seq, n_ctx, n_vocab, n_batch
        self.cells: dict[int, list[int]] = {seq: [] for seq in range(n_seq)}
        self.log = log

    def decode(self, requests: list[tuple[int, int, list[int], list[int]]]) -> list[np.ndarray]:
        assert 0 < sum(len(tokens) for _, _, tokens, _ in requests) <= self.n_batch
        self.log.append([seq for seq, _, _, _ in requests])
        found = []
        for seq, start, tokens, rows in requests:
            assert start <= len(self.cells[seq]), "a request must follow the sequence's cells"
            history = self.cells[seq] = self.cells[seq][:start] + tokens
            rows_found = [self._logits(history[: start + row + 1]) for row in rows]
            found.append(np.stack(rows_found) if rows_found else np.zeros((0, self.n_vocab), dtype=np.float32))
        return found

    def _logits(self, history: list[int]) -> np.ndarray:
        seed = zlib.crc32(np.asarray(history, dtype=np.int64).tobytes())
        return np.random.default_rng(seed).standard_normal(self.n_vocab, dtype=np.float32)

    def copy_sequence(self, source: int, target: int) -> None:
        self.cells[target] = list(self.cells[source])

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def extractor() -> Extractor:
    return Extractor.open(None, ModelOptions(n_ctx=512))


def fake_contexts(extractor: Extractor, log: list[list[int]]) -> Any:
    n_vocab = len(extractor.vocabulary.pieces)
    return lambda n_seq, n_ctx: FakeContext(n_seq, n_ctx, n_vocab, log)


def one_after_another(extractor: Extractor, document: str, settings: SamplingSettings, grounded: bool) -> ChunkedExtraction:
    """The chunked run piece after piece, as one job of a batch runs it (its steps), on one
    sequence of a fake context, though asked for 4 pieces at a time."""
    compiled = extractor.compile(MEMBERS, grounded=grounded)
    sequences = SharedSequences(fake_contexts(extractor, []), 1, extractor.shared_prefix(compiled))
    run = ChunkedExtraction(extractor, compiled, document, settings, parallel=4)
    (outcome,) = in_order(Scheduler(sequences).run([run.steps]))
    assert outcome.error is None, outcome.error
    return run


@pytest.mark.parametrize("grounded", [False, True])
def test_pieces_decoded_together_merge_to_what_one_after_another_gives(
    extractor: Extractor, monkeypatch: pytest.MonkeyPatch, grounded: bool
) -> None:
    document = minutes(40)
    settings = SamplingSettings(max_tokens=64)
    expected = one_after_another(extractor, document, settings, grounded)
    log: list[list[int]] = []
    monkeypatch.setattr(extractor.session, "sequence_context", lambda unified: fake_contexts(extractor, log))
    together = ChunkedExtraction(extractor, extractor.compile(MEMBERS, grounded=grounded), document, settings, parallel=4)
    done: list[tuple[int, int]] = []
    together.on_piece = lambda finished, total: done.append((finished, total))
    together.run()
    pieces = len(together.pieces)
    assert pieces >= 3 and together.parallel == min(4, pieces)
    assert max(len(set(seqs)) for seqs in log) >= 2  # pieces shared decodes
    assert together.text == expected.text and together.value == expected.value
    assert together.evidence == expected.evidence and together.evidence
    if grounded:
        assert any(item.span is not None for item in together.evidence.values())
    assert done == [(n, pieces) for n in range(1, pieces + 1)]
    figures = [item.name for item in fields(ChunkedStats) if not item.name.endswith("seconds")]
    assert {name: getattr(together.stats, name) for name in figures} == {name: getattr(expected.stats, name) for name in figures}
    assert len(together.stats.piece_seconds) == pieces


def test_a_failing_piece_raises_its_error_and_stops_the_others(extractor: Extractor, monkeypatch: pytest.MonkeyPatch) -> None:
    log: list[list[int]] = []
    monkeypatch.setattr(extractor.session, "sequence_context", lambda unified: fake_contexts(extractor, log))
    run = ChunkedExtraction(extractor, extractor.compile(MEMBERS), minutes(40), SamplingSettings(max_tokens=64), parallel=2)
    real_extract = extractor.extract
    calls: list[str] = []

    def extract(compiled: Any, text: str, *args: Any) -> Any:
        calls.append(text)
        if len(calls) == 2:
            raise RuntimeError("the second piece fails")
        return real_extract(compiled, text, *args)

    monkeypatch.setattr(extractor, "extract", extract)
    threads = threading.active_count()
    with pytest.raises(RuntimeError, match="second piece"):
        run.run()
    assert run.value is None and run.text == ""
    assert threading.active_count() == threads  # the pieces in flight were stopped, their threads ended

