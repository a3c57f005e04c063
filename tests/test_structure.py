"""The layout of core/ and cli/: rooms by pipeline stage, each importing only the rooms below it.

A room is a folder of core/ (`core/decode/`, ...), a module at core's top (`core/errors.py`,
...), the facade (`gguf_extract/__init__.py`) or `cli/`. Every import in core/ and cli/ (at
module level, inside functions, under TYPE_CHECKING) is read with `ast`; a room may import
itself and the rooms before it in the order that core/__init__.py's docstring declares, so no
two rooms import each other. Nor does a room read a leading-underscore name of another room.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "gguf_extract"


@dataclass(frozen=True)
class Module:
    name: str  # dotted, below the package: "core.decode.decoder", "cli.app", "" for the facade
    tree: ast.Module
    is_package: bool


@dataclass(frozen=True)
class Import:
    importer: str
    target: str  # the module imported from, dotted below the package
    names: tuple[str, ...]
    line: int


def room_of(module: str) -> str:
    """The room a module belongs to: "facade", "cli", a folder of core/ or a module at its top."""
    parts = module.split(".") if module else []
    if not parts:
        return "facade"
    if parts[0] == "cli":
        return "cli"
    return parts[1] if len(parts) > 1 else "core"


def declared_order(docstring: str) -> list[tuple[str, ...]]:
    """The rooms in core/__init__.py's `Order:` line, lowest first: `a, b < c < d` is [(a, b), (c,), (d,)]."""
    found = re.search(r"^Order:(.*?)(?:\n\n|\Z)", docstring, re.MULTILINE | re.DOTALL)
    assert found, "core/__init__.py's docstring declares no `Order:` of rooms"
    return [tuple(name.strip() for name in layer.split(",")) for layer in " ".join(found.group(1).split()).split("<")]


def read_modules(root: Path) -> dict[str, Module]:
    """Every module of core/ and cli/, and the facade, parsed."""
    paths = [root / "__init__.py", *sorted((root / "core").rglob("*.py")), *sorted((root / "cli").rglob("*.py"))]
    modules = {}
    for path in paths:
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        modules[name] = Module(name, ast.parse(path.read_text(encoding="utf-8")), is_package)
    return modules


def imports_of(module: Module, known: set[str]) -> Iterator[Import]:
    """Each import of the package in `module`, anywhere in it; `from a import b` where `a.b` is
    a module counts as an import of `a.b`."""
    package = module.name if module.is_package else module.name.rpartition(".")[0]
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == PACKAGE or alias.name.startswith(f"{PACKAGE}."):
                    yield Import(module.name, alias.name.removeprefix(PACKAGE).lstrip("."), (), node.lineno)
            continue
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".") if package else []
            base = base[: len(base) - node.level + 1] if node.level > 1 else base
            target = ".".join([*base, *([node.module] if node.module else [])])
        elif node.module == PACKAGE or (node.module or "").startswith(f"{PACKAGE}."):
            target = (node.module or "").removeprefix(PACKAGE).lstrip(".")
        else:
            continue
        plain = []
        for alias in node.names:
            submodule = f"{target}.{alias.name}" if target else alias.name
            if submodule in known:
                yield Import(module.name, submodule, (), node.lineno)
            else:
                plain.append(alias.name)
        if plain:
            yield Import(module.name, target, tuple(plain), node.lineno)


def room_graph(modules: dict[str, Module], room: Callable[[str], str] = room_of) -> dict[tuple[str, str], list[Import]]:
    """(importing room, imported room) for every import between two rooms, with the imports."""
    edges: dict[tuple[str, str], list[Import]] = {}
    for module in modules.values():
        for found in imports_of(module, set(modules)):
            here, there = room(module.name), room(found.target)
            if here != there:
                edges.setdefault((here, there), []).append(found)
    return edges


def cycles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected groups of more than one room (Tarjan's algorithm)."""
    following: dict[str, list[str]] = {}
    for start, end in edges:
        following.setdefault(start, []).append(end)
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(room: str) -> None:
        order[room] = low[room] = len(order)
        stack.append(room)
        for nxt in following.get(room, []):
            if nxt not in order:
                visit(nxt)
                low[room] = min(low[room], low[nxt])
            elif nxt in stack:
                low[room] = min(low[room], order[nxt])
        if low[room] == order[room]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == room:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for room in sorted(following):
        if room not in order:
            visit(room)
    return groups


def against_order(edges: dict[tuple[str, str], list[Import]], order: list[tuple[str, ...]]) -> list[str]:
    """Each import of a room that is not below the importer in `order`, as `importer line: target`."""
    rank = {room: height for height, layer in enumerate(order) for room in layer}
    wrong = []
    for (here, there), found in sorted(edges.items()):
        if here not in rank or there not in rank or rank[there] >= rank[here]:
            wrong += [f"{f.importer}:{f.line} imports {f.target} ({here} -> {there})" for f in found]
    return wrong


def private_names(tree: ast.Module) -> set[str]:
    """Leading-underscore names a module defines: at its top, in class bodies, as `self._x`."""
    names: set[str] = set()
    scopes: list[list[ast.stmt]] = [tree.body] + [node.body for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    for body in scopes:
        for statement in body:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(statement.name)
            elif isinstance(statement, ast.Assign):
                names.update(target.id for target in statement.targets if isinstance(target, ast.Name))
            elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                names.add(statement.target.id)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and _is_self(node.value):
            names.add(node.attr)
    return {name for name in names if _is_private(name)}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def private_reads(modules: dict[str, Module], order: list[tuple[str, ...]]) -> list[str]:
    """Each read of another room's leading-underscore name: imported by name, or read as an
    attribute (`compiled._dfa`) that a room below the reader defines and the reader does not.
    ast knows no types: a name the reader's room defines as well is not told apart, and names
    of rooms above the reader are left out, as the reader cannot hold their objects (`llama._model`
    in model.py is llama.cpp's, not the extractor's); `self._x` and `cls._x` are the module's own."""
    rank = {room: height for height, layer in enumerate(order) for room in layer}
    defined: dict[str, set[str]] = {}
    for module in modules.values():
        defined.setdefault(room_of(module.name), set()).update(private_names(module.tree))
    known = set(modules)
    found = []
    for module in modules.values():
        room = room_of(module.name)
        for imported in imports_of(module, known):
            if room_of(imported.target) != room:
                private = [name for name in imported.names if _is_private(name)]
                found += [f"{module.name}:{imported.line} imports {imported.target}.{name}" for name in private]
        below = [names for owner, names in defined.items() if owner != room and rank.get(owner, -1) < rank.get(room, -1)]
        others = set().union(*below) - defined.get(room, set())
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Attribute) and node.attr in others and not _is_self(node.value):
                found.append(f"{module.name}:{node.lineno} reads {ast.unparse(node)}")
    return found


MODULES = read_modules(ROOT)
ORDER = declared_order(ast.get_docstring(MODULES["core"].tree) or "")


def test_every_room_of_core_has_its_place_in_the_order() -> None:
    placed = {room for layer in ORDER for room in layer}
    rooms = {room_of(name) for name in MODULES} - {"core"}
    assert rooms - placed == set(), "a new room of core/ needs a place in core/__init__.py's Order"
    assert placed - rooms == set(), "the Order names a room core/ does not have"


def test_no_cycle_between_rooms() -> None:
    assert cycles(set(room_graph(MODULES))) == []


def test_each_room_imports_only_the_rooms_below_it() -> None:
    assert against_order(room_graph(MODULES), ORDER) == []


def test_no_room_reads_another_rooms_leading_underscore_names() -> None:
    assert private_reads(MODULES, ORDER) == []


def schema_room_of(module: str) -> str:
    """The room of core/schema/ a module belongs to: a folder of it or a module at its top; "" outside schema/."""
    parts = module.split(".")
    return parts[2] if parts[:2] == ["core", "schema"] and len(parts) > 2 else ""


def test_each_room_of_schema_imports_only_the_rooms_below_it() -> None:
    """core/schema/ is laid out like core/: its rooms (read/, nodes/, build/, ...) in the order its
    __init__.py's docstring declares, so no two of them import each other and lexical/ none."""
    schema = {name: module for name, module in MODULES.items() if name.startswith("core.schema.")}
    order = declared_order(ast.get_docstring(MODULES["core.schema"].tree) or "")
    assert {schema_room_of(name) for name in schema} == {room for layer in order for room in layer}
    edges = {pair: found for pair, found in room_graph(schema, schema_room_of).items() if pair[1]}
    assert against_order(edges, order) == []


FOLDERS = sorted(name for name, module in MODULES.items() if module.is_package and name not in ("", "core"))


@pytest.mark.parametrize("name", FOLDERS)
def test_each_folder_says_what_it_holds_and_what_it_may_import(name: str) -> None:
    """Every folder, a room's sub-rooms too (core/schema/read/, ...)."""
    docstring = ast.get_docstring(MODULES[name].tree) or ""
    assert "May import" in docstring, f"{name}/__init__.py's docstring should say what the room is for and what it may import"


def test_every_folder_is_a_package_that_installs() -> None:
    """pyproject.toml lists its packages by name: a folder missing there is left out of the wheel."""
    listed = re.search(r"^packages = \[(.*?)\]", (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)
    assert listed, "pyproject.toml lists no packages"
    packages = {PACKAGE + (f".{name}" if name else "") for name, module in MODULES.items() if module.is_package}
    assert packages - set(re.findall(r'"([\w.]+)"', listed.group(1))) == set()


# -- the checks themselves, on made-up modules ----------------------------------------------


def made_up(sources: dict[str, str]) -> dict[str, Module]:
    return {name: Module(name, ast.parse(source), is_package) for (name, is_package), source in _keyed(sources).items()}


def _keyed(sources: dict[str, str]) -> dict[tuple[str, bool], str]:
    return {(name.removesuffix("/"), name.endswith("/")): source for name, source in sources.items()}


LAYERS = [("errors",), ("vocab",), ("decode",)]


@pytest.mark.parametrize(
    "source",
    [
        "from ..decode.decoder import Decoder",
        "def later():\n    from ..decode import decoder",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..decode.decoder import Decoder",
        "import gguf_extract.core.decode.decoder",
        "from gguf_extract.core.decode import decoder",
    ],
)
def test_an_import_against_the_order_is_found_wherever_it_is(source: str) -> None:
    modules = made_up({"core.vocab/": "", "core.vocab.table": source, "core.decode/": "", "core.decode.decoder": "Decoder = 1"})
    assert len(against_order(room_graph(modules), LAYERS)) == 1
    assert cycles(set(room_graph(modules))) == []


def test_a_cycle_between_rooms_is_found() -> None:
    modules = made_up(
        {
            "core.vocab/": "",
            "core.vocab.table": "from ..decode.decoder import Decoder",
            "core.decode/": "",
            "core.decode.decoder": "from ..vocab.table import Table",
        }
    )
    assert cycles(set(room_graph(modules))) == [["decode", "vocab"]]
    assert against_order(room_graph(modules), LAYERS) == ["core.vocab.table:1 imports core.decode.decoder (vocab -> decode)"]


def test_imports_inside_a_room_and_downwards_pass() -> None:
    modules = made_up(
        {
            "core.errors": "",
            "core.decode/": "",
            "core.decode.decoder": "from .state import State\nfrom ..errors import Failed",
            "core.decode.state": "from . import decoder",
        }
    )
    assert against_order(room_graph(modules), LAYERS) == []


def test_reading_another_rooms_private_name_is_found() -> None:
    modules = made_up(
        {
            "core.vocab/": "",
            "core.vocab.table": "class Table:\n    def __init__(self):\n        self._rows = []\n_CACHE = {}",
            "core.decode/": "",
            "core.decode.decoder": "from ..vocab.table import _CACHE\ndef f(table):\n    return table._rows",
            "core.decode.state": (
                "class State:\n    def __init__(self):\n        self._own = 1\n    def g(self, other):\n        return other._own"
            ),
        }
    )
    assert private_reads(modules, LAYERS) == [
        "core.decode.decoder:1 imports core.vocab.table._CACHE",
        "core.decode.decoder:3 reads table._rows",
    ]


def test_the_order_is_read_from_the_docstring() -> None:
    docstring = "What core holds.\n\nOrder: errors, defaults <\n    automaton < schema\n\nMore."
    assert declared_order(docstring) == [("errors", "defaults"), ("automaton",), ("schema",)]


# -- modules inside a room, and the paths their texts name ------------------------------------


def module_cycles(modules: dict[str, Module]) -> list[list[str]]:
    """The groups of modules that import each other round, inside a room or across: every import
    counted (module level, in functions, under TYPE_CHECKING); `from .pkg import name` is an
    import of the package's `__init__`, except from a module inside that package, which Python has
    imported already."""
    known = set(modules)
    edges = set()
    for module in modules.values():
        for found in imports_of(module, known):
            target = found.target
            while target and target not in known:
                target = target.rpartition(".")[0]
            inside = modules.get(target) is not None and modules[target].is_package and module.name.startswith(f"{target}.")
            if target and target != module.name and not inside:
                edges.add((module.name, target))
    return cycles(edges)


def test_no_two_modules_import_each_other_round() -> None:
    assert module_cycles(MODULES) == []


def test_a_cycle_between_modules_of_one_room_is_found() -> None:
    modules = made_up(
        {
            "core.schema/": "",
            "core.schema.build": "from .arrays import build_array",
            "core.schema.arrays": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .build import Build",
            "core.schema.numbers": "from . import build",
        }
    )
    assert module_cycles(modules) == [["core.schema.arrays", "core.schema.build"]]


SOURCES = sorted(path for path in ROOT.rglob("*.py") if not {".git", ".venv", "__pycache__"} & set(path.parts))
PATH_NAMED = re.compile(r"(?<![\w/.])(?:gguf_extract/)?((?:\w+/)*\w+\.py)\b")
MODULE_NAMED = re.compile(r"(?<![\w.])(?:gguf_extract\.)?((?:core|cli)(?:\.\w+)+)")


def texts_of(path: Path) -> Iterator[tuple[int, str]]:
    """The docstrings and comments of a source file, with the line each starts on."""
    source = path.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring is not None:
                yield node.body[0].lineno, docstring
    for number, line in enumerate(source.splitlines(), start=1):
        if "#" in line:
            yield number, line[line.index("#") :]


def path_exists(named: str, beside: Path, root: Path, basenames: set[str]) -> bool:
    """Whether a `.py` path a text names is a file: from the root, from core/, from the folder of
    the text's own file or one above it; a bare file name anywhere, or one that would shadow a
    module (`json.py` in a document folder, core/processes.py's danger)."""
    if "/" not in named:
        stem = named.removesuffix(".py")
        return named in basenames or stem in sys.stdlib_module_names or stem == PACKAGE
    bases = [root, root / "core", *beside.relative_to(root).parents[:-1]]
    return any((base if base.is_absolute() else root / base).joinpath(named).is_file() for base in [*bases, beside])


def module_exists(dotted: str, modules: dict[str, Module]) -> bool:
    """Whether `core.x.y...` names a module, or a name inside one (the parts after the first
    module found are not checked: they are names in it, not modules)."""
    parts = dotted.split(".")
    for end in range(2, len(parts) + 1):
        name = ".".join(parts[:end])
        if name in modules:
            if not modules[name].is_package:
                return True
            continue
        package = ".".join(parts[: end - 1])
        return package != "core" and package in modules
    return True


def stale_names(root: Path, modules: dict[str, Module], sources: list[Path]) -> list[str]:
    basenames = {path.name for path in sources}
    stale = []
    for path in sources:
        if path.parts[len(root.parts)] not in ("core", "cli", "__init__.py"):
            continue
        for line, text in texts_of(path):
            for match in PATH_NAMED.finditer(text):
                if not path_exists(match.group(1), path.parent, root, basenames):
                    stale.append(f"{path.relative_to(root)}:{line} names {match.group(1)}")
            for match in MODULE_NAMED.finditer(text):
                if not module_exists(match.group(1), modules):
                    stale.append(f"{path.relative_to(root)}:{line} names {match.group(1)}")
    return stale


def test_docstrings_and_comments_name_only_modules_that_exist() -> None:
    assert stale_names(ROOT, MODULES, SOURCES) == []


def test_a_stale_module_name_is_found(tmp_path: Path) -> None:
    (tmp_path / "core" / "decode").mkdir(parents=True)
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "core" / "__init__.py").write_text('"""Rooms."""\n')
    (tmp_path / "core" / "decode" / "__init__.py").write_text("")
    text = '"""Reads core.decode.state, core.decode_state and decode/steps.py; see core/decode/state.py."""\n'
    text += "# core.decode.state.Position; json.py in a folder would shadow json\n"
    (tmp_path / "core" / "decode" / "state.py").write_text(text)
    modules = read_modules(tmp_path)
    sources = sorted(tmp_path.rglob("*.py"))
    assert stale_names(tmp_path, modules, sources) == [
        "core/decode/state.py:1 names decode/steps.py",
        "core/decode/state.py:1 names core.decode_state",
    ]


MOST_LINES_A_MODULE = 500
MOST_LINES_A_FUNCTION = 80  # its body: a command's option declarations are its signature


def oversized(root: Path) -> list[str]:
    """Each module of core/ and cli/ over its bound of lines, and each function whose body is."""
    found = []
    for path in [root / "__init__.py", *sorted((root / "core").rglob("*.py")), *sorted((root / "cli").rglob("*.py"))]:
        source = path.read_text(encoding="utf-8")
        name = path.relative_to(root)
        if len(source.splitlines()) > MOST_LINES_A_MODULE:
            found.append(f"{name}: {len(source.splitlines())} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                body = node.body[1:] if ast.get_docstring(node) is not None and len(node.body) > 1 else node.body
                lines = (node.end_lineno or node.lineno) - body[0].lineno + 1
                if lines > MOST_LINES_A_FUNCTION:
                    found.append(f"{name}:{node.lineno} {node.name}: {lines} lines")
    return found


def test_no_module_or_function_body_is_oversized() -> None:
    assert oversized(ROOT) == []
