"""Every Python example in the README runs as written, on the bundled model."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.model


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.DOTALL)


def test_the_readme_has_python_examples() -> None:
    assert python_blocks()


@pytest.mark.parametrize("number", range(len(python_blocks())))
def test_a_readme_python_example_runs(number: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(python_blocks()[number], f"README.md python example {number + 1}", "exec"), {"__name__": "readme"})
    assert printed.getvalue().strip()
    assert os.getcwd() == str(ROOT)
