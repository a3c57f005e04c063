"""The extraction prompt: an instruction that shows the schema compactly, and the document,
in a model's chat template and as its tokens (`Prompts`).

The automaton enforces every constraint, so the prompt only needs to tell the model what
each field means: names, types and descriptions, in a TypeScript-like shorthand that costs
far fewer prompt tokens than the schema's JSON.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import DocumentError, SchemaError
from ..index.compiled import CompiledSchema
from ..jsontext import escaped_surrogates, join_pointer
from ..model import ChatPrompt, GGUFModel, render_chat
from ..schema.read.load import Schema
from ..schema.read.resources import Resources

DEFAULT_INSTRUCTIONS = (
    "Extract the information from the user's document as a JSON object with this shape. "
    "Copy values exactly as written in the document."
)
_MAX_DEPTH = 6
# Small models copy dates as written ("14 June 2024"); showing the shape steers them to ISO.
_FORMAT_SHAPES = {"date": "YYYY-MM-DD", "date-time": "YYYY-MM-DDThh:mm:ss+hh:mm"}


def build_messages(schema: Schema, document: str, instructions: str | None = None) -> list[dict[str, str]]:
    # A lone surrogate (a schema's "\\ud800", in a description say) cannot be tokenized as
    # UTF-8: the prompt shows its escape instead.
    system = escaped_surrogates(f"{instructions or DEFAULT_INSTRUCTIONS}\n\n{describe_schema(schema)}")
    return [{"role": "system", "content": system}, {"role": "user", "content": document}]


class Prompts:
    """The prompts for one model (its tokenizer: no weights needed), rendered in its chat
    template and tokenized, with the prefix every prompt for a schema shares."""

    def __init__(self, tokenizer: GGUFModel) -> None:
        self.tokenizer = tokenizer
        self._shared_prefixes: dict[tuple[int, str | None], tuple[CompiledSchema, list[int]]] = {}

    def for_document(self, compiled: CompiledSchema, document: str, instructions: str | None = None) -> ChatPrompt:
        """The prompt for extracting from `document`; raises DocumentError where it is empty."""
        if not document.strip():
            raise DocumentError("the document is empty", hint="pass a file with text in it")
        return render_chat(self.tokenizer, build_messages(compiled.schema, document, instructions))

    def tokens_of(self, prompt: ChatPrompt) -> list[int]:
        return self.tokenizer.tokenize_prompt(prompt, add_bos=self.needs_bos(prompt.text))

    def needs_bos(self, prompt: str) -> bool:
        """Whether the model's BOS token goes before `prompt` (it wants one, and the text does not start with it)."""
        bos = self.tokenizer.bos_text()
        return self.tokenizer.add_bos() and not (bos and prompt.startswith(bos))

    def shared_prefix(self, compiled: CompiledSchema, instructions: str | None = None) -> list[int]:
        """The prompt tokens every document shares for this schema and instructions (the
        instructions and the schema's outline): the common start of two prompts' tokens."""
        key = (id(compiled), instructions)
        found = self._shared_prefixes.get(key)
        if found is None:
            first, second = (self.tokens_of(self.for_document(compiled, probe, instructions)) for probe in ("a", "b"))
            found = (compiled, first[: common_length(first, second)])  # holding `compiled` keeps its id unique
            self._shared_prefixes[key] = found
        return found[1]


def common_length(first: list[int], second: list[int]) -> int:
    """How many tokens `first` and `second` start with alike."""
    length = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        length += 1
    return length


def describe_schema(schema: Schema) -> str:
    """A compact, human-readable outline of `schema`, e.g. `{name: string, age?: integer}`."""
    return _Describer(schema).describe(schema, 0, "")


class _Describer:
    """Describes the subschemas of one root, each with its JSON pointer (a `$ref` resolves
    where it is written: inside an embedded resource, against that resource)."""

    def __init__(self, root: Schema) -> None:
        self.resources = Resources(root)

    def describe(self, schema: Any, depth: int, pointer: str) -> str:
        if not isinstance(schema, dict) or depth > _MAX_DEPTH:
            return "any"
        if "$ref" in schema:
            try:
                target, target_pointer = self.resources.resolve(schema["$ref"], join_pointer(pointer, "$ref"))
            except SchemaError:
                return "any"
            return self.describe(target, depth + 1, target_pointer)
        if "const" in schema:
            return json.dumps(schema["const"], ensure_ascii=False)
        if "enum" in schema:
            return " | ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
        if "anyOf" in schema:
            where = join_pointer(pointer, "anyOf")
            return " | ".join(self.describe(s, depth + 1, join_pointer(where, i)) for i, s in enumerate(schema["anyOf"]))
        return self._typed(schema, depth, pointer)

    def _typed(self, schema: dict[str, Any], depth: int, pointer: str) -> str:
        declared = schema.get("type")
        if declared is None:
            declared = "object" if "properties" in schema else "any"
        if isinstance(declared, list):
            return " | ".join(self._typed({**schema, "type": t}, depth, pointer) for t in declared)
        if declared == "object" and "properties" in schema:
            return self._object(schema, depth, pointer)
        if declared == "array":
            return f"{self.describe(schema.get('items', {}), depth + 1, join_pointer(pointer, 'items'))}[]"
        if declared == "string" and "format" in schema:
            shape = _FORMAT_SHAPES.get(schema["format"])
            return f"string ({schema['format']}{', ' + shape if shape else ''})"
        return str(declared)

    def _object(self, schema: dict[str, Any], depth: int, pointer: str) -> str:
        required = set(schema.get("required", []))
        fields = []
        for name, sub in schema["properties"].items():
            mark = "" if name in required else "?"
            text = f"{name}{mark}: {self.describe(sub, depth + 1, join_pointer(join_pointer(pointer, 'properties'), name))}"
            note = sub.get("description") if isinstance(sub, dict) else None
            fields.append(f"{text} // {note}" if note else text)
        indent = "  " * (depth + 1)
        closing = "  " * depth
        return "{\n" + "".join(f"{indent}{f},\n" for f in fields) + closing + "}"
