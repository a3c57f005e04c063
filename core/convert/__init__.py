"""Documents in other formats turned into the text the model reads.

    kind = detect_format(data, "invoice.pdf")    # "pdf": told by content, the name a hint
    text = convert(data, kind, "invoice.pdf")    # its text, tables one row to a line

The converted text is THE document from then on: the prompt holds it, and every character
offset (spans, pieces of a long document) counts in it. Plain text and Markdown pass through
unchanged; PDF, HTML and DOCX go through a converter library, imported only when a document of
that format is read, so a run over text files never loads them. This package decodes nothing
and reads no files: core.document does that and calls it.
"""

from __future__ import annotations

from .sniff import CONVERTED_FORMATS, FORMATS, TEXT_FORMATS, detect_format

__all__ = ["CONVERTED_FORMATS", "FORMATS", "TEXT_FORMATS", "convert", "detect_format"]


def convert(data: bytes, kind: str, source: str, encoding: str = "utf-8") -> str:
    """The text of `data`, a document in format `kind` (one of CONVERTED_FORMATS): lines end in
    \\n, paragraphs are separated by a blank line. Raises DocumentError naming `source` when
    the file cannot be read as that format or holds no text."""
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
