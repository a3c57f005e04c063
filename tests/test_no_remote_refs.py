"""No reference is ever retrieved: a `$ref` that does not point inside the schema is refused
by name (lenient or not), and no validator built by the library fetches one. A local HTTP
server stands in for the network and must see no request at all."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from gguf_extract.cli.app import check_app
from gguf_extract.core.errors import SchemaError, UnsupportedSchema
from gguf_extract.core.index.compiled import CompiledSchema, compile_automaton
from gguf_extract.core.schema.read.load import check_schema
from gguf_extract.core.schema.read.validation import best_error, validator_for_schema


class _Recorder(http.server.BaseHTTPRequestHandler):
    requests: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        type(self).requests.append(self.path)
        body = json.dumps({"type": "integer"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    """A server on 127.0.0.1 (a free port) answering every GET with a schema; yields its
    base URL and the paths requested."""
    requests: list[str] = []
    handler = type("Handler", (_Recorder,), {"requests": requests})
    httpd = http.server.HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", requests
    finally:
        httpd.shutdown()
        httpd.server_close()


def _schemas(base: str) -> list[tuple[dict[str, Any], str, str]]:
    """(schema, keyword, pointer) of each remote reference tried."""
    url = f"{base}/x.json"
    return [
        ({"enum": [1, 2], "not": {"$ref": url}}, "$ref", "/not/$ref"),
        ({"type": "object", "propertyNames": {"$ref": url}}, "$ref", "/propertyNames/$ref"),
        ({"properties": {"a": {"$ref": url}}, "required": ["a"]}, "$ref", "/properties/a/$ref"),
        ({"$defs": {"n": {"$ref": f"{url}#/a"}}, "anyOf": [{"$ref": "#/$defs/n"}, {"type": "null"}]}, "$ref", "/$defs/n/$ref"),
        ({"$dynamicRef": url, "type": "integer"}, "$dynamicRef", "/$dynamicRef"),
        ({"$schema": "https://json-schema.org/draft/2019-09/schema", "$recursiveRef": url}, "$recursiveRef", "/$recursiveRef"),
        # Relative references name no resource of the schema: resolved against the root's $id,
        # or an embedded resource's, they are remote all the same.
        ({"$id": f"{base}/root.json", "properties": {"a": {"$ref": "x.json"}}}, "$ref", "/properties/a/$ref"),
        (
            {
                "$id": f"{base}/root.json",
                "$defs": {"in": {"$id": "sub/in.json", "items": {"$ref": "x.json"}}},
                "$ref": "#/$defs/in",
            },
            "$ref",
            "/$defs/in/items/$ref",
        ),
    ]


@pytest.mark.parametrize("lenient", [False, True])
@pytest.mark.parametrize("case", range(8))
def test_compile_refuses_remote_reference_without_fetching(server: tuple[str, list[str]], case: int, lenient: bool) -> None:
    base, requests = server
    schema, keyword, pointer = _schemas(base)[case]
    with pytest.raises(UnsupportedSchema) as refusal:
        compile_automaton(schema, lenient=lenient)
    assert (refusal.value.keyword, refusal.value.pointer, refusal.value.relaxable) == (keyword, pointer, False)
    assert "never retrieved" in refusal.value.message and base in refusal.value.message
    assert requests == []


def test_extract_check_refuses_remote_reference_without_fetching(server: tuple[str, list[str]], tmp_path: Path) -> None:
    base, requests = server
    path = tmp_path / "remote.json"
    path.write_text(json.dumps({"enum": [1, 2], "not": {"$ref": f"{base}/x.json"}}))
    result = CliRunner().invoke(check_app, [str(path)])
    assert result.exit_code == 3
    assert "unsupported keyword '$ref' at /not/$ref" in result.output
    assert "Traceback" not in result.output
    assert requests == []


def test_meta_schema_check_fetches_nothing(server: tuple[str, list[str]]) -> None:
    base, requests = server
    check_schema({"$ref": f"{base}/x.json", "properties": {"a": {"$ref": f"{base}/y.json"}}})
    assert requests == []


def test_validation_never_retrieves(server: tuple[str, list[str]]) -> None:
    """Final validation of a schema that slipped past the compiler (built by hand here) fails
    cleanly instead of fetching."""
    base, requests = server
    schema = {"enum": [1, 2], "not": {"$ref": f"{base}/x.json"}}
    compiled = CompiledSchema.__new__(CompiledSchema)
    compiled.schema = schema
    with pytest.raises(SchemaError, match="never retrieved"):
        compiled.validate("1")
    with pytest.raises(SchemaError, match="never retrieved"):
        best_error(validator_for_schema({"propertyNames": {"$ref": f"{base}/x.json"}}), {"a": 1})
    assert requests == []


def test_local_references_still_compile_and_validate() -> None:
    schema = {"$defs": {"n": {"type": "integer"}}, "not": {"$ref": "#/$defs/n"}, "enum": [1, "a"]}
    automaton = compile_automaton(schema)
    assert automaton.dfa.walk(automaton.dfa.start, b'"a"') != 0
    assert best_error(validator_for_schema(schema), "a") is None


def test_anchor_references_resolve_inside_the_schema() -> None:
    schema = {"$defs": {"n": {"$anchor": "n", "type": "integer"}}, "properties": {"a": {"$ref": "#n"}}, "required": ["a"]}
    automaton = compile_automaton(schema)
    assert automaton.relaxed == []
    assert automaton.dfa.walk(automaton.dfa.start, b'{"a": 7}') != 0
    assert automaton.dfa.walk(automaton.dfa.start, b'{"a": "x"') == 0
