"""Real files of each document format, written by the libraries people make them with
(reportlab for PDF, python-docx for DOCX), for the conversion and end-to-end tests."""

from __future__ import annotations

import io
import zlib
from pathlib import Path

LINE_ITEMS = [
    ("Ergonomic desk chair", "2", "189.00 EUR", "378.00 EUR"),
    ("Box of A4 paper", "5", "24.50 EUR", "122.50 EUR"),
    ("Wireless keyboard", "1", "59.90 EUR", "59.90 EUR"),
]

PAGE = """<!DOCTYPE html>
<html><head><title>Ada Lovelace - Example Encyclopedia</title>
<style>body { font-family: sans-serif } .menu { color: red }</style>
<script>window.tracker = {send: function () {}}; console.log("tracking");</script>
</head><body>
<nav class="menu"><ul><li><a href="/">Home</a></li><li><a href="/people">People</a></li>
<li><a href="/login">Log in</a></li></ul></nav>
<div role="navigation"><a href="/random">Random article</a></div>
<main><article>
<h1>Ada Lovelace</h1>
<p>Augusta Ada King, Countess of Lovelace (10 December 1815 &ndash; 27 November 1852), was an English
<b>mathematician</b> and writer. Letters to <a href="mailto:ada_lovelace@example.org">ada_lovelace@example.org</a>.</p>
<h2>Known for</h2>
<ul><li>Notes on the Analytical Engine</li><li>The first published algorithm</li></ul>
<table><tr><th>Born</th><td>10 December 1815, London</td></tr><tr><th>Died</th><td>27 November 1852, Marylebone</td></tr></table>
<p hidden>Hidden draft paragraph</p>
</article></main>
<footer><p>&copy; 2024 Example Encyclopedia</p></footer>
<script src="/app.js"></script>
<noscript>Enable JavaScript</noscript>
</body></html>
"""


def invoice_pdf(encrypt_user: str | None = None, encrypt_owner: str | None = None) -> bytes:
    """A two-page invoice: a heading, the parties, a table of line items, the total; terms
    on page 2. Encrypted when a password is given (an empty user password opens it)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Spacer, Table

    styles = getSampleStyleSheet()
    story = [
        Paragraph("INVOICE INV-2024-0117", styles["Title"]),
        Paragraph("Date: 2024-03-05", styles["Normal"]),
        Paragraph("From: Northwind Office Supplies Ltd., 12 Harbour Road, Dublin", styles["Normal"]),
        Paragraph("Bill to: Contoso Architects", styles["Normal"]),
        Spacer(1, 12),
        Table([("Description", "Quantity", "Unit price", "Amount"), *LINE_ITEMS]),
        Spacer(1, 12),
        Paragraph("Total due: 559.40 EUR", styles["Heading2"]),
        PageBreak(),
        Paragraph("Terms", styles["Heading1"]),
        Paragraph("Payment within 30 days of the invoice date. Late payments carry interest of 1% a month.", styles["Normal"]),
    ]
    encrypt = None
    if encrypt_user is not None or encrypt_owner is not None:
        from reportlab.lib.pdfencrypt import StandardEncryption

        encrypt = StandardEncryption(encrypt_user or "", encrypt_owner or "owner", canCopy=0, strength=128)
    buffer = io.BytesIO()
    SimpleDocTemplate(buffer, pagesize=A4, encrypt=encrypt).build(story)
    return buffer.getvalue()


def scanned_pdf() -> bytes:
    """A page holding only a picture of text, as a scanner writes it: no text layer."""
    from PIL import Image, ImageDraw
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    picture = Image.new("RGB", (400, 60), "white")
    ImageDraw.Draw(picture).text((10, 20), "Total due 559.40 EUR", fill="black")
    buffer = io.BytesIO()
    page = canvas.Canvas(buffer)
    page.drawImage(ImageReader(picture), 72, 600, 400, 60)
    page.showPage()
    page.save()
    return buffer.getvalue()


def report_docx() -> bytes:
    """A Word report: a heading, a paragraph, a table of three columns, a list."""
    import docx

    document = docx.Document()
    document.add_heading("Quarterly report", 1)
    document.add_paragraph("Prepared by Maria Gonzales, Lisbon office, maria_gonzales@example.com.")
    table = document.add_table(rows=1, cols=3)
    for cell, title in zip(table.rows[0].cells, ("Region", "Revenue", "Growth"), strict=True):
        cell.text = title
    for row in (("North", "1.2 M EUR", "4%"), ("South", "0.8 M EUR", "-2%")):
        for cell, value in zip(table.add_row().cells, row, strict=True):
            cell.text = value
    document.add_heading("Next steps", 2)
    document.add_paragraph("Hire two engineers", style="List Bullet")
    document.add_paragraph("Open the Porto office", style="List Bullet")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def write_all(folder: Path) -> dict[str, Path]:
    """Each fixture as a file in `folder`, by format."""
    files = {
        "pdf": ("invoice.pdf", invoice_pdf()),
        "html": ("page.html", PAGE.encode()),
        "docx": ("report.docx", report_docx()),
        "markdown": ("notes.md", b"# Notes\n\n* Meeting with **Contoso** on 2024-05-04\n"),
        "text": ("person.txt", b"Maria Gonzales, 34, architect in Lisbon.\n"),
    }
    paths = {}
    for kind, (name, data) in files.items():
        paths[kind] = folder / name
        paths[kind].write_bytes(data)
    return paths


def pdf_inflating_to(size: int, text: bytes = b"Hello") -> bytes:
    """A one-page PDF with a line of `text`, whose content stream inflates to `size` bytes (a run
    of spaces compresses to almost nothing: a PDF bomb when `size` is large)."""
    compressor = zlib.compressobj(9)
    stream = compressor.compress(b"BT /F1 24 Tf 72 720 Td (" + text + b") Tj ET\n")
    stream += b"".join(compressor.compress(b" " * (1 << 20)) for _ in range(size >> 20)) + compressor.flush()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    pdf, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(pdf))
        pdf += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    table = len(pdf)
    pdf += b"xref\n0 6\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    pdf += b"trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % table
    return bytes(pdf)
