"""DOCX to text: mammoth turns the Word document into semantic HTML (headings from heading
styles, lists, tables), which then takes the HTML path (html_text).

Chosen over python-docx (see "Why these converters" in docs/documents.md): mammoth is pure Python and
small (python-docx needs lxml), and it keeps headings and list items as such, where a
python-docx walk gives paragraphs without their roles. Images and comments are dropped (an
image is never read). Before anything is inflated, the XML parts' uncompressed sizes, as the
ZIP's directory declares them, are held to DOCX_XML_LIMIT: a megabyte can inflate to gigabytes.
"""

from __future__ import annotations

import io
import zipfile

from ...errors import ConversionStopped, DocumentError
from .html_text import html_to_text
from .limits import DOCX_XML_LIMIT, size_words


def docx_to_text(data: bytes, source: str) -> str:
    """The text of the DOCX `data`. Raises DocumentError for a damaged file."""
    import mammoth  # type: ignore[import-untyped]  # no type information; wrapped here

    _check_word_document(data, source)
    try:
        # An image becomes a bare <img> (its bytes are never read), which the HTML step drops.
        result = mammoth.convert_to_html(io.BytesIO(data), convert_image=mammoth.images.img_element(lambda image: {}))
    except Exception as error:  # mammoth raises whatever its ZIP and XML readers raise
        raise DocumentError(
            f"document {source} is not a readable DOCX file ({type(error).__name__}: {error})",
            hint="open and save it again in a word processor, or export it as PDF",
        ) from None
    return html_to_text(str(result.value), source)


def _check_word_document(data: bytes, source: str) -> None:
    """Refuse a ZIP that holds no Word document (a workbook, a presentation), naming what it
    holds, and one whose XML parts declare more than DOCX_XML_LIMIT bytes uncompressed."""
    try:
        members = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
        raise DocumentError(
            f"document {source} is a damaged ZIP archive (as a DOCX is): {error}",
            hint="open and save it again, or export it as PDF",
        ) from None
    names = {member.filename for member in members}
    if "word/document.xml" in names:
        _check_xml_sizes(members, source)
        return
    kinds = {"xl/workbook.xml": "an Excel workbook (.xlsx)", "ppt/presentation.xml": "a PowerPoint file (.pptx)"}
    what = next((kind for member, kind in kinds.items() if member in names), "a ZIP archive")
    if "[Content_Types].xml" in names and what == "a ZIP archive":
        what = "an Office file without a Word document in it"
    raise DocumentError(f"document {source} is {what}, not a document read here", hint="export it as DOCX, PDF or text")



def _check_xml_sizes(members: list[zipfile.ZipInfo], source: str) -> None:
    """Refuse a DOCX whose XML parts (what mammoth parses: the document, styles, numbering,
    notes, relationships) declare more than DOCX_XML_LIMIT bytes uncompressed, naming the
    largest. zipfile inflates no member past its declared size (it stops there and checks the
    CRC), so the declared sizes bound what is inflated even where they lie."""
    parts = [member for member in members if member.filename.endswith((".xml", ".rels"))]
    total = sum(member.file_size for member in parts)
    if total <= DOCX_XML_LIMIT:
        return
    largest = max(parts, key=lambda member: member.file_size)
    raise ConversionStopped(
        source,
        f"document {source} holds {size_words(total)} of Word XML uncompressed ({largest.filename}:"
        f" {size_words(largest.file_size)}), more than the {size_words(DOCX_XML_LIMIT)} read of a DOCX",
        "split it into smaller documents, or save it as PDF or text and extract from that",
        "docx_xml",
    )
