"""The conversion itself, in whichever process runs it: core.documents.convert.box runs it in a process
of its own (core.documents.convert.child), held to bounds; nothing else should call it directly."""

from __future__ import annotations

from .sniff import CONVERTED_FORMATS


def convert_here(data: bytes, kind: str, source: str, encoding: str = "utf-8") -> str:
    """The text of `data`, a document in format `kind` (one of CONVERTED_FORMATS), converted
    in this process, unbounded. Raises DocumentError naming `source` when the file cannot be
    read as that format or holds no text."""
    if kind == "pdf":
        from .pdf_text import pdf_to_text

        return pdf_to_text(data, source)
    if kind == "docx":
        from .docx_text import docx_to_text

        return docx_to_text(data, source)
    if kind == "html":
        from .html_text import decode_html, html_to_text

        return html_to_text(decode_html(data, source, encoding), source)
    raise ValueError(f"convert: {kind!r} is not one of {CONVERTED_FORMATS}")
