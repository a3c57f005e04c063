"""What one `extract` invocation does, kept apart from option parsing."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..core.decode import SamplingSettings
from ..core.document import decode_document, read_document
from ..core.extract import Extractor, ModelOptions
from ..core.schema.load import load_schema_file
from . import output
from .exit_codes import ExitCode


@dataclass(frozen=True)
class Request:
    document: str
    schema: Path
    model: Path | None
    max_tokens: int
    temperature: float
    top_p: float
    seed: int | None
    n_gpu_layers: int
    threads: int | None
    ctx: int | None
    instructions: str | None
    stats: bool
    verbose: bool


Action = Callable[[Request], ExitCode]


def execute(request: Request) -> ExitCode:
    schema = load_schema_file(request.schema)
    text = _read(request.document)
    options = ModelOptions(n_ctx=request.ctx, n_threads=request.threads, n_gpu_layers=request.n_gpu_layers)
    extractor = Extractor.open(request.model, options)
    compiled = extractor.compile(schema)
    settings = SamplingSettings(request.max_tokens, request.temperature, request.top_p, request.seed)
    prompt = extractor.prompt_for(compiled, text, request.instructions)
    if request.verbose:
        output.stderr.print(f"model: {extractor.model_path}", markup=False)
        output.stderr.print(f"settings: {settings}", markup=False)
        output.stderr.print(prompt, markup=False)
    extraction = extractor.extract_prompt(compiled, prompt, settings)
    writer = output.JsonWriter()
    for chunk in extraction:
        writer.write(chunk)
    writer.write("\n")
    if request.stats:
        output.report_stats(extraction.stats.as_dict())
    return ExitCode.OK


def _read(document: str) -> str:
    if document == "-":
        return decode_document(sys.stdin.buffer.read(), "<stdin>")
    return read_document(Path(document))
