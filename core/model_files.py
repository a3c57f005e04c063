"""A model named rather than given by path: found among the GGUF files that other local tools
keep (llama.cpp's download cache, LM Studio's models folder, the Hugging Face hub cache).

    resolve_model("qwen2.5-1.5b")   # the one cached GGUF whose path there holds that name
    resolve_model("~/m/q.gguf")     # a path: taken as it is

Only a str without a directory separator is looked up, and only where no file of that name
exists here; a Path is always taken as it is. The folders are walked to a bounded depth and
count of entries, so a huge or looping folder costs little.
"""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

from .errors import ModelError, ModelNotFound

# A walk of one folder stops after this many entries, or this deep below the folder (a Hugging
# Face snapshot is 4 deep: the repository's folder, snapshots, REVISION, file.gguf; 5 in a subfolder).
_MOST_ENTRIES = 20_000
_MOST_DEPTH = 6
_LISTED = 12  # GGUF files named in an error at most


def model_folders() -> list[Path]:
    """Where other tools keep downloaded GGUF models, in the order searched (whether they exist
    or not): llama.cpp's cache ($LLAMA_CACHE, else the platform's cache folder), LM Studio's
    models folders, and the Hugging Face hub cache ($HF_HUB_CACHE, else $HF_HOME/hub)."""
    home = Path.home()
    environment = os.environ
    cache = Path(environment["XDG_CACHE_HOME"]) if environment.get("XDG_CACHE_HOME") else home / ".cache"
    if environment.get("LLAMA_CACHE"):
        llama_cpp = Path(environment["LLAMA_CACHE"])
    elif sys.platform == "darwin":
        llama_cpp = home / "Library" / "Caches" / "llama.cpp"
    elif sys.platform == "win32" and environment.get("LOCALAPPDATA"):
        llama_cpp = Path(environment["LOCALAPPDATA"]) / "llama.cpp"
    else:
        llama_cpp = cache / "llama.cpp"
    if environment.get("HF_HUB_CACHE"):
        hugging_face = Path(environment["HF_HUB_CACHE"])
    elif environment.get("HF_HOME"):
        hugging_face = Path(environment["HF_HOME"]) / "hub"
    else:
        hugging_face = cache / "huggingface" / "hub"
    return [llama_cpp, home / ".lmstudio" / "models", cache / "lm-studio" / "models", hugging_face]


def cached_models(folders: list[Path] | None = None) -> list[tuple[str, Path]]:
    """Every GGUF model file in `folders` (model_folders() when None), each with the name it is
    known by there: its path below the folder, a Hugging Face cache's repository folder (its
    name is `models`, the org and the repository joined by double hyphens) written `org/repo`
    and its `snapshots/REVISION` left out. Vision projectors (`mmproj`) and
    the parts of a split model after the first are left out: they are not models to open."""
    found: list[tuple[str, Path]] = []
    for folder in model_folders() if folders is None else folders:
        for path in _walk(folder):
            name = path.name.lower()
            if not name.endswith(".gguf") or name.startswith("mmproj") or _later_part(name):
                continue
            found.append((_known_as(path.relative_to(folder)), path))
    return found


def _walk(folder: Path) -> list[Path]:
    """The files below `folder` (links to files included, links to folders not followed), at
    most _MOST_DEPTH deep, in a stable order, the walk ending after _MOST_ENTRIES entries
    (folders and files; a folder holding more is read only that far, in the order the system
    lists it). A Hugging Face cache's datasets, spaces, blobs (its snapshots link to them) and
    locks are not entered: they hold no model to name."""
    files: list[Path] = []
    stack = [(folder, 0)]
    seen = 0
    while stack and seen <= _MOST_ENTRIES:
        current, depth = stack.pop()
        try:
            with os.scandir(current) as listing:  # a huge folder is read only as far as the bound
                entries = sorted(itertools.islice(listing, _MOST_ENTRIES + 1 - seen), key=lambda entry: entry.name, reverse=True)
        except OSError:
            continue
        seen += len(entries)
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth + 1 < _MOST_DEPTH and not _skipped(entry.name):
                        stack.append((Path(entry.path), depth + 1))
                elif entry.is_file():
                    files.append(Path(entry.path))
            except OSError:
                continue
    return files


def _skipped(name: str) -> bool:
    return name.startswith(("datasets--", "spaces--", ".")) or name == "blobs"


def _later_part(name: str) -> bool:
    """`...-00002-of-00003.gguf`: a split model's part after the first (llama.cpp opens the first)."""
    stem = name.removesuffix(".gguf")
    parts = stem.rsplit("-", 3)
    return len(parts) == 4 and parts[2] == "of" and parts[1].isdigit() and parts[1].lstrip("0") != "1"


def _known_as(relative: Path) -> str:
    parts = list(relative.parts)
    if parts and parts[0].startswith("models--"):
        repository = parts[0].removeprefix("models--").replace("--", "/")
        rest = parts[3:] if len(parts) > 3 and parts[1] == "snapshots" else parts[1:]
        parts = [repository, *rest]
    return "/".join(parts)


def resolve_model(model: Path | str, folders: list[Path] | None = None) -> Path:
    """The model file `model` names. A Path is taken as it is: a caller's missing file is not
    looked for under another name. A str is the file itself where it exists or is written as a
    path; else the one cached GGUF (see cached_models) whose file name, without `.gguf`, is
    `model`, or failing that whose name there holds `model` (case ignored). Raises ModelNotFound
    for a missing path, ModelError naming the folders searched and what they hold where no
    cached model matches or several do."""
    path = Path(model).expanduser()
    text = str(model)
    if isinstance(model, Path) or path.exists() or os.sep in text or "/" in text or (os.altsep is not None and os.altsep in text):
        return path
    wanted = text.lower()
    cached = cached_models(folders)
    exact = [file for _, file in cached if file.name.lower() in (wanted, f"{wanted}.gguf")]
    found = exact or [file for name, file in cached if wanted in name.lower()]
    matches = list({os.path.realpath(file): file for file in found}.values())  # one file linked twice is one
    if len(matches) == 1:
        return matches[0]
    searched = ", ".join(str(folder) for folder in (model_folders() if folders is None else folders))
    if matches:
        listed = "; ".join(str(file) for file in matches[:_LISTED])
        more = f" and {len(matches) - _LISTED} more" if len(matches) > _LISTED else ""
        raise ModelError(
            f"the model name {text!r} matches {len(matches)} GGUF files in the local model folders: {listed}{more}",
            hint="name one of them: a longer part of its name, or its path",
        )
    if not cached:
        raise ModelNotFound(path, f"no file {text} here, and no GGUF model in the local model folders ({searched})")
    listed = "; ".join(name for name, _ in cached[:_LISTED])
    more = f" and {len(cached) - _LISTED} more" if len(cached) > _LISTED else ""
    raise ModelNotFound(path, f"no file {text} here, and none of the GGUF models in {searched} is named so: {listed}{more}")
