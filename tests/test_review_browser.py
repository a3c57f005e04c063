"""The review page in a real browser: headless Chromium draws it to a PNG and dumps its DOM
after the script ran. Skipped where Chromium is not installed (Debian: apt-get install chromium)."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from review_dom import parse
from test_review import HOSTILE, entry, envelope, person

from gguf_extract.core.review.assets import PAGE_SCRIPT
from gguf_extract.core.review.evidence import ReviewDocument
from gguf_extract.core.review.page import write_review

CHROMIUM = next((found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (Debian/Ubuntu: apt-get install chromium)"
)
WIDTH, HEIGHT = 1200, 800
# Not a time limit on the test's speed: only a bound on a browser that hangs instead of exiting.
HUNG_BROWSER = 300


def chromium(tmp_path: Path, *arguments: str) -> str:
    assert CHROMIUM is not None
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",  # containers and root: the page is our own local file
        "--disable-gpu",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--window-size={WIDTH},{HEIGHT}",
        *arguments,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=HUNG_BROWSER, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def pixels(png: bytes) -> tuple[int, int, list[tuple[int, ...]]]:
    """Width, height and the RGB(A) pixels of an 8-bit truecolour PNG (what Chromium writes)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    position, idat, header = 8, bytearray(), b""
    while position < len(png):
        (length,) = struct.unpack(">I", png[position : position + 4])
        kind, body = png[position + 4 : position + 8], png[position + 8 : position + 8 + length]
        header = body if kind == b"IHDR" else header
        idat += body if kind == b"IDAT" else b""
        position += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert (depth, colour, interlace) in {(8, 2, 0), (8, 6, 0)}, "only 8-bit RGB/RGBA, not interlaced"
    channels = 3 if colour == 2 else 4
    rows = _unfilter(zlib.decompress(bytes(idat)), width * channels, height, channels)
    flat = [tuple(row[x : x + channels]) for row in rows for x in range(0, len(row), channels)]
    return width, height, flat


def _unfilter(raw: bytes, stride: int, height: int, step: int) -> list[bytearray]:
    rows: list[bytearray] = []
    previous = bytearray(stride)
    for y in range(height):
        kind, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for x in range(stride):
            left = row[x - step] if x >= step else 0
            up, corner = previous[x], previous[x - step] if x >= step else 0
            if kind == 1:
                row[x] = (row[x] + left) & 0xFF
            elif kind == 2:
                row[x] = (row[x] + up) & 0xFF
            elif kind == 3:
                row[x] = (row[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                guess = left + up - corner
                near = min((abs(guess - left), 0, left), (abs(guess - up), 1, up), (abs(guess - corner), 2, corner))
                row[x] = (row[x] + near[2]) & 0xFF
        rows.append(row)
        previous = row
    return rows


def hex_colour(code: str) -> tuple[int, int, int]:
    return int(code[1:3], 16), int(code[3:5], 16), int(code[5:7], 16)


def test_chromium_draws_the_page_with_its_highlight_colours(tmp_path: Path) -> None:
    page = tmp_path / "review.html"
    write_review(page, [person(), person("samples/other.txt")], min_confidence=0.5)
    shot = tmp_path / "review.png"
    chromium(tmp_path, f"--screenshot={shot}", page.as_uri())
    width, height, drawn = pixels(shot.read_bytes())
    assert (width, height) == (WIDTH, HEIGHT)
    colours = {pixel[:3] for pixel in drawn}
    assert len(colours) > 50, "a blank or one-colour page"
    # /name (0.97) is drawn in the >= 0.9 band, /first (0.41) in 0.3-0.5, /city (0.62) in 0.5-0.7
    for band in ("#bfe8b8", "#ffc98f", "#ffe38f"):
        assert hex_colour(band) in colours, f"highlight colour {band} not on the screenshot"
    assert hex_colour("#1f2a3c") in colours  # the header bar


def test_the_script_switches_documents_and_hostile_text_runs_nothing(tmp_path: Path) -> None:
    hostile = ReviewDocument("evil.txt", HOSTILE, envelope({"v": "x"}, {"/v": entry([0, 8], 0.3)}, "evil.txt"))
    page = tmp_path / "review.html"
    write_review(page, [person(), person("b.txt"), hostile])
    dom = parse(chromium(tmp_path, "--dump-dom", page.as_uri() + "#doc-2"))
    sections = dom.find_all("section", "doc")
    assert [section.attrs.get("hidden") is not None for section in sections] == [True, True, False]
    assert [("current" in link.classes()) for link in dom.find("ol").find_all("a")] == [False, False, True]
    assert sections[2].find("div", "text").text() == HOSTILE
    assert [script.text() for script in dom.find_all("script")] == [PAGE_SCRIPT]
    assert not dom.find_all("img")
