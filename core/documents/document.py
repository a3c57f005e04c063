"""Reading documents: files, streams or raw bytes to text, with clear errors.

A document's format is told from its first bytes (core.documents.convert.detect_format) unless named;
PDF, HTML and DOCX are converted (core.documents.convert), text and Markdown decoded as they are. The
text returned is the document from then on: offsets into it are what spans refer to."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import BinaryIO

from ..defaults import DEFAULT_ENCODING
from ..errors import DocumentError, DocumentNotFound, DocumentTooLarge
from .convert import TEXT_FORMATS, detect_format
from .convert.box import Converted, convert_in_box, text_limit_error
from .convert.limits import CONVERTED_FILE_LIMIT, ConvertLimits
from .convert.sniff import FORMATS as DOCUMENT_FORMATS  # the formats read_document takes as `kind`
from .convert.sniff import SNIFF_BYTES
from .decoding import decode_document, decode_head

__all__ = ["CONVERTED_FILE_LIMIT", "DEFAULT_ENCODING", "DOCUMENT_FORMATS", "Converting", "read_document", "read_stream"]

# A context a conversion runs in (the caller's: to time it, say); nothing else of reading runs in it.
Converting = Callable[[], AbstractContextManager[object]]


def read_document(
    path: Path,
    encoding: str = DEFAULT_ENCODING,
    max_bytes: int | None = None,
    kind: str | None = None,
    keep_head: bool = False,
    converting: Converting = nullcontext,
) -> str:
    """The text of the file at `path` (see read_stream). Raises DocumentError naming the file."""
    check_readable(path)
    try:
        with path.open("rb") as stream:
            return read_stream(stream, str(path), encoding, max_bytes, kind, keep_head, name=str(path), converting=converting)
    except OSError as error:
        raise DocumentError(f"cannot read document {path}: {error.strerror or error}") from None


def read_stream(
    stream: BinaryIO,
    source: str,
    encoding: str = DEFAULT_ENCODING,
    max_bytes: int | None = None,
    kind: str | None = None,
    keep_head: bool = False,
    name: str | None = None,
    converting: Converting = nullcontext,
) -> str:
    """The text of the document in `stream`, in format `kind` (a name from
    core.documents.convert.FORMATS), or the format its first bytes and `name` tell when None.

    With `max_bytes`, text longer than that many bytes raises DocumentTooLarge, or with
    `keep_head` is cut to its head that fits; text files are read no further (an endless one
    is refused at once), and PDF, DOCX and HTML files no further than CONVERTED_FILE_LIMIT,
    then converted within the bounds of core.documents.convert.limits (ConversionStopped otherwise),
    inside a `converting()` context."""
    first = stream.read(SNIFF_BYTES)
    kind = kind or detect_format(first, name)
    if kind in TEXT_FORMATS:
        try:
            return decode_document(_read_rest(stream, first, source, max_bytes), source, encoding)
        except DocumentTooLarge as error:
            if not keep_head:
                raise
            return decode_head(error.head, source, encoding)
    try:
        data = first + read_limited(stream, source, CONVERTED_FILE_LIMIT - len(first))
    except DocumentTooLarge:
        raise DocumentError(
            f"document {source} is larger than {CONVERTED_FILE_LIMIT} bytes, the most read of a {kind.upper()} file",
            hint="split it into smaller files",
        ) from None
    limits = ConvertLimits()
    with converting():
        converted = convert_in_box(data, kind, source, encoding, limits)
    text = _whole(converted, kind, source, max_bytes, limits)
    return _limit_text(text, source, max_bytes, keep_head)


def _whole(converted: Converted, kind: str, source: str, max_bytes: int | None, limits: ConvertLimits) -> str:
    """The converted text, where it was cut at the conversion's text limit only if `max_bytes`
    would have cut it anyway (its head then serves as well as the whole)."""
    if converted.complete:
        return converted.text
    if max_bytes is None or max_bytes >= limits.text_bytes:
        raise text_limit_error(source, kind, limits)
    return converted.text


def _read_rest(stream: BinaryIO, first: bytes, source: str, max_bytes: int | None) -> bytes:
    """`first` and the rest of `stream`, or DocumentTooLarge once they hold more than `max_bytes`."""
    if max_bytes is None:
        return first + stream.read()
    if len(first) > max_bytes:
        raise DocumentTooLarge(source, max_bytes, first[:max_bytes])
    try:
        return first + read_limited(stream, source, max_bytes - len(first))
    except DocumentTooLarge as error:
        raise DocumentTooLarge(source, max_bytes, first + error.head) from None


def _limit_text(text: str, source: str, max_bytes: int | None, keep_head: bool) -> str:
    """`text`, or its head of at most `max_bytes` bytes (with `keep_head`; otherwise DocumentTooLarge)."""
    encoded = text.encode("utf-8")
    if max_bytes is None or len(encoded) <= max_bytes:
        return text
    if not keep_head:
        raise DocumentTooLarge(source, max_bytes, b"")
    return encoded[:max_bytes].decode("utf-8", "ignore")


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
    """All of `stream`, or DocumentTooLarge (holding the first `max_bytes`) once it holds more
    than `max_bytes` bytes."""
    if max_bytes is None:
        return stream.read()
    data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise DocumentTooLarge(source, max_bytes, data[:max_bytes])
    return data
