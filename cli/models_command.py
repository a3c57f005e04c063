"""`extract models`: the GGUF models other local tools keep (core.model_files), each by the
name `--model` takes (its file name without `.gguf`) and its file, one per line, a tab
between. No model is loaded."""

from __future__ import annotations

from typing import Any

from gguf_extract import cached_models, model_folders

from . import output
from .exit_codes import ExitCode


def list_models(_: Any) -> int:
    found = cached_models()
    if not found:
        folders = ", ".join(str(folder) for folder in model_folders())
        output.report_warning(f"no GGUF model in the local model folders ({folders})")
    writer = output.JsonWriter()
    for _, path in found:
        writer.write(output.escaped_surrogates(f"{path.stem}\t{path}\n"))
    return int(ExitCode.OK)
