"""Build the labelled development set that bench/accuracy.py scores extractions against.

Real documents from text that this machine's packages carry, each with gold values read
mechanically from the document's own structure (no value is typed in by hand):

  package  Python packages' core metadata (dist-info METADATA): Name, Version, Summary, the
           author (Author, else the name in Author-email), the one address in Author-email, and
           Requires-Python. Half are given as the file is (headers, then the long description),
           half rendered to prose by one of three templates, so that a value does not always
           follow its `Key:`; every value is inserted verbatim.
  manpage  Section-1 manual pages rendered by man-db (`man --nh --nj -P cat -l FILE`, 80
           columns): the command names and summary from the NAME line, the section from the header
           (`LS(1)`), the date and source (`GNU coreutils 9.1`) from the footer. The document is
           the page's head and its footer, the middle cut and marked `[...]`.
  license  MIT, BSD and ISC license files shipped in dist-info folders: the license (named by
           its standard clauses), the first year and the holder of the first copyright line.

Each document is at most MAX_CHARS characters; every gold string occurs in its document (a run
of whitespace read as one space), which `tests/test_devset.py` checks. Candidates are taken in
a fixed pseudo-random order (the SHA-256 of their name), at most one per author, holder or
Debian package. Written: devset/docs/*.txt, devset/gold.jsonl (one line per document: id,
schema, file, form, source package and version, gold values); the schemas are
devset/schemas/*.json, kept by hand. Rebuilding on a machine with other packages gives another
set; the committed one is what the figures in RESULTS.md were measured on.

    python bench/build_devset.py [--out bench/devset] [--packages 24] [--manpages 20] [--licenses 16]

`--exclude bench/devset/gold.jsonl` leaves out that set's documents and their groups (author,
holder, Debian package), for a second set disjoint from the first: the calibration set
(bench/calibset) that confidence maps are fitted on, so the development set stays a check.

    python bench/build_devset.py --out bench/calibset --exclude bench/devset/gold.jsonl
"""

from __future__ import annotations

import argparse
import email.parser
import email.utils
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import sysconfig
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from email.message import Message
from pathlib import Path
from typing import Any

import jsonschema

MAX_CHARS = 2600
HERE = Path(__file__).resolve().parent
SKIPPED_PACKAGES = ("gguf-extract", "gemma3-270m")  # this project, and model chunks that may or may not be installed
MAN_DIR = Path("/usr/share/man/man1")
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")


@dataclass
class Document:
    id: str
    schema: str
    form: str
    text: str
    gold: dict[str, Any]
    source: dict[str, str]
    group: str = field(default="", repr=False)  # at most one document per group (author, holder, package)


def squash(text: str) -> str:
    """Whitespace runs as one space, ends stripped: how gold values are compared and found."""
    return " ".join(text.split())


def stable_order(names: Iterable[str]) -> list[str]:
    return sorted(names, key=lambda name: hashlib.sha256(name.encode()).hexdigest())


def site_packages() -> list[Path]:
    roots = [Path(sysconfig.get_paths()["purelib"])]
    roots += sorted(Path.home().glob(".pyenv/versions/*/lib/python3*/site-packages"))
    roots += [Path("/usr/lib/python3/dist-packages")]
    return [root for root in dict.fromkeys(roots) if root.is_dir()]


def dist_infos() -> dict[str, Path]:
    """One dist-info folder per distribution name (the first root that has it)."""
    found: dict[str, Path] = {}
    for root in site_packages():
        for folder in sorted(root.glob("*.dist-info")):
            meta = folder / "METADATA"
            if meta.is_file():
                name = read_metadata(meta)["Name"] or ""
                if name and not name.lower().startswith(SKIPPED_PACKAGES):
                    found.setdefault(name.lower(), folder)
    return found


def read_metadata(path: Path) -> Message:
    return email.parser.Parser().parsestr(path.read_text(encoding="utf-8", errors="replace"))


# ---- package metadata -------------------------------------------------------------------


def package_gold(meta: Message) -> dict[str, Any] | None:
    """Gold values from the headers, or None where one is missing or ambiguous."""
    addresses = email.utils.getaddresses([meta.get("Author-email") or ""])
    if len(addresses) != 1 or not EMAIL.fullmatch(addresses[0][1]):
        return None
    display, address = addresses[0]
    author = squash(meta.get("Author") or display)
    values = [meta.get(key) for key in ("Name", "Version", "Summary", "Requires-Python")]
    if not author or "," in author or "@" in author or not all(values):
        return None
    name, version, summary, requires = (squash(str(value)) for value in values)
    return {
        "name": name,
        "version": version,
        "summary": summary,
        "author": author,
        "author_email": address,
        "requires_python": requires,
    }


def metadata_as_written(raw: str) -> str | None:
    """The METADATA file with long lists cut (first 8 classifiers, 6 requirements, 6 extras, 3 lines
    of any folded header) and its description cut at a line to fit MAX_CHARS; None if the headers
    alone do not fit in two thirds of it."""
    head, _, body = raw.partition("\n\n")
    kept: list[str] = []
    counts: dict[str, int] = {}
    for line in head.splitlines():
        key = "folded" if line[:1].isspace() else line.split(":", 1)[0]
        if key != "folded":
            counts["folded"] = 0
        counts[key] = counts.get(key, 0) + 1
        if counts[key] <= {"Classifier": 8, "Requires-Dist": 6, "Provides-Extra": 6, "folded": 3}.get(key, 10**6):
            kept.append(line)
    headers = "\n".join(kept)
    if len(headers) > MAX_CHARS * 2 // 3:
        return None
    return headers + "\n\n" + cut_at_line(body, MAX_CHARS - len(headers) - 2)


def cut_at_line(text: str, budget: int) -> str:
    """The longest run of whole lines from the start of `text` within `budget` characters."""
    if len(text) <= budget:
        return text.rstrip() + "\n"
    cut = text.rfind("\n", 0, max(budget, 0))
    return text[: max(cut, 0)].rstrip() + "\n"


PROSE_TEMPLATES = (
    "{name} {version}\n{rule}\n\n{summary}\n\nWritten by {author} <{author_email}>. Supported interpreters: Python"
    " {requires_python}.\n\n{body}",
    'Package notes: {name}\n\nThe {name} project, at release {version}, describes itself as follows: "{summary}"\n'
    "It is maintained by {author}, who can be reached at {author_email}, and it installs on Python {requires_python}."
    "\n\nFrom the project's own description:\n\n{body}",
    "{body}\n--\nAbout this release: {name}, version {version} ({summary}). Questions to {author}, e-mail"
    " {author_email}. Python requirement: {requires_python}.\n",
)


def metadata_as_prose(gold: dict[str, Any], body: str, template: int) -> str:
    skeleton = PROSE_TEMPLATES[template].format(**gold, rule="=" * len(f"{gold['name']} {gold['version']}"), body="")
    return PROSE_TEMPLATES[template].format(
        **gold, rule="=" * len(f"{gold['name']} {gold['version']}"), body=cut_at_line(body.strip(), MAX_CHARS - len(skeleton))
    )


def package_documents() -> Iterator[Document]:
    infos = dist_infos()
    index = 0
    for key in stable_order(infos):
        folder = infos[key]
        raw = (folder / "METADATA").read_text(encoding="utf-8", errors="replace")
        meta = email.parser.Parser().parsestr(raw)
        gold = package_gold(meta)
        if gold is None:
            continue
        if index % 2:
            text = metadata_as_written(raw)
            form = "metadata"
        else:
            text = metadata_as_prose(gold, raw.partition("\n\n")[2], (index // 2) % len(PROSE_TEMPLATES))
            form = f"prose{(index // 2) % len(PROSE_TEMPLATES)}"
        if text is not None:
            index += 1
            source = {"package": gold["name"], "version": gold["version"], "path": str(folder / "METADATA")}
            yield Document(f"package-{key}", "package", form, text, gold, source, group=gold["author"])


# ---- manual pages -----------------------------------------------------------------------


def render_man_page(path: Path) -> str | None:
    env = {**os.environ, "MANWIDTH": "80", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    done = subprocess.run(
        ["man", "--nh", "--nj", "-P", "cat", "-l", str(path)], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    return done.stdout if done.returncode == 0 and done.stdout.strip() else None


def man_gold(page: str) -> dict[str, Any] | None:
    lines = [line.rstrip() for line in page.splitlines()]
    nonblank = [line for line in lines if line.strip()]
    header = re.fullmatch(r"(\S+)\((\d)\)\s{2,}.*\s{2,}\1\(\2\)", nonblank[0].strip()) if nonblank else None
    footer = re.split(r"\s{2,}", nonblank[-1].strip()) if nonblank else []
    if header is None or len(footer) != 3 or footer[2] != f"{header[1]}({header[2]})":
        return None
    name_line = squash(" ".join(section_lines(lines, "NAME")))
    commands, dash, summary = name_line.partition(" - ")
    names = [name.strip() for name in commands.split(",")]
    if not dash or not all(names) or any(" " in name for name in names) or not 0 < len(summary) <= 120:
        return None
    return {"names": names, "section": int(header[2]), "summary": summary, "date": footer[1], "source": footer[0]}


def section_lines(lines: list[str], title: str) -> list[str]:
    """The lines of the section headed `title`, up to the next heading (a line at column 0)."""
    start = lines.index(title) + 1 if title in lines else len(lines)
    end = next((i for i in range(start, len(lines)) if lines[i][:1].strip()), len(lines))
    return lines[start:end]


def man_document(page: str) -> str:
    """The page's head (whole paragraphs) and footer, with the middle cut and marked."""
    lines = page.rstrip().splitlines()
    footer = "\n".join(lines[-2:])
    if len(page) <= MAX_CHARS:
        return page.rstrip() + "\n"
    head = page[: MAX_CHARS - len(footer) - 16]
    head = head[: head.rfind("\n\n")] if "\n\n" in head else head
    return f"{head.rstrip()}\n\n[...]\n\n{footer}\n"


def debian_package(path: Path) -> tuple[str, str] | None:
    owner = subprocess.run(["dpkg", "-S", str(path)], capture_output=True, text=True, check=False)
    if owner.returncode != 0:
        return None
    package = owner.stdout.split(":", 1)[0].strip()
    version = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package], capture_output=True, text=True, check=False)
    return package, version.stdout.strip()


def manpage_documents() -> Iterator[Document]:
    pages = {path.name: path for path in MAN_DIR.glob("*.1.gz") if not path.name.startswith("gcloud")}
    for name in stable_order(pages):
        path = pages[name]
        with gzip.open(path, "rt", errors="replace") as source:
            if source.read(4096).lstrip().startswith(".so "):  # a link to another page
                continue
        page = render_man_page(path)
        gold = man_gold(page) if page else None
        owner = debian_package(path) if gold else None
        if page and gold and owner:
            source_info = {"package": owner[0], "version": owner[1], "path": str(path)}
            name = name.removesuffix(".1.gz")
            yield Document(f"manpage-{name}", "manpage", "man", man_document(page), gold, source_info, owner[0])


# ---- license files ----------------------------------------------------------------------

COPYRIGHT = re.compile(
    r"^\s*Copyright\s+(?:\([cC]\)\s*|©\s*)?(\d{4})(?:\s*[-\u2013,]\s*(?:\d{4}|present))*,?\s+(?:by\s+)?(.+?)\s*$", re.MULTILINE
)
HOLDER = re.compile(r"[^\W\d][\w .,'&-]*")


def license_kind(text: str) -> str | None:
    flat = squash(text)
    if "Permission is hereby granted, free of charge" in flat:
        return "MIT"
    if "Permission to use, copy, modify, and/or distribute this software for any purpose" in flat:
        return "ISC"
    if "Redistribution and use in source and binary forms" in flat:
        third = "Neither the name" in flat or "may be used to endorse" in flat
        return "BSD-3-Clause" if third else "BSD-2-Clause"
    return None


def license_gold(text: str) -> dict[str, Any] | None:
    kind = license_kind(text)
    found = COPYRIGHT.search(text)
    if kind is None or found is None:
        return None
    holder = re.sub(r"\s*All rights reserved\.?\s*$", "", found[2], flags=re.IGNORECASE).rstrip(" .,")
    lowered = holder.lower()
    if not HOLDER.fullmatch(holder) or len(holder) > 60 or lowered.startswith(("to ", "present", "the ")) or "see " in lowered:
        return None
    return {"license": kind, "holder": holder, "year": int(found[1])}


def license_documents() -> Iterator[Document]:
    infos = dist_infos()
    seen: set[str] = set()
    for key in stable_order(infos):
        folder = infos[key]
        meta = read_metadata(folder / "METADATA")
        names = ("LICEN[CS]E*", "COPYING*", "licenses/LICEN[CS]E*", "licenses/COPYING*")
        for path in sorted({path for pattern in names for path in folder.glob(pattern) if path.is_file()}):
            text = path.read_text(encoding="utf-8", errors="replace").strip() + "\n"
            digest = hashlib.sha256(squash(text).encode()).hexdigest()
            gold = license_gold(text) if len(text) <= MAX_CHARS else None
            if gold and digest not in seen:
                seen.add(digest)
                source = {"package": str(meta["Name"]), "version": str(meta["Version"]), "path": str(path)}
                name = f"license-{key}-{path.name.split('.')[0].lower()}"
                yield Document(name, "license", "file", text, gold, source, gold["holder"])


# ---- assembling -------------------------------------------------------------------------


NAMED_NOT_QUOTED = {"license"}  # gold values the document names in other words (the license by its clauses)


def gold_found(document: Document) -> bool:
    """Whether every gold value but the named ones occurs in the document (numbers as digits)."""
    text = squash(document.text)
    values = [item for key, value in document.gold.items() if key not in NAMED_NOT_QUOTED for item in as_list(value)]
    return all(squash(str(value)) in text for value in values)


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def gold_valid(document: Document) -> bool:
    """Whether the gold values meet the document's schema (a `Requires-Python` of 61
    characters does not: the schema allows 60)."""
    schema = json.loads((HERE / "devset" / "schemas" / f"{document.schema}.json").read_text())
    return jsonschema.Draft202012Validator(schema).is_valid(document.gold)


def take(documents: Iterable[Document], count: int, kind: str, groups: set[str] | None = None) -> list[Document]:
    """The first `count` documents whose gold values are found in them and meet the schema,
    one per group and per name (a package may ship two license files)."""
    chosen: list[Document] = []
    groups = set() if groups is None else groups
    for document in documents:
        if len(chosen) == count:
            break
        if document.group in groups or document.id in {d.id for d in chosen} or not gold_found(document):
            continue
        if not gold_valid(document):
            continue
        groups.add(document.group)
        chosen.append(document)
    if len(chosen) < count:
        print(f"only {len(chosen)} {kind} documents found, {count} asked for", file=sys.stderr)
    return chosen


def write(documents: list[Document], out: Path) -> None:
    docs = out / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for stale in docs.glob("*.txt"):
        stale.unlink()
    with (out / "gold.jsonl").open("w", encoding="utf-8") as gold:
        for document in documents:
            file = f"docs/{document.id}.txt"
            (out / file).write_text(document.text, encoding="utf-8")
            record = {"id": document.id, "schema": document.schema, "file": file, "form": document.form}
            gold.write(json.dumps({**record, "source": document.source, "gold": document.gold}, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "devset")
    parser.add_argument("--packages", type=int, default=24)
    parser.add_argument("--manpages", type=int, default=20)
    parser.add_argument("--licenses", type=int, default=16)
    parser.add_argument("--exclude", type=Path, help="a gold.jsonl whose documents, and their groups, are left out")
    args = parser.parse_args()
    excluded: set[str] = set()
    if args.exclude is not None:
        ids = {json.loads(line)["id"] for line in args.exclude.read_text(encoding="utf-8").splitlines()}
        every = (*package_documents(), *manpage_documents(), *license_documents())
        excluded = {document.group for document in every if document.id in ids}
    documents = take(package_documents(), args.packages, "package", set(excluded))
    # Pages naming several commands (`gzip, gunzip, zcat - ...`) are rarer; a quarter of the
    # pages are chosen among them so the names array is tested with more than one item.
    pages: set[str] = set(excluded)
    several = take((d for d in manpage_documents() if len(d.gold["names"]) > 1), args.manpages // 4, "manpage", pages)
    documents += several + take(manpage_documents(), args.manpages - len(several), "manpage", pages)
    documents += take(license_documents(), args.licenses, "license", set(excluded))
    write(documents, args.out)
    forms: dict[str, int] = {}
    for document in documents:
        forms[f"{document.schema}/{document.form}"] = forms.get(f"{document.schema}/{document.form}", 0) + 1
    print(f"{len(documents)} documents written to {args.out}: {json.dumps(forms)}")


if __name__ == "__main__":
    main()
