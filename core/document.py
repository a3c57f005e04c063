"""Reading documents: files or raw bytes to text, with clear errors."""

from __future__ import annotations

import codecs
from pathlib import Path

from .errors import DocumentError

DEFAULT_ENCODING = "utf-8"


def check_encoding(encoding: str) -> str:
    """The codec's canonical name; raises LookupError for a name Python does not know."""
    return codecs.lookup(encoding).name


def read_document(path: Path, encoding: str = DEFAULT_ENCODING) -> str:
    """The text of the file at `path`. Raises DocumentError naming the file."""
    if not path.exists():
        raise DocumentError(f"document not found: {path}", hint="check the path, or pass - to read stdin")
    if path.is_dir():
        raise DocumentError(f"document is a directory, not a file: {path}")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise DocumentError(f"cannot read document {path}: {error.strerror or error}") from None
    return decode_document(data, str(path), encoding)


def decode_document(data: bytes, source: str, encoding: str = DEFAULT_ENCODING) -> str:
    """`data` as text: UTF-8 (a byte-order mark is dropped) unless `encoding` names another
    codec. NUL characters mean a binary file, not a document."""
    utf8 = check_encoding(encoding) == "utf-8"
    if utf8 and b"\0" in data:
        raise DocumentError(f"document {source} looks binary (it contains NUL bytes)", hint="pass a text file")
    try:
        text = data.decode("utf-8-sig" if utf8 else encoding)
    except UnicodeDecodeError as error:
        raise DocumentError(
            f"document {source} is not {'UTF-8' if utf8 else encoding} text (invalid byte at offset {error.start})",
            hint="pass --encoding with the file's encoding (e.g. --encoding latin-1), or convert it to UTF-8",
        ) from None
    if "\0" in text:
        raise DocumentError(f"document {source} looks binary (it contains NUL characters)", hint="pass a text file")
    if not text.strip():
        raise DocumentError(f"document {source} is empty", hint="pass a file with text in it")
    return text
