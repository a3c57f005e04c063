"""Documents in PDF, HTML, DOCX, Markdown and text: told apart by content, converted to the
text the model reads, and refused with one clear line when they cannot be read. No model:
`extract text` shows the converted text."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from document_files import LINE_ITEMS, PAGE, invoice_pdf, report_docx, scanned_pdf, write_all

from gguf_extract.core.documents.convert import convert, detect_format
from gguf_extract.core.documents.document import read_document, read_stream
from gguf_extract.core.errors import DocumentError, DocumentTooLarge


def text_of(data: bytes, name: str) -> str:
    return read_stream(io.BytesIO(data), name, name=name)


def run_text(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-m", "gguf_extract", "text", *args]
    return subprocess.run(command, input=stdin, capture_output=True, timeout=120, check=False)


# -- telling formats apart -------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "name", "kind"),
    [
        (b"%PDF-1.7\n", "scan.txt", "pdf"),  # content beats the name
        (b"junk before the header %PDF-1.4\n", None, "pdf"),
        (b"PK\x03\x04rest", "report.bin", "docx"),
        (b"<!DOCTYPE html><html>", None, "html"),
        (b"\xef\xbb\xbf  <p>a paragraph</p>", None, "html"),
        (b"<!-- a comment --> # Title", "README.md", "markdown"),  # for text, the name decides
        (b"# Title\n", None, "text"),
        (b"<p> in a text file", "notes.txt", "text"),
        (b"plain words", "page.htm", "html"),
        (b"plain words", None, "text"),
    ],
)
def test_format_is_told_by_content_with_the_name_as_a_hint(head: bytes, name: str | None, kind: str) -> None:
    assert detect_format(head, name) == kind


@pytest.mark.parametrize(
    ("head", "fragment"),
    [
        (b"\x89PNG\r\n\x1a\nrest", "a PNG image"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1rest", "legacy Office file"),
        (b"{\\rtf1\\ansi", "an RTF document"),
    ],
)
def test_formats_not_read_are_refused_by_name(head: bytes, fragment: str) -> None:
    with pytest.raises(DocumentError, match=fragment) as raised:
        detect_format(head, "scan.bin")
    assert "scan.bin" in raised.value.message and raised.value.hint


def test_a_file_named_pdf_without_a_pdf_header_is_refused() -> None:
    with pytest.raises(DocumentError, match="named as PDF but is not one"):
        detect_format(b"hello", "invoice.pdf")


# -- PDF -------------------------------------------------------------------------------


def test_pdf_table_rows_stay_on_one_line_and_both_pages_are_read() -> None:
    text = text_of(invoice_pdf(), "invoice.pdf")
    lines = text.splitlines()
    for row in LINE_ITEMS:
        assert " ".join(row) in lines  # the row's cells in order, on one line
    assert "Bill to: Contoso Architects" in lines
    assert "Payment within 30 days" in text  # page 2
    assert "\r" not in text and "\x0c" not in text


def test_pdf_encrypted_only_against_copying_is_read() -> None:
    assert "Wireless keyboard 1 59.90 EUR 59.90 EUR" in text_of(invoice_pdf(encrypt_owner="owner"), "locked.pdf")


def test_pdf_needing_a_password_is_a_document_error() -> None:
    with pytest.raises(DocumentError, match="encrypted PDF that needs a password") as raised:
        text_of(invoice_pdf(encrypt_user="secret"), "secret.pdf")
    assert "secret.pdf" in raised.value.message


def test_scanned_pdf_says_ocr_it_first() -> None:
    with pytest.raises(DocumentError, match=r"no text layer .*: OCR it first"):
        text_of(scanned_pdf(), "scan.pdf")


def test_damaged_pdf_is_a_document_error() -> None:
    data = invoice_pdf()
    with pytest.raises(DocumentError, match="not a readable PDF"):
        text_of(data[: len(data) // 3], "cut.pdf")


# -- HTML ------------------------------------------------------------------------------


def test_only_a_conversion_runs_inside_the_converting_context(tmp_path: Path) -> None:
    entered: list[str] = []

    @contextlib.contextmanager
    def converting() -> Iterator[None]:  # the caller's context around a conversion (timing it, say)
        entered.append("in")
        yield
        entered.append("out")

    (tmp_path / "page.html").write_text(PAGE)
    (tmp_path / "notes.txt").write_text("plain words")
    assert read_document(tmp_path / "notes.txt", converting=converting) == "plain words"
    assert entered == []
    assert read_document(tmp_path / "page.html", converting=converting) == text_of(PAGE.encode(), "page.html")
    assert entered == ["in", "out"]


def test_html_loses_scripts_styles_and_navigation_but_keeps_headings_lists_and_rows() -> None:
    text = text_of(PAGE.encode(), "page.html")
    for gone in ("console.log", "font-family", "Log in", "Random article", "Hidden draft", "Enable JavaScript", "<", "**", "]("):
        assert gone not in text
    lines = text.splitlines()
    assert "# Ada Lovelace" in lines and "## Known for" in lines
    assert "* Notes on the Analytical Engine" in lines
    assert "| Died | 27 November 1852, Marylebone |" in lines
    assert "ada_lovelace@example.org" in text  # link text kept, nothing escaped
    assert "\n\n\n" not in text and all(line == line.rstrip() for line in lines)


def test_html_without_readable_text_is_a_document_error() -> None:
    with pytest.raises(DocumentError, match="no readable text"):
        text_of(b"<html><script>x()</script></html>", "empty.html")


@pytest.mark.parametrize(
    ("head", "body", "expected"),
    [
        (b'<meta charset="iso-8859-1">', "Caf\u00e9 cr\u00e8me".encode("latin-1"), "Caf\u00e9 cr\u00e8me"),
        (b"<meta charset=windows-1252>", "Price \u20ac5".encode("cp1252"), "Price \u20ac5"),
        (
            b'<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">',
            "\u041f\u0440\u0438\u0432\u0435\u0442".encode("koi8-r"),
            "\u041f\u0440\u0438\u0432\u0435\u0442",
        ),
        # A declaration in ASCII bytes cannot be true of UTF-16; one Python does not know is no word at all.
        (b'<meta charset="utf-16">', "na\u00efve".encode(), "na\u00efve"),
        (b'<meta charset="no-such-codec">', "na\u00efve".encode(), "na\u00efve"),
    ],
)
def test_html_is_read_in_the_encoding_it_declares(head: bytes, body: bytes, expected: str) -> None:
    page = b"<html><head>" + head + b"<title>t</title></head><body><p>" + body + b"</p></body></html>"
    assert expected in text_of(page, "page.html")


def test_a_byte_order_mark_and_a_named_encoding_outrank_the_declaration() -> None:
    page = "<html><head><meta charset='iso-8859-1'></head><body><p>\u00e9t\u00e9</p></body></html>"
    assert "\u00e9t\u00e9" in text_of(b"\xef\xbb\xbf" + page.encode(), "page.html")
    assert "\u00e9t\u00e9" in convert(page.encode("cp1252"), "html", "page.html", "cp1252")
    mislabelled = page.replace("iso-8859-1", "koi8-r").encode("cp1252")
    assert "\u00e9t\u00e9" in convert(mislabelled, "html", "page.html", "cp1252")


def test_extract_text_reads_a_declared_latin1_page(tmp_path: Path) -> None:
    page = tmp_path / "old.html"
    page.write_bytes(b"<html><head><meta charset=latin1></head><body><h1>Andr\xe9 M\xfcller</h1></body></html>")
    done = run_text(str(page))
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.decode() == "# Andr\u00e9 M\u00fcller\n"


# -- DOCX ------------------------------------------------------------------------------


def test_docx_keeps_headings_lists_and_table_rows() -> None:
    lines = text_of(report_docx(), "report.docx").splitlines()
    assert "# Quarterly report" in lines and "## Next steps" in lines
    assert "| Region | Revenue | Growth |" in lines
    assert "| South | 0.8 M EUR | -2% |" in lines
    assert "* Open the Porto office" in lines
    assert "Prepared by Maria Gonzales, Lisbon office, maria_gonzales@example.com." in lines


def test_damaged_docx_is_a_document_error() -> None:
    data = report_docx()
    with pytest.raises(DocumentError, match="damaged ZIP archive") as raised:
        text_of(data[: len(data) // 2], "cut.docx")
    assert "cut.docx" in raised.value.message


def test_docx_with_a_broken_document_part_is_a_document_error() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(report_docx())) as original, zipfile.ZipFile(buffer, "w") as damaged:
        for item in original.infolist():
            body = original.read(item)
            damaged.writestr(item, body[: len(body) // 2] if item.filename == "word/document.xml" else body)
    with pytest.raises(DocumentError, match="not a readable DOCX file"):
        text_of(buffer.getvalue(), "broken.docx")


def test_other_zip_archives_are_refused_naming_what_they_hold() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as workbook:
        workbook.writestr("[Content_Types].xml", "<Types/>")
        workbook.writestr("xl/workbook.xml", "<workbook/>")
    with pytest.raises(DocumentError, match=r"an Excel workbook \(.xlsx\)"):
        text_of(buffer.getvalue(), "sheet.xlsx")


# -- text and Markdown, limits ---------------------------------------------------------


@pytest.mark.parametrize("name", ["notes.md", "notes.txt", None])
def test_markdown_and_text_pass_through_unchanged(name: str | None) -> None:
    original = "# Notes\n\n* Meeting with **Contoso** <b>today</b>\n"
    assert read_stream(io.BytesIO(original.encode()), "notes", name=name) == original


def test_format_given_overrides_the_guess() -> None:
    assert convert(b"<h2>Total</h2><p>559.40</p>", "html", "fragment") == "## Total\n\n559.40"
    assert read_stream(io.BytesIO(b"<h2>Total</h2>"), "<stdin>", kind="html") == "## Total"
    assert read_stream(io.BytesIO(b"<!DOCTYPE html><p>x</p>"), "<stdin>", kind="text") == "<!DOCTYPE html><p>x</p>"


def test_converted_text_longer_than_the_limit_is_refused_or_cut(tmp_path: Path) -> None:
    path = tmp_path / "invoice.pdf"
    path.write_bytes(invoice_pdf())
    whole = read_document(path)
    assert read_document(path, max_bytes=len(whole.encode())) == whole
    with pytest.raises(DocumentTooLarge):
        read_document(path, max_bytes=100)
    assert read_document(path, max_bytes=100, keep_head=True) == whole.encode()[:100].decode("utf-8", "ignore")


def test_text_longer_than_the_limit_keeps_its_head_across_the_sniffed_start(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    path.write_text("word " * 1000)
    assert read_document(path, max_bytes=12, keep_head=True) == "word word wo"
    assert read_document(path, max_bytes=3000, keep_head=True) == ("word " * 600)
    with pytest.raises(DocumentTooLarge, match="larger than 3000 bytes"):
        read_document(path, max_bytes=3000)


# -- extract text ----------------------------------------------------------------------


def test_extract_text_prints_each_documents_text(tmp_path: Path) -> None:
    files = write_all(tmp_path)
    result = run_text(str(files["pdf"]), str(files["html"]), str(files["docx"]), str(files["markdown"]))
    out = result.stdout.decode()
    assert result.returncode == 0, result.stderr.decode()
    assert result.stderr == b""
    assert f"==> {files['pdf']} <==\n" in out and f"==> {files['docx']} <==\n" in out
    assert "Box of A4 paper 5 24.50 EUR 122.50 EUR\n" in out
    assert "| North | 1.2 M EUR | 4% |\n" in out and "# Ada Lovelace\n" in out and "* Meeting with **Contoso**" in out


def test_extract_text_of_one_document_is_exactly_its_text(tmp_path: Path) -> None:
    files = write_all(tmp_path)
    result = run_text(str(files["pdf"]))
    assert result.returncode == 0
    assert result.stdout.decode() == read_document(files["pdf"]) + "\n"


def test_extract_text_expands_a_directory_as_extraction_does(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "b.txt").write_text("Bee\n")
    (docs / "sub" / "a.md").write_text("# Ant\n")
    (docs / ".hidden.txt").write_text("never shown\n")
    result = run_text(str(docs))
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout.decode() == f"==> {docs}/b.txt <==\nBee\n\n==> {docs}/sub/a.md <==\n# Ant\n"
    only_md = run_text("--glob", "*.md", str(docs))
    assert only_md.stdout.decode() == f"==> {docs}/sub/a.md <==\n# Ant\n"  # headed: a directory may hold more


def test_extract_text_of_an_empty_directory_or_a_bad_glob_says_so(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Text\n")
    result = run_text("--glob", "*.pdf", str(tmp_path), str(tmp_path / "a.txt"))
    assert result.returncode == 5
    expected = f"error: no documents in {tmp_path} (files matching --glob '*.pdf', hidden ones skipped)"
    assert result.stderr.decode().splitlines()[0] == expected
    assert result.stdout.decode() == f"==> {tmp_path / 'a.txt'} <==\nText\n"
    outside = run_text("--glob", "../*", str(tmp_path))
    assert (outside.returncode, outside.stdout) == (2, b"")
    assert "is not a pattern inside a directory" in outside.stderr.decode()


def test_extract_text_reads_stdin_by_content_or_by_format(tmp_path: Path) -> None:
    assert b"Wireless keyboard 1 59.90 EUR" in run_text("-", stdin=invoice_pdf()).stdout
    assert run_text("-", stdin=b"<h1>Total</h1>").stdout == b"# Total\n"  # sniffed as HTML
    assert run_text("-", stdin=b"<h2>Total</h2>").stdout == b"<h2>Total</h2>\n"  # not a signature browsers sniff
    assert run_text("--format", "html", "-", stdin=b"<h2>Total</h2>").stdout == b"## Total\n"


def test_extract_text_refuses_bad_documents_in_one_line_and_goes_on(tmp_path: Path) -> None:
    files = write_all(tmp_path)
    (tmp_path / "scan.pdf").write_bytes(scanned_pdf())
    (tmp_path / "cut.docx").write_bytes(report_docx()[:5000])
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    args = [str(tmp_path / name) for name in ("scan.pdf", "cut.docx", "blob.bin")]
    result = run_text(*args, str(files["text"]))
    err = result.stderr.decode()
    assert result.returncode == 5
    assert "Traceback" not in err
    assert [line for line in err.splitlines() if line.startswith("error:")] == [
        f"error: document {args[0]} has no text layer (1 page of images, as a scanned PDF is): OCR it first",
        f"error: document {args[1]} is a damaged ZIP archive (as a DOCX is): File is not a zip file",
        f"error: document {args[2]} looks binary (it contains NUL bytes) and is neither PDF nor DOCX: its format cannot be told",
    ]
    assert result.stdout.decode().endswith("Maria Gonzales, 34, architect in Lisbon.\n")


def test_extract_text_refuses_an_unknown_format_name() -> None:
    result = run_text("--format", "xml", "-", stdin=b"x")
    assert result.returncode == 2
    assert "unknown format 'xml'; use one of text, markdown, html, pdf, docx" in result.stderr.decode()


@pytest.mark.parametrize(
    ("marker", "sample"), [("extract-text-invoice", "invoice.pdf"), ("extract-text-lovelace", "lovelace.html")]
)
def test_the_documents_page_shows_the_samples_text_as_extract_text_prints_it(marker: str, sample: str) -> None:
    root = Path(__file__).resolve().parent.parent
    page = (root / "docs" / "documents.md").read_text()
    block = page.split(f"<!-- {marker}:start -->\n```\n")[1].split("```\n")[0]
    assert block == read_document(root / "samples" / sample) + "\n"
