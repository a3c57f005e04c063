"""Reading documents: files or raw bytes to text, with clear errors."""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import BinaryIO

from .errors import DocumentError, DocumentNotFound, DocumentTooLarge, UndecodableDocument

DEFAULT_ENCODING = "utf-8"


def check_encoding(encoding: str) -> str:
    """The codec's canonical name; raises LookupError for a name Python does not know."""
    return codecs.lookup(encoding).name


def read_document(path: Path, encoding: str = DEFAULT_ENCODING, max_bytes: int | None = None) -> str:
    """The text of the file at `path`. Raises DocumentError naming the file.

    With `max_bytes`, no more than that many bytes (and one) are read: a larger file (or an
    endless one, such as a device) raises DocumentTooLarge without being read whole."""
    check_readable(path)
    try:
        with path.open("rb") as stream:
            data = read_limited(stream, str(path), max_bytes)
    except OSError as error:
        raise DocumentError(f"cannot read document {path}: {error.strerror or error}") from None
    return decode_document(data, str(path), encoding)


def check_readable(path: Path) -> None:
    """Raise the DocumentError a read of `path` would for a missing, directory or unopenable
    file, without reading it."""
    if not path.exists():
        raise DocumentNotFound(path)
    if path.is_dir():
        raise DocumentError(f"document is a directory, not a file: {path}")
    try:
        path.open("rb").close()
    except OSError as error:
        raise DocumentError(f"cannot read document {path}: {error.strerror or error}") from None


def read_limited(stream: BinaryIO, source: str, max_bytes: int | None) -> bytes:
    """All of `stream`, or DocumentTooLarge once it holds more than `max_bytes` bytes."""
    if max_bytes is None:
        return stream.read()
    data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise DocumentTooLarge(source, max_bytes, data[:max_bytes])
    return data


def decode_head(head: bytes, source: str, encoding: str = DEFAULT_ENCODING) -> str:
    """The text of a document's first bytes, cut anywhere: a character split at the end is dropped."""
    decoder = codecs.getincrementaldecoder("utf-8-sig" if check_encoding(encoding) == "utf-8" else encoding)()
    try:
        text = decoder.decode(head, final=False)
    except UnicodeError:
        return decode_document(head, source, encoding)  # raises the same error a whole read would
    return decode_document(text.encode("utf-8"), source)


def decode_document(data: bytes, source: str, encoding: str = DEFAULT_ENCODING) -> str:
    """`data` as text: UTF-8 (a byte-order mark is dropped) unless `encoding` names another
    codec. NUL characters mean a binary file, not a document."""
    utf8 = check_encoding(encoding) == "utf-8"
    if utf8 and b"\0" in data:
        raise DocumentError(f"document {source} looks binary (it contains NUL bytes)", hint="pass a text file")
    try:
        text = data.decode("utf-8-sig" if utf8 else encoding)
    except UnicodeDecodeError as error:
        raise UndecodableDocument(source, "UTF-8" if utf8 else encoding, f"invalid byte at offset {error.start}") from None
    except UnicodeError as error:  # codecs such as idna raise the base class, with no offset
        raise UndecodableDocument(source, encoding, str(error)) from None
    if "\0" in text:
        raise DocumentError(f"document {source} looks binary (it contains NUL characters)", hint="pass a text file")
    if not text.strip():
        raise DocumentError(f"document {source} is empty", hint="pass a file with text in it")
    return text
