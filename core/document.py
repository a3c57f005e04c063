"""Reading documents: files or raw bytes to text, with clear errors."""

from __future__ import annotations

from pathlib import Path

from .errors import DocumentError


def read_document(path: Path) -> str:
    """The UTF-8 text of the file at `path`. Raises DocumentError naming the file."""
    if not path.exists():
        raise DocumentError(f"document not found: {path}", hint="check the path, or pass - to read stdin")
    if path.is_dir():
        raise DocumentError(f"document is a directory, not a file: {path}")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise DocumentError(f"cannot read document {path}: {error.strerror}") from None
    return decode_document(data, str(path))


def decode_document(data: bytes, source: str) -> str:
    if b"\0" in data:
        raise DocumentError(f"document {source} looks binary (it contains NUL bytes)", hint="pass a text file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise DocumentError(
            f"document {source} is not UTF-8 text (invalid byte at offset {error.start})",
            hint="convert it to UTF-8, e.g. with iconv",
        ) from None
    if not text.strip():
        raise DocumentError(f"document {source} is empty", hint="pass a file with text in it")
    return text
