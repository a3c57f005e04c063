"""JSON Schema to a regex tree in the canonical layout.

Canonical layout: one line, `", "` between members and elements, `": "` after keys,
properties in schema order. Every keyword is either enforced exactly or refused with its
JSON pointer (UnsupportedSchema): nothing is silently dropped. Generating fewer documents
than the schema allows is fine (no additional properties are ever emitted, numbers have
bounded digits); generating one it forbids is never fine.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..automaton.charnfa import (
    AutomatonTooLarge,
    excluding_machine,
    intersect,
    is_empty,
    length_machine,
    machine_from_tree,
)
from ..automaton.regex import EMPTY, Machine, Node, Repeat, TextLabel, alt, length_range, lit, optional, seq
from ..errors import SchemaError, UnsupportedSchema
from .disjoint import ALL_KINDS, TYPE_KINDS, Overlap, exclusions, value_kinds
from .formats import COMPACT_FORMATS, FORMATS, SUBSETS
from .json_values import distinct_values, json_in, keep_values
from .json_values import join_pointer as _join
from .lexical import QUOTE, json_text, number_node, string_node
from .limits import MAX_FLOOR_TEXT, MAX_OBJECT_NODES, Floor, Fuel, check_document_floor, floor_problem
from .load import (
    Schema,
    refuse_embedded_fragment_references,
    refuse_reference_cycles,
    refuse_remote_references,
    resolve_ref,
)
from .merge import EXCLUDED, Merge
from .numbers import departure, integer_values, number_values
from .pattern import UnsupportedPattern, pattern_tree
from .validation import Validator, draft_keywords, draft_name, ref_ignores_siblings, validator_for_schema

ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "$schema",
        "$id",
        "id",
        "$anchor",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$defs",
        "definitions",
        "contentEncoding",
        "contentMediaType",
        "x-grounded",  # whether a plain string must be a span of the document (core.grounding)
    }
)
TYPE_KEYWORDS: dict[str, frozenset[str]] = {
    "null": frozenset(),
    "boolean": frozenset(),
    "integer": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}),
    "number": frozenset(),
    "string": frozenset({"minLength", "maxLength", "format", "pattern"}),
    "array": frozenset({"items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems"}),
    "object": frozenset(
        {
            "properties",
            "required",
            "additionalProperties",
            "minProperties",
            "maxProperties",
            "patternProperties",
            "propertyNames",
            "dependencies",
            "dependentRequired",
            "dependentSchemas",
        }
    ),
}
# Keywords this compiler enforces (or, for annotations, knows to carry no constraint).
SUPPORTED = ANNOTATIONS | {"type", "$ref", "enum", "const", "anyOf", "oneOf", "allOf", "not", EXCLUDED}.union(
    *TYPE_KEYWORDS.values()
)
ALL_TYPES = tuple(TYPE_KEYWORDS)
# Formats JSON Schema defines: enforced or refused. Other names (OpenAPI's int32, byte, ...)
# are ignored by validators, so they are ignored here too and listed as such.
SPECIFIED_FORMATS = frozenset(
    {
        "date",
        "time",
        "date-time",
        "duration",
        "email",
        "idn-email",
        "hostname",
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "iri",
        "iri-reference",
        "uuid",
        "uri-template",
        "json-pointer",
        "relative-json-pointer",
        "regex",
    }
)
GENERIC_DEPTH = 2  # nesting allowed inside objects or arrays whose contents are unconstrained


@dataclass
class CompiledTree:
    """A schema's regex tree, and the keywords it ignored because the schema's draft gives
    them no meaning (unknown or vendor keywords such as `x-order`): each as a JSON pointer."""

    tree: Node
    ignored: list[str]


DEFAULT_RECURSION_DEPTH = 3


class _DepthCut(Exception):
    """A recursive `$ref` reached the depth limit; the nearest optional place drops it."""

    def __init__(self, ref: str, pointer: str) -> None:
        super().__init__(ref)
        self.ref, self.pointer = ref, pointer


def compile_tree(root: Schema, recursion_depth: int = DEFAULT_RECURSION_DEPTH) -> Node:
    """The regex tree of every document in canonical layout that `root` accepts."""
    return compile_schema_tree(root, recursion_depth).tree


def compile_schema_tree(root: Schema, recursion_depth: int = DEFAULT_RECURSION_DEPTH) -> CompiledTree:
    """Like compile_tree, also listing the keywords that were ignored as meaningless.

    A recursive `$ref` is expanded at most `recursion_depth` times along any path; deeper
    values are not generated (an optional property, an anyOf branch or array items are left
    out there), and a schema whose recursion cannot stop within the limit is refused."""
    refuse_remote_references(root)
    refuse_embedded_fragment_references(root)
    refuse_reference_cycles(root)
    compiler = _Compiler(root, recursion_depth)
    try:
        tree = compiler.value(root, "")
    except _DepthCut as cut:
        raise UnsupportedSchema(
            "$ref",
            cut.pointer,
            f"recursive reference {cut.ref!r} cannot stop within {recursion_depth} levels; raise the recursion depth",
        ) from None
    check_document_floor(tree, compiler.floor)
    return CompiledTree(tree, compiler.ignored)


def asserting_keywords(root: Schema) -> frozenset[str]:
    """The keywords that assert something under the schema's draft (2020-12 when undeclared)."""
    if draft_name(root) == "draft-03":
        raise UnsupportedSchema("$schema", "/$schema", "draft 3 schemas are not supported; declare draft-04 or later")
    return draft_keywords(root)


class _Compiler:
    def __init__(self, root: Schema, recursion_depth: int) -> None:
        self.root = root
        self.recursion_depth = recursion_depth
        self.ref_stack: list[str] = []
        self.asserting = asserting_keywords(root)
        self.ref_only = ref_ignores_siblings(root)
        self.ignored: list[str] = []
        self.memo: dict[tuple[int, tuple[str, ...]], tuple[Any, Node]] = {}
        self.fuel = Fuel()  # counted work, not time: the same outcome on every machine
        self.views: dict[int, tuple[Any, Any]] = {}  # schemas as their draft reads them, per object
        self._root_validator: Validator | None = None
        self.floor = Floor()
        self.naming = False  # building property names: strings there are not values

    def _merge(self, pointer: str) -> Merge:
        """A merger for the schema at `pointer`, spending this compilation's fuel."""
        return Merge(self.root, self.asserting, pointer, self.fuel, self.views)

    def validator(self, schema: Any) -> Validator:
        """A validator for `schema`, a part of the root (or a merge of parts): its references
        resolve inside the root, and none is ever retrieved."""
        if self._root_validator is None:
            self._root_validator = validator_for_schema(self.root)
        return self._root_validator.evolve(schema=schema)

    def value(self, schema: Any, pointer: str) -> Node:
        """The tree of `schema`; memoised per (schema object, references being expanded)."""
        if schema is True:
            return any_value(GENERIC_DEPTH)
        if schema is False:
            raise SchemaError(f"the schema at {pointer or '/'} is `false`: no value can satisfy it")
        assert isinstance(schema, dict)
        key = (id(schema), tuple(sorted(self.ref_stack)))
        found = self.memo.get(key)
        if found is None:
            self.fuel.burn(pointer)
            found = (schema, self._uncached_value(schema, pointer))  # the schema is kept so its id stays unique
            self.memo[key] = found
        return found[1]

    def _uncached_value(self, schema: dict[str, Any], pointer: str) -> Node:
        schema = self._draft_view(schema, pointer)
        if "allOf" in schema or ("$ref" in schema and self._has_siblings(schema, "$ref")):
            merge = self._merge(pointer)
            merged = merge.expand(schema)
            return self._inside_refs(merge.refs, pointer, lambda: self.value(merged, pointer))
        if "$ref" in schema:
            return self._ref(schema, pointer)
        if "not" in schema and "enum" not in schema and "const" not in schema:
            # Beside enum/const, `not` is enforced exactly by filtering the listed values.
            return self.value(self._without_not(schema, pointer), pointer)
        if "anyOf" in schema:
            return self._any_of(schema, pointer)
        if "oneOf" in schema:
            return self._one_of(schema, pointer)
        if "enum" in schema or "const" in schema:
            return self._enum(schema, pointer)
        nodes = [node for name in self._types(schema, pointer) if (node := self._typed(name, schema, pointer)) is not None]
        if not nodes:
            raise SchemaError(f"`not` at {pointer or '/'} excludes every value the schema allows")
        return alt(*nodes)

    def _draft_view(self, schema: dict[str, Any], pointer: str) -> dict[str, Any]:
        """`schema` as its draft's validator reads it: keywords the draft does not define
        (`prefixItems` before 2020-12, `const` in draft 4, `x-*`) and, before 2019-09, every
        keyword beside `$ref` are left out and listed as ignored; keywords that assert
        something this compiler cannot enforce are refused."""
        ref_only = self.ref_only and "$ref" in schema
        kept: dict[str, Any] = {}
        for keyword, value in schema.items():
            if keyword in ANNOTATIONS or keyword in ("$ref", EXCLUDED) or (keyword in self.asserting and not ref_only):
                kept[keyword] = value
            else:
                self.ignored.append(_join(pointer, keyword))
        for keyword in kept:
            if keyword in self.asserting and keyword not in SUPPORTED:
                raise UnsupportedSchema(keyword, _join(pointer, keyword))
        return kept

    def _has_siblings(self, schema: dict[str, Any], keyword: str) -> bool:
        """Whether `keyword` has constraining keywords beside it (not just annotations)."""
        return any(
            other != keyword and other not in ANNOTATIONS and (other == EXCLUDED or other in self.asserting) for other in schema
        )

    def _branches(self, schema: dict[str, Any], keyword: str, pointer: str) -> list[Node]:
        """Each branch of anyOf/oneOf, merged with the keywords written beside it."""
        branches = schema[keyword]
        siblings = {k: v for k, v in schema.items() if k != keyword}
        if not self._has_siblings(schema, keyword):
            return self._surviving([self._builder(b, f"{pointer}/{keyword}/{i}", []) for i, b in enumerate(branches)])
        builders = []
        for index, branch in enumerate(branches):
            merge = self._merge(pointer)
            merged = merge.pair(siblings, branch)
            branch_pointer = f"{pointer}/{keyword}/{index}"
            builders.append(self._builder(merged, branch_pointer, merge.refs))
        return self._surviving(builders)

    def _builder(self, schema: Any, pointer: str, refs: list[str]) -> Callable[[], Node]:
        """A deferred `value` call inside `refs` (a Python closure: deep schemas recurse
        through it, and C-level callables such as functools.partial would use C stack)."""

        def build() -> Node:
            return self._inside_refs(refs, pointer, lambda: self.value(schema, pointer))

        return build

    def _surviving(self, builders: Sequence[Callable[[], Node]]) -> list[Node]:
        """The branches that can be built: within the recursion depth and satisfiable (at
        least one must be)."""
        nodes: list[Node] = []
        failure: _DepthCut | SchemaError | None = None
        for build in builders:
            try:
                nodes.append(build())
            except UnsupportedSchema:
                raise
            except (_DepthCut, SchemaError) as error:  # an unsatisfiable branch is simply left out
                failure = error
        if not nodes and failure is not None:
            raise failure
        return nodes

    def _inside_refs(self, refs: list[str], pointer: str, build: Callable[[], Node]) -> Node:
        """Run `build` with `refs` marked as being expanded, refusing recursion through them."""
        for ref in refs:
            if self.ref_stack.count(ref) >= self.recursion_depth:
                raise _DepthCut(ref, _join(pointer, "$ref"))
        self.ref_stack.extend(refs)
        try:
            return build()
        finally:
            del self.ref_stack[len(self.ref_stack) - len(refs) :]

    def _ref(self, schema: dict[str, Any], pointer: str) -> Node:
        ref = schema["$ref"]
        target, target_pointer = resolve_ref(self.root, ref, _join(pointer, "$ref"))
        return self._inside_refs([ref], pointer, lambda: self.value(target, target_pointer))

    def _without_not(self, schema: dict[str, Any], pointer: str) -> dict[str, Any]:
        """`schema` with its `not` folded into positive keywords, where that is exact or
        a subset: `not: {type: ...}` removes types; `not: {required: [...]}` leaves one of
        those properties out; `not: {anyOf: [...]}` applies each branch."""
        rest = {k: v for k, v in schema.items() if k != "not"}
        for negated in self._negations(schema["not"], _join(pointer, "not")):
            if set(negated) == {"type"}:
                banned = {negated["type"]} if isinstance(negated["type"], str) else set(negated["type"])
                kept = [t for t in self._types(rest, pointer) if t not in banned and not (t == "integer" and "number" in banned)]
                if "integer" in banned and "number" in kept:
                    # The numbers left are the non-integral ones (1.0 and 1E2 are integers).
                    raise UnsupportedSchema("not", _join(pointer, "not"), "excluding integers from numbers is not supported")
                if not kept:
                    raise SchemaError(f"`not` at {pointer or '/'} excludes every type the schema allows")
                rest["type"] = kept
            elif set(negated) == {"required"} and negated["required"]:
                # `required` holds for every value that is not an object: only objects are left.
                if "object" not in self._types(rest, pointer):
                    raise SchemaError(
                        f"`not: {{required}}` at {pointer or '/'} excludes every value: only objects can lack a property"
                    )
                rest = self._leave_out_one({**rest, "type": "object"}, negated["required"], pointer)
            elif {"const", "enum"} & negated.keys():
                # Only the listed values that meet the rest of the negated schema are excluded.
                rest[EXCLUDED] = distinct_values([*rest.get(EXCLUDED, []), *self._listed_values(negated, _join(pointer, "not"))])
            else:
                raise UnsupportedSchema("not", _join(pointer, "not"), "only types, required properties, const or enum values")
        return rest

    def _negations(self, negated: Any, pointer: str) -> list[dict[str, Any]]:
        """not(anyOf [A, B]) is not A and not B: the negated schemas to apply, annotations dropped."""
        negated = self._merge(pointer).expand(negated)
        if not isinstance(negated, dict):
            raise UnsupportedSchema("not", pointer, "`not: true` matches nothing" if negated is True else "")
        meaningful = {k: v for k, v in negated.items() if k not in ANNOTATIONS and (k == EXCLUDED or k in self.asserting)}
        if not meaningful:
            raise SchemaError(
                f"`not` at {pointer} excludes every value: the schema it negates has no keyword its draft defines",
                hint="remove the `not`, or negate a keyword of the schema's draft",
            )
        if set(meaningful) == {"anyOf"}:
            return [n for branch in meaningful["anyOf"] for n in self._negations(branch, pointer)]
        return [meaningful]

    def _leave_out_one(self, schema: dict[str, Any], names: list[str], pointer: str) -> dict[str, Any]:
        """Never write one of `names` (the first not required), so they are never all present."""
        required = set(schema.get("required", []))
        optional = [name for name in names if name not in required]
        if not optional:
            raise SchemaError(f"`not` at {pointer or '/'} forbids properties the schema requires")
        banned = {"properties": {optional[0]: False}}
        return dict(self._merge(pointer).pair(schema, banned))

    def _enum(self, schema: dict[str, Any], pointer: str) -> Node:
        return alt(*(lit(json_text(value)) for value in self._listed_values(schema, pointer)))

    def _listed_values(self, schema: dict[str, Any], pointer: str) -> list[Any]:
        """The enum/const values (JSON-distinct) that also satisfy the sibling keywords
        (type, minLength, not, ...): jsonschema filters them, so the filter is exact."""
        values = [schema["const"]] if "const" in schema else list(schema["enum"])
        if "const" in schema and "enum" in schema:
            values = keep_values(values, schema["enum"])
        rest = {k: v for k, v in schema.items() if k not in ("enum", "const")}
        if isinstance(rest.get("pattern"), list):  # merged patterns (see merge.py): each must match
            rest["allOf"] = [{"pattern": p} for p in rest.pop("pattern")]
        checker = self.validator(rest)
        allowed = [v for v in values if checker.is_valid(v)]
        kept = keep_values(distinct_values(allowed), schema.get(EXCLUDED, []), keep=False)
        if not kept:
            raise SchemaError(f"no value listed by enum/const at {pointer or '/'} satisfies its schema")
        return kept

    def _finite_items(self, items: Any, pointer: str) -> list[str] | None:
        """Every JSON text `items` allows, when that is a short list (enum, const, boolean,
        null); None otherwise."""
        items = self._merge(pointer).expand(items)
        if not isinstance(items, dict):
            return None
        if "enum" in items or "const" in items:
            return [json_text(value) for value in self._listed_values(items, pointer)]
        types = items.get("type")
        names = [types] if isinstance(types, str) else types
        if names and set(names) <= {"boolean", "null"} and not (set(items) - ANNOTATIONS - {"type"}):
            return [text for name in names for text in (("true", "false") if name == "boolean" else ("null",))]
        return None

    def _any_of(self, schema: dict[str, Any], pointer: str) -> Node:
        return alt(*self._branches(schema, "anyOf", pointer))

    def _one_of(self, schema: dict[str, Any], pointer: str) -> Node:
        """Exactly one branch must match: compiled as anyOf once the branches are made
        exclusive (see disjoint.py), otherwise refused."""
        keyword_pointer = _join(pointer, "oneOf")
        merge = self._merge(pointer)
        siblings = {k: v for k, v in schema.items() if k != "oneOf"}
        branches = [merge.pair(siblings, b) for b in schema["oneOf"]]
        try:
            separation = exclusions(self.root, branches, self._generated_kinds, self._accepts)
        except Overlap as overlap:
            raise UnsupportedSchema(
                "oneOf",
                keyword_pointer,
                f"{overlap}; use anyOf, or make them exclusive (different types, a required property"
                " with different const values, or different required properties)",
            ) from None
        builders = []
        for index, branch in enumerate(branches):
            names, values = separation.properties[index], separation.values[index]
            if names:
                branch = merge.pair(branch, {"properties": dict.fromkeys(names, False)})
            if values:
                branch = merge.pair(branch, {EXCLUDED: values})
            builders.append(self._builder(branch, f"{keyword_pointer}/{index}", list(merge.refs)))
        return alt(*self._surviving(builders))

    def _accepts(self, schema: Any, value: Any) -> bool | None:
        """Whether `schema` (references resolved against the root) accepts `value`; None when
        the validator cannot say (merged schemas may hold forms it does not read)."""
        try:
            return bool(self.validator(schema).is_valid(value))
        except Exception:
            return None

    def _generated_kinds(self, schema: Any) -> frozenset[str]:
        """Kinds of value compiled for `schema`: its types, or those implied by its keywords."""
        if not isinstance(schema, dict):
            return ALL_KINDS if schema is True else frozenset()
        implied = value_kinds(schema)
        if "type" not in schema:
            types = [t for t in ALL_TYPES if TYPE_KEYWORDS[t] & schema.keys()] or ALL_TYPES
            implied &= frozenset().union(*(TYPE_KINDS[t] for t in types))
        return implied

    def _types(self, schema: dict[str, Any], pointer: str) -> tuple[str, ...]:
        declared = schema.get("type")
        if declared is None:
            implied = tuple(t for t in ALL_TYPES if TYPE_KEYWORDS[t] & schema.keys())
            return implied or ALL_TYPES
        names = (declared,) if isinstance(declared, str) else tuple(declared)
        return tuple(dict.fromkeys(names))

    def _typed(self, name: str, schema: dict[str, Any], pointer: str) -> Node | None:
        """The values of one type; None when `not` excludes all of them."""
        excluded = schema.get(EXCLUDED, [])
        if name in ("null", "boolean"):
            kept = [v for v in ((None,) if name == "null" else (True, False)) if not json_in(v, excluded)]
            return alt(*(lit(json_text(v)) for v in kept)) if kept else None
        builders: dict[str, Callable[[dict[str, Any], str], Node]] = {
            "integer": self._integer,
            "number": self._number,
            "string": self._string,
            "array": self._array,
            "object": self._object,
        }
        kind = {"integer": (int, float), "number": (int, float), "string": (str,), "array": (list,), "object": (dict,)}[name]
        if name in ("number", "array", "object") and any(isinstance(v, kind) and not isinstance(v, bool) for v in excluded):
            raise UnsupportedSchema("not", _join(pointer, "not"), f"excluding {name} values is not supported")
        return builders[name](schema, pointer)

    def _integer(self, schema: dict[str, Any], pointer: str) -> Node:
        node = integer_values(schema, pointer)
        banned = [json.dumps(int(v)) for v in schema.get(EXCLUDED, []) if _is_whole(v)]
        if not banned:
            return node
        return self._excluding(node, banned, pointer)

    def _excluding(self, node: Node, texts: list[str], pointer: str) -> Node:
        """`node` (characters only, no JSON escaping needed) minus the exact strings `texts`."""
        machine = intersect(machine_from_tree(node) if not isinstance(node, Machine) else node, excluding_machine(texts))
        if is_empty(machine):
            raise SchemaError(f"`not` at {pointer or '/'} excludes every value the schema allows")
        return machine

    def _number(self, schema: dict[str, Any], pointer: str) -> Node:
        return number_values(schema, pointer, lambda value: bool(self.validator(schema).is_valid(value)))

    def _string(self, schema: dict[str, Any], pointer: str) -> Node:
        node = self._string_node(schema, pointer)
        problem = floor_problem(*self.floor.of(node))
        if problem is not None:  # minLength alone is caught before anything is built
            keyword = "pattern" if "pattern" in schema else "format" if "format" in schema else "minLength"
            raise UnsupportedSchema(keyword, _join(pointer, keyword), f"{problem}; the string is too long to generate")
        return node

    def _string_node(self, schema: dict[str, Any], pointer: str) -> Node:
        low, high = _count(schema, "minLength") or 0, _count(schema, "maxLength")
        if high is not None and low > high:
            raise SchemaError(f"minLength exceeds maxLength at {pointer or '/'}")
        if low > MAX_FLOOR_TEXT:
            raise UnsupportedSchema(
                "minLength",
                _join(pointer, "minLength"),
                f"minLength {low} is above the limit of {MAX_FLOOR_TEXT} characters a string may be required to have",
            )
        patterns = schema.get("pattern", [])
        bodies = [self._pattern_body(p, pointer) for p in ([patterns] if isinstance(patterns, str) else patterns)]
        format_body = self._format_body(schema, pointer)
        if format_body is not None:
            bodies.append(format_body)
        banned = [v for v in schema.get(EXCLUDED, []) if isinstance(v, str)]
        if banned:
            bodies.append(excluding_machine(banned))
        if not bodies:
            return string_node(low, high, self._text_label(schema, pointer))
        if _lengths_implied(bodies, low, high):
            if len(bodies) == 1 and format_body is not None:
                return seq(QUOTE, format_body, QUOTE)  # formats are ASCII without quotes or backslashes
            low, high = 0, None
        try:
            return seq(QUOTE, self._string_machine(bodies, low, high, pointer, schema), QUOTE)
        except UnsupportedSchema:
            raise
        except SchemaError:
            self._refuse_format_subset(schema, pointer, [b for b in bodies if b is not format_body], low, high)
            raise

    def _text_label(self, schema: dict[str, Any], pointer: str) -> TextLabel | None:
        """The label of a plain string value's body, for grounding; property names get none."""
        if self.naming:
            return None
        marked = schema.get("x-grounded")
        return TextLabel(pointer, marked if isinstance(marked, bool) else None)

    def _refuse_format_subset(self, schema: dict[str, Any], pointer: str, others: list[Node], low: int, high: int | None) -> None:
        """When a format's generated subset, not the schema, leaves no string (the other
        keywords alone allow some), say so, naming that subset."""
        name = schema.get("format")
        if name not in SUBSETS:
            return
        try:
            if others:
                self._string_machine(others, low, high, pointer, schema)
        except SchemaError:
            return  # unsatisfiable without the format too
        shortest = length_range(FORMATS[name]())[0]
        high = _count(schema, "maxLength")
        if high is not None and high < shortest:
            why = f"its shortest string has {shortest} characters, more than maxLength {high}"
        else:
            why = "none of its strings " + ("matches the pattern" if "pattern" in schema else "meets the other keywords")
        raise departure(
            "format", _join(pointer, "format"), f"format {name!r} is generated from a subset ({SUBSETS[name]}), and {why}"
        )

    def _pattern_body(self, pattern: str, pointer: str) -> Node:
        try:
            return pattern_tree(pattern)
        except UnsupportedPattern as error:
            raise UnsupportedSchema("pattern", _join(pointer, "pattern"), str(error)) from None

    def _format_body(self, schema: dict[str, Any], pointer: str) -> Node | None:
        """The format's tree; None without a format, or for a format name JSON Schema does
        not define (validators ignore those, so it is listed as ignored)."""
        name = schema.get("format")
        if name is None:
            return None
        if name in FORMATS:
            body = FORMATS[name]()
            high = _count(schema, "maxLength")
            longest = length_range(body)[1]
            if name in COMPACT_FORMATS and high is not None and (longest is None or longest > high):
                compact = COMPACT_FORMATS[name]()
                body = compact if (length_range(compact)[1] or 0) <= high else body
            return body
        if name in SPECIFIED_FORMATS:
            raise UnsupportedSchema("format", _join(pointer, "format"), f"format {name!r} is not supported")
        self.ignored.append(_join(pointer, "format"))
        return None

    def _string_machine(self, bodies: list[Node], low: int, high: int | None, pointer: str, schema: dict[str, Any]) -> Node:
        """The characters every body and the length bounds allow at once (a product automaton)."""
        try:
            machines = [body if isinstance(body, Machine) else machine_from_tree(body) for body in bodies]
            machine = machines[0]
            for other in machines[1:]:
                machine = intersect(machine, other)
            if low > 0 or high is not None:
                machine = intersect(machine, length_machine(low, high))
        except AutomatonTooLarge as error:
            keyword = "pattern" if "pattern" in schema else "format" if "format" in schema else "maxLength"
            raise UnsupportedSchema(keyword, _join(pointer, keyword), f"with these length bounds it needs {error}") from None
        if is_empty(machine):
            raise SchemaError(f"no string satisfies pattern, format and length together at {pointer or '/'}")
        return machine

    def _array(self, schema: dict[str, Any], pointer: str) -> Node:
        node = self._array_node(schema, pointer)
        problem = floor_problem(*self.floor.of(node))
        if problem is not None:
            raise UnsupportedSchema("minItems", _join(pointer, "minItems"), f"{problem}; lower minItems")
        return node

    def _array_node(self, schema: dict[str, Any], pointer: str) -> Node:
        low, high = _count(schema, "minItems") or 0, _count(schema, "maxItems")
        if high is not None and low > high:
            raise SchemaError(f"minItems exceeds maxItems at {pointer or '/'}")
        prefix, prefix_keyword, rest, rest_keyword = _array_parts(schema)
        if schema.get("uniqueItems") is True:
            return self._unique_array(schema, pointer, low, high)
        if prefix:
            heads = [self.value(s, f"{pointer}/{prefix_keyword}/{i}") for i, s in enumerate(prefix[:high])]
            tail = None if rest is False else self.value(rest, _join(pointer, rest_keyword))
            if tail is None and low > len(heads):
                raise SchemaError(f"minItems {low} exceeds the {len(heads)} items allowed at {pointer or '/'}")
            return tuple_array(heads, tail, low, high)
        if rest is False:
            if low > 0:
                raise SchemaError(f"items is false but minItems > 0 at {pointer or '/'}")
            return lit("[]")
        try:
            item = self.value(rest, _join(pointer, rest_keyword))
        except UnsupportedSchema:
            raise
        except (_DepthCut, SchemaError):
            if low > 0:
                raise
            return lit("[]")  # items past the recursion depth, or with no valid value: only the empty array
        return array_of(item, low, high)

    def _unique_array(self, schema: dict[str, Any], pointer: str, low: int, high: int | None) -> Node:
        """uniqueItems over a finite item set: each value at most once, in the listed order
        (a subset of the valid arrays, all of them unique)."""
        prefix, _, rest, rest_keyword = _array_parts(schema)
        values = None if prefix else self._finite_items(rest, _join(pointer, rest_keyword))
        if values is None:
            raise UnsupportedSchema(
                "uniqueItems",
                _join(pointer, "uniqueItems"),
                "only arrays whose items are enum, const, boolean or null values",
            )
        members: list[tuple[Node, bool]] = [(lit(text), False) for text in values]
        if object_nodes(members, low, high) > MAX_OBJECT_NODES:
            raise UnsupportedSchema(
                "uniqueItems",
                _join(pointer, "uniqueItems"),
                f"{len(values)} distinct values with minItems/maxItems need more than {MAX_OBJECT_NODES} automaton nodes",
            )
        try:
            return object_of(members, low, high, brackets=("[", "]"))
        except SchemaError:
            raise SchemaError(f"no array of distinct values at {pointer or '/'} has between {low} and {high} items") from None

    def _object(self, schema: dict[str, Any], pointer: str) -> Node:
        if DEPENDENCY_KEYWORDS & schema.keys():
            # Through value(): a dependent schema may bring oneOf, anyOf, not or enum along.
            return self.value(self._without_dependencies(schema, pointer), pointer)
        properties, required = self._property_schemas(schema, pointer)
        low, high = _count(schema, "minProperties") or 0, _count(schema, "maxProperties")
        if not properties and not required:
            if low > 1:
                # Generated keys may repeat, and a repeated key counts once: not exact.
                raise UnsupportedSchema(
                    "minProperties", _join(pointer, "minProperties"), "above 1 on an object without declared properties"
                )
            return self._map(schema, pointer, low, high)
        members: list[tuple[Node, bool]] = []
        for name, (sub, sub_pointer) in properties.items():
            is_required = name in required
            if sub is False:
                if is_required:
                    raise SchemaError(f"required property {name!r} cannot have any value at {pointer or '/'}")
                continue
            key = lit(json_text(name) + ": ")
            try:
                members.append((seq(key, self.value(sub, sub_pointer)), is_required))
            except UnsupportedSchema:
                raise
            except (_DepthCut, SchemaError):
                if is_required:
                    raise  # an optional property past the recursion depth, or with no valid value, is not written
        self._refuse_large_object(members, low, high, pointer)
        try:
            return object_of(members, low, high)
        except SchemaError:
            raise SchemaError(f"no object at {pointer or '/'} can have between {low} and {high} of its properties") from None

    def _refuse_large_object(self, members: list[tuple[Node, bool]], low: int, high: int | None, pointer: str) -> None:
        """A binding property count multiplies the object's nodes by the count; refuse beyond
        MAX_OBJECT_NODES (naming whichever count binds)."""
        nodes = object_nodes(members, low, high)
        if nodes > MAX_OBJECT_NODES:
            binding = _count_bounds(members, low, high)[1]
            keyword, bound = ("maxProperties", binding) if binding is not None else ("minProperties", low)
            raise UnsupportedSchema(
                keyword,
                _join(pointer, keyword),
                f"{keyword} {bound} over {len(members)} properties needs {nodes} automaton nodes, above the limit of"
                f" {MAX_OBJECT_NODES}; split the object or drop the count",
            )

    def _without_dependencies(self, schema: dict[str, Any], pointer: str) -> dict[str, Any]:
        """Dependencies folded into plain keywords, exactly when the trigger property is
        required and as a subset otherwise: a dependent schema is merged in when its trigger
        is required and the trigger is never written when it is optional; dependent names
        become required outright (or the trigger is never written if they cannot be)."""
        rest = {k: v for k, v in schema.items() if k not in DEPENDENCY_KEYWORDS}
        required = rest.get("required", [])
        names_needed, schemas_needed = _dependencies(schema)
        conditions: list[Any] = [{**rest, "type": "object"}]
        for trigger, dependent in schemas_needed.items():
            conditions.append(dependent if trigger in required else {"properties": {trigger: False}})
        for trigger, names in names_needed.items():
            if trigger in required or all(self._may_write(rest, name) for name in names):
                conditions.append({"required": names})
            else:
                conditions.append({"properties": {trigger: False}})
        return {"allOf": conditions}  # merged by value(), which tracks the references it follows

    def _may_write(self, schema: dict[str, Any], name: str) -> bool:
        declared = schema.get("properties", {})
        return declared[name] is not False if name in declared else schema.get("additionalProperties", True) is not False

    def _property_schemas(self, schema: dict[str, Any], pointer: str) -> tuple[dict[str, tuple[Any, str]], list[str]]:
        """Each property that may be written, with the schema its value must meet: its own
        schema (or additionalProperties for an undeclared required one) together with every
        patternProperties schema whose pattern finds the name; false where propertyNames
        rejects the name."""
        declared = schema.get("properties", {})
        required = list(dict.fromkeys(schema.get("required", [])))
        extra = schema.get("additionalProperties", True)
        patterns = schema.get("patternProperties", {})
        names_check = self._name_checker(schema.get("propertyNames", True), pointer)
        result: dict[str, tuple[Any, str]] = {}
        for name in dict.fromkeys([*declared, *required]):
            matching = [sub for pattern, sub in patterns.items() if self._finds(pattern, name, pointer)]
            own = declared.get(name, extra if not matching else True)
            where = _join(_join(pointer, "properties"), name) if name in declared else _join(pointer, "additionalProperties")
            sub = {"allOf": [own, *matching]} if matching else own  # merged when compiled, refs tracked
            result[name] = (sub if names_check(name) else False, where)
        return result, required

    def _finds(self, pattern: str, name: str, pointer: str) -> bool:
        """Whether `pattern` matches `name` the way validators decide it (Python's re.search)."""
        try:
            return re.search(pattern, name) is not None
        except re.error as error:
            raise UnsupportedSchema(
                "patternProperties", _join(pointer, "patternProperties"), f"pattern {pattern!r}: {error}"
            ) from None

    def _name_checker(self, names_schema: Any, pointer: str) -> Callable[[str], bool]:
        if names_schema is True:
            return lambda name: True
        validator = self.validator(names_schema)
        return lambda name: bool(validator.is_valid(name))

    def _map(self, schema: dict[str, Any], pointer: str, low: int, high: int | None) -> Node:
        """An object with generated keys: from the first patternProperties pattern (values
        then meet every pattern's schema, whichever the key matches), else any key allowed
        by propertyNames with additionalProperties values."""
        patterns = schema.get("patternProperties", {})
        names = schema.get("propertyNames", True)
        if patterns:
            first = next(iter(patterns))
            key_schema = self._merge(pointer).pair({"type": "string", "pattern": first}, names)
            value_schema = {"allOf": list(patterns.values())}
            value_pointer = _join(_join(pointer, "patternProperties"), first)
        else:
            key_schema, value_schema = names, schema.get("additionalProperties", True)
            value_pointer = _join(pointer, "additionalProperties")
        if value_schema is False:
            return lit("{}") if low == 0 else self._no_object(pointer)
        key = self._key_node(key_schema, _join(pointer, "propertyNames"))
        if key is None:
            return self._no_keys(pointer, low)
        try:
            value = any_value(GENERIC_DEPTH - 1) if value_schema is True else self.value(value_schema, value_pointer)
        except _DepthCut:
            if low:
                raise
            return lit("{}")
        return generic_object(value, low, high, key)

    def _key_node(self, key_schema: Any, pointer: str) -> Node | None:
        """Generated property names: a JSON string meeting `key_schema` (string keywords or a
        list of values); None when no string meets it (a name is always a string)."""
        if key_schema is True:
            return string_node()
        key_schema = self._merge(pointer).expand(key_schema)
        if key_schema is False or (isinstance(key_schema, dict) and "string" not in self._types(key_schema, pointer)):
            return None
        if isinstance(key_schema, dict) and ("enum" in key_schema or "const" in key_schema):
            names = [v for v in self._listed_values(key_schema, pointer) if isinstance(v, str)]
            return alt(*(lit(json_text(name)) for name in names)) if names else None
        string_keywords = TYPE_KEYWORDS["string"] | ANNOTATIONS | {"type"}
        if not isinstance(key_schema, dict) or set(key_schema) - string_keywords:
            raise UnsupportedSchema("propertyNames", pointer, "only string keywords (pattern, lengths, format) or enum/const")
        self.naming = True
        try:
            return self._string(key_schema, pointer)
        finally:
            self.naming = False

    def _no_keys(self, pointer: str, low: int) -> Node:
        """Only the empty object, when propertyNames admits no string at all."""
        if low == 0:
            return lit("{}")
        raise SchemaError(
            f"propertyNames at {_join(pointer, 'propertyNames')} admits no string, so no object has a property,"
            f" but minProperties is {low}",
            hint="allow strings in propertyNames (property names are always strings), or drop minProperties",
        )

    def _no_object(self, pointer: str) -> Node:
        raise SchemaError(f"no object at {pointer or '/'} satisfies minProperties with the allowed properties")


def _array_parts(schema: dict[str, Any]) -> tuple[list[Any], str, Any, str]:
    """(positional schemas, their keyword, schema of the rest, its keyword) in either draft's form:
    2020-12 `prefixItems` + `items`, or draft-07 array-valued `items` + `additionalItems`."""
    if "prefixItems" in schema:
        return list(schema["prefixItems"]), "prefixItems", schema.get("items", True), "items"
    items = schema.get("items", True)
    if isinstance(items, list):
        return items, "items", schema.get("additionalItems", True), "additionalItems"
    return [], "", items, "items"


def tuple_array(heads: list[Node], tail: Node | None, low: int, high: int | None) -> Node:
    """`[` positional items, then any number of `tail` items (None: no more), within the bounds.

    Built from the end: element i may be the last one only when i >= low."""
    count = len(heads)
    if tail is None:
        after: Node = EMPTY
    else:
        extra_high = None if high is None else max(high - count, 0)
        after = Repeat(seq(lit(", "), tail), max(low - count, 0), extra_high)
    for index in range(count - 1, -1, -1):
        separator = lit(", ") if index else EMPTY
        present = seq(separator, heads[index], after)
        after = present if index < low else alt(present, EMPTY)
    return seq(lit("["), after, lit("]"))


DEPENDENCY_KEYWORDS = frozenset({"dependencies", "dependentRequired", "dependentSchemas"})


def _dependencies(schema: dict[str, Any]) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """(trigger -> names it requires, trigger -> schema the object must then meet), from
    draft-07 `dependencies` (either form) and 2019-09's dependentRequired/dependentSchemas."""
    names: dict[str, list[str]] = dict(schema.get("dependentRequired", {}))
    schemas: dict[str, Any] = dict(schema.get("dependentSchemas", {}))
    for trigger, dependent in schema.get("dependencies", {}).items():
        if isinstance(dependent, list):
            names[trigger] = [*names.get(trigger, []), *dependent]
        else:
            schemas[trigger] = dependent
    return names, schemas


def _is_whole(value: Any) -> bool:
    """A JSON number equal to an integer (1 and 1.0 alike), not a boolean."""
    return isinstance(value, int | float) and not isinstance(value, bool) and float(value).is_integer()


def _lengths_implied(bodies: list[Node], low: int, high: int | None) -> bool:
    """Whether every string the bodies allow together already has a length in [low, high]."""
    ranges = [length_range(body) for body in bodies]
    fewest = max(r[0] for r in ranges)
    most = min((r[1] for r in ranges if r[1] is not None), default=None)
    return fewest >= low and (high is None or (most is not None and most <= high))


def array_of(item: Node, low: int, high: int | None) -> Node:
    """`[` items separated by `", "` `]`, between low and high items."""
    following = seq(lit(", "), item)
    if high == 0:
        return lit("[]")
    tail_high = None if high is None else high - 1
    non_empty = seq(item, Repeat(following, max(low - 1, 0), tail_high))
    body = non_empty if low > 0 else optional(non_empty)
    return seq(lit("["), body, lit("]"))


def object_of(
    members: list[tuple[Node, bool]], min_count: int = 0, max_count: int | None = None, brackets: tuple[str, str] = ("{", "}")
) -> Node:
    """`{` members in order, optional ones skippable, `", "` between those present, `}`,
    with between `min_count` and `max_count` members present.

    Built from the end, one shared tail per (member, members written so far), where the
    count saturates at the largest value that still matters; so the tree stays linear in
    the number of properties times that count. A missing tail means no way to finish."""
    min_count, max_count = _count_bounds(members, min_count, max_count)
    if min_count > len(members):
        raise SchemaError("no object satisfies the property count bounds")
    cap = max(min_count, 1) if max_count is None else max_count
    tails: list[Node | None] = [
        EMPTY if min_count <= c <= (cap if max_count is not None else c) else None for c in range(cap + 1)
    ]
    for member, required in reversed(members):
        following: list[Node | None] = []
        for written in range(cap + 1):
            after = tails[min(written + 1, cap)] if written + 1 <= cap or max_count is None else None
            present = None if after is None else seq(lit(", ") if written else EMPTY, member, after)
            absent = None if required else tails[written]
            options = [o for o in (present, absent) if o is not None]
            following.append(alt(*options) if options else None)
        tails = following
    body = tails[0]
    if body is None:
        raise SchemaError("no object satisfies the property count bounds")
    return seq(lit(brackets[0]), body, lit(brackets[1]))


def _count_bounds(members: list[tuple[Node, bool]], min_count: int, max_count: int | None) -> tuple[int, int | None]:
    """The count bounds that bind: a minimum the required members meet anyway is 0, and a
    maximum no object can exceed (at least as many as the members) is None."""
    if min_count <= sum(required for _, required in members):
        min_count = 0
    if max_count is not None and max_count >= len(members):
        max_count = None
    return min_count, max_count


def object_nodes(members: list[tuple[Node, bool]], min_count: int = 0, max_count: int | None = None) -> int:
    """How many tails object_of builds: one per member and count that still matters."""
    min_count, max_count = _count_bounds(members, min_count, max_count)
    cap = min(max(min_count, 1) if max_count is None else max_count, len(members) + 1)  # more is unsatisfiable
    return len(members) * (cap + 1)


def _count(schema: dict[str, Any], keyword: str) -> int | None:
    """A count keyword (minLength, maxItems, ...) as an int: the meta-schema allows 5.0 and 1e12."""
    value = schema.get(keyword)
    return None if value is None else int(value)


def generic_object(value: Node, min_count: int = 0, max_count: int | None = None, key: Node | None = None) -> Node:
    """An object with string keys (any, or those `key` matches) whose values match `value`,
    at most `max_count` members (a repeated key only lowers the count, so the bound stays exact)."""
    member = seq(key or string_node(), lit(": "), value)
    if max_count == 0:
        return lit("{}")
    rest = Repeat(seq(lit(", "), member), 0, None if max_count is None else max_count - 1)
    body = seq(member, rest)
    return seq(lit("{"), body if min_count > 0 else optional(body), lit("}"))


def any_value(depth: int) -> Node:
    """Any JSON value, with objects and arrays nested at most `depth` levels."""
    scalars = [lit("null"), lit("true"), lit("false"), number_node(), string_node()]
    if depth <= 0:
        return alt(*scalars)
    inner = any_value(depth - 1)
    return alt(*scalars, array_of(inner, 0, None), generic_object(inner))
