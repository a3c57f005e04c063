"""Which format a document is in: told by its first bytes, with the file name as a hint.

Signatures that settle the question (a PDF header, a ZIP holding word/document.xml) win over
the name: a PDF saved as invoice.txt is read as a PDF. Text has no signature, so for text the
name decides between plain text, Markdown and HTML, and without a name the start of the text
is matched against the HTML signatures a browser sniffs (WHATWG MIME Sniffing, "text/html").
Binary files of formats not read here are refused by name, with what to do instead.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from ...errors import DocumentError

TEXT_FORMATS = ("text", "markdown")
CONVERTED_FORMATS = ("pdf", "html", "docx")
FORMATS = ("text", "markdown", "html", "pdf", "docx")

SNIFF_BYTES = 1024  # a PDF header may follow up to 1,024 bytes of junk (PDF 32000-1, annex H.3)

_SUFFIXES = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".pdf": "pdf",
    ".docx": "docx",
}

# Binary formats that are not read, each with its signature and what to do with such a file.
_UNSUPPORTED: tuple[tuple[bytes, str, str], ...] = (
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "a legacy Office file (.doc, .xls, .ppt)", "save it as DOCX or PDF"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image", "OCR it first"),
    (b"\xff\xd8\xff", "a JPEG image", "OCR it first"),
    (b"GIF8", "a GIF image", "OCR it first"),
    (b"II*\x00", "a TIFF image", "OCR it first"),
    (b"MM\x00*", "a TIFF image", "OCR it first"),
    (b"\x1f\x8b", "a gzip archive", "decompress it first"),
    (b"{\\rtf", "an RTF document", "save it as DOCX, PDF or plain text"),
)

# WHATWG MIME Sniffing's HTML patterns: one of these tags (any case) after leading
# whitespace, followed by a space or '>'.
_HTML_START = re.compile(
    rb"[\t\n\x0c\r ]*<(?:!doctype html|html|head|script|iframe|h1|div|font|table|a|style|title|b|body|br|p|!--)[ >]",
    re.IGNORECASE,
)
_SIGNATURES = {"pdf": "%PDF-", "docx": "ZIP"}


def detect_format(data: bytes, name: str | None = None) -> str:
    """The format of a document whose content starts with `data` (its first SNIFF_BYTES are
    enough), named `name` (None for stdin): one of FORMATS. Any ZIP archive is taken for a DOCX
    here; reading it tells a Word document from other archives. Raises DocumentError for a
    binary format that is not read, naming it."""
    head = data[:SNIFF_BYTES]
    if b"%PDF-" in head:
        return "pdf"
    if head.startswith(b"PK\x03\x04"):
        return "docx"
    for signature, what, todo in _UNSUPPORTED:
        if head.startswith(signature):
            raise DocumentError(f"document {name or '<stdin>'} is {what}, not a document read here", hint=f"{todo}")
    hinted = format_of_name(name) if name else None
    if hinted in CONVERTED_FORMATS and hinted != "html":
        raise DocumentError(
            f"document {name} is named as {hinted.upper()} but is not one (no {_SIGNATURES[hinted]} signature at its start)",
            hint="check the file (it may be damaged or cut short), or name the format it is in",
        )
    if hinted is not None:
        return hinted
    return "html" if _HTML_START.match(head.removeprefix(b"\xef\xbb\xbf")) else "text"


def format_of_name(name: str) -> str | None:
    """The format a file name's suffix suggests, if any."""
    return _SUFFIXES.get(PurePath(name).suffix.lower())

