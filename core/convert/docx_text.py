"""DOCX to text: mammoth turns the Word document into semantic HTML (headings from heading
styles, lists, tables), which then takes the HTML path (html_text).

Chosen over python-docx (see the README's "Document formats"): mammoth is pure Python and
small (python-docx needs lxml), and it keeps headings and list items as such, where a
python-docx walk gives paragraphs without their roles. Images and comments are dropped.
"""

from __future__ import annotations

import io
import zipfile

from ..errors import DocumentError
from .html_text import html_to_text


def docx_to_text(data: bytes, source: str) -> str:
    """The text of the DOCX `data`. Raises DocumentError for a damaged file."""
    import mammoth  # type: ignore[import-untyped]  # no type information; wrapped here

    _check_word_document(data, source)
    try:
        result = mammoth.convert_to_html(io.BytesIO(data))
    except Exception as error:  # mammoth raises whatever its ZIP and XML readers raise
        raise DocumentError(
            f"document {source} is not a readable DOCX file ({type(error).__name__}: {error})",
            hint="open and save it again in a word processor, or export it as PDF",
        ) from None
    return html_to_text(str(result.value), source)


def _check_word_document(data: bytes, source: str) -> None:
    """Refuse a ZIP that holds no Word document (a workbook, a presentation), naming what it holds."""
    try:
        names = set(zipfile.ZipFile(io.BytesIO(data)).namelist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
        raise DocumentError(
            f"document {source} is a damaged ZIP archive (as a DOCX is): {error}",
            hint="open and save it again, or export it as PDF",
        ) from None
    if "word/document.xml" in names:
        return
    kinds = {"xl/workbook.xml": "an Excel workbook (.xlsx)", "ppt/presentation.xml": "a PowerPoint file (.pptx)"}
    what = next((kind for member, kind in kinds.items() if member in names), "a ZIP archive")
    if "[Content_Types].xml" in names and what == "a ZIP archive":
        what = "an Office file without a Word document in it"
    raise DocumentError(f"document {source} is {what}, not a document read here", hint="export it as DOCX, PDF or text")

