"""HTML to text: Beautiful Soup parses (with Python's own html.parser, so no compiled
parser is needed), markdownify writes Markdown, which keeps the structure a model reads well.

Headings become `#` lines, list items `*` lines, and each table row one `| a | b |` line.
Scripts, styles, navigation and other parts a reader never sees as text are removed first;
links and emphasis keep only their text (URLs and `**` cost tokens and tell the model
nothing); nothing is escaped, so `a_b@example.com` stays as written.
"""

from __future__ import annotations

import codecs
import re
from typing import Any

import markdownify
from bs4 import Tag

from ...errors import DocumentError
from ..decoding import check_encoding, decode_document, is_text_encoding

_MARKUP_ONLY = ["a", "img", "b", "strong", "i", "em", "u", "span", "font"]
_BLANK_LINES = re.compile(r"\n{3,}")
_LINE = re.compile(r"^(.*)", re.MULTILINE)


def decode_html(data: bytes, source: str, encoding: str) -> str:
    """The page's characters, decoded as documents are (core.documents.document), in the encoding the
    page declares (`<meta charset>`, or `<meta http-equiv="Content-Type">`, in its first 1024
    bytes, as browsers look for it) where `encoding` is the default UTF-8 and no byte-order
    mark says otherwise: a page is written in the encoding it names. Another `encoding` is
    the caller's word and wins, as a server's header does in a browser."""
    if check_encoding(encoding) == "utf-8" and not data.startswith(codecs.BOM_UTF8):
        declared = _declared_encoding(data)
        if declared is not None:
            encoding = declared
    return decode_document(data, source, encoding)


def _declared_encoding(data: bytes) -> str | None:
    """The text encoding the page's head declares, if Python knows it. UTF-16 and UTF-32 are
    read as UTF-8, as browsers do: a page that is really in them starts with a byte-order mark,
    and a declaration written in ASCII bytes cannot be telling the truth about them."""
    from bs4.dammit import EncodingDetector

    name = EncodingDetector.find_declared_encoding(data[:1024], is_html=True, search_entire_document=False)
    if not name:
        return None
    try:
        canonical = check_encoding(name)
    except (LookupError, ValueError):  # a name Python does not know is not a declaration to follow
        return None
    if canonical.startswith(("utf-16", "utf-32")) or not is_text_encoding(canonical):
        return "utf-8"
    return canonical


def html_to_text(page: str, source: str) -> str:
    """The readable text of the HTML `page` as Markdown. Raises DocumentError when nothing
    readable is left. Time linear in the page's size; nesting is bounded (html_tree.MAX_DEPTH)."""
    from .html_tree import parse_page

    converter = _Converter(
        heading_style="ATX",
        bullets="*",
        strip=_MARKUP_ONLY,
        escape_asterisks=False,
        escape_underscores=False,
        escape_misc=False,
        table_infer_header=True,
    )
    text = _tidy(converter.convert_soup(parse_page(page)))
    if not text:
        raise DocumentError(f"document {source} is HTML with no readable text", hint="check that the page has content")
    return text


class _Converter(markdownify.MarkdownConverter):
    """markdownify's converter, writing list items itself: markdownify numbers an item of an
    ordered list by counting its earlier siblings (quadratic in a list's length), where this
    one keeps a count as the list's items are converted, in order."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.items_done: dict[int, int] = {}  # id of an <ol> -> its items converted so far

    def convert_li(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        parent = el.parent
        bullet = "* "  # every unordered level: the converter's `bullets` is "*"
        if parent is not None and parent.name == "ol":
            before = self.items_done.get(id(parent), 0)
            self.items_done[id(parent)] = before + 1
            start = str(parent.get("start") or "")
            bullet = f"{(int(start) if start.isascii() and start.isdecimal() and len(start) <= 9 else 1) + before}. "
        text = (text or "").strip()
        if not text:
            return "\n"
        indent = " " * len(bullet)
        text = _LINE.sub(lambda line: indent + line.group(1) if line.group(1) else "", text)
        return bullet + text[len(bullet) :] + "\n"


def _tidy(text: str) -> str:
    """No trailing spaces (markdownify ends a <br> line with two), at most one blank line in a row."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()
