"""Hostile documents through `extract text`: the bound each one meets, its wall time, peak memory
and message; chunk planning on text without spaces; the converter process's cost per document.

    python bench/hostile_documents.py                # everything (a few minutes; writes ~10 MB to a temp dir)
    python bench/hostile_documents.py --only html    # the inputs whose name holds "html"

Peak memory is the largest resident set of the command's processes (`/usr/bin/time -v`, which
reports the maximum over a process and the children it waited for), or, without it, the
largest child's as resource.getrusage reports it.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the fixture makers the tests use: tests/document_files.py
from document_files import pdf_inflating_to  # noqa: E402

MIB = 1 << 20
BOMB_TEXT = b"Hello from a large page"  # the PDF bomb's one line of text
WORD = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def html_page(size: int) -> bytes:
    """An ordinary page: paragraphs with links and emphasis, split over lines as editors write it."""
    paragraph = "<p>Paragraph {0} of the page, with a <a href='/x{0}'>link</a> and <b>bold text</b>,\n   over lines.</p>\n"
    return _repeat("<html><body><h1>A long page</h1>\n", paragraph, size, "</body></html>\n")


def html_flat(size: int) -> bytes:
    """Lines of text under one element, split by <br>: every string a sibling of every other."""
    return _repeat("<html><body>", "Line {0} of a flat page,\n  with  spaces <br>\n", size, "</body></html>")


def html_unclosed(size: int) -> bytes:
    """Paragraphs whose end tags are left out, as HTML allows."""
    return _repeat("<html><body>", "<p>Paragraph {0}.\n", size, "</body></html>")


def html_deep(size: int) -> bytes:
    """Blocks nested 250 deep, over and over."""
    block = "<div><span>x</span>" * 250 + "</div>" * 250
    return ("<html><body>" + block * (size // len(block)) + "</body></html>").encode()


def _repeat(head: str, item: str, size: int, tail: str) -> bytes:
    parts, length, number = [head], len(head), 0
    while length < size:
        parts.append(item.format(number))
        length += len(parts[-1])
        number += 1
    return ("".join(parts) + tail).encode()


def docx(write_body: Callable[[Callable[[bytes], object]], None]) -> bytes:
    """A minimal Word document whose body `write_body` writes (streamed, so it may inflate to gigabytes)."""
    path = Path(tempfile.mkstemp(suffix=".docx")[1])
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out:
        out.writestr(
            "[Content_Types].xml",
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/word/document.xml"'
            ' ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
        )
        out.writestr(
            "_rels/.rels",
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1"'
            ' Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"'
            ' Target="word/document.xml"/></Relationships>',
        )
        with out.open("word/document.xml", "w", force_zip64=True) as part:
            part.write(f'<w:document xmlns:w="{WORD}"><w:body>'.encode())
            write_body(part.write)
            part.write(b"</w:body></w:document>")
    data = path.read_bytes()
    path.unlink()
    return data


def docx_bomb(size: int) -> bytes:
    """One paragraph of `size` bytes of text."""

    def body(write: Callable[[bytes], object]) -> None:
        write(b"<w:p><w:r><w:t>")
        for _ in range(size // MIB):
            write(b"a " * (MIB // 2))
        write(b"</w:t></w:r></w:p>")

    return docx(body)


def docx_tiny(paragraphs: int) -> bytes:
    """`paragraphs` paragraphs of one letter each."""

    def body(write: Callable[[bytes], object]) -> None:
        block = b"<w:p><w:r><w:t>x</w:t></w:r></w:p>" * 10_000
        for _ in range(paragraphs // 10_000):
            write(block)

    return docx(body)


INPUTS: list[tuple[str, str, Callable[[], bytes]]] = [
    ("html-5mb.html", "an ordinary 5 MB page", lambda: html_page(5 * 10**6)),
    ("html-flat-5mb.html", "5 MB of lines under one element", lambda: html_flat(5 * 10**6)),
    ("html-unclosed-500.html", "500 unclosed <p>", lambda: html_unclosed(8_000)),
    ("html-unclosed-5mb.html", "5 MB of unclosed <p>", lambda: html_unclosed(5 * 10**6)),
    ("html-deep-5mb.html", "5 MB of blocks nested 250 deep", lambda: html_deep(5 * 10**6)),
    ("docx-bomb-1gib.docx", "DOCX, document.xml inflating to 1 GiB", lambda: docx_bomb(1024 * MIB)),
    ("docx-6m-paragraphs.docx", "DOCX of 6 M one-letter paragraphs", lambda: docx_tiny(6_000_000)),
    ("docx-1m-paragraphs.docx", "DOCX of 1 M one-letter paragraphs", lambda: docx_tiny(1_000_000)),
    ("pdf-bomb-1.5gb.pdf", "PDF, content stream inflating to 1.5 GB", lambda: pdf_inflating_to(1500 * 10**6, BOMB_TEXT)),
]


def run_text(path: Path) -> dict[str, object]:
    """`extract text PATH`: wall time, peak memory, exit code, bytes of text, first error line."""
    command = [sys.executable, "-m", "gguf_extract", "text", str(path)]
    timer = Path("/usr/bin/time").exists()
    started = time.perf_counter()
    result = subprocess.run((["/usr/bin/time", "-v"] if timer else []) + command, capture_output=True, check=False)
    wall = time.perf_counter() - started
    stderr = result.stderr.decode("utf-8", "replace")
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr)
    peak_kib = int(peak.group(1)) if peak else resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    said = next((line for line in stderr.splitlines() if line.startswith("error:")), "")
    return {
        "wall_s": round(wall, 2),
        "peak_mib": round(peak_kib / 1024),
        "exit": result.returncode,
        "text_bytes": len(result.stdout),
        "message": said,
    }


def plan_without_spaces(size: int, ctx: int | None) -> str:
    """Chunk planning (core.extract.chunked.plan_pieces) of `size` characters without spaces, with the bundled model."""
    from gguf_extract.core.decode.types import SamplingSettings
    from gguf_extract.core.extract.chunked import plan_pieces
    from gguf_extract.core.extract.extractor import Extractor, ModelOptions

    extractor = Extractor.open(options=ModelOptions(n_ctx=ctx))
    compiled = extractor.compile(json.loads((ROOT / "schemas" / "person.json").read_text()))
    document = "x" * size
    started = time.perf_counter()
    pieces = plan_pieces(extractor, compiled, document, SamplingSettings(max_tokens=256), None)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    seconds = time.perf_counter() - started
    where = f"context {ctx or 'default'}"
    return f"{size} characters without spaces, {where}: {len(pieces)} pieces in {seconds:.2f} s (peak {peak} MiB)"


def converter_cost() -> list[str]:
    """Median time to convert the samples in this process and in the converter's own process."""
    from gguf_extract.core.documents.convert.box import convert_in_box
    from gguf_extract.core.documents.convert.dispatch import convert_here

    lines = []
    for name, kind in (("invoice.pdf", "pdf"), ("lovelace.html", "html")):
        data = (ROOT / "samples" / name).read_bytes()
        convert_here(data, kind, name)  # the libraries imported once, as in a long run
        for how, convert in (("in this process", convert_here), ("in its own process", lambda *a: convert_in_box(*a).text)):
            times = []
            for _ in range(10):
                started = time.perf_counter()
                convert(data, kind, name)
                times.append(time.perf_counter() - started)
            lines.append(f"{name} ({len(data)} bytes) {how}: median {statistics.median(times) * 1000:.1f} ms of 10")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="run only the inputs whose file name holds this")
    parser.add_argument("--keep", type=Path, help="write the inputs here and keep them")
    options = parser.parse_args()
    folder = options.keep or Path(tempfile.mkdtemp())
    folder.mkdir(parents=True, exist_ok=True)
    for name, what, make in INPUTS:
        if options.only not in name:
            continue
        path = folder / name
        if not path.exists():
            path.write_bytes(make())
        row = run_text(path)
        print(f"{what} ({path.stat().st_size / MIB:.2f} MiB file): {json.dumps(row)}", flush=True)
    if options.only in "planning":
        for size, ctx in ((100_000, 1024), (300_000, 1024), (300_000, None)):
            print(plan_without_spaces(size, ctx), flush=True)
    if options.only in "cost":
        print("\n".join(converter_cost()))
    if options.keep is None:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
