"""Bytes read as a document's text: the encoding named checked, the text decoded or refused
(a binary file, an empty one, a byte the encoding cannot read), the same for a file read whole,
a stream, or a converter's page (core.documents.convert.html_text)."""

from __future__ import annotations

import codecs

from ..defaults import DEFAULT_ENCODING
from ..errors import DocumentError, UndecodableDocument


def check_encoding(encoding: str) -> str:
    """The codec's canonical name; raises LookupError for a name Python does not know."""
    return codecs.lookup(encoding).name


def is_text_encoding(name: str) -> bool:
    """Whether bytes.decode accepts the codec: rot13, hex, base64 and the like are codecs
    but not text encodings, and decoding with them raises LookupError (only for non-empty data)."""
    try:
        b"x".decode(name, "ignore")
    except LookupError:
        return False
    except (UnicodeError, ValueError):
        pass
    return True



def decode_document(data: bytes, source: str, encoding: str = DEFAULT_ENCODING) -> str:
    """`data` as text: UTF-8 (a byte-order mark is dropped) unless `encoding` names another
    codec. NUL characters mean a binary file, not a document."""
    utf8 = check_encoding(encoding) == "utf-8"
    if utf8 and b"\0" in data:
        raise DocumentError(
            f"document {source} looks binary (it contains NUL bytes) and is neither PDF nor DOCX: its format cannot be told",
            hint="pass a PDF, DOCX, HTML, Markdown or text file (or name the text's encoding, if it is UTF-16 or UTF-32)",
        )
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


def decode_head(head: bytes, source: str, encoding: str = DEFAULT_ENCODING) -> str:
    """The text of a document's first bytes, cut anywhere: a character split at the end is dropped."""
    decoder = codecs.getincrementaldecoder("utf-8-sig" if check_encoding(encoding) == "utf-8" else encoding)()
    try:
        text = decoder.decode(head, final=False)
    except UnicodeError:
        return decode_document(head, source, encoding)  # raises the same error a whole read would
    return decode_document(text.encode("utf-8"), source)
