"""Build the list-heavy development set that bench/repeats.py counts repeated array items on.

Real documents whose answers are lists, one folder per schema (bench/listset/docs/<schema>/,
the schema bench/listset/schemas/<schema>.json), so that `extract -s schemas/X.json docs/X/`
is the batch for one schema. No gold values: the set measures how outputs fill arrays (copies
of an item, items not in the document), not field accuracy. Where each document came from:

  holders   License, NOTICE and AUTHORS files that name two or more copyright holders
            (`Copyright 2012 Name <address>` lines): files named LICEN[CS]E*, COPYING*,
            NOTICE* or AUTHORS* in the dist-info folders of this machine's site-packages and in
            /usr/share/doc/*/ (never a file named `copyright` nor a `changelog*`: those are kept
            apart to check the work). At most one per set of holders (pexpect and ptyprocess
            ship the same notice).
  package   Python packages' core metadata (dist-info METADATA) from the project's virtual
            environment and /usr/lib/python3/dist-packages, with at least 3 Requires-Dist, 2
            Project-URL and 4 Classifier headers: the headers as written, then the long
            description cut at a line.
  manpage   Section-1 manual pages rendered by man-db as bench/build_devset.py does, with at
            least 5 option lines and 3 pages under SEE ALSO: the header, NAME, SYNOPSIS, the
            section that lists the most options (cut at a paragraph, marked `[...]`), SEE ALSO
            and the footer. At most one page per Debian package; none of the dev set's pages.
  people    AUTHORS, THANKS and CONTRIBUTORS files with at least 3 e-mail addresses (same
            places as the holders, not a file used there), cut at a line; and the own-*
            documents below.
  advisory  Only own-* documents.

Documents written for this set (kept as files, never rewritten by this script; every name,
project, address and CVE id in them is made up):

  advisory/own-quillmail-advisory.txt      vendor advisory, 3 CVEs, LTS branch with a subset
  advisory/own-tarpit-httpd-release.md     release announcement (Markdown), 3 CVEs
  advisory/own-debian-style-dsa.txt        distribution advisory, 4 CVEs, two fixed versions
  advisory/own-ghsa-orchard-yaml.md        GitHub-style advisory, 2 CVEs and an older one named
  advisory/own-netbird-notes.txt           release notes, 2 CVEs in brackets
  advisory/own-stonefruit-bulletin.txt     bulletin with a CVE table, 5 CVEs
  advisory/own-kettle-mailing-list.txt     announcement e-mail, 3 CVEs
  people/own-meeting-infra-sync.md         meeting notes (Markdown), 5 attendees, an apology
  people/own-meeting-steering.txt          committee minutes, 5 members and a guest
  people/own-meeting-lab.txt               minutes in an e-mail, names in running text
  people/own-contributors-release.txt      a release's contributor list, 9 people

Each generated document is at most MAX_CHARS characters (about 1,600 tokens of the bundled
model; the index records each document's count, all far under the 8,192-token context).
Candidates are taken in a fixed pseudo-random order (the SHA-256 of their path). Written:
listset/docs/<schema>/*.txt (all but own-* replaced), listset/index.jsonl (one line per
document, own ones included: id, schema, file, source path, package and version, characters,
tokens, whether it was cut). Rebuilding on a machine with other packages gives another set;
the committed one is what RESULTS.md's figures were measured on.

    python bench/build_listset.py [--out bench/listset] [--holders 8] [--packages 8] [--manpages 8] [--authors 4]
"""

from __future__ import annotations

import argparse
import email.parser
import gzip
import hashlib
import json
import re
import subprocess
import sys
import sysconfig
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from build_devset import MAN_DIR, render_man_page, site_packages, squash, stable_order

MAX_CHARS = 6000
MAX_TOKENS = 6000  # a document over this would crowd the default context (8,192 with the prompt and the output)
HERE = Path(__file__).resolve().parent
DOC_ROOT = Path("/usr/share/doc")
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
# A copyright line: the word (or sign) and a year, the holder after it.
COPYRIGHT_LINE = re.compile(r"^\s*(?:Copyright|\([cC]\)|©)\b.*?\b(?:19|20)\d\d\b.*$", re.MULTILINE | re.IGNORECASE)
OPTION_LINE = re.compile(r"^\s{3,9}-{1,2}[A-Za-z0-9?]")
SEE_ALSO_REF = re.compile(r"[A-Za-z0-9_.+-]+\([0-9a-z]+\)")
KEPT_APART = re.compile(r"^(copyright|changelog.*)$", re.IGNORECASE)  # the held-out check set's files


@dataclass
class Document:
    id: str
    schema: str
    text: str
    source: dict[str, str]
    cut: bool
    groups: tuple[str, ...]  # at most one document per group (package, set of holders, text)


def read_text(path: Path) -> str:
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as source:
            return source.read()
    return path.read_text(encoding="utf-8", errors="replace")


def cut_at(text: str, budget: int, boundary: str) -> tuple[str, bool]:
    """`text` whole if it fits `budget`, else its head cut at the last `boundary` (a blank line
    or a line end) inside the budget; and whether it was cut."""
    if len(text) <= budget:
        return text.rstrip() + "\n", False
    head = text[:budget]
    end = head.rfind(boundary)
    return (head[:end] if end > 0 else head).rstrip() + "\n", True


def digest(text: str) -> str:
    return hashlib.sha256(squash(text).encode()).hexdigest()


def debian_package(path: Path) -> tuple[str, str] | None:
    """The Debian package that ships `path` and its version (a diverted file's owner, not the
    `diversion by ...` line that `dpkg -S` prints first)."""
    owner = subprocess.run(["dpkg", "-S", str(path)], capture_output=True, text=True, check=False)
    owners = [line.split(":", 1)[0].strip() for line in owner.stdout.splitlines() if not line.startswith("diversion ")]
    if owner.returncode != 0 or not owners:
        return None
    version = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", owners[0]], capture_output=True, text=True, check=False)
    return owners[0], version.stdout.strip()


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


# ---- license, NOTICE and AUTHORS files ----------------------------------------------------


def notice_files(patterns: tuple[str, ...]) -> Iterator[tuple[Path, str, str]]:
    """(path, package, version) of files named by `patterns`, in dist-info folders (anywhere in
    them: numpy keeps its bundled libraries' licenses in subfolders) and /usr/share/doc/*/."""
    for root in site_packages():
        for folder in sorted(root.glob("*.dist-info")):
            meta = email.parser.Parser().parsestr(read_text(folder / "METADATA")) if (folder / "METADATA").is_file() else None
            package, version = (str(meta["Name"]), str(meta["Version"])) if meta else (folder.name, "")
            for path in sorted(folder.rglob("*")):
                if path.is_file() and any(path.match(pattern) for pattern in patterns):
                    yield path, package, version
    for folder in sorted(DOC_ROOT.iterdir()):
        if folder.is_dir() and not folder.is_symlink():
            for path in sorted(folder.iterdir()):
                if path.is_file() and not KEPT_APART.match(path.name) and any(path.match(p) for p in patterns):
                    yield path, folder.name, ""


def document_id(package: str, path: Path) -> str:
    """`numpy-mt19937-license` for numpy's licenses/numpy/random/src/mt19937/LICENSE.md: the
    package, the folder when it is not the dist-info's or a plain `licenses`, the file's stem."""
    folder = path.parent.name
    plain = folder.endswith(".dist-info") or folder in ("licenses", slug(package)) or path.parent.parent == DOC_ROOT
    inner = "" if plain else folder
    return "-".join(slug(part) for part in (package, inner, path.name.split(".")[0]) if part)


def copyright_holders(text: str) -> list[str]:
    """The distinct copyright lines, years and punctuation left out (`Copyright (c) 2012, Noah
    Spurrier <noah@noah.org>` -> `noah spurrier <noah@noah.org>`)."""
    holders: list[str] = []
    for line in COPYRIGHT_LINE.findall(text):
        words = re.sub(r"(?i)copyright|\(c\)|©|all rights reserved|\d{4}|present|[-\u2013,.:;]", " ", line)
        holder = squash(words).lower()
        if holder and holder not in holders:
            holders.append(holder)
    return holders


def holder_documents() -> Iterator[Document]:
    files = {str(path): (path, package, version) for path, package, version in notice_files(HOLDER_FILES)}
    for key in stable_order(files):
        path, package, version = files[key]
        text, cut = cut_at(read_text(path).strip(), MAX_CHARS, "\n\n")
        holders = copyright_holders(text)
        if len(holders) >= 2:
            name = document_id(package, path)
            source = {"kind": "license", "path": str(path), "package": package, "version": version}
            yield Document(name, "holders", text, source, cut, ("|".join(sorted(holders)), package, digest(text)))


HOLDER_FILES = ("LICEN[CS]E*", "COPYING*", "NOTICE*", "AUTHORS*")
AUTHOR_FILES = ("AUTHORS*", "THANKS*", "CONTRIBUTORS*", "CREDITS*")


def author_documents(used: set[str]) -> Iterator[Document]:
    files = {str(path): (path, package, version) for path, package, version in notice_files(AUTHOR_FILES)}
    for key in stable_order(files):
        path, package, version = files[key]
        if key in used:
            continue
        text, cut = cut_at(read_text(path).strip(), MAX_CHARS, "\n")
        if len(set(EMAIL.findall(text))) >= 3:
            name = document_id(package, path)
            source = {"kind": "authors", "path": str(path), "package": package, "version": version}
            yield Document(name, "people", text, source, cut, (package, digest(text)))


# ---- package metadata -------------------------------------------------------------------


def package_documents() -> Iterator[Document]:
    roots = [Path(sysconfig.get_paths()["purelib"]), Path("/usr/lib/python3/dist-packages")]
    files = {str(path): path for root in roots if root.is_dir() for path in root.glob("*.dist-info/METADATA")}
    for key in stable_order(files):
        raw = read_text(files[key])
        head, _, body = raw.partition("\n\n")
        headers = ("Requires-Dist", "Project-URL", "Classifier")
        counts = {name: len(re.findall(rf"^{name}:", head, re.MULTILINE)) for name in headers}
        meta = email.parser.Parser().parsestr(raw)
        if not 3 <= counts["Requires-Dist"] <= 25 or counts["Project-URL"] < 2 or counts["Classifier"] < 4:
            continue
        if len(head) > MAX_CHARS * 3 // 4 or str(meta["Name"]).lower().startswith("gguf-extract"):
            continue
        rest, cut = cut_at(body, MAX_CHARS - len(head) - 2, "\n")
        source = {"kind": "metadata", "path": key, "package": str(meta["Name"]), "version": str(meta["Version"])}
        yield Document(slug(str(meta["Name"])), "package", head + "\n\n" + rest, source, cut, (str(meta["Name"]).lower(),))


# ---- manual pages -----------------------------------------------------------------------


def sections(lines: list[str]) -> list[tuple[str, list[str]]]:
    """The page's sections in order: (heading, lines), a heading being a line at column 0."""
    found: list[tuple[str, list[str]]] = []
    for line in lines[1:-1]:
        if line[:1].strip():
            found.append((line.strip(), []))
        elif found:
            found[-1][1].append(line)
    return found


def man_list_document(page: str) -> tuple[str, bool] | None:
    """The page's header, NAME, SYNOPSIS, the section with the most option lines and SEE ALSO,
    then its footer; None when it lists too few options or related pages."""
    lines = [line.rstrip() for line in page.strip("\n").splitlines()]
    parts = sections(lines)
    by_title = dict(parts)
    see_also = "\n".join(by_title.get("SEE ALSO", [])).strip("\n")
    options_title = max(parts, key=lambda part: sum(bool(OPTION_LINE.match(line)) for line in part[1]), default=("", []))[0]
    option_lines = sum(bool(OPTION_LINE.match(line)) for line in by_title.get(options_title, []))
    if option_lines < 5 or len(set(SEE_ALSO_REF.findall(squash(see_also)))) < 3 or options_title in ("NAME", "SEE ALSO"):
        return None
    head = [lines[0], ""]
    for title in ("NAME", "SYNOPSIS"):
        if title in by_title and title != options_title:
            body, _ = cut_at("\n".join(by_title[title]).strip("\n"), 600, "\n")
            head += [title, body.rstrip("\n"), ""]
    tail = ["SEE ALSO", cut_at(see_also, 800, "\n")[0].rstrip("\n"), "", lines[-1]]
    budget = MAX_CHARS - len("\n".join(head + tail)) - len(options_title) - 16
    body, cut = cut_at("\n".join(by_title[options_title]).strip("\n"), budget, "\n\n")
    middle = [options_title, body.rstrip("\n"), ""] + (["[...]", ""] if cut else [])
    return "\n".join(head + middle + tail) + "\n", cut


def manpage_documents() -> Iterator[Document]:
    gold = (HERE / "devset" / "gold.jsonl").read_text(encoding="utf-8").splitlines()
    devset = {json.loads(line)["id"].removeprefix("manpage-") for line in gold}
    pages = {path.name: path for path in MAN_DIR.glob("*.1.gz") if not path.name.startswith("gcloud")}
    for name in stable_order(pages):
        path = pages[name]
        command = name.removesuffix(".1.gz")
        with gzip.open(path, "rt", errors="replace") as source:
            if command in devset or source.read(4096).lstrip().startswith(".so "):  # a link to another page
                continue
        page = render_man_page(path)
        made = man_list_document(page) if page else None
        owner = debian_package(path) if made else None
        if made and owner:
            source = {"kind": "manpage", "path": str(path), "package": owner[0], "version": owner[1]}
            yield Document(slug(command), "manpage", made[0], source, made[1], (owner[0], digest(page or "")))


# ---- assembling -------------------------------------------------------------------------


def take(documents: Iterable[Document], count: int, kind: str) -> list[Document]:
    chosen: list[Document] = []
    groups: set[str] = set()
    for document in documents:
        if len(chosen) == count:
            break
        if not groups & set(document.groups) and document.id not in {d.id for d in chosen}:
            groups.update(document.groups)
            chosen.append(document)
    if len(chosen) < count:
        print(f"only {len(chosen)} {kind} documents found, {count} asked for", file=sys.stderr)
    return chosen


def token_counter() -> Any:
    """Counts a text's tokens in the bundled model's vocabulary (the vocabulary alone is loaded)."""
    from llama_cpp import Llama

    from gguf_extract.core.model import bundled_model_path

    vocabulary = Llama(model_path=str(bundled_model_path()), vocab_only=True, verbose=False)
    return lambda text: len(vocabulary.tokenize(text.encode("utf-8"), add_bos=False))


def own_documents(out: Path) -> list[Document]:
    found = []
    for path in sorted((out / "docs").glob("*/own-*")):
        source = {"kind": "own", "path": f"docs/{path.parent.name}/{path.name}", "package": "", "version": ""}
        found.append(Document(path.stem, path.parent.name, path.read_text(encoding="utf-8"), source, False, (path.name,)))
    return found


def write(documents: list[Document], out: Path, count_tokens: Any) -> None:
    for folder in (out / "docs").glob("*"):
        for stale in folder.glob("*.txt"):
            if not stale.name.startswith("own-"):
                stale.unlink()
    with (out / "index.jsonl").open("w", encoding="utf-8") as index:
        for document in documents:
            own = document.source["kind"] == "own"
            file = document.source["path"] if own else f"docs/{document.schema}/{document.id}.txt"
            if not own:
                (out / file).parent.mkdir(parents=True, exist_ok=True)
                (out / file).write_text(document.text, encoding="utf-8")
            tokens = count_tokens(document.text)
            if tokens > MAX_TOKENS:
                raise SystemExit(f"{file}: {tokens} tokens, over {MAX_TOKENS}")
            record = {"id": document.id, "schema": document.schema, "file": file, "source": document.source}
            record |= {"chars": len(document.text), "tokens": tokens, "cut": document.cut}
            index.write(json.dumps(record, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "listset")
    parser.add_argument("--holders", type=int, default=8)
    parser.add_argument("--packages", type=int, default=8)
    parser.add_argument("--manpages", type=int, default=8)
    parser.add_argument("--authors", type=int, default=4)
    args = parser.parse_args()
    holders = take(holder_documents(), args.holders, "holders")
    documents = holders + take(package_documents(), args.packages, "package")
    documents += take(manpage_documents(), args.manpages, "manpage")
    documents += take(author_documents({d.source["path"] for d in holders}), args.authors, "people")
    documents += own_documents(args.out)
    write(documents, args.out, token_counter())
    kinds: dict[str, int] = {}
    for document in documents:
        kinds[document.schema] = kinds.get(document.schema, 0) + 1
    print(f"{len(documents)} documents written to {args.out}: {json.dumps(kinds)}")


if __name__ == "__main__":
    main()
