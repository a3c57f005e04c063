"""A model named rather than given by path: found among the GGUF files that other local tools
keep (llama.cpp's download cache, LM Studio's models folder, the Hugging Face hub cache).

    resolve_model("qwen2.5-1.5b")   # the one cached GGUF whose path there holds that name
    resolve_model("org/Repo-GGUF")  # a Hugging Face repository's one GGUF, slashes and all
    resolve_model("~/m/q.gguf")     # a path: taken as it is

A str is looked up only where no file of that name exists here and it is not written as only a
path is (absolute, from `~`, through `.` or `..`); a Path is always taken as it is. The
folders are walked to a bounded depth and count of entries, so a huge or looping folder costs
little; a walk cut short at the bound is said, and a name matched there is not taken for the
only one: a model's full name below its folder (`org/repo/file.gguf`) is found without a walk.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Iterable
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
    models folders, and the Hugging Face hub cache ($HF_HUB_CACHE or $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub)."""
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
    # huggingface_hub reads HF_HUB_CACHE, else its older name HUGGINGFACE_HUB_CACHE, else HF_HOME.
    if hub := environment.get("HF_HUB_CACHE") or environment.get("HUGGINGFACE_HUB_CACHE"):
        hugging_face = Path(hub)
    elif environment.get("HF_HOME"):
        hugging_face = Path(environment["HF_HOME"]) / "hub"
    else:
        hugging_face = cache / "huggingface" / "hub"
    return [llama_cpp, home / ".lmstudio" / "models", cache / "lm-studio" / "models", hugging_face]


class CachedModels(list[tuple[str, Path]]):
    """What cached_models found: (name, path) pairs, a list, and `cut`, the folders whose walk
    stopped at _MOST_ENTRIES entries with more unread, where a model may lie that is not in the
    list (a list still, so that a caller that only iterates reads it as before)."""

    def __init__(self, found: Iterable[tuple[str, Path]] = (), cut: Iterable[Path] = ()) -> None:
        super().__init__(found)
        self.cut = tuple(cut)

    def cut_short(self) -> str:
        """Where the walk stopped short, in words; "" where it read every folder whole."""
        if not self.cut:
            return ""
        return f"the search of {', '.join(str(folder) for folder in self.cut)} stopped at {_MOST_ENTRIES:,} entries"


def cached_models(folders: list[Path] | None = None) -> CachedModels:
    """Every GGUF model file in `folders` (model_folders() when None) that a walk bounded by
    _MOST_ENTRIES reaches, each with the name it is known by there: its path below the folder,
    a Hugging Face cache's repository folder (its name is `models`, the org and the repository
    joined by double hyphens) written `org/repo` and its `snapshots/REVISION` left out. Vision
    projectors (`mmproj`) and the parts of a split model after the first are left out: they
    are not models to open. `.cut` names the folders holding more than the walk read."""
    found: list[tuple[str, Path]] = []
    cut: list[Path] = []
    for folder in model_folders() if folders is None else folders:
        files, stopped = _walk(folder)
        found += [(_known_as(path.relative_to(folder)), path) for path in files if _is_model(path.name)]
        cut += [folder] if stopped else []
    return CachedModels(found, cut)


def _is_model(file_name: str) -> bool:
    name = file_name.lower()
    return name.endswith(".gguf") and not name.startswith("mmproj") and not _later_part(name)


def _walk(folder: Path) -> tuple[list[Path], bool]:
    """The files below `folder` (links to files included, links to folders not followed), at
    most _MOST_DEPTH deep, in a stable order, the walk ending after _MOST_ENTRIES entries
    (folders and files; a folder holding more is read only that far, in the order the system
    lists it); and whether it ended with entries left unread. A Hugging Face cache's datasets,
    spaces, blobs (its snapshots link to them) and locks are not entered: they hold no model
    to name."""
    files: list[Path] = []
    stack = [(folder, 0)]
    seen = 0
    while stack:
        current, depth = stack.pop()
        try:
            with os.scandir(current) as listing:  # a huge folder is read only as far as the bound, and one more
                read = list(itertools.islice(listing, _MOST_ENTRIES + 1 - seen))
        except OSError:
            continue
        cut = seen + len(read) > _MOST_ENTRIES  # an entry past the bound: the walk ends with this folder
        read = read[: _MOST_ENTRIES - seen]
        seen += len(read)
        for entry in sorted(read, key=lambda entry: entry.name, reverse=True):
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth + 1 < _MOST_DEPTH and not _skipped(entry.name):
                        stack.append((Path(entry.path), depth + 1))
                elif entry.is_file():
                    files.append(Path(entry.path))
            except OSError:
                continue
        if cut:
            return files, True
    return files, False


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
    looked for under another name. A str is the file itself where it exists or can only be a
    path (see _written_as_path); else, in `folders` (model_folders() when None), the cached
    GGUF whose full name there is `model` (see _named_in_full), else the one (see
    cached_models) whose file name, without `.gguf`, is `model`, or failing that whose name
    there holds `model` (case ignored; slashes included: `org/repo` names a Hugging Face
    repository's files, and `org/repo:Q4_K_M`, as llama.cpp's `-hf` takes it, with or without
    `hf.co/` before it, that repository's file of that quantization). One match of a search
    cut short is not taken: another may lie past the bound. Raises ModelNotFound for a
    missing path, ModelError naming the folders searched and what they hold where no cached
    model matches, several do, or the one found may not be the only one."""
    path = Path(model).expanduser()
    text = str(model)
    if isinstance(model, Path) or path.exists() or _written_as_path(text):
        return path
    searched = model_folders() if folders is None else folders
    text = _without_host(text)
    repository, quantization = _tagged(text)
    if quantization:  # llama.cpp's `org/repo:Q4_K_M`: that repository's file of that quantization
        cached = cached_models(searched)
        tagged = [file for file in _distinct(_matching(repository.lower(), cached)) if quantization in file.name.lower()]
        if len(tagged) == 1 and not cached.cut:
            return tagged[0]
        raise _refusal(text, path, tagged, cached, searched)
    named = _distinct(_named_in_full(text, searched))
    if len(named) == 1:
        return named[0]
    if named:
        raise _several(text, named, "")
    cached = cached_models(searched)
    matches = _distinct(_matching(text.lower(), cached))
    if len(matches) == 1 and not cached.cut:
        return matches[0]
    raise _refusal(text, path, matches, cached, searched)


def _without_host(text: str) -> str:
    """`text` without the `hf.co/` or `huggingface.co/` that llama.cpp's `-hf` names may start with."""
    for host in ("hf.co/", "huggingface.co/", "https://hf.co/", "https://huggingface.co/"):
        if text.lower().startswith(host):
            return text[len(host) :]
    return text


def _tagged(text: str) -> tuple[str, str]:
    """`org/repo:Q4_K_M` as llama.cpp names a repository's file by its quantization: the
    repository and the tag, lower case (an empty tag where `text` has none)."""
    repository, colon, tag = text.rpartition(":")
    if not colon or not repository or not tag or "/" in tag or "/" not in repository:
        return text, ""
    return repository, tag.lower()


def _written_as_path(text: str) -> bool:
    """Whether `text` can only be a path, never a cached model's name: absolute (or from a
    drive), from `~`, through `.` or `..`, or with a separator other than `/` (Windows' `\\`)."""
    if Path(text).anchor or text.startswith("~") or (os.sep != "/" and os.sep in text):
        return True
    return any(part in (".", "..") for part in text.split("/"))


def _named_in_full(text: str, folders: list[Path]) -> list[Path]:
    """The model files whose full name below one of `folders` is `text` (`.gguf` added where it
    lacks it): their path there, a Hugging Face repository's `org/repo/file.gguf` in any
    revision, or llama.cpp's `org_repo_file.gguf` (its cache's name for that file). Found by
    looking at those paths, without a walk, so the answer holds however much the folders hold;
    case counts here where the file system's does."""
    name = text if text.lower().endswith(".gguf") else f"{text}.gguf"
    parts = [part for part in name.split("/") if part]
    found: list[Path] = []
    for folder in folders:
        candidates = [folder / name, folder / name.replace("/", "_")]
        for split in (1, 2):  # a repository is `org/repo`, or (an old one) a bare `repo`
            if len(parts) > split:
                snapshots = folder / f"models--{'--'.join(parts[:split])}" / "snapshots"
                candidates += [revision.joinpath(*parts[split:]) for revision in _revisions(snapshots)]
        found += [candidate for candidate in candidates if _is_model(candidate.name) and candidate.is_file()]
    return found


def _revisions(snapshots: Path) -> list[Path]:
    try:
        with os.scandir(snapshots) as listing:
            return sorted(Path(entry.path) for entry in itertools.islice(listing, _MOST_ENTRIES))
    except OSError:
        return []


def _matching(wanted: str, cached: CachedModels) -> list[Path]:
    """The files of `cached` whose name there, else whose file name, is `wanted` (lower case),
    with or without `.gguf`, or failing both whose name holds it; a file at a folder's top holds
    `org/repo` written with underscores too, as llama.cpp's cache names a downloaded `org/repo` file."""
    names = (wanted, f"{wanted}.gguf")
    full = [file for name, file in cached if name.lower() in names]
    exact = full or [file for _, file in cached if file.name.lower() in names]
    flat = wanted.replace("/", "_")
    return exact or [file for name, file in cached if wanted in name.lower() or ("/" not in name and flat in name.lower())]


def _distinct(files: list[Path]) -> list[Path]:
    return list({os.path.realpath(file): file for file in files}.values())  # one file linked twice is one


def _refusal(text: str, path: Path, matches: list[Path], cached: CachedModels, searched: list[Path]) -> ModelError:
    """Why `text` names no one model: several match, or one of a search cut short, or none."""
    cut = cached.cut_short()
    beyond = f"; {cut}, so a file past them was not seen" if cut else ""
    if len(matches) == 1:
        return ModelError(
            f"the model name {text!r} matches one GGUF file, {matches[0]}, but {cut}: a file past them may match it too",
            hint="name it by its path, or by its full name below its folder (org/repo/file.gguf), which needs no search",
        )
    if matches:
        return _several(text, matches, beyond)
    folders = ", ".join(str(folder) for folder in searched)
    if not cached:
        return ModelNotFound(path, f"no file {text} here, and no GGUF model in the local model folders ({folders}){beyond}")
    listed = "; ".join(name for name, _ in cached[:_LISTED])
    more = f" and {len(cached) - _LISTED} more" if len(cached) > _LISTED else ""
    named_so = f"none of the GGUF models in {folders} is named so: {listed}{more}{beyond}"
    return ModelNotFound(path, f"no file {text} here, and {named_so}", listed=True)


def _several(text: str, matches: list[Path], beyond: str) -> ModelError:
    listed = "; ".join(str(file) for file in matches[:_LISTED])
    more = f" and {len(matches) - _LISTED} more" if len(matches) > _LISTED else ""
    return ModelError(
        f"the model name {text!r} matches {len(matches)} GGUF files in the local model folders: {listed}{more}{beyond}",
        hint="name one of them: a longer part of its name, or its path",
    )
