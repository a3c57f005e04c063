"""Reading PDF, DOCX and HTML (untrusted input) is bounded: each file is converted in a process of
its own held to limits of memory, CPU time, wall time and text, and every way that process ends
is a DocumentError naming the document and the bound; HTML is converted in one linear pass
(end tags a page leaves out implied, nesting capped); a DOCX's XML sizes are checked before
anything is inflated. No model, except for the batch at the end."""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from bs4.element import PageElement, Tag
from document_files import PAGE, pdf_inflating_to, report_docx

from gguf_extract.core.documents.convert import ConvertLimits, box, child, convert, dispatch
from gguf_extract.core.documents.convert.html_text import html_to_text
from gguf_extract.core.documents.convert.limits import DOCX_XML_LIMIT, size_words
from gguf_extract.core.documents.document import read_stream
from gguf_extract.core.errors import ConversionStopped, DocumentError

UNCLOSED = "<html><body>" + "".join(f"<p>Paragraph {i}.\n" for i in range(500)) + "</body></html>"


def run_text(*args: str) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-m", "gguf_extract", "text", *args]
    return subprocess.run(command, capture_output=True, timeout=300, check=False)


def docx_with_text_of(size: int) -> bytes:
    """A DOCX whose word/document.xml holds one paragraph of `size` bytes of text (it compresses
    about a thousandfold, as a DOCX bomb does)."""
    base = zipfile.ZipFile(io.BytesIO(report_docx()))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as out:
        for info in base.infolist():
            if info.filename != "word/document.xml":
                out.writestr(info, base.read(info))
        with out.open("word/document.xml", "w") as part:
            part.write(b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">')
            part.write(b"<w:body><w:p><w:r><w:t>")
            for _ in range(size // (1 << 20)):
                part.write(b"a " * (1 << 19))
            part.write(b"</w:t></w:r></w:p></w:body></w:document>")
    return buffer.getvalue()


# -- HTML: one linear pass, as a browser parses ------------------------------------------------


@pytest.mark.parametrize(
    ("page", "closed"),
    [
        ("<ul><li>one<li>two<li>three</ul><p>after", "<ul><li>one</li><li>two</li><li>three</li></ul><p>after</p>"),
        (
            "<ol><li>one<li>two<ul><li>inner</ul><li>three</ol>",
            "<ol><li>one</li><li>two<ul><li>inner</li></ul></li><li>three</li></ol>",
        ),
        ("<dl><dt>term<dd>meaning<dt>other<dd>more</dl>", "<dl><dt>term</dt><dd>meaning</dd><dt>other</dt><dd>more</dd></dl>"),
        (
            "<table><tr><th>a<th>b<tr><td>1<td>2<tr><td>3<td>4</table>",
            "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr><tr><td>3</td><td>4</td></tr></table>",
        ),
        ("<h1>Title<h2>Section</h2><p>text<div>block</div>", "<h1>Title</h1><h2>Section</h2><p>text</p><div>block</div>"),
    ],
)
def test_end_tags_a_page_leaves_out_are_implied_as_a_browser_implies_them(page: str, closed: str) -> None:
    assert html_to_text(page, "page.html") == html_to_text(closed, "closed.html")


def test_five_hundred_unclosed_paragraphs_are_five_hundred_paragraphs() -> None:
    assert html_to_text(UNCLOSED, "unclosed.html") == "\n\n".join(f"Paragraph {i}." for i in range(500))
    items = "<ul>" + "".join(f"<li>Item {i}\n" for i in range(2000)) + "</ul>"
    assert html_to_text(items, "items.html") == "\n".join(f"* Item {i}" for i in range(2000))


def test_nesting_deeper_than_the_cap_keeps_all_its_text_in_order() -> None:
    page = "<div>" * 5000 + "deep text" + "</div>" * 5000 + "<p>after</p>"
    assert html_to_text(page, "deep.html") == "deep text\n\nafter"
    spans = "".join(f"<span>{i} " for i in range(3000))
    assert html_to_text(spans, "spans.html").split() == [str(i) for i in range(3000)]


def test_html_conversion_never_searches_siblings_or_ancestors(monkeypatch: pytest.MonkeyPatch) -> None:
    """A search among an element's siblings (to remove or replace it, or to number a list item)
    or up to the root (to see whether it is in a <pre>), made for every element, is what made
    conversion quadratic in a page's size."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a search among siblings or ancestors")

    siblings = PageElement.find_previous_siblings

    def earlier_siblings(element: PageElement, name: object = None, *args: object, **kwargs: object) -> object:
        if name == "li":  # counting the items before this one (the previous sibling alone is cheap)
            refuse()
        return siblings(element, name, *args, **kwargs)  # type: ignore[arg-type]

    def ancestors(element: PageElement, *args: object, **kwargs: object) -> None:
        if element.parent is not None:  # the root has none to walk
            refuse()

    monkeypatch.setattr(Tag, "index", refuse)
    monkeypatch.setattr(PageElement, "find_previous_siblings", earlier_siblings)
    monkeypatch.setattr(PageElement, "find_parent", ancestors)
    page = PAGE + "<ol>" + "".join(f"<li>item  {i}\n</li><li hidden>gone</li>" for i in range(50)) + "</ol><pre>a  b</pre>"
    text = html_to_text(page, "page.html")
    assert "1. item 0\n2. item 1\n" in text and "50. item 49" in text and "gone" not in text
    assert "```\na  b\n```" in text and "# Ada Lovelace" in text


def test_extract_text_reads_a_page_of_unclosed_paragraphs(tmp_path: Path) -> None:
    page = tmp_path / "unclosed.html"
    page.write_text(UNCLOSED)
    result = run_text(str(page))
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout.decode() == "\n\n".join(f"Paragraph {i}." for i in range(500)) + "\n"


# -- DOCX: sizes checked before anything is inflated ------------------------------------------


def test_a_docx_bomb_is_refused_before_it_is_inflated(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.docx"
    bomb.write_bytes(docx_with_text_of(DOCX_XML_LIMIT + (1 << 20)))
    assert bomb.stat().st_size < DOCX_XML_LIMIT // 100
    parts = [part for part in zipfile.ZipFile(bomb).infolist() if part.filename.endswith((".xml", ".rels"))]
    total = size_words(sum(part.file_size for part in parts))
    result = run_text(str(bomb))
    assert (result.returncode, result.stdout) == (5, b"")
    assert result.stderr.decode().splitlines() == [
        f"error: document {bomb} holds {total} of Word XML uncompressed (word/document.xml: 65 MiB),"
        " more than the 64 MiB read of a DOCX",
        "hint: split it into smaller documents, or save it as PDF or text and extract from that",
    ]


def test_a_docx_that_understates_a_size_is_not_inflated_past_it() -> None:
    """zipfile stops inflating a member at its declared size and checks its CRC, which is what
    makes the declared sizes a bound (this guards that behaviour of the standard library)."""
    data = bytearray(docx_with_text_of(8 << 20))
    entry = 0
    while data[entry + 46 : entry + 46 + struct.unpack_from("<H", data, entry + 28)[0]] != b"word/document.xml":
        entry = data.index(b"PK\x01\x02", entry + 4)  # the next entry of the ZIP's directory
    struct.pack_into("<I", data, entry + 24, 1000)  # its uncompressed size: 1000 bytes, not 8 MiB
    with pytest.raises(DocumentError, match=r"is not a readable DOCX file \(BadZipFile: Bad CRC-32"):
        convert(bytes(data), "docx", "liar.docx")


# -- the box: every way the converter's process ends -------------------------------------------


def test_a_conversion_past_its_memory_limit_is_refused_naming_it() -> None:
    page = ("<html><body>" + "".join(f"<p>Paragraph {i} of a long page.</p>" for i in range(400_000))).encode()
    with pytest.raises(ConversionStopped) as raised:
        convert(page, "html", "big.html", limits=ConvertLimits(memory_bytes=64 << 20))
    assert raised.value.limit == "memory"
    assert raised.value.message == (
        "document big.html needs more than 64 MiB of memory to convert from HTML, the most a conversion may use"
    )
    assert "split it" in raised.value.hint


def test_a_pdf_whose_content_inflates_past_the_memory_limit_is_a_document_error() -> None:
    with pytest.raises(ConversionStopped) as raised:  # PDFium aborts (SIGABRT here) when memory runs out
        convert(pdf_inflating_to(256 << 20), "pdf", "bomb.pdf", limits=ConvertLimits(memory_bytes=64 << 20))
    assert raised.value.message.startswith("the PDF converter crashed on document bomb.pdf (")
    assert "needs more than the 64 MiB of memory a conversion may use" in raised.value.message
    assert convert(pdf_inflating_to(1 << 20), "pdf", "small.pdf") == "Hello"  # the same, small, is read


def converter_running(monkeypatch: pytest.MonkeyPatch, program: str) -> None:
    """Run `program` (Python, given the request as its last argument) as the converter."""
    monkeypatch.setattr(box, "CHILD_COMMAND", [sys.executable, "-c", program])


def test_a_conversion_past_its_cpu_time_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    spin = "import json, sys\nfrom gguf_extract.core.documents.convert.child import limit_resources\n"
    spin += "limit_resources(json.loads(sys.argv[-1])['limits'])\nwhile True: pass"
    converter_running(monkeypatch, spin)
    with pytest.raises(ConversionStopped) as raised:
        convert(b"%PDF-1.4", "pdf", "slow.pdf", limits=ConvertLimits(cpu_seconds=1))
    assert raised.value.limit == "cpu"
    assert raised.value.message == (
        "document slow.pdf takes more than 1 s of CPU time to convert from PDF, the most a conversion may take"
    )


def test_a_conversion_past_its_wall_time_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    converter_running(monkeypatch, "import time; time.sleep(600)")
    with pytest.raises(ConversionStopped) as raised:
        convert(b"<p>x", "html", "stuck.html", limits=ConvertLimits(wall_seconds=1))
    assert raised.value.limit == "time"
    assert raised.value.message == "document stuck.html was not converted from HTML within 1 s, the most a conversion may take"


def test_a_crashed_converter_is_a_document_error_with_its_last_words(monkeypatch: pytest.MonkeyPatch) -> None:
    last_words = "print('out of memory in the parser', file=sys.stderr, flush=True)"
    converter_running(monkeypatch, f"import os, sys; {last_words}; os.abort()")
    with pytest.raises(ConversionStopped) as raised:
        convert(b"PK\x03\x04", "docx", "crash.docx")
    assert raised.value.limit is None
    assert raised.value.message.startswith(
        "the DOCX converter crashed on document crash.docx (SIGABRT: out of memory in the parser), as it does when"
    )


def ended(pid: int) -> bool:
    """Whether process `pid` has ended (a zombie no reaper has collected yet counts)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def wait_for(condition: Callable[[], bool], seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_the_converter_ends_with_the_process_that_started_it(tmp_path: Path) -> None:
    """A parent killed (or ended by SIGTERM) mid-conversion leaves no converter running on."""
    pid_file = tmp_path / "converter.pid"
    converter = "import json, os, sys, time\nfrom gguf_extract.core.documents.convert.child import die_with_parent\n"
    converter += f"die_with_parent(json.loads(sys.argv[-1])['parent'])\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
    converter += "time.sleep(600)"
    parent = "import sys\nfrom gguf_extract.core.documents.convert import box, convert\n"
    parent += f"box.CHILD_COMMAND = [sys.executable, '-c', {converter!r}]\nconvert(b'<p>x', 'html', 'x.html')"
    started = subprocess.Popen([sys.executable, "-c", parent])
    try:
        assert wait_for(lambda: pid_file.exists() and pid_file.read_text() != "")
    finally:
        started.kill()
        started.wait()
    assert wait_for(lambda: ended(int(pid_file.read_text())))


def test_text_past_the_limit_is_refused_unless_its_head_is_all_that_is_kept() -> None:
    with pytest.raises(ConversionStopped, match="converts from HTML to more than 100 bytes of text, the most a conversion gives"):
        convert(PAGE.encode(), "html", "page.html", limits=ConvertLimits(text_bytes=100))
    converted = box.convert_in_box(PAGE.encode(), "html", "page.html", limits=ConvertLimits(text_bytes=100))
    assert not converted.complete and converted.text == html_to_text(PAGE, "page.html").encode()[:100].decode()


@pytest.mark.parametrize(("raised", "outcome"), [(MemoryError, {"stopped": "memory"}), (RecursionError, {"stopped": "depth"})])
def test_python_running_out_in_the_converter_is_reported_as_the_bound(
    monkeypatch: pytest.MonkeyPatch, raised: type[Exception], outcome: dict[str, str]
) -> None:
    def fail(*args: object) -> str:
        raise raised

    monkeypatch.setattr(dispatch, "convert_here", fail)
    assert child.convert_reporting(b"x", "html", "x.html", "utf-8", 100) == (outcome, b"")


def test_a_refusal_inside_the_converter_keeps_its_class_and_words() -> None:
    with pytest.raises(DocumentError, match="is HTML with no readable text") as raised:
        read_stream(io.BytesIO(b"<html><script>x()</script></html>"), "empty.html", name="empty.html")
    assert type(raised.value) is DocumentError and raised.value.hint == "check that the page has content"


# -- a batch goes on ---------------------------------------------------------------------------


@pytest.mark.model
def test_a_batch_goes_on_past_documents_the_converters_refused(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    name = {"type": "string", "maxLength": 24}
    schema.write_text(json.dumps({"type": "object", "properties": {"name": name}, "required": ["name"]}))
    (tmp_path / "a.txt").write_text("Ada Lovelace wrote the first program.")
    (tmp_path / "b.html").write_text("<p>Grace Hopper wrote a compiler.\n" + UNCLOSED)
    (tmp_path / "c.docx").write_bytes(docx_with_text_of(DOCX_XML_LIMIT + (1 << 20)))
    (tmp_path / "d.txt").write_text("Alan Turing wrote about machines.")
    environment = {**os.environ, "EXTRACT_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "gguf_extract", "--schema", str(schema), "--max-tokens", "30"]
    command += [str(tmp_path / name) for name in ("a.txt", "b.html", "c.docx", "d.txt")]
    result = subprocess.run(command, capture_output=True, env=environment, timeout=600, check=False)
    assert result.returncode == 5, result.stderr.decode()
    records = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert ["data" in record for record in records] == [True, True, False, True]
    assert records[2]["error"]["type"] == "ConversionStopped"
    assert "more than the 64 MiB read of a DOCX" in records[2]["error"]["message"]
    assert "4 documents: 3 extracted, 1 failed" in result.stderr.decode() and "Traceback" not in result.stderr.decode()


@pytest.mark.parametrize("start", ["½", "²", "9" * 5000, "-3", ""])
def test_an_ordered_list_start_that_is_no_plain_number_counts_from_one(start: str) -> None:
    page = f'<ol start="{start}"><li>first</li><li>second</li></ol>'
    assert html_to_text(page, "list.html") == "1. first\n2. second"


def test_an_ordered_list_counts_from_its_start() -> None:
    assert html_to_text('<ol start="7"><li>a</li><li>b</li></ol>', "list.html") == "7. a\n8. b"


def test_open_elements_inside_a_part_left_out_are_capped_as_the_tree_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each implied end tag walks the open elements: inside a hidden part (<svg>) as outside it,
    they are capped, so a page of unclosed cells under thousands of open elements stays linear."""
    from gguf_extract.core.documents.convert import html_tree

    deepest = 0
    walk = html_tree.PageSoup._open_names

    def counted(self: html_tree.PageSoup) -> object:
        nonlocal deepest
        names = list(walk(self))
        deepest = max(deepest, len(names))
        return iter(names)

    monkeypatch.setattr(html_tree.PageSoup, "_open_names", counted)
    n = 3000
    page = "<p>before</p><svg><tr>" + "<div>" * n + "<td>x" * n + "</svg><p>after</p>"
    assert html_to_text(page, "hidden.html") == "before\n\nafter"
    assert deepest <= 2 * html_tree.MAX_DEPTH + 4


def test_an_outcome_quoting_a_long_message_stays_one_readable_line() -> None:
    stream = io.BytesIO()
    child.write_outcome(stream, {"error": "failed", "message": "\u2028" * 100_000}, b"")
    line = stream.getvalue().split(b"\n")[0]
    assert len(line) < 32 * 1024 and json.loads(line)["error"] == "failed"


def test_at_most_one_conversion_a_core_runs_at_once_and_their_memory_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Six documents converted from six threads (as --parallel 6 does): each converter records
    how many were running as it started, and runs until the test releases it."""
    assert box.conversions_at_once(cores=64, memory_bytes=2 << 30, physical_memory=24 << 30) == 6  # half the memory
    assert box.conversions_at_once(cores=2, memory_bytes=2 << 30, physical_memory=24 << 30) == 2  # a core each
    assert box.conversions_at_once(cores=8, memory_bytes=2 << 30, physical_memory=2 << 30) == 1  # at least one
    converter = (
        "import json, os, sys, time\n"
        f"folder = {str(tmp_path)!r}\n"
        "me = str(os.getpid())\n"
        "open(os.path.join(folder, 'running-' + me), 'w').close()\n"
        "running = sum(name.startswith('running-') for name in os.listdir(folder))\n"
        "open(os.path.join(folder, 'seen-' + me), 'w').write(str(running))\n"
        "while not os.path.exists(os.path.join(folder, 'release')): time.sleep(0.02)\n"
        "os.unlink(os.path.join(folder, 'running-' + me))\n"
        "sys.stdin.buffer.read()\n"
        "sys.stdout.write(json.dumps({'cut': False}) + '\\n' + 'text')\n"
    )
    converter_running(monkeypatch, converter)
    texts: list[str] = []
    threads = [threading.Thread(target=lambda: texts.append(convert(b"<p>x", "html", "x.html"))) for _ in range(6)]
    for thread in threads:
        thread.start()
    started = lambda: sum(name.startswith("seen-") for name in os.listdir(tmp_path))  # noqa: E731
    assert wait_for(lambda: started() >= min(6, box.AT_ONCE))
    wait_for(lambda: started() == 6, seconds=3)  # unbounded, the other converters would have started by now
    (tmp_path / "release").touch()
    for thread in threads:
        thread.join(timeout=300)
    assert texts == ["text"] * 6
    seen = [int(path.read_text()) for path in tmp_path.glob("seen-*")]
    assert len(seen) == 6 and max(seen) <= box.AT_ONCE


def test_a_process_among_several_converting_takes_its_share_of_the_bound() -> None:
    try:
        box.share_conversions(2)
        assert box.conversions_now() == max(1, box.AT_ONCE // 2)
        box.share_conversions(64)
        assert box.conversions_now() == 1  # at least one
    finally:
        box.share_conversions(1)
    assert box.conversions_now() == box.AT_ONCE
