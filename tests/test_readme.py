"""Every Python example in the README and the reference pages (docs/*.md) runs as written, on
the bundled model, and uses the library only through the names `gguf_extract` exports; every
command transcript there (a block of `$ ` lines) gives the lines it shows, and the README's main
command gives the output it shows."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import jsonschema
import pytest

import gguf_extract

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


class Block(NamedTuple):
    """One fenced block of a page: its info string (`python`, `sh`, empty) and its text."""

    page: Path
    info: str
    source: str

    def label(self, number: int) -> str:
        return f"{self.page.relative_to(ROOT)} {self.info or 'plain'} block {number}"


def fenced_blocks(page: Path) -> list[Block]:
    """The page's fenced blocks in order, read line by line so that a closing fence is never
    taken for an opening one."""
    blocks: list[Block] = []
    info: str | None = None
    lines: list[str] = []
    for line in page.read_text(encoding="utf-8").splitlines(keepends=True):
        if info is None and line.startswith("```"):
            info, lines = line[3:].strip(), []
        elif info is not None and line.rstrip("\n") == "```":
            blocks.append(Block(page, info, "".join(lines)))
            info = None
        elif info is not None:
            lines.append(line)
    assert info is None, f"{page.name}: a fence is never closed"
    return blocks


def python_blocks() -> list[Block]:
    return [block for page in PAGES for block in fenced_blocks(page) if block.info == "python"]


PYTHON = python_blocks()
PYTHON_IDS = [f"{block.page.name}-{number}" for number, block in enumerate(PYTHON, 1)]


def test_the_block_reader_pairs_fences(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```json\n{}\n```\n\n```\n$ extract check a.json\n```\n```python\nprint(1)\n```\n")
    assert [(block.info, block.source) for block in fenced_blocks(page)] == [
        ("json", "{}\n"),
        ("", "$ extract check a.json\n"),
        ("python", "print(1)\n"),
    ]


def test_the_pages_have_python_examples_where_the_library_is_shown() -> None:
    assert {block.page.name for block in PYTHON} >= {"library.md", "grounding.md"}


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


@pytest.mark.parametrize("block", PYTHON, ids=PYTHON_IDS)
def test_a_python_example_imports_only_exported_names(block: Block) -> None:
    imported = library_imports(block.source)
    assert all(module == "gguf_extract" for module, _ in imported), f"imports below gguf_extract: {imported}"
    assert {name for _, name in imported} <= set(gguf_extract.__all__)


@pytest.mark.model
@pytest.mark.parametrize("block", PYTHON, ids=PYTHON_IDS)
def test_a_python_example_runs(block: Block, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block.source, block.label(PYTHON.index(block) + 1), "exec"), {"__name__": "readme"})
    assert printed.getvalue().strip()
    assert os.getcwd() == str(ROOT)


# --- command transcripts: `$ cat FILE` then its content, `$ extract ...` then what it shows ---


def run_extract(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`extract ARGS...` as the installed command runs it, through this interpreter."""
    assert command[0] == "extract", command
    arguments = [sys.executable, "-m", "gguf_extract", *command[1:]]
    return subprocess.run(arguments, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


class Step(NamedTuple):
    command: list[str]
    shown: list[str]


def transcript_steps(source: str) -> list[Step]:
    steps: list[Step] = []
    for line in source.splitlines():
        if line.startswith("$ "):
            steps.append(Step(shlex.split(line[2:]), []))
        else:
            steps[-1].shown.append(line)
    return steps


def shown_json(step: Step) -> bool:
    """Whether the step shows a document the model wrote (a line of JSON after an extraction)."""
    return step.command[0] == "extract" and any(line.startswith("{") for line in step.shown)


def transcripts() -> list[pytest.ParameterSet]:
    found = []
    for page in PAGES:
        for number, block in enumerate(fenced_blocks(page), 1):
            if block.info == "" and block.source.startswith("$ "):
                steps = transcript_steps(block.source)
                marks = [pytest.mark.model] if any(shown_json(step) for step in steps) else []
                found.append(pytest.param(steps, id=f"{page.name}-{number}", marks=marks))
    return found


TRANSCRIPTS = transcripts()


def test_the_pages_have_transcripts_without_the_model() -> None:
    assert [param for param in TRANSCRIPTS if not param.marks]


def line_matches(shown: str, printed: str) -> bool:
    """A line shown as printed; a JSON document the model wrote matches one with the same keys,
    since greedy output follows the CPU's rounding and may differ elsewhere (see the README)."""
    if shown.startswith("{") and printed.startswith("{"):
        return bool(json.loads(shown).keys() == json.loads(printed).keys())
    return shown == printed


def shows_in_order(shown: list[str], printed: list[str], excerpt: bool = False) -> bool:
    """Whether the shown lines are the printed ones in order, `...` standing for any lines; an
    excerpt (shown lines with a `...`) may also stop before the printed lines do."""
    excerpt = excerpt or "..." in shown
    if not shown:
        return excerpt or not printed
    if shown[0] == "...":
        return any(shows_in_order(shown[1:], printed[start:], excerpt) for start in range(len(printed) + 1))
    return bool(printed) and line_matches(shown[0], printed[0]) and shows_in_order(shown[1:], printed[1:], excerpt)


def test_an_ellipsis_stands_for_any_lines_and_nothing_else_does() -> None:
    assert shows_in_order(["a", "...", "d"], ["a", "b", "c", "d"])
    assert shows_in_order(["...", "c"], ["c"])
    assert not shows_in_order(["a", "d"], ["a", "b", "d"])
    assert not shows_in_order(["a"], ["a", "b"])
    assert shows_in_order(["...", "b"], ["a", "b", "c"])  # an excerpt
    assert not shows_in_order(['{"a": 1}'], ['{"b": 1}'])


@pytest.mark.parametrize("steps", TRANSCRIPTS)
def test_a_transcript_prints_what_it_shows(steps: list[Step], tmp_path: Path) -> None:
    for folder in ("samples", "schemas"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    for step in steps:
        if step.command[0] == "cat":
            (tmp_path / step.command[1]).write_text("\n".join(step.shown) + "\n", encoding="utf-8")
            continue
        result = run_extract(step.command, tmp_path)
        printed = (result.stderr + result.stdout).splitlines()
        assert "Traceback" not in result.stderr and result.returncode != 70, result.stderr
        if step.shown:
            assert shows_in_order(step.shown, printed), f"$ {shlex.join(step.command)}\n" + "\n".join(printed)
        else:  # a command shown without its output succeeds
            assert result.returncode == 0, result.stderr
        if "--schema" in step.command and result.returncode == 0:
            schema = json.loads((tmp_path / step.command[step.command.index("--schema") + 1]).read_text())
            for line in result.stdout.splitlines():
                jsonschema.validate(json.loads(line), schema)


# --- the README's main command, and a refusal quoted in running text ---


def readme_run_section() -> tuple[str, str]:
    """The command the README's Run section shows, and the output shown under it."""
    run = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Run\n", 1)[1].split("\n## ", 1)[0]
    blocks = fenced_blocks_of_text(run)
    (command,) = [source for info, source in blocks if info == "sh"]
    (output,) = [source for info, source in blocks if info == "json"]
    return command.strip(), output.strip()


def fenced_blocks_of_text(text: str) -> list[tuple[str, str]]:
    return re.findall(r"^```(\w*)\n(.*?)^```$", text, flags=re.DOTALL | re.MULTILINE)


def test_the_readme_shows_the_recorded_output_of_the_person_sample() -> None:
    command, output = readme_run_section()
    assert command == "extract --schema schemas/person.json samples/person.txt"
    assert output == (ROOT / "samples" / "person.out.json").read_text(encoding="utf-8").strip()


@pytest.mark.model
def test_the_readme_main_command_writes_a_valid_document_with_the_shown_fields() -> None:
    command, output = readme_run_section()
    result = run_extract(shlex.split(command), ROOT)
    assert result.returncode == 0, result.stderr
    value = json.loads(result.stdout)
    jsonschema.validate(value, json.loads((ROOT / "schemas" / "person.json").read_text()))
    assert value.keys() == json.loads(output).keys()


def quoted_refusals() -> list[tuple[str, str]]:
    """Each (`extract ...`: `error: ...`) pair of the pages: a command and the error it prints."""
    found = []
    for page in PAGES:
        text = " ".join(page.read_text(encoding="utf-8").split())
        found += re.findall(r"\(`(extract [^`]+)`: `(error: [^`]+)`\)", text)
    return found


def test_the_pages_quote_a_refusal() -> None:
    assert quoted_refusals()


@pytest.mark.model
@pytest.mark.parametrize(("command", "error"), quoted_refusals())
def test_a_quoted_refusal_is_what_the_command_prints(command: str, error: str) -> None:
    result = run_extract(shlex.split(command), ROOT)
    assert result.returncode != 0 and result.stdout == ""
    assert error in " ".join(result.stderr.split())
