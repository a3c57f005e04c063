"""The error family: every class exported and given one exit code; the library's messages name
its parameters, never a command-line flag, and the command line words its own hints."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

import gguf_extract
from gguf_extract.cli.exit_codes import ExitCode, UsageError, exit_code_for, exit_code_for_kind, exit_code_named
from gguf_extract.cli.hints import worded
from gguf_extract.core import errors
from gguf_extract.core.errors import (
    ContextTooSmall,
    DocumentNotFound,
    DocumentTooLarge,
    ExtractError,
    ModelNotFound,
    ModelNotGGUF,
    TokenBudgetTooSmall,
    UndecodableDocument,
)

CORE = Path(__file__).resolve().parent.parent / "core"
FLAG = re.compile(r"--[a-z]")
# CSS custom properties (the review page's style): `var(--ink)`, and `--ink:` declared.
CSS_PROPERTY = re.compile(r"var\(--[\w-]+\)|(?:^|[{;])\s*--[\w-]+:", re.MULTILINE)
ERROR_CLASSES = [kind for _, kind in inspect.getmembers(errors, inspect.isclass) if issubclass(kind, ExtractError)]
# The exit-code table of docs/exit-codes.md, by the family each class belongs to.
DOCUMENTED = {
    errors.SchemaError: ExitCode.SCHEMA,
    errors.ModelError: ExitCode.MODEL,
    errors.DocumentError: ExitCode.DOCUMENT,
    errors.GenerationError: ExitCode.GENERATION,
    errors.OutputError: ExitCode.OUTPUT,
    errors.ReviewError: ExitCode.OUTPUT,
}


def test_every_error_class_is_exported_from_the_package() -> None:
    assert len(ERROR_CLASSES) >= 14
    for kind in ERROR_CLASSES:
        assert kind.__name__ in gguf_extract.__all__
        assert getattr(gguf_extract, kind.__name__) is kind


@pytest.mark.parametrize("kind", [kind for kind in ERROR_CLASSES if kind is not ExtractError], ids=lambda kind: kind.__name__)
def test_every_error_class_has_its_familys_documented_exit_code(kind: type[ExtractError]) -> None:
    (family,) = [family for family in DOCUMENTED if issubclass(kind, family)]
    assert exit_code_for_kind(kind) == DOCUMENTED[family]
    assert exit_code_named(kind.__name__) == DOCUMENTED[family]  # as a --workers parent reads a record's type


def test_usage_errors_and_unknown_names() -> None:
    assert exit_code_for(UsageError("bad option")) == ExitCode.USAGE
    assert exit_code_named("UsageError") == ExitCode.USAGE
    assert exit_code_named("WorkerDied") is None
    assert exit_code_named("Path") is None  # a name in core.errors that is no error class


def _string_literals(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        (node.lineno, node.value) for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def test_the_library_names_no_command_line_flag() -> None:
    found = [
        f"{path.relative_to(CORE.parent)}:{line}: {text!r}"
        for path in sorted(CORE.rglob("*.py"))
        for line, text in _string_literals(path)
        if FLAG.search(CSS_PROPERTY.sub("", text))
    ]
    assert not found, "core/ speaks of its parameters; the command line adds flags (cli/hints.py):\n" + "\n".join(found)


def _context_too_small(**helps: bool) -> ContextTooSmall:
    return ContextTooSmall("too long", needed=600, context=512, **helps)


STRUCTURED = [
    (ModelNotFound(None), "--model PATH"),
    (ModelNotFound(Path("m.gguf")), "--model"),
    (ModelNotGGUF(Path("m.bin")), "--model"),
    (DocumentNotFound(Path("a.txt")), "pass - to read stdin"),
    (UndecodableDocument("a.txt", "UTF-8", "invalid byte at offset 3"), "--encoding"),
    (DocumentTooLarge("a.txt", 100, b"x" * 100), "--truncate"),
    (_context_too_small(shorter_document_helps=True, larger_context_helps=True, truncate_helps=True), "--truncate"),
    (TokenBudgetTooSmall(157, 158), "--max-tokens"),
    (TokenBudgetTooSmall(40), "--max-tokens"),
]


@pytest.mark.parametrize(
    ("error", "flag"), STRUCTURED, ids=lambda item: type(item).__name__ if isinstance(item, Exception) else ""
)
def test_the_command_line_words_the_hint_with_its_flags(error: ExtractError, flag: str) -> None:
    assert not FLAG.search(error.message) and not FLAG.search(error.hint) and "read stdin" not in error.hint
    message, hint = worded(error)
    assert flag in hint and not FLAG.search(message.replace("--max-tokens", ""))


def test_the_documented_budget_refusal() -> None:
    error = TokenBudgetTooSmall(157, 158)
    assert error.message.endswith("1 more than the token budget of 157 (max_tokens)")
    assert error.hint == "raise max_tokens to at least 158"
    assert worded(error) == (
        "the shortest document this schema allows is 158 bytes, which may take 158 tokens: 1 more than --max-tokens 157",
        "raise --max-tokens to at least 158",
    )


@pytest.mark.parametrize(
    ("helps", "library", "command_line"),
    [
        ((False, False, False), "lower max_tokens", "lower --max-tokens"),
        ((True, False, False), "shorten the document or lower max_tokens", "shorten the document or lower --max-tokens"),
        ((False, True, False), "lower max_tokens or raise n_ctx", "lower --max-tokens or raise --ctx"),
        (
            (True, True, True),
            "shorten the document, lower max_tokens, raise n_ctx, or pass truncate=True to keep the head that fits",
            "shorten the document, lower --max-tokens, raise --ctx, or pass --truncate to keep the head that fits;"
            " or pass --chunk to extract from all of it piece by piece",
        ),
    ],
)
def test_what_gets_past_a_full_context(helps: tuple[bool, bool, bool], library: str, command_line: str) -> None:
    shorter, larger, truncate = helps
    error = _context_too_small(shorter_document_helps=shorter, larger_context_helps=larger, truncate_helps=truncate)
    assert (error.hint, worded(error).hint) == (library, command_line)


def test_an_error_without_settings_reads_the_same_everywhere() -> None:
    error = errors.SchemaError("schema file not found: s.json", hint="check the schema's path")
    assert worded(error) == (error.message, error.hint)
