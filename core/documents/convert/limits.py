"""Every bound on reading a PDF, DOCX or HTML file, in one place (docs/documents.md
lists them, with what happens when one is hit).

Such a file is untrusted input to large parsers (PDFium is C++): a few megabytes can inflate to
gigabytes, nest without end, or crash the parser. Each is therefore converted in a process of
its own (core.documents.convert.box) held to the bounds below, as a browser runs its PDF viewer; a bound
hit there is a ConversionStopped error naming the document and the bound, never a crash here.
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024

# The most bytes of a PDF, DOCX or HTML file read (its text can be far larger than the file).
CONVERTED_FILE_LIMIT = 256 * MIB
# The most bytes of text a conversion gives: as much as `--chunk` reads (core.extract.chunked), far
# more than a context holds.
TEXT_LIMIT = 64 * MIB
# The converter's address space (RLIMIT_AS). PDFium, mammoth's XML tree and Beautiful Soup's
# tree take 10 to 70 times the size of what they parse; this leaves room for a 256 MiB PDF and for
# HTML or Word text of tens of megabytes.
MEMORY_LIMIT = 2048 * MIB
# CPU seconds the converter may use (RLIMIT_CPU), and wall-clock seconds before it is killed
# whatever it is doing (on a busy machine a conversion waits for a core).
CPU_LIMIT_S = 120
WALL_LIMIT_S = 300
# The most uncompressed bytes of a DOCX's XML parts (declared in the ZIP's directory; zipfile
# inflates no member past its declared size, so a file that lies about it fails its CRC check).
DOCX_XML_LIMIT = 64 * MIB
# The deepest HTML nesting kept (html_tree); Chromium keeps 512. markdownify recurses about three
# Python frames a level: 256 levels stay within Python's default recursion limit of 1,000.
HTML_MAX_DEPTH = 256


@dataclass(frozen=True)
class ConvertLimits:
    """The bounds one conversion runs under; the defaults are the constants above."""

    memory_bytes: int = MEMORY_LIMIT
    cpu_seconds: int = CPU_LIMIT_S
    wall_seconds: float = WALL_LIMIT_S
    text_bytes: int = TEXT_LIMIT


def size_words(count: int) -> str:
    """`count` bytes in the words a message uses: "64 MiB", "2 GiB", "194.6 MiB", "512 bytes"."""
    for unit, size in (("GiB", 1024 * MIB), ("MiB", MIB), ("KiB", 1024)):
        if count >= size:
            return f"{count / size:.1f}".removesuffix(".0") + f" {unit}"
    return f"{count} bytes"
