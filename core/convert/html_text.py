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

from ..errors import DocumentError

# Never shown as text: code, styling, embedded objects, and navigation menus.
_INVISIBLE = ("script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed", "nav")
_MARKUP_ONLY = ["a", "img", "b", "strong", "i", "em", "u", "span", "font"]
_BLANK_LINES = re.compile(r"\n{3,}")
_SPACES = re.compile(r"[ \t\n\r\f]{2,}|[\t\n\r\f]")


def decode_html(data: bytes, source: str, encoding: str) -> str:
    """The page's characters, decoded as documents are (core.document), in the encoding the
    page declares (`<meta charset>`, or `<meta http-equiv="Content-Type">`, in its first 1024
    bytes, as browsers look for it) where `encoding` is the default UTF-8 and no byte-order
    mark says otherwise: a page is written in the encoding it names. Another `encoding` is
    the caller's word and wins, as a server's header does in a browser."""
    from ..document import check_encoding, decode_document

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

    from ..document import check_encoding, is_text_encoding

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
    readable is left."""
    import markdownify
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(page, "html.parser")
    for element in soup.find_all(_INVISIBLE):
        element.decompose()
    for element in soup.find_all(_hidden):
        element.decompose()
    _collapse_spaces(soup)
    converter = markdownify.MarkdownConverter(
        heading_style="ATX",
        bullets="*",
        strip=_MARKUP_ONLY,
        escape_asterisks=False,
        escape_underscores=False,
        escape_misc=False,
        table_infer_header=True,
    )
    text = _tidy(converter.convert_soup(soup))
    if not text:
        raise DocumentError(f"document {source} is HTML with no readable text", hint="check that the page has content")
    return text


def _collapse_spaces(soup: Any) -> None:
    """Whitespace runs in text become one space, as a browser shows them (a line break in the
    page's source inside a paragraph is not one on screen), except in <pre> and <textarea>."""
    from bs4 import NavigableString

    for string in list(soup.find_all(string=_SPACES)):
        if type(string) is NavigableString and string.find_parent(("pre", "textarea")) is None:
            string.replace_with(_SPACES.sub(" ", string))


def _hidden(element: Any) -> bool:
    """Parts the page itself hides: `hidden`, `aria-hidden="true"`, or a navigation role."""
    attributes = getattr(element, "attrs", None) or {}
    return (
        "hidden" in attributes
        or str(attributes.get("aria-hidden", "")).lower() == "true"
        or str(attributes.get("role", "")).lower() == "navigation"
    )


def _tidy(text: str) -> str:
    """No trailing spaces (markdownify ends a <br> line with two), at most one blank line in a row."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()
