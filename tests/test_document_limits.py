"""Documents are read no further than the context could hold: a huge or endless document is
refused (or, with --truncate, cut) without being read whole. Through the real command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from gguf_extract.core.documents.decoding import decode_head
from gguf_extract.core.documents.document import read_document
from gguf_extract.core.errors import DocumentTooLarge

ROOT = Path(__file__).resolve().parent.parent
PERSON_SCHEMA = ROOT / "schemas" / "person.json"


def run(*args: str, **options: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gguf_extract", *args], capture_output=True, timeout=300, check=False, **options
    )  # type: ignore[call-overload, no-any-return]


def test_a_read_stops_after_the_limit(tmp_path: Path) -> None:
    document = tmp_path / "big.txt"
    document.write_text("word " * 1000)
    assert read_document(document, max_bytes=5000) == "word " * 1000
    with pytest.raises(DocumentTooLarge) as raised:
        read_document(document, max_bytes=4999)
    assert raised.value.head == b"word " * 999 + b"word"
    assert "larger than 4999 bytes" in raised.value.message


def test_the_head_of_an_endless_device_is_read_and_refused() -> None:
    with pytest.raises(DocumentTooLarge) as raised:
        read_document(Path("/dev/zero"), max_bytes=1 << 16)
    assert len(raised.value.head) == 1 << 16


def test_a_head_cut_inside_a_character_drops_the_partial_character() -> None:
    assert decode_head("Zoë".encode()[:3], "head") == "Zo"


@pytest.mark.model
def test_an_endless_document_is_refused_not_read_to_exhaustion() -> None:
    result = run("--schema", str(PERSON_SCHEMA), "/dev/zero")
    err = result.stderr.decode()
    assert (result.returncode, result.stdout) == (5, b""), err
    assert "/dev/zero is larger than" in err and "--truncate" in err and "Traceback" not in err


@pytest.mark.model
def test_endless_stdin_is_refused() -> None:
    with open("/dev/zero", "rb") as zero:
        result = run("--schema", str(PERSON_SCHEMA), "-", stdin=zero)
    assert (result.returncode, result.stdout) == (5, b""), result.stderr.decode()
    assert "<stdin> is larger than" in result.stderr.decode()


@pytest.mark.model
def test_a_50_megabyte_document_is_refused_or_truncated(tmp_path: Path) -> None:
    document = tmp_path / "huge.txt"
    with document.open("w") as out:
        out.write("Ada Lovelace is 36 and lives in London. ")
        out.write("Nothing else to report here. " * (50_000_000 // 29))
    refused = run("--schema", str(PERSON_SCHEMA), str(document))
    assert (refused.returncode, refused.stdout) == (5, b"") and "is larger than" in refused.stderr.decode()
    kept = run("--schema", str(PERSON_SCHEMA), str(document), "--truncate", "--ctx", "1024", "--max-tokens", "200")
    assert kept.returncode == 0, kept.stderr.decode()
    jsonschema.validate(json.loads(kept.stdout), json.loads(PERSON_SCHEMA.read_text()))
    assert "--truncate left out" in kept.stderr.decode()


@pytest.mark.model
def test_a_context_above_the_models_is_cut_with_a_warning() -> None:
    result = run("--schema", str(PERSON_SCHEMA), str(ROOT / "samples" / "person.txt"), "--ctx", "30000")
    assert result.returncode == 0, result.stderr.decode()
    assert "warning: --ctx 30000 is more than the model's context of 8192 tokens: using 8192" in result.stderr.decode()


@pytest.mark.model
def test_a_cache_others_may_write_is_not_used_and_said(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "vocabulary").mkdir(parents=True)
    (cache / "vocabulary").chmod(0o777)
    environment = {"EXTRACT_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"}
    result = run("--schema", str(PERSON_SCHEMA), str(ROOT / "samples" / "person.txt"), env=environment)
    assert result.returncode == 0, result.stderr.decode()
    assert f"not using the cache: the cache folder {cache / 'vocabulary'} is writable by other users" in result.stderr.decode()
    assert not list((cache / "vocabulary").iterdir())
