"""`--chunk`: a document several times longer than the context, extracted piece by piece on
the bundled model and merged; spans are offsets into the whole document, and later pieces
contribute. Progress is reported piece by piece and, for a long prompt, batch by batch."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from gguf_extract.core.decode.types import SamplingSettings
from gguf_extract.core.extract.chunked import ChunkedExtraction
from gguf_extract.core.extract.extractor import Extractor, ModelOptions

MEMBERS = {
    "type": "object",
    "properties": {
        "chair": {"type": "string", "maxLength": 30},
        "members": {
            "type": "array",
            "maxItems": 40,
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string", "maxLength": 30}, "city": {"type": "string", "maxLength": 20}},
                "required": ["name", "city"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["chair", "members"],
    "additionalProperties": False,
}
NAMES = ["Maria Gonzales", "Aiko Tanaka", "Pedro Alves", "Fatima Haddad", "Lars Nilsson", "Olga Petrova", "Kofi Mensah"]
CITIES = ["Lisbon", "Osaka", "Porto", "Cairo", "Oslo", "Kyiv", "Accra"]


def minutes(members: int) -> str:
    paragraphs = ["MINUTES OF THE ANNUAL MEETING\n\nHeld on 4 May 2024 in Porto. Chair: Ingrid Berg."]
    for n in range(members):
        paragraphs.append(
            f"{NAMES[n % 7]} from {CITIES[n % 7]} joined the cooperative. The committee reviewed the figures"
            " and agreed to revisit the travel policy at the next meeting."
        )
    return "\n\n".join(paragraphs) + "\n"


def run_extract(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "gguf_extract", *args], capture_output=True, timeout=900, check=False)


def test_chunk_and_truncate_exclude_each_other(tmp_path: Path) -> None:
    document = tmp_path / "doc.txt"
    document.write_text("text")
    result = run_extract("--schema", "person", str(document), "--chunk", "--truncate")
    assert result.returncode == 2 and result.stdout == b""
    assert "--chunk and --truncate exclude each other" in result.stderr.decode()


@pytest.mark.model
def test_a_document_three_times_the_context_is_extracted_piece_by_piece(tmp_path: Path) -> None:
    text = minutes(52)
    document, schema = tmp_path / "minutes.txt", tmp_path / "members.json"
    document.write_text(text)
    schema.write_text(json.dumps(MEMBERS))
    settings = ("--schema", str(schema), str(document), "--ctx", "512", "--max-tokens", "128")
    refused = run_extract(*settings, "--no-chunk")
    assert refused.returncode == 5 and "--chunk" in refused.stderr.decode()
    result = run_extract(*settings, "--chunk", "--evidence", "--stats")
    assert result.returncode == 0, result.stderr.decode()
    stats = json.loads(result.stderr.decode().splitlines()[-1])
    record = json.loads(result.stdout)
    jsonschema.validate(record["data"], MEMBERS)
    assert len(Extractor.open().tokenizer.tokenize(text.encode())) >= 3 * 512
    assert stats["pieces"] >= 4 and len(stats["piece_seconds"]) == stats["pieces"]
    assert stats["prompt_tokens_reused"] > 0  # the shared prefix is evaluated once for all pieces
    spans = located(record["data"], record["evidence"], text)
    assert spans, record
    assert max(start for start, _ in spans) > len(text) // 2  # values from the second half: later pieces contribute


def located(value: Any, evidence: dict[str, Any], text: str) -> list[tuple[int, int]]:
    """The spans of the string values, each checked to hold its value in the whole document."""
    found = []
    for pointer, item in evidence.items():
        if item["span"] is None:
            continue
        start, end = item["span"]
        leaf = value
        for part in pointer.split("/")[1:]:
            leaf = leaf[int(part)] if isinstance(leaf, list) else leaf[part]
        if isinstance(leaf, str):
            assert re.sub(r"\s+", " ", text[start:end]) == leaf, (pointer, leaf, text[start:end])
            found.append((start, end))
    return found


@pytest.mark.model
def test_progress_is_reported_per_piece_and_per_prompt_batch_without_changing_the_output() -> None:
    extractor = Extractor.open(None, ModelOptions(n_ctx=2048))
    compiled = extractor.compile(MEMBERS)
    settings = SamplingSettings(max_tokens=64)
    long_document = minutes(20)  # about 700 tokens: two batches of 512
    plain = extractor.extract(compiled, long_document, settings)
    plain.run()
    watched = extractor.extract(compiled, long_document, settings)
    batches: list[tuple[int, int]] = []
    watched.on_prompt_progress = lambda done, total: batches.append((done, total))
    watched.run()
    assert watched.text == plain.text
    assert len(batches) >= 2 and batches[-1][0] == batches[-1][1] and batches == sorted(batches)
    small = Extractor.open(None, ModelOptions(n_ctx=512))
    chunked = ChunkedExtraction(small, small.compile(MEMBERS), long_document, settings)
    pieces: list[tuple[int, int]] = []
    chunked.on_piece = lambda done, total: pieces.append((done, total))
    chunked.run()
    total = len(chunked.pieces)
    assert total >= 2 and pieces == [(n, total) for n in range(1, total + 1)]
