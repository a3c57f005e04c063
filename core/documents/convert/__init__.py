"""Documents in other formats turned into the text the model reads.

    kind = detect_format(data, "invoice.pdf")    # "pdf": told by content, the name a hint
    text = convert(data, kind, "invoice.pdf")    # its text, tables one row to a line

The converted text is THE document from then on: the prompt holds it, and every character
offset (spans, pieces of a long document) counts in it. Plain text and Markdown pass through
unchanged; PDF, HTML and DOCX go through a converter library, in a process of its own held to
bounds (core.documents.convert.box, core.documents.convert.limits): such a file is untrusted input to large
parsers. This package reads no files: core.documents.document does that and calls it.

May import: the base modules and core.documents.decoding; core.documents.document imports it.
"""

from __future__ import annotations

from .box import convert_in_box, text_limit_error
from .limits import ConvertLimits
from .sniff import CONVERTED_FORMATS, FORMATS, TEXT_FORMATS, detect_format

__all__ = ["CONVERTED_FORMATS", "FORMATS", "TEXT_FORMATS", "ConvertLimits", "convert", "detect_format"]


def convert(data: bytes, kind: str, source: str, encoding: str = "utf-8", limits: ConvertLimits | None = None) -> str:
    """The text of `data`, a document in format `kind` (one of CONVERTED_FORMATS): lines end in
    \\n, paragraphs are separated by a blank line. Converted in a process of its own, held to
    `limits` (core.documents.convert.limits; a process start, 60 to 200 ms, is the cost).
    Raises DocumentError naming `source` when the file cannot be read as that format or holds
    no text, ConversionStopped when a bound stops the conversion or the converter crashes."""
    limits = limits or ConvertLimits()
    converted = convert_in_box(data, kind, source, encoding, limits)
    if not converted.complete:
        raise text_limit_error(source, kind, limits)
    return converted.text
