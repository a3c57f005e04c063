"""The on-disk cache: hits return what was stored, and anything wrong with an entry (corrupt,
truncated, stale, written by two processes at once) means a rebuild, never a crash or a
wrong vocabulary."""

from __future__ import annotations

import io
import multiprocessing
import os
from pathlib import Path

import numpy as np
import pytest

from gguf_extract.core.vocab import cache
from gguf_extract.core.vocab.token_table import Vocabulary

VOCAB = Vocabulary.from_pieces([b"", b"a", b"ab", b"\xe2\x82", b"\x00x", b'{"'], (0,))


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("EXTRACT_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF" + b"\0" * 64)
    return path


class Reader:
    def __init__(self, vocabulary: Vocabulary = VOCAB) -> None:
        self.calls = 0
        self.vocabulary = vocabulary

    def __call__(self) -> Vocabulary:
        self.calls += 1
        return self.vocabulary


def entries(folder: Path) -> list[Path]:
    return sorted((folder / "vocabulary").glob("*.bin"))


def test_second_load_comes_from_the_cache(model_file: Path, cache_dir: Path) -> None:
    reader = Reader()
    first = cache.cached_vocabulary(model_file, reader)
    second = cache.cached_vocabulary(model_file, reader)
    assert reader.calls == 1
    assert first == second == VOCAB
    assert len(entries(cache_dir)) == 1


def test_no_cache_neither_reads_nor_writes(model_file: Path, cache_dir: Path) -> None:
    reader = Reader()
    cache.cached_vocabulary(model_file, reader, use_cache=False)
    cache.cached_vocabulary(model_file, reader, use_cache=False)
    assert reader.calls == 2
    assert not cache_dir.exists()


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_damaged_entry_is_rebuilt(model_file: Path, cache_dir: Path, damage: str) -> None:
    cache.cached_vocabulary(model_file, Reader())
    (entry,) = entries(cache_dir)
    data = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        entry.write_bytes(os.urandom(len(data)))
    else:
        entry.write_bytes(b"")
    reader = Reader()
    assert cache.cached_vocabulary(model_file, reader) == VOCAB
    assert reader.calls == 1
    assert cache.cached_vocabulary(model_file, Reader()) == VOCAB  # and the rebuilt entry reads back


def test_any_flipped_byte_gives_the_right_vocabulary_or_a_rebuild(model_file: Path, cache_dir: Path) -> None:
    """Checksums catch damage to the data; damage elsewhere either breaks the file (a miss)
    or leaves the arrays intact. Either way the vocabulary returned is the right one."""
    cache.cached_vocabulary(model_file, Reader())
    (entry,) = entries(cache_dir)
    data = entry.read_bytes()
    rebuilt = 0
    for position in range(0, len(data), 5):
        entry.write_bytes(data[:position] + bytes([data[position] ^ 0x5A]) + data[position + 1 :])
        reader = Reader()
        assert cache.cached_vocabulary(model_file, reader) == VOCAB, f"flipped byte {position}"
        rebuilt += reader.calls
        entry.write_bytes(data)
    assert rebuilt > 0


def test_entry_with_inconsistent_arrays_is_rebuilt(model_file: Path, cache_dir: Path) -> None:
    key = cache.entry_key("vocabulary", cache.file_version_key(model_file))
    arrays = cache._vocabulary_arrays(VOCAB)
    arrays["lengths"] = arrays["lengths"] + 1  # no longer adds up to the blob
    cache.write_entry("vocabulary", key, arrays)
    reader = Reader()
    assert cache.cached_vocabulary(model_file, reader) == VOCAB
    assert reader.calls == 1


def test_changed_model_file_is_not_served_a_stale_entry(model_file: Path) -> None:
    cache.cached_vocabulary(model_file, Reader())
    other = Vocabulary.from_pieces([b"z", b"zz"], (1,))
    model_file.write_bytes(b"GGUF" + b"\1" * 80)
    assert cache.cached_vocabulary(model_file, Reader(other)) == other


def test_unwritable_cache_directory_is_skipped(model_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    monkeypatch.setenv("EXTRACT_CACHE_DIR", str(blocker))
    reader = Reader()
    assert cache.cached_vocabulary(model_file, reader) == VOCAB
    assert cache.cached_vocabulary(model_file, reader) == VOCAB
    assert reader.calls == 2


def _write_many(arguments: tuple[str, str, int]) -> int:
    folder, model, rounds = arguments
    os.environ["EXTRACT_CACHE_DIR"] = folder
    big = Vocabulary.from_pieces([bytes([i % 256]) * (1 + i % 7) for i in range(20_000)], (3,))
    key = cache.entry_key("vocabulary", cache.file_version_key(Path(model)))
    wrong = 0
    for _ in range(rounds):
        cache.write_entry("vocabulary", key, cache._vocabulary_arrays(big))
        stored = cache.read_entry("vocabulary", key)
        if stored is None or cache._vocabulary_from(stored) != big:
            wrong += 1
    return wrong


def test_two_processes_writing_one_entry_never_leave_a_partial_one(model_file: Path, cache_dir: Path) -> None:
    with multiprocessing.get_context("fork").Pool(2) as pool:
        wrong = pool.map(_write_many, [(str(cache_dir), str(model_file), 15)] * 2)
    assert wrong == [0, 0]
    assert len(entries(cache_dir)) == 1
    assert not list((cache_dir / "vocabulary").glob(".*.tmp"))


def test_cached_layout_gives_the_same_token_table(model_file: Path) -> None:
    from gguf_extract.core.vocab.token_table import TokenTable

    cache.cached_vocabulary(model_file, Reader())
    cached = cache.cached_vocabulary(model_file, Reader())
    assert cached.layout is not None
    fresh, loaded = TokenTable(VOCAB), TokenTable(cached)
    for name in ("ascii_text", "wide_text", "astral_text"):
        assert getattr(fresh, name).ids.tolist() == getattr(loaded, name).ids.tolist()
        assert getattr(fresh, name).lengths.tolist() == getattr(loaded, name).lengths.tolist()
    assert [g.tolist() for g in fresh.rest_by_first_byte] == [g.tolist() for g in loaded.rest_by_first_byte]
    assert fresh.with_prefix(b"a").tolist() == loaded.with_prefix(b"a").tolist() == [1, 2]


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702])
def test_a_cache_folder_others_may_write_is_neither_read_nor_written(model_file: Path, cache_dir: Path, mode: int) -> None:
    reader = Reader()
    cache.cached_vocabulary(model_file, reader)  # a genuine entry, then the folder is opened up
    (cache_dir / "vocabulary").chmod(mode)
    assert cache.unsafe_reason() == f"the cache folder {cache_dir / 'vocabulary'} is writable by other users (mode {mode:o})"
    planted = entries(cache_dir)[0]
    before = planted.read_bytes()
    assert cache.cached_vocabulary(model_file, reader) == VOCAB
    assert reader.calls == 2  # not read
    assert planted.read_bytes() == before and entries(cache_dir) == [planted]  # not written


def test_a_cache_root_others_may_write_is_not_used(model_file: Path, cache_dir: Path) -> None:
    cache_dir.mkdir()
    cache_dir.chmod(0o777)
    reader = Reader()
    cache.cached_vocabulary(model_file, reader)
    cache.cached_vocabulary(model_file, reader)
    assert reader.calls == 2 and not entries(cache_dir)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_a_cache_folder_of_another_user_is_not_used(model_file: Path, cache_dir: Path) -> None:
    cache.cached_vocabulary(model_file, Reader())
    os.chown(cache_dir, 65534, 65534)
    assert cache.unsafe_reason() == f"the cache folder {cache_dir} belongs to another user"
    reader = Reader()
    cache.cached_vocabulary(model_file, reader)
    assert reader.calls == 1


def test_the_cache_is_created_private_and_holds_no_pickles(model_file: Path, cache_dir: Path) -> None:
    cache.cached_vocabulary(model_file, Reader())
    assert (cache_dir.stat().st_mode & 0o777, (cache_dir / "vocabulary").stat().st_mode & 0o777) == (0o700, 0o700)
    data = cache.read_bytes("vocabulary", entries(cache_dir)[0].stem)
    assert data is not None
    with np.load(io.BytesIO(data), allow_pickle=False) as stored:  # raises on any object array
        assert all(stored[name].dtype != object for name in stored.files)
