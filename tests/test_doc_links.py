"""Every relative link of the README and the reference pages (docs/*.md) names a file that
exists, and every `#anchor` a heading of the page it points into, as GitHub names headings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def unfenced(text: str) -> str:
    """The text outside fenced blocks, where a `#` line is a heading."""
    return re.sub(r"^```.*?^```$", "", text, flags=re.DOTALL | re.MULTILINE)


def prose(text: str) -> str:
    """The text outside fenced blocks and code spans, where a link is a link."""
    return re.sub(r"`[^`\n]*`", "", unfenced(text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    for line in unfenced(page.read_text(encoding="utf-8")).splitlines():
        if heading := re.match(r"#{1,6} (.+)", line):
            name = slug(heading.group(1))
            # GitHub numbers a repeated heading's anchor: name, name-1, name-2, ...
            found.add(next(candidate for n in range(len(found) + 1) if (candidate := f"{name}-{n}" if n else name) not in found))
    return found


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):  # https:, mailto:: not this repository's
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no file {linked}")
        elif anchor and (linked.suffix != ".md" or anchor not in anchors(linked)):
            broken.append(f"{target}: no heading #{anchor} in {linked.name}")
    return broken


def test_a_heading_is_named_as_github_names_it() -> None:
    assert slug("Long documents (`--chunk`)") == "long-documents---chunk"
    assert slug("Documents: PDF, HTML, Word, Markdown") == "documents-pdf-html-word-markdown"
    assert slug("llama-cpp-python's own API, held to a schema") == "llama-cpp-pythons-own-api-held-to-a-schema"


def test_a_missing_file_a_missing_heading_and_a_repeated_one_are_told_apart(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Title\n\n## Part\n\n## Part\n\n## A (`--flag`)\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Here\n\n[a](other.md#part-1) [a](other.md#a---flag) [b](#here) [c](https://example.org/x#y) `[d](nowhere.md)`\n\n"
        "[e](nowhere.md) [f](other.md#part-2) [g](#there)\n```\n[h](nowhere.md)\n```\n"
    )
    assert broken_links(page) == [
        f"nowhere.md: no file {tmp_path / 'nowhere.md'}",
        "other.md#part-2: no heading #part-2 in other.md",
        "#there: no heading #there in page.md",
    ]


def test_the_readme_links_every_reference_page() -> None:
    linked = set(LINK.findall(prose((ROOT / "README.md").read_text(encoding="utf-8"))))
    assert {f"docs/{page.name}" for page in PAGES[1:]} <= linked


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    assert broken_links(page) == []
