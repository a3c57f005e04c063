"""PDF to text through pypdfium2, the Python binding of PDFium (the PDF engine of Chrome).

Chosen over pypdf and pdfminer.six (see "Why these converters" in docs/documents.md): PDFium writes each
table row on one line with its cells in order, opens files encrypted only against copying or
printing (AES included) with no extra package, and reads damaged files as a browser would.
Pages are separated by a blank line. A PDF that opens but holds no text is a scan (or images
of text): it needs OCR, which is not done here.
"""

from __future__ import annotations

import re
from typing import Any

from ...errors import DocumentError

_PASSWORD_ERROR = 4  # FPDF_ERR_PASSWORD: the file needs a password to open
# Controls PDFium leaves in page text: \x02 for a hyphen at a line break, \x00 and other C0
# characters from broken font maps. Tab and newline stay.
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe]")


def pdf_to_text(data: bytes, source: str) -> str:
    """The text of every page of the PDF `data`, in page order. Raises DocumentError for a
    damaged or password-protected file, and for one with no text layer."""
    document = _open(data, source)
    try:
        pages = [_page_text(document, index) for index in range(len(document))]
    finally:
        document.close()
    text = "\n\n".join(page for page in pages if page)
    if not text.strip():
        raise DocumentError(
            f"document {source} has no text layer ({len(pages)} page{'s' if len(pages) != 1 else ''} of images,"
            " as a scanned PDF is): OCR it first",
            hint="run it through OCR (for instance ocrmypdf in.pdf out.pdf) and extract from the result",
        )
    return text


def _open(data: bytes, source: str) -> Any:
    import pypdfium2  # type: ignore[import-untyped]  # no type information; wrapped here

    try:
        return pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError as error:
        if getattr(error, "err_code", None) == _PASSWORD_ERROR:
            raise DocumentError(
                f"document {source} is an encrypted PDF that needs a password to open",
                hint="open it with its password and save a copy without one (qpdf can decrypt it too)",
            ) from None
        raise DocumentError(
            f"document {source} is not a readable PDF ({error})", hint="check the file: it may be damaged or cut short"
        ) from None


def _page_text(document: Any, index: int) -> str:
    page = document[index]
    textpage = page.get_textpage()
    try:
        raw: str = textpage.get_text_range()
    finally:
        textpage.close()
        page.close()
    lines = _CONTROLS.sub("", raw.replace("\r\n", "\n").replace("\r", "\n")).split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")
