"""Where a schema comes from: a file, a ready-made schema by name, or a pydantic model.

`load_schema` accepts `path/to/schema.json`, a name from the packaged `schemas/` folder
(`person`, `invoice`, ...), or `package.module:ClassName` naming a pydantic model. Code is
imported only in the last form, when the user asks for it by that syntax.
"""

from __future__ import annotations

import importlib
import re
import sys
from importlib import resources
from pathlib import Path

from ...errors import SchemaError
from .load import Schema, check_schema, load_schema_file

_CLASS_SPEC = re.compile(r"^(?P<module>[A-Za-z_][\w.]*):(?P<name>[A-Za-z_]\w*)$")


def packaged_schema_names() -> list[str]:
    """Names of the ready-made schemas shipped with the package."""
    folder = resources.files("gguf_extract.schemas")
    return sorted(entry.name.removesuffix(".json") for entry in folder.iterdir() if entry.name.endswith(".json"))


def load_schema(spec: str) -> Schema:
    """The schema `spec` names (see the module's docstring), checked. Raises SchemaError."""
    path = Path(spec)
    if path.exists():
        return load_schema_file(path)
    match = _CLASS_SPEC.match(spec)
    if match:
        return _pydantic_schema(match["module"], match["name"])
    if spec in packaged_schema_names():
        with resources.as_file(resources.files("gguf_extract.schemas") / f"{spec}.json") as packaged:
            return load_schema_file(packaged)
    raise SchemaError(
        f"schema file not found: {spec}",
        hint=f"pass a JSON Schema file, module:Class for a pydantic model, or one of: {', '.join(packaged_schema_names())}",
    )


def schema_label(spec: str) -> str:
    """What messages call the schema `spec` names, found as load_schema finds it: the file's
    path, the `module:Class`, or the packaged schema's name marked `(packaged)`."""
    path = Path(spec)
    if path.exists():
        return str(path)
    if _CLASS_SPEC.match(spec) or spec not in packaged_schema_names():
        return spec
    return f"{spec} (packaged)"


def _pydantic_schema(module_name: str, class_name: str) -> Schema:
    spec = f"{module_name}:{class_name}"
    if "" not in sys.path:
        sys.path.insert(0, "")  # like `python -m`: modules beside the current directory
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise SchemaError(f"cannot import {module_name!r} for the schema {spec}: {error}", hint="check PYTHONPATH") from None
    model = getattr(module, class_name, None)
    if model is None:
        raise SchemaError(f"module {module_name!r} has no attribute {class_name!r}")
    to_schema = getattr(model, "model_json_schema", None)
    if not callable(to_schema):
        raise SchemaError(
            f"{spec} is not a pydantic model class (no model_json_schema)", hint="name a pydantic BaseModel subclass"
        )
    return check_schema(to_schema(), source=spec)
