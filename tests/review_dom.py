"""A small element tree from the standard library's HTML parser, for tests of the review page.

It also checks the page is well formed: every element that is opened is closed in order
(void elements aside), so a stray `<` in escaped text would show up as a broken tree."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"meta", "input", "br", "hr", "img", "link", "wbr", "col", "area", "base", "source", "track", "embed"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    children: list[Element | str] = field(default_factory=list)

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def text(self) -> str:
        return "".join(child if isinstance(child, str) else child.text() for child in self.children)

    def walk(self) -> Iterator[Element]:
        yield self
        for child in self.children:
            if isinstance(child, Element):
                yield from child.walk()

    def find_all(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> list[Element]:
        return [
            element
            for element in self.walk()
            if (tag is None or element.tag == tag)
            and (cls is None or cls in element.classes())
            and all(element.attrs.get(name.replace("_", "-")) == value for name, value in attrs.items())
        ]

    def find(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> Element:
        found = self.find_all(tag, cls, **attrs)
        assert len(found) == 1, f"{len(found)} elements match {tag} .{cls} {attrs}"
        return found[0]


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {name: value or "" for name, value in attrs})
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(page: str) -> Element:
    builder = _TreeBuilder()
    builder.feed(page)
    builder.close()
    assert builder.stack == [builder.root], f"unclosed: {[element.tag for element in builder.stack]}"
    return builder.root


def text_before(container: Element, target: Element) -> int:
    """How many characters of `container`'s text come before `target`."""
    count = 0

    def visit(node: Element) -> bool:
        nonlocal count
        for child in node.children:
            if child is target:
                return True
            if isinstance(child, str):
                count += len(child)
            elif visit(child):
                return True
        return False

    assert visit(container), "target not inside container"
    return count
