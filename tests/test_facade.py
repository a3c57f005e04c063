"""The library's one public face, `gguf_extract`: what it exports, that the command line uses
nothing else, that each thing is done one way, and that compile options are named."""

from __future__ import annotations

import ast
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import gguf_extract
from gguf_extract.core.decode.types import SamplingSettings
from gguf_extract.core.extract.extractor import Extractor, ModelOptions
from gguf_extract.core.index.check import check_schema_support
from gguf_extract.core.index.compiled import compile_automaton, compile_schema
from gguf_extract.core.schema.compiler import compile_schema_tree, compile_tree

ROOT = Path(__file__).resolve().parent.parent


def core_imports(source: str) -> list[str]:
    """Each import in `source` (at the top, inside a function, under TYPE_CHECKING: anywhere)
    that reaches the library's core/ other than through the `gguf_extract` facade, as written.
    `source` is a module of cli/, so `..` is the package root."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            # `..` is the package root, as `gguf_extract` is: either way, core itself or below it.
            root = "" if node.level >= 2 else "gguf_extract" if node.level == 0 else None
            module = node.module or ""
            names = [alias.name for alias in node.names]
            below = f"{root}.core" if root else "core"
            if root is not None and (module == below or module.startswith(f"{below}.") or (module == root and "core" in names)):
                found.append(ast.unparse(node))
        elif isinstance(node, ast.Import):
            found += [f"import {alias.name}" for alias in node.names if alias.name.startswith("gguf_extract.core")]
    return found


@pytest.mark.parametrize(
    "source",
    [
        "from ..core.errors import ExtractError",
        "from ..core import files",
        "from .. import core",
        "def f():\n    from ..core.document import read_document",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..core.extract import Extraction",
        "import gguf_extract.core.errors",
        "from gguf_extract.core.errors import ExtractError",
        "from gguf_extract import core",
        "def f():\n    import gguf_extract.core.model as model",
    ],
)
def test_the_import_reader_finds_every_way_into_core(source: str) -> None:
    assert core_imports(source)


def test_the_import_reader_lets_the_facade_and_siblings_through() -> None:
    allowed = "import gguf_extract\nfrom gguf_extract import ExtractError\nfrom . import output\nfrom .request import Request\n"
    assert core_imports(allowed) == []


@pytest.mark.parametrize("module", sorted(path.relative_to(ROOT / "cli").as_posix() for path in (ROOT / "cli").rglob("*.py")))
def test_the_command_line_reaches_the_library_only_through_gguf_extract(module: str) -> None:
    found = core_imports((ROOT / "cli" / module).read_text(encoding="utf-8"))
    assert found == [], f"cli/{module} imports core/ directly: {found}; import the name from gguf_extract instead"


def type_checking_imports() -> dict[str, str]:
    """The names the facade imports for type checkers, each with its module (`core.x`)."""
    tree = ast.parse((ROOT / "__init__.py").read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    imported = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
        for alias in node.names:
            assert alias.asname == alias.name, "a name is exported under the name it has where it is defined"
            imported[alias.name] = node.module
    return imported


def test_type_checkers_see_exactly_the_exported_names() -> None:
    assert type_checking_imports() == gguf_extract._EXPORTS


@pytest.mark.parametrize("name", gguf_extract.__all__)
def test_every_exported_name_resolves_to_its_definition(name: str) -> None:
    assert getattr(gguf_extract, name) is not None
    assert name in dir(gguf_extract)


# What a fresh interpreter holds after reaching one exported name: whether numpy and
# llama-cpp-python are loaded, and whether the module of llama-cpp-python that loads llama.cpp's
# library was done before numpy was (sys.modules keeps modules in the order their imports ended).
LOAD_ORDER = """
import sys, gguf_extract
getattr(gguf_extract, sys.argv[1])
loaded = list(sys.modules)
library = "llama_cpp.llama_cpp"
print("numpy" in loaded, "llama_cpp" in loaded, "numpy" in loaded and library in loaded
      and loaded.index(library) < loaded.index("numpy"))
"""


@pytest.mark.parametrize("module", sorted(set(gguf_extract._EXPORTS.values())))
def test_llama_cpp_is_loaded_before_numpy_and_light_modules_load_neither(module: str) -> None:
    """A CUDA build of llama-cpp-python crashed loading any model where numpy was loaded first
    (core/model.py). One name per defining module, each in a fresh interpreter."""
    name = next(name for name, defined in gguf_extract._EXPORTS.items() if defined == module)
    result = subprocess.run([sys.executable, "-c", LOAD_ORDER, name], capture_output=True, text=True, timeout=120, check=True)
    numpy_loaded, llama_loaded, llama_first = result.stdout.split()
    if module in gguf_extract._LIGHT_MODULES:
        assert (numpy_loaded, llama_loaded) == ("False", "False"), name
    else:
        assert llama_first == "True", name


def test_a_name_that_is_not_exported_is_refused() -> None:
    with pytest.raises(AttributeError, match="no attribute 'read_documents'"):
        gguf_extract.read_documents  # noqa: B018


def library_reference() -> str:
    """The "Library reference" section of docs/library.md, up to the next section."""
    text = (ROOT / "docs" / "library.md").read_text(encoding="utf-8")
    return text[text.index("\n## Library reference\n") :].split("\n## ", 2)[1]


def test_the_library_reference_ends_where_the_next_section_starts() -> None:
    assert library_reference().startswith("Library reference\n") and "Package layout" not in library_reference()


@pytest.mark.parametrize("name", gguf_extract.__all__)
def test_every_exported_name_is_documented_in_the_library_reference(name: str) -> None:
    found = re.search(rf"`{re.escape(name)}[`(\[ ]", library_reference())
    assert found, f"{name} is not in the Library reference of docs/library.md"


@pytest.mark.parametrize("second_way", ["compile_schema", "load_schema_file", "ChatPrompt"])
def test_one_way_to_do_each_thing(second_way: str) -> None:
    """Extractor.compile compiles, load_schema reads a schema from anywhere: the lower-level
    spellings are not part of the library's face."""
    assert not hasattr(gguf_extract, second_way)


@pytest.mark.parametrize(
    ("function", "positional"),
    [
        (compile_schema, ["schema", "vocab"]),
        (Extractor.compile, ["self", "schema"]),
        (compile_automaton, ["schema"]),
        (compile_schema_tree, ["root"]),
        (compile_tree, ["root"]),
        (check_schema_support, ["schema"]),
    ],
)
def test_compile_options_are_keyword_only(function: object, positional: list[str]) -> None:
    parameters = inspect.signature(function).parameters.values()  # type: ignore[arg-type]
    assert [p.name for p in parameters if p.kind is not inspect.Parameter.KEYWORD_ONLY] == positional
    assert {p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY} <= {"recursion_depth", "lenient", "grounded"}


def test_a_positional_option_is_refused() -> None:
    with pytest.raises(TypeError, match="positional"):
        compile_automaton({"type": "integer"}, 3)  # type: ignore[misc]


def test_the_library_reads_the_defaults_the_command_line_shows() -> None:
    settings, options = SamplingSettings(), ModelOptions()
    assert (settings.max_tokens, settings.temperature, settings.top_p) == (
        gguf_extract.DEFAULT_MAX_TOKENS,
        gguf_extract.DEFAULT_TEMPERATURE,
        gguf_extract.DEFAULT_TOP_P,
    )
    assert options.n_gpu_layers == gguf_extract.DEFAULT_GPU_LAYERS
    assert inspect.signature(compile_automaton).parameters["recursion_depth"].default == gguf_extract.DEFAULT_RECURSION_DEPTH


CHANGED_DEFAULTS = """
import inspect, json
import gguf_extract.core.defaults as defaults
defaults.DEFAULT_MAX_TOKENS, defaults.DEFAULT_TEMPERATURE, defaults.DEFAULT_TOP_P = 77, 0.5, 0.25
defaults.DEFAULT_GPU_LAYERS, defaults.DEFAULT_RECURSION_DEPTH, defaults.DEFAULT_ENCODING = 5, 7, "latin-1"
from gguf_extract.cli import app, request
shown = {name: p.default for name, p in inspect.signature(app.extract).parameters.items()}
shown["check_recursion_depth"] = inspect.signature(app.check).parameters["recursion_depth"].default
shown["text_encoding"] = inspect.signature(app.text).parameters["encoding"].default
shown["request_encoding"] = request.Request.__dataclass_fields__["encoding"].default
print(json.dumps(shown, default=str))
"""


def test_the_command_line_shows_the_librarys_defaults_never_copies() -> None:
    """With the library's defaults changed before the command line is imported, every option
    the command line shows follows them."""
    result = subprocess.run([sys.executable, "-c", CHANGED_DEFAULTS], capture_output=True, text=True, timeout=120, check=True)
    shown = json.loads(result.stdout)
    assert (shown["max_tokens"], shown["temperature"], shown["top_p"], shown["n_gpu_layers"]) == (77, 0.5, 0.25, 5)
    assert shown["recursion_depth"] == shown["check_recursion_depth"] == 7
    assert shown["encoding"] == shown["text_encoding"] == shown["request_encoding"] == "latin-1"


def test_load_schema_returns_the_schema_and_schema_label_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.json").write_text('{"type": "integer"}')
    assert gguf_extract.load_schema("./mine.json") == {"type": "integer"}
    assert gguf_extract.schema_label("./mine.json") == "mine.json"
    assert gguf_extract.load_schema("person")["type"] == "object"
    assert gguf_extract.schema_label("person") == "person (packaged)"
    assert gguf_extract.schema_label("package.module:Model") == "package.module:Model"
