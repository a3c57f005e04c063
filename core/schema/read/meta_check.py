"""A fast yes to "does this schema pass its draft's meta-schema?".

Checking a schema against its meta-schema with jsonschema walks the meta-schema keyword by
keyword, building a validator per step; for the small schemas of a typical run it was about
a third of the time from schema to first mask. The meta-schemas use a dozen keywords, so each
is turned once into Python closures over the same document jsonschema is given, keeping
jsonschema's own type and format checkers (a plain reference is taken without the latter).
The closures answer True only where every check passed; anything they cannot settle exactly
(an `enum` or `uniqueItems` over values other than strings, a keyword they do not know)
answers False, and the caller then asks jsonschema, which also words the error.
tests/test_meta_check.py holds the two to the same verdicts over the corpus and generated
schemas.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import jsonschema

from ...jsontext import unescape_pointer_part

Check = Callable[[Any], bool]
# Keywords of a meta-schema that only annotate or hold definitions: they check nothing.
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "id", "title", "description", "$comment", "default", "deprecated", "definitions", "$defs"}
)


class _Unsupported(Exception):
    """The meta-schema uses a keyword the closures do not implement."""


def fast_meta_check(meta_schema: Any, validator: type[jsonschema.protocols.Validator], format_checker: Any) -> Check | None:
    """A check that answers True only for schemas `meta_schema` accepts (under `validator`'s
    draft), or None where the meta-schema uses a keyword this module does not implement."""
    try:
        return _Compiler(meta_schema, validator, format_checker).at("")
    except _Unsupported:
        return None


class _Compiler:
    def __init__(self, document: Any, validator: type[jsonschema.protocols.Validator], format_checker: Any) -> None:
        self.document = document
        self.draft4 = validator.__name__ == "Draft4Validator"
        self.ref_only = validator.__name__ in ("Draft4Validator", "Draft6Validator", "Draft7Validator")
        self.types = validator.TYPE_CHECKER
        self.formats = format_checker
        self.compiled: dict[str, Check] = {}

    def at(self, pointer: str) -> Check:
        """The check of the meta-schema's node at `pointer` (compiled once; references to a
        node still being compiled call it through the table, so recursion is fine)."""
        if pointer not in self.compiled:
            self.compiled[pointer] = lambda instance: self.compiled[pointer](instance)  # until built
            self.compiled[pointer] = self.node(_resolve(self.document, pointer))
        return self.compiled[pointer]

    def node(self, schema: Any) -> Check:
        if schema is True or schema == {}:
            return _always
        if schema is False:
            return _never
        if not isinstance(schema, dict):
            raise _Unsupported(repr(schema))
        if "$ref" in schema and self.ref_only:
            return self.reference(schema["$ref"])
        checks = [self.keyword(key, value, schema) for key, value in schema.items() if key not in _ANNOTATIONS]
        checks = [check for check in checks if check is not _always]
        if not checks:
            return _always
        if len(checks) == 1:
            return checks[0]
        return lambda instance: all(check(instance) for check in checks)

    def reference(self, ref: Any) -> Check:
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise _Unsupported(f"$ref {ref!r}")
        return self.at(ref[1:])

    def keyword(self, key: str, value: Any, schema: dict[str, Any]) -> Check:
        handler = getattr(self, "k_dollar_ref" if key == "$ref" else "k_" + key, None)
        if handler is None:
            raise _Unsupported(key)
        check: Check = handler(value, schema)
        return check

    # --- one method per keyword the meta-schemas use --------------------------------------

    def k_dollar_ref(self, value: Any, schema: dict[str, Any]) -> Check:
        return self.reference(value)

    def k_type(self, value: Any, schema: dict[str, Any]) -> Check:
        names = [value] if isinstance(value, str) else list(value)
        if not all(isinstance(name, str) for name in names):
            raise _Unsupported("type with schemas (draft 3)")
        tests = [self.type_test(name) for name in names]
        return lambda instance: any(test(instance) for test in tests)

    def type_test(self, name: str) -> Check:
        exact = {"object": dict, "array": list, "string": str, "boolean": bool}
        if name in exact:
            kind = exact[name]
            return lambda instance: isinstance(instance, kind)
        if name == "null":
            return lambda instance: instance is None
        if name == "number":
            return lambda instance: isinstance(instance, int | float) and not isinstance(instance, bool)
        if name == "integer":
            types = self.types  # draft 4 counts 1.0 out, later drafts in: ask the draft's checker
            return lambda instance: (
                (isinstance(instance, int) and not isinstance(instance, bool))
                or (isinstance(instance, float) and types.is_type(instance, "integer"))
            )
        raise _Unsupported(f"type {name!r}")

    def k_properties(self, value: dict[str, Any], schema: dict[str, Any]) -> Check:
        checks = {name: self.node(sub) for name, sub in value.items()}
        checks = {name: check for name, check in checks.items() if check is not _always}

        def properties(instance: Any) -> bool:
            if not isinstance(instance, dict):
                return True
            # A schema writes a few of the meta-schema's dozens of keywords: go by the schema's.
            for name, item in instance.items():
                check = checks.get(name)
                if check is not None and not check(item):
                    return False
            return True

        return properties

    def k_additionalProperties(self, value: Any, schema: dict[str, Any]) -> Check:
        if "patternProperties" in schema:
            raise _Unsupported("additionalProperties beside patternProperties")
        named, check = frozenset(schema.get("properties", {})), self.node(value)

        def additional(instance: Any) -> bool:
            if not isinstance(instance, dict):
                return True
            return all(check(item) for key, item in instance.items() if key not in named)

        return additional

    def k_propertyNames(self, value: Any, schema: dict[str, Any]) -> Check:
        check = self.node(value)
        return lambda instance: not isinstance(instance, dict) or all(check(key) for key in instance)

    def k_dependencies(self, value: dict[str, Any], schema: dict[str, Any]) -> Check:
        if not all(isinstance(need, list) and all(isinstance(n, str) for n in need) for need in value.values()):
            raise _Unsupported("dependencies with schemas")
        needs = {key: tuple(need) for key, need in value.items()}

        def dependencies(instance: Any) -> bool:
            if not isinstance(instance, dict):
                return True
            return all(name in instance for key, need in needs.items() if key in instance for name in need)

        return dependencies

    def k_items(self, value: Any, schema: dict[str, Any]) -> Check:
        if isinstance(value, list):
            raise _Unsupported("items as an array")
        check = self.node(value)
        return lambda instance: not isinstance(instance, list) or all(check(item) for item in instance)

    def k_minItems(self, value: int, schema: dict[str, Any]) -> Check:
        return lambda instance: not isinstance(instance, list) or len(instance) >= value

    def k_uniqueItems(self, value: bool, schema: dict[str, Any]) -> Check:
        if not value:
            return _always

        # Only scalars are compared here (arrays and objects are left to jsonschema).
        def unique(instance: Any) -> bool:
            if not isinstance(instance, list):
                return True
            keys = [_scalar_key(item) for item in instance]
            return None not in keys and len(set(keys)) == len(keys)

        return unique

    def k_enum(self, value: list[Any], schema: dict[str, Any]) -> Check:
        if not all(isinstance(member, str) for member in value):
            raise _Unsupported("enum of values other than strings")
        members = frozenset(value)
        return lambda instance: isinstance(instance, str) and instance in members

    def k_minimum(self, value: int | float, schema: dict[str, Any]) -> Check:
        if self.draft4 and schema.get("exclusiveMinimum") is True:
            return lambda instance: not _is_number(instance) or instance > value
        return lambda instance: not _is_number(instance) or instance >= value

    def k_exclusiveMinimum(self, value: Any, schema: dict[str, Any]) -> Check:
        if self.draft4:
            if isinstance(value, bool) and "minimum" in schema:
                return _always  # read by `minimum`
            raise _Unsupported("draft 4 exclusiveMinimum without minimum")
        return lambda instance: not _is_number(instance) or instance > value

    def k_pattern(self, value: str, schema: dict[str, Any]) -> Check:
        search = re.compile(value).search  # as jsonschema matches a pattern: anywhere in the string
        return lambda instance: not isinstance(instance, str) or search(instance) is not None

    def k_format(self, value: str, schema: dict[str, Any]) -> Check:
        if self.formats is None:
            return _always
        conforms = functools.partial(self.formats.conforms, format=value)
        plain = _PLAIN_REFERENCES.get(value)
        if plain is None:
            return lambda instance: bool(conforms(instance))
        # Most references a schema writes are plain ones (`#/definitions/name`, an http URL):
        # taken at once, without the checker's full RFC 3986 expression (12 ms to compile, the
        # first time a process checks a schema's `$ref` or `$schema`).
        return lambda instance: not isinstance(instance, str) or plain(instance) is not None or bool(conforms(instance))

    def k_anyOf(self, value: list[Any], schema: dict[str, Any]) -> Check:
        checks = [self.node(branch) for branch in value]
        return lambda instance: any(check(instance) for check in checks)

    def k_allOf(self, value: list[Any], schema: dict[str, Any]) -> Check:
        checks = [self.node(branch) for branch in value]
        return lambda instance: all(check(instance) for check in checks)


# Plain forms of the references meta-schemas check with `format: uri` and `uri-reference`: a
# subset of RFC 3986's, each string of which its full grammar takes too (tests/test_meta_check.py
# holds them to it): a scheme, `//` and a host with no user or IP literal; a path of no scheme;
# or a fragment alone. Anything else is left to the checker.
_PCHAR = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})"
_AFTER_PATH = rf"(?:\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?"
_ABSOLUTE = rf"[A-Za-z][A-Za-z0-9+.\-]*://(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{{2}})*(?::[0-9]*)?(?:/{_PCHAR}*)*{_AFTER_PATH}"
_RELATIVE = rf"(?:(?:[A-Za-z0-9\-._~!$&'()*+,;=@]|%[0-9A-Fa-f]{{2}})+(?:/{_PCHAR}*)*)?{_AFTER_PATH}"
_PLAIN_REFERENCES: dict[str, Callable[[str], re.Match[str] | None]] = {
    "uri": re.compile(_ABSOLUTE).fullmatch,
    "uri-reference": re.compile(f"{_ABSOLUTE}|{_RELATIVE}").fullmatch,
}


def _always(instance: Any) -> bool:
    return True


def _never(instance: Any) -> bool:
    return False


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _scalar_key(value: Any) -> tuple[str, Any] | None:
    """A key equal for two scalars exactly when JSON Schema calls them equal (1 and 1.0 are,
    1 and true are not); None for arrays and objects."""
    if isinstance(value, bool) or value is None:
        return ("literal", value)
    if isinstance(value, int | float):
        return ("number", value)
    if isinstance(value, str):
        return ("string", value)
    return None


def _resolve(document: Any, pointer: str) -> Any:
    """The node of `document` at a JSON pointer ("" is the whole document)."""
    node = document
    for token in pointer.split("/")[1:] if pointer else []:
        token = unescape_pointer_part(token)
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node
