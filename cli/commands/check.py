"""`extract check SCHEMA`: compile a schema without a model and say what is enforced, what is
refused and why, and the automaton's size, as text or one JSON object."""

from __future__ import annotations

from gguf_extract import SchemaReport, check_schema_support, load_schema, schema_label

from .. import output
from ..exit_codes import ExitCode
from ..request import CheckRequest


def check(request: CheckRequest) -> ExitCode:
    schema, label = load_schema(request.schema), schema_label(request.schema)
    report = check_schema_support(schema, recursion_depth=request.recursion_depth)
    if request.as_json:
        output.JsonWriter().write(output.json_line({"schema": label, **report.as_dict()}))
    else:
        output.JsonWriter().write(output.escaped_surrogates(render_report(label, report)))  # a pointer may hold one
    return ExitCode.OK if report.supported else ExitCode.SCHEMA


LENIENT_HINT = "extract --lenient leaves the refused keywords out, with a warning each, and still validates the output"


def render_report(label: str, report: SchemaReport) -> str:
    lines = [f"schema: {label} ({report.draft})", f"result: {_verdict(report)}"]
    lines.append("enforced: " + (", ".join(f"{k} x{n}" for k, n in report.enforced.items()) or "nothing"))
    lines += [f"refused: {r.pointer or '/'}: {r.message}" for r in report.refused]
    if report.refused and all(r.relaxable for r in report.refused):  # else --lenient refuses the schema too
        lines.append(f"hint: {LENIENT_HINT}")
    reasons = {note.pointer: f": {note.reason}" for note in report.notes}
    lines += [f"ignored (no meaning in {report.draft}): {pointer}{reasons.get(pointer, '')}" for pointer in report.ignored]
    lines += [f"warning: {note.pointer}: {note.reason}" for note in report.notes if not note.ignored]
    if report.groundable or report.never_grounded:
        grounded = dict.fromkeys(pointer or "/" for pointer in report.groundable)  # the root's pointer is ""
        lines.append("grounded with --grounded: " + (", ".join(grounded) or "none"))
    if report.never_grounded:
        lines.append("never grounded (x-grounded: false): " + ", ".join(pointer or "/" for pointer in report.never_grounded))
    lines.append(
        f"automaton (built as far as the example reached): {report.nfa_states} NFA states,"
        f" {report.dfa_states_explored} DFA states,"
        f" shortest document {report.shortest_document_bytes} bytes, compiled in {report.seconds:.3f} s"
    )
    lines.append(f"example: {report.example}")
    return "\n".join(lines) + "\n"


def _verdict(report: SchemaReport) -> str:
    if not report.supported:
        return f"refused: {len(report.refused)} keyword(s)"
    if not report.fully_enforced:  # an ignored `format: "emial"`, a required name left open: said, not refused
        count = f"{len(report.notes)} warning{'s' if len(report.notes) > 1 else ''}"
        return f"supported, not fully enforced: {count} below; every keyword they do not name is enforced exactly"
    return "supported: every keyword is enforced exactly"
