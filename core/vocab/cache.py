"""An on-disk cache of derived data (a model's vocabulary), safe to share between processes.

Entries live in `$EXTRACT_CACHE_DIR`, else `$XDG_CACHE_HOME/gguf-extract`, else
`~/.cache/gguf-extract`. Each is one file named by a key that covers everything it was derived
from (the source's identity, the package and format versions), so a stale entry is never found,
and it starts with a SHA-256 digest of its contents, so a damaged one is never read. Writers
write a temporary file and rename it into place, so a reader sees a whole entry or none and two
writers of one key cannot interleave. A read that fails for any reason (truncated, corrupt,
unreadable) counts as a miss and the entry is rebuilt: the cache can make a run faster, never
wrong.

Entries are numpy arrays read with `allow_pickle=False`, never pickles, so an entry cannot run
code; and a cache folder that another user owns or may write to is not used at all (another
user could plant entries there), see `unsafe_reason`.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from .token_table import TokenLayout, Vocabulary

FORMAT_VERSION = "5"
Arrays = dict[str, npt.NDArray[np.generic]]


def cache_root() -> Path:
    configured = os.environ.get("EXTRACT_CACHE_DIR")
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "gguf-extract"


def unsafe_reason() -> str | None:
    """Why the cache folder must not be used (it, or a folder of entries in it, belongs to
    another user or is writable by group or others), or None when it is safe or absent."""
    root = cache_root()
    for folder in (root, *_entry_folders(root)):
        try:
            status = folder.stat()
        except OSError:
            continue  # absent: it is created private to this user when first written
        if status.st_uid != os.geteuid():
            return f"the cache folder {folder} belongs to another user"
        if status.st_mode & 0o022:
            return f"the cache folder {folder} is writable by other users (mode {status.st_mode & 0o777:o})"
    return None


def _entry_folders(root: Path) -> list[Path]:
    try:
        return [child for child in root.iterdir() if child.is_dir()]
    except OSError:
        return []


def entry_key(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in (FORMAT_VERSION, _package_version(), *parts):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()[:32]


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gguf-extract")
    except PackageNotFoundError:
        return "source"


def read_entry(kind: str, key: str) -> Arrays | None:
    """The arrays stored under `key`, or None when absent or unreadable."""
    data = read_bytes(kind, key)
    if data is None:
        return None
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as stored:
            return {name: stored[name] for name in stored.files}
    except Exception:  # a damaged file can make zipfile and numpy raise almost anything
        return None


def write_entry(kind: str, key: str, arrays: Arrays) -> None:
    """Store `arrays` under `key` atomically; a cache that cannot be written is skipped."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]  # numpy's stub wants positional arrays too
    write_bytes(kind, key, buffer.getvalue())


_MAGIC = b"gguf-extract cache\n"


def read_bytes(kind: str, key: str) -> bytes | None:
    """What `write_bytes` stored under `key`; None when absent, unreadable, or when its digest
    does not match (a damaged entry is never returned), and when the cache is not safe to use."""
    if unsafe_reason() is not None:
        return None
    try:
        stored = (cache_root() / kind / f"{key}.bin").read_bytes()
    except OSError:
        return None
    head = len(_MAGIC) + 32
    if not stored.startswith(_MAGIC) or hashlib.sha256(stored[head:]).digest() != stored[len(_MAGIC) : head]:
        return None
    return stored[head:]


def write_bytes(kind: str, key: str, data: bytes) -> None:
    """Store `data` under `key` with its digest, atomically (a temporary file renamed into place);
    a cache that cannot be written, or is not safe to use, is skipped."""
    if unsafe_reason() is not None:
        return
    root = cache_root()
    folder = root / kind
    try:
        root.parent.mkdir(parents=True, exist_ok=True)
        root.mkdir(mode=0o700, exist_ok=True)  # private: only this user may add entries
        folder.mkdir(mode=0o700, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{key}.", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(_MAGIC + hashlib.sha256(data).digest() + data)
        os.replace(temporary, folder / f"{key}.bin")
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def file_version_key(path: Path) -> str:
    """What changes whenever the file's contents may have changed: path, size, modification time."""
    resolved = path.resolve()
    status = resolved.stat()
    return f"{resolved}|{status.st_size}|{status.st_mtime_ns}"


def cached_vocabulary(model_path: Path, read: Callable[[], Vocabulary], use_cache: bool = True) -> Vocabulary:
    """The vocabulary of `model_path`: from the cache when an entry for this exact file exists,
    otherwise from `read()` (then stored). `use_cache=False` neither reads nor writes."""
    if not use_cache:
        return read()
    key = entry_key("vocabulary", file_version_key(model_path))
    stored = read_entry("vocabulary", key)
    vocabulary = _vocabulary_from(stored) if stored is not None else None
    if vocabulary is None:
        vocabulary = read()
        write_entry("vocabulary", key, _vocabulary_arrays(vocabulary))
    return vocabulary


def _vocabulary_arrays(vocabulary: Vocabulary) -> Arrays:
    lengths = np.fromiter(map(len, vocabulary.pieces), dtype=np.int32, count=vocabulary.size)
    layout = vocabulary.layout or TokenLayout.of(vocabulary.pieces)
    return {
        "blob": np.frombuffer(b"".join(vocabulary.pieces), dtype=np.uint8),
        "lengths": lengths,
        "eog": np.asarray(vocabulary.eog_ids, dtype=np.int64),
        "fingerprint": np.frombuffer(vocabulary.fingerprint.encode("ascii"), dtype=np.uint8),
        "characters": layout.characters,
        "ascii": layout.ascii,
        "sorted_ids": layout.sorted_ids,
    }


def _vocabulary_from(arrays: Arrays) -> Vocabulary | None:
    try:
        blob, lengths = arrays["blob"].tobytes(), arrays["lengths"].astype(np.int64)
        fingerprint = arrays["fingerprint"].tobytes().decode("ascii")
        eog = tuple(int(i) for i in arrays["eog"])
        layout = TokenLayout(
            arrays["characters"].astype(np.int32), arrays["ascii"].astype(bool), arrays["sorted_ids"].astype(np.int32)
        )
    except (KeyError, UnicodeDecodeError, ValueError):
        return None
    if lengths.ndim != 1 or (lengths < 0).any() or int(lengths.sum()) != len(blob) or not fingerprint:
        return None
    if not layout.fits(len(lengths)):
        return None
    ends = np.cumsum(lengths).tolist()
    starts = [0, *ends[:-1]]
    pieces = tuple(blob[start:end] for start, end in zip(starts, ends, strict=True))
    return Vocabulary(pieces, eog, fingerprint, layout)
