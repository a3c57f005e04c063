"""`extract models`: the GGUF models other local tools keep (core.model_files), each by the
name `--model` takes (its file name without `.gguf`) and its file, one per line, a tab
between. A file linked from two places is one line; where distinct files share a name, that
name would be refused as ambiguous, so each of them is listed by its path. No model is loaded."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from gguf_extract import cached_models, model_folders

from . import output
from .exit_codes import ExitCode


def list_models(_: Any) -> int:
    found = cached_models()
    if not found:
        folders = ", ".join(str(folder) for folder in model_folders())
        output.report_warning(f"no GGUF model in the local model folders ({folders})")
    files = list({os.path.realpath(path): path for _, path in found}.values())
    sharing = Counter(path.stem.lower() for path in files)  # --model ignores case
    writer = output.JsonWriter()
    for path in files:
        name = path.stem if sharing[path.stem.lower()] == 1 else str(path)
        writer.write(output.escaped_surrogates(f"{name}\t{path}\n"))
    return int(ExitCode.OK)
