"""`extract models`: the GGUF models other local tools keep (core.model_files), each by the
name `--model` takes (its file name without `.gguf`) and its file, one per line, a tab
between. A file linked from several places is one line, by a name of those that `--model`
opens it by; where none does (distinct files share each of its names, and `--model` refuses
such a name as ambiguous), by its path. Where the search was cut short (a folder holds more
entries than it reads), stderr says so and every file is listed by its path: `--model` takes
no name as naming one file when files it did not see could match it. No model is loaded."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gguf_extract import cached_models, model_folders

from .. import output
from ..exit_codes import ExitCode


def list_models(_: Any) -> int:
    found = cached_models()
    if not found:
        folders = ", ".join(str(folder) for folder in model_folders())
        output.report_warning(f"no GGUF model in the local model folders ({folders})")
    cut = found.cut_short()
    if cut:
        output.report_warning(f"the list is incomplete: {cut}; each model found is listed by its path")
    places: dict[str, list[Path]] = {}  # each file, by its real path: where it is found
    for _, path in found:
        places.setdefault(os.path.realpath(path), []).append(path)
    files_named: dict[str, set[str]] = {}  # --model ignores case
    for real, paths in places.items():
        for path in paths:
            files_named.setdefault(path.stem.lower(), set()).add(real)
    writer = output.JsonWriter()
    for real, paths in places.items():
        unique = [path for path in paths if files_named[path.stem.lower()] == {real} and not cut]
        name = unique[0].stem if unique else str(paths[0])
        writer.write(output.escaped_surrogates(f"{name}\t{(unique or paths)[0]}\n"))
    return int(ExitCode.OK)
