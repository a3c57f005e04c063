"""What one `extract` invocation does, kept apart from option parsing."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..core.check import SchemaReport, check_schema_support
from ..core.decode import SamplingSettings
from ..core.document import decode_document, read_document
from ..core.extract import Extractor, ModelOptions
from ..core.schema.sources import load_schema
from . import output
from .exit_codes import ExitCode


@dataclass(frozen=True)
class Request:
    document: str
    schema: str
    model: Path | None
    max_tokens: int
    temperature: float
    top_p: float
    seed: int | None
    n_gpu_layers: int
    threads: int | None
    ctx: int | None
    instructions: str | None
    lenient: bool
    recursion_depth: int
    stats: bool
    verbose: bool
    use_cache: bool = True


Action = Callable[[Request], ExitCode]


def execute(request: Request) -> ExitCode:
    schema, _ = load_schema(request.schema)
    text = _read(request.document)
    options = ModelOptions(request.ctx, request.threads, request.n_gpu_layers, request.use_cache)
    extractor = Extractor.open(request.model, options)
    compiled = extractor.compile(schema, request.recursion_depth, request.lenient)
    for refusal in compiled.relaxed:
        output.report_warning(f"--lenient: ignoring {refusal.message.removeprefix('unsupported ')}")
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


@dataclass(frozen=True)
class CheckRequest:
    schema: str
    recursion_depth: int
    as_json: bool


def check(request: CheckRequest) -> ExitCode:
    schema, label = load_schema(request.schema)
    report = check_schema_support(schema, request.recursion_depth)
    if request.as_json:
        output.JsonWriter().write(json.dumps({"schema": label, **report.as_dict()}, ensure_ascii=False) + "\n")
    else:
        output.JsonWriter().write(render_report(label, report))
    return ExitCode.OK if report.supported else ExitCode.SCHEMA


def render_report(label: str, report: SchemaReport) -> str:
    verdict = "supported: every keyword is enforced exactly" if report.supported else f"refused: {len(report.refused)} keyword(s)"
    lines = [f"schema: {label} ({report.draft})", f"result: {verdict}"]
    lines.append("enforced: " + (", ".join(f"{k} x{n}" for k, n in report.enforced.items()) or "nothing"))
    lines += [f"refused: {r.pointer or '/'}: {r.message}" for r in report.refused]
    lines += [f"ignored (no meaning in {report.draft}): {pointer}" for pointer in report.ignored]
    lines.append(
        f"automaton (built as far as the example reached): {report.nfa_states} NFA states,"
        f" {report.dfa_states_explored} DFA states,"
        f" shortest document {report.shortest_document_bytes} bytes, compiled in {report.seconds:.3f} s"
    )
    lines.append(f"example: {report.example}")
    return "\n".join(lines) + "\n"
