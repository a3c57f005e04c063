"""An HTML page parsed into the tree html_text converts, in one pass and in time linear in its size.

Beautiful Soup with Python's html.parser builds the tree; this subclass of its BeautifulSoup
adds, as the parser goes, what a browser's parser does and html.parser does not, and what
the converter needs that would otherwise cost a walk per element:

- end tags a page may leave out are implied (HTML's "in body" rules): a `<p>` ends at the next
  `<p>` or block, an `<li>` at the next `<li>` of its list, `<dt>`/`<dd>` and table cells and
  rows likewise. html.parser would nest each in the one before, 500 unclosed paragraphs 500 deep;
- nesting is held to MAX_DEPTH, as browsers hold it (Chromium at 512): a tag deeper than that
  becomes the sibling of the deepest open one. markdownify recurses about three Python frames per
  level, so the tree stays within Python's default recursion limit of 1,000 frames;
- parts never shown as text (scripts, styles, navigation, hidden elements) are left out as they
  are read, never built and then removed (a removal looks the element up among its siblings);
- whitespace runs in text become one space as each string is made, as a browser shows them,
  except in <pre> and <textarea>.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from bs4 import BeautifulSoup, NavigableString, Tag

from .limits import HTML_MAX_DEPTH


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


MAX_DEPTH = HTML_MAX_DEPTH  # open elements; deeper start tags are attached beside the deepest one
# Never shown as text: code, styling, embedded objects, and navigation menus.
INVISIBLE = frozenset(("script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed", "nav"))
_SPACES = re.compile(r"[ \t\n\r\f]{2,}|[\t\n\r\f]")

# HTML's "in body" insertion mode: start tags that close an open <p> (in button scope) ...
_CLOSES_P = _names(
    "address article aside blockquote center details dialog dir div dl fieldset figcaption figure footer"
    " form h1 h2 h3 h4 h5 h6 header hgroup hr li dd dt listing main menu nav ol p plaintext pre search"
    " section summary table ul xmp"
)
_HEADINGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
# ... where these end the search for one,
_BUTTON_SCOPE = _names("applet caption html table td th marquee object template button")
# and an open item that a new <li>, <dd> or <dt> ends, found below any "special" element but these.
_ITEMS = {"li": frozenset(("li",)), "dd": frozenset(("dd", "dt")), "dt": frozenset(("dd", "dt"))}
_SPECIAL = _names(
    "applet area article aside base basefont bgsound blockquote body br button caption center col"
    " colgroup dd details dir dl dt embed fieldset figcaption figure footer form frame frameset h1 h2 h3"
    " h4 h5 h6 head header hgroup hr html iframe img input keygen li link listing main marquee menu meta"
    " nav noembed noframes noscript object ol param plaintext pre script search section select source"
    " style summary table tbody td template textarea tfoot th thead title tr track ul wbr xmp"
)
# Table parts: a new cell ends the open cell, a new row the open row, a new section both.
_TABLE_ENDS = {
    "td": ("td", "th"),
    "th": ("td", "th"),
    "tr": ("td", "th", "tr"),
    "thead": ("td", "th", "tr", "thead", "tbody", "tfoot"),
    "tbody": ("td", "th", "tr", "thead", "tbody", "tfoot"),
    "tfoot": ("td", "th", "tr", "thead", "tbody", "tfoot"),
}
_TABLE_SCOPE = frozenset(("html", "table", "template"))


def parse_page(page: str) -> BeautifulSoup:
    """The tree of the HTML `page`, as the module docstring describes. Linear in its size."""
    return PageSoup(page, "html.parser", element_classes={Tag: PageTag})


def hidden(attributes: dict[str, Any]) -> bool:
    """Parts the page itself hides: `hidden`, `aria-hidden="true"`, or a navigation role."""
    return (
        "hidden" in attributes
        or str(attributes.get("aria-hidden", "")).lower() == "true"
        or str(attributes.get("role", "")).lower() == "navigation"
    )


class PageTag(Tag):
    """A Tag that knows the <pre> it is in: markdownify asks each element `find_parent("pre")`,
    a walk to the root that made deep pages quadratic."""

    enclosing_pre: Tag | None = None  # a class attribute, so that reading it never searches (Tag.__getattr__)

    def find_parent(self, name: Any = None, attrs: Any = None, **kwargs: Any) -> Any:
        if name == "pre" and attrs is None and not kwargs:
            return self.enclosing_pre
        return super().find_parent(name, attrs, **kwargs)


class PageSoup(BeautifulSoup):
    """BeautifulSoup, with the parser's events (handle_starttag, handle_endtag, handle_data,
    endData: the interface its tree builders call) filtered as the module docstring says.

    Inside a part left out, `skipped` holds the names of its elements still open (its own
    first) and `skipped_count` how many of each, so that an end tag finds its element at once."""

    def reset(self) -> None:
        self.skipped: list[str] = []
        self.skipped_count: Counter[str] = Counter()
        super().reset()

    def handle_starttag(
        self,
        name: str,
        namespace: str | None,
        nsprefix: str | None,
        attrs: Any,
        sourceline: int | None = None,
        sourcepos: int | None = None,
        namespaces: dict[str, str] | None = None,
    ) -> Tag | None:
        self.endData()
        self._close_implied(name)
        if self.skipped or name in INVISIBLE or hidden(attrs):
            if not self.builder.can_be_empty_element(name):  # a void element (<img>) has no end tag to wait for
                if len(self.skipped) > MAX_DEPTH:  # capped as the tree is, so no walk over open names grows with the page
                    self._end_skipped(self.skipped[-1])
                self.skipped.append(name)
                self.skipped_count[name] += 1
            return None  # the parser then sends no end tag for it
        if len(self.tagStack) > MAX_DEPTH and self.currentTag is not None:
            self.handle_endtag(self.currentTag.name)
        enclosing_pre = next((tag for tag in reversed(self.preserve_whitespace_tag_stack) if tag.name == "pre"), None)
        tag = super().handle_starttag(name, namespace, nsprefix, attrs, sourceline, sourcepos, namespaces)
        if isinstance(tag, PageTag):
            tag.enclosing_pre = enclosing_pre
        return tag

    def handle_endtag(self, name: str, nsprefix: str | None = None) -> None:
        if self.skipped:
            if self.skipped_count[name]:
                self._end_skipped(name)
                return
            if not self.open_tag_counter.get(name):
                return  # ends nothing open, as Beautiful Soup ignores it
            self.skipped.clear()  # an element around the part left out ends, and so does the part
            self.skipped_count.clear()
        super().handle_endtag(name, nsprefix)

    def handle_data(self, data: str) -> None:
        if not self.skipped:
            super().handle_data(data)

    def endData(self, containerClass: type[NavigableString] | None = None) -> None:
        plain = self.string_container(containerClass) is NavigableString  # not a comment, nor <rt>'s text
        if self.current_data and plain and not self.preserve_whitespace_tag_stack:
            self.current_data = [_SPACES.sub(" ", "".join(self.current_data))]
        super().endData(containerClass)

    def _end_skipped(self, name: str) -> None:
        """Close the most recent element called `name` inside the part left out, and those in it."""
        while True:
            last = self.skipped.pop()
            self.skipped_count[last] -= 1
            if last == name:
                return

    def _open_names(self) -> Iterator[str]:
        """The open elements' names, innermost first (the part left out counts)."""
        yield from reversed(self.skipped)
        yield from (tag.name for tag in reversed(self.tagStack))

    def _is_open(self, name: str) -> bool:
        return bool(self.skipped_count[name] or self.open_tag_counter.get(name))

    def _close_implied(self, name: str) -> None:
        """End the elements a start tag `name` ends (HTML's "in body" and "in table" rules)."""
        if name in _ITEMS and any(self._is_open(item) for item in _ITEMS[name]):
            self._close_item(_ITEMS[name])
        if name in _TABLE_ENDS and any(self._is_open(part) for part in _TABLE_ENDS[name]):
            self._close_table_part(_TABLE_ENDS[name])
        if name in _CLOSES_P and self._is_open("p"):
            self._close_in_scope("p", _BUTTON_SCOPE)
        if name in _HEADINGS and next(self._open_names()) in _HEADINGS:
            self.handle_endtag(next(self._open_names()))  # a heading does not hold another

    def _close_item(self, items: frozenset[str]) -> None:
        for open_name in self._open_names():
            if open_name in items:
                self.handle_endtag(open_name)
                return
            if open_name in _SPECIAL and open_name not in ("address", "div", "p"):
                return

    def _close_table_part(self, parts: tuple[str, ...]) -> None:
        """End the outermost of `parts` open inside the innermost table (and what it holds)."""
        outermost = None
        for open_name in self._open_names():
            if open_name in _TABLE_SCOPE:
                break
            if open_name in parts:
                outermost = open_name
        if outermost is not None:
            self.handle_endtag(outermost)

    def _close_in_scope(self, name: str, scope: frozenset[str]) -> None:
        for open_name in self._open_names():
            if open_name == name:
                self.handle_endtag(name)
                return
            if open_name in scope:
                return
