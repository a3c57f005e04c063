"""Every Python example in the README runs as written, on the bundled model, and uses the
library only through the names `gguf_extract` exports."""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
from pathlib import Path

import pytest

import gguf_extract

ROOT = Path(__file__).resolve().parent.parent
def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.DOTALL)


def test_the_readme_has_python_examples() -> None:
    assert python_blocks()


def library_imports(source: str) -> list[tuple[str, str]]:
    """Each (module, name) that `source` imports from this library, anywhere in it."""
    found: list[tuple[str, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "gguf_extract":
            found += [(str(node.module), alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names if alias.name.split(".")[0] == "gguf_extract"]
    return found


def test_the_import_reader_sees_a_path_below_the_facade() -> None:
    assert library_imports("from gguf_extract.core.review import write_review") == [("gguf_extract.core.review", "write_review")]
    assert library_imports("import gguf_extract.core.model") == [("gguf_extract.core.model", "")]


@pytest.mark.parametrize("number", range(len(python_blocks())))
def test_a_readme_python_example_imports_only_exported_names(number: int) -> None:
    imported = library_imports(python_blocks()[number])
    assert all(module == "gguf_extract" for module, _ in imported), f"imports below gguf_extract: {imported}"
    assert {name for _, name in imported} <= set(gguf_extract.__all__)


@pytest.mark.model
@pytest.mark.parametrize("number", range(len(python_blocks())))
def test_a_readme_python_example_runs(number: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(python_blocks()[number], f"README.md python example {number + 1}", "exec"), {"__name__": "readme"})
    assert printed.getvalue().strip()
    assert os.getcwd() == str(ROOT)
