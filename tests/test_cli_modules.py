"""The command line's modules: no import cycle among them (lazy and type-only imports count too),
each importable on its own, and the request a `--workers` parent serialises comes back whole."""

from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any, get_type_hints

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gguf_extract.cli.batch.child import read_share
from gguf_extract.cli.request import BatchOptions, Request
from gguf_extract.cli.sources import Source

CLI = Path(__file__).resolve().parent.parent / "cli"
# Dotted below cli/: "app", "commands.extract", "batch.workers".
MODULES = sorted(
    ".".join(path.relative_to(CLI).with_suffix("").parts)
    for path in CLI.rglob("*.py")
    if path.stem not in ("__init__", "__main__")
)


def imported_siblings(module: str) -> set[str]:
    """The modules of cli/ that `module` imports anywhere in its text (at the top, inside a
    function, or only for type checking), found by reading it, not by running it."""
    package = module.split(".")[:-1]  # where `.` leads, below cli/
    siblings: set[str] = set()
    for node in ast.walk(ast.parse((CLI / f"{module.replace('.', '/')}.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            if node.level - 1 > len(package):
                continue  # above cli/: the package root
            base = package[: len(package) - node.level + 1]
            target = ".".join([*base, *([node.module] if node.module else [])])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gguf_extract.cli."):
            target = str(node.module).removeprefix("gguf_extract.cli.")
        elif isinstance(node, ast.Import):
            siblings.update(alias.name.removeprefix("gguf_extract.cli.") for alias in node.names)
            continue
        else:
            continue
        siblings.update(f"{target}.{alias.name}" if target else alias.name for alias in node.names)
        siblings.add(target)
    return siblings & set(MODULES)


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A path that comes back to where it started, or None where the graph has none."""
    done: set[str] = set()

    def walk(module: str, path: list[str]) -> list[str] | None:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return None
        for imported in sorted(graph[module]):
            cycle = walk(imported, [*path, module])
            if cycle:
                return cycle
        done.add(module)
        return None

    return next((cycle for module in sorted(graph) if (cycle := walk(module, []))), None)


def test_the_cycle_finder_finds_cycles() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_command_lines_modules_import_one_another_without_a_cycle() -> None:
    graph = {module: imported_siblings(module) for module in MODULES}
    assert graph["commands.extract"] >= {"batch.run", "request"}  # the reader sees what it must
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


@pytest.mark.parametrize("module", MODULES)
def test_each_module_imports_on_its_own(module: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", f"import gguf_extract.cli.{module}"], capture_output=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr.decode()


# -- the request, serialised ----------------------------------------------------------------


def test_every_option_of_extract_reaches_its_field_of_the_request() -> None:
    """`extract`'s parameters make the request by name: none is left over, and a name that is no
    field is refused rather than dropped."""
    from gguf_extract.cli.app import extract

    options = {name: parameter.default for name, parameter in inspect.signature(extract).parameters.items()}
    options |= {"schema": "person", "documents": ["a.txt"], "no_cache": True, "workers": 3, "max_tokens": 99}
    request = Request.from_options(options)
    assert (request.documents, request.schema, request.use_cache, request.max_tokens) == (("a.txt",), "person", False, 99)
    assert request.batch.workers == 3 and Request.from_options({**options, "documents": None}).documents == ()
    with pytest.raises(TypeError):
        Request.from_options({**options, "no_such_option": 1})


# Names that are not UTF-8 reach Python with lone surrogates (PEP 383): they must survive too.
NAMES = st.text(st.one_of(st.characters(), st.sampled_from(["\udcff", "\udc80", "\udce9"])), max_size=12)
PATHS = NAMES.map(Path)
PATH_FIELDS: dict[str, Any] = {"model": st.none() | PATHS.map(str), "review": st.none() | PATHS, "output_dir": st.none() | PATHS}


def built(kind: type[Any], **overrides: Any) -> st.SearchStrategy[Any]:
    """Every field of `kind` drawn (inferred from its type), the paths from PATHS."""
    for name, hint in get_type_hints(kind).items():
        assert "Path" not in str(hint) or name in PATH_FIELDS, f"give {kind.__name__}.{name} a strategy in PATH_FIELDS"
    chosen = {field.name: PATH_FIELDS.get(field.name, ...) for field in fields(kind)}
    return st.builds(kind, **{**chosen, **overrides})


REQUESTS = built(
    Request, documents=st.lists(NAMES, max_size=3).map(tuple), batch=built(BatchOptions, files_from=st.none() | NAMES)
)


@given(REQUESTS)
def test_a_request_comes_back_whole_from_its_json(request: Request) -> None:
    line = request.to_json()
    assert "\n" not in line
    assert repr(Request.from_json(line)) == repr(request)  # repr: NaN settings compare equal too


def test_a_worker_reads_the_request_and_its_documents() -> None:
    request = Request(
        documents=("docs",), schema="person", model="m\udce9.gguf", max_tokens=40, temperature=0.5, top_p=0.9,
        seed=7, n_gpu_layers=0, threads=2, ctx=512, instructions="Be brief.", lenient=True, recursion_depth=4, stats=True,
        verbose=False, truncate=True, encoding="latin-1", batch=BatchOptions(output_dir=Path("out"), worker=True), grounded=True,
    )  # fmt: skip
    sources = [Source(Path("docs/a.txt"), "a", "./docs/a.txt"), Source(Path("docs/\udcff.txt"), "\udcff")]
    lines = [request.to_json(), *(json.dumps(source.as_json()) for source in sources)]
    assert read_share(lines) == (request, [sources[0], Source(sources[1].path, "\udcff", "docs/\udcff.txt")])


@pytest.mark.parametrize("stdin", [b"", b"not a request\n", b'{"schema": "person"}\n'])
def test_the_worker_program_refuses_what_no_parent_sent(stdin: bytes) -> None:
    command = [sys.executable, "-m", "gguf_extract.cli.batch.child"]
    result = subprocess.run(command, input=stdin, capture_output=True, timeout=120, check=False)
    err = result.stderr.decode()
    assert (result.returncode, result.stdout) == (2, b""), err
    assert "extract --workers" in err and "Traceback" not in err
