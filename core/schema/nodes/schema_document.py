"""Reading a schema into typed nodes: each schema object becomes one SchemaNode, once, the
first time the compiler reaches it (by its JSON pointer).

Keywords are read as the schema's draft reads them: keywords the draft does not define
(`prefixItems` before 2020-12, `const` in draft 4, `x-*`, OpenAPI's `nullable`), keywords
beside `$ref` before 2019-09, and format names JSON Schema does not define are listed as
ignored, with a note where that is worth a warning, except a misspelled keyword (`maxLenght`),
which is refused (read/unknown_keywords.py judges which); keywords that assert something this compiler
cannot enforce are refused (see refusals.py: in lenient mode they are recorded and left out).
A `$ref` is resolved here, so a reference that leads nowhere is refused wherever it is reached.
"""

from __future__ import annotations

import copy
from typing import Any

from ...errors import MisspelledKeyword, SchemaError, UnsupportedSchema
from ...jsontext import distinct_values, join_pointer, keep_values, unescape_pointer_part
from ..lexical.formats import FORMATS
from ..read.known_keywords import (
    ANNOTATIONS,
    ARRAY_KEYWORDS,
    NUMBER_KEYWORDS,
    OBJECT_KEYWORDS,
    SPECIFIED_FORMATS,
    STRING_KEYWORDS,
    SUPPORTED,
)
from ..read.load import Schema
from ..read.resources import Resources
from ..read.unknown_keywords import Judge, KeywordNote, format_reason
from ..read.validation import draft_keywords, draft_name, ref_ignores_siblings, validator_class
from ..refusals import Refusals
from .schema_node import (
    ArrayNode,
    Bound,
    NumberNode,
    ObjectNode,
    Pattern,
    Reference,
    SchemaNode,
    StringNode,
    Sub,
    UnionNode,
    Values,
    conjoin,
    true_sub,
)

# The undeclared `required` names of one schema a "did you mean" is looked for (a bound on
# the time an untrusted schema with thousands of them takes: each search measures up to
# core.schema.read.unknown_keywords's _MOST_MEASURED names).
GUESSES = 32


class SchemaDocument:
    """One root schema and its typed nodes, converted on first use and kept by pointer.

    `ignored` lists the pointers of keywords left out as meaningless in the draft, `notes`
    those worth a warning and why (core.schema.read.unknown_keywords); `dropped_refs` holds `$ref`
    keywords (by pointer) to read as absent (lenient compilation of a recursion that cannot
    stop)."""

    def __init__(
        self, root: Schema, refusals: Refusals, dropped_refs: frozenset[str] = frozenset(), resources: Resources | None = None
    ) -> None:
        self.root = root
        self.resources = Resources(root) if resources is None else resources
        self.refusals = refusals
        self.dropped_refs = dropped_refs
        self.ignored: list[str] = []
        self.notes: list[KeywordNote] = []
        # The `required` names of each schema object that declares `properties` too, by its
        # pointer: where a name none declares is worth a note (core.schema.build.objects).
        self.required_beside_properties: dict[str, dict[str, int]] = {}  # each name's first place in the list
        self.guesses_left = GUESSES  # "did you mean" looked for among declared names (each costs a search)
        draft = root
        if draft_name(root) == "draft-03":
            refusals.refuse(
                UnsupportedSchema("$schema", "/$schema", "draft 3 schemas are not supported; declare draft-04 or later")
            )
            draft = {}  # read as 2020-12, the draft of a schema that declares none
        self.asserting = draft_keywords(draft)
        self.ref_only = ref_ignores_siblings(draft)
        self.draft4 = draft_name(draft) == "draft-04"
        self.judge = Judge(validator_class(draft), isinstance(draft, dict) and "$schema" in draft)
        self._nodes: dict[str, SchemaNode | bool] = {}
        # Nodes read quietly for analysis (peek), by pointer: an analysis asks for the same few
        # schemas again and again (each branch of a oneOf against each other branch), and a
        # quiet read of one pointer always gives the same node.
        self._peeked: dict[str, SchemaNode | bool] = {}
        self._raw: dict[str, Any] = {"": root}

    def node(self, pointer: str) -> SchemaNode | bool:
        """The typed node of the schema at `pointer` (converted once)."""
        found = self._nodes.get(pointer)
        if found is None:
            raw = self.raw(pointer)
            if isinstance(raw, bool):
                found = raw
            elif isinstance(raw, dict):
                found = _Reader(self, raw, pointer).node()
            else:
                raise SchemaError(f"the value at {pointer or '/'} is not a schema")
            self._nodes[pointer] = found
        return found

    def peek(self, pointer: str) -> SchemaNode | bool:
        """The node at `pointer` for analysis only: converted as usual when it was already,
        else read without refusing or listing anything (no refusal, note or ignored keyword is
        kept; the node is, for the next peek)."""
        found = self._nodes.get(pointer)
        if found is None:
            found = self._peeked.get(pointer)
        if found is not None:
            return found
        raw = self.raw(pointer)
        if not isinstance(raw, dict):
            return raw if isinstance(raw, bool) else True
        found = self._peeked[pointer] = _Reader(self._quiet(), raw, pointer).node()
        return found

    def _quiet(self) -> SchemaDocument:
        """A reader of this document that refuses and lists nothing (nothing it reads is kept)."""
        quiet = copy.copy(self)
        quiet.refusals, quiet.ignored, quiet.notes = Refusals(lenient=True), [], []
        return quiet

    def ignore(self, keyword: str, schema: dict[str, Any], pointer: str) -> None:
        """Leave out `keyword` of `schema`, which the draft gives no meaning: refused where it
        looks like a misspelled keyword, else listed (with a note where one is worth giving)."""
        meant = self.judge.misspelling(keyword, schema)
        if meant is not None:
            self.refusals.refuse(MisspelledKeyword(keyword, pointer, meant))
            return
        self.ignored.append(pointer)
        reason = self.judge.reason(keyword, schema, self.ref_only)
        if reason is not None:
            self.notes.append(KeywordNote(keyword, pointer, reason))

    def raw(self, pointer: str) -> Any:
        """The schema as written at `pointer`."""
        found: Any = self._raw.get(pointer, _MISSING)
        if found is _MISSING:
            found = self.root
            for part in pointer.split("/")[1:]:
                name = unescape_pointer_part(part)
                found = found[int(name)] if isinstance(found, list) else found[name]
            self._raw[pointer] = found
        return found

    def child(self, value: Any, pointer: str) -> Sub:
        """A subschema written at `pointer` (a boolean one as its value: no parts is true)."""
        if isinstance(value, bool):
            return Sub(() if value else (False,), pointer)
        self._raw[pointer] = value
        return Sub((pointer,), pointer)

    def resolve(self, ref: Any, pointer: str) -> str:
        """The pointer of the schema a `$ref` at `pointer` names (refused when it names none)."""
        target, target_pointer = self.resources.resolve(ref, pointer)
        self._raw.setdefault(target_pointer, target)
        return target_pointer


_MISSING = object()


def _asserts(keyword: str, asserting: frozenset[str], raw: dict[str, Any]) -> bool:
    """Whether `keyword` asserts something in `raw`, under a draft whose validators are
    `asserting`: `then` and `else` do beside an `if` that does (its validator reads them)."""
    return keyword in asserting or (keyword in ("then", "else") and "if" in asserting and "if" in raw)


class _Reader:
    """Reads one schema object into a SchemaNode."""

    def __init__(self, document: SchemaDocument, raw: dict[str, Any], pointer: str) -> None:
        self.document = document
        self.pointer = pointer
        self.kept = self._draft_view(raw)
        marked = raw.get("x-grounded")
        self.grounded = marked if isinstance(marked, bool) else None

    def at(self, keyword: str) -> str:
        return join_pointer(self.pointer, keyword)

    def _draft_view(self, raw: dict[str, Any]) -> dict[str, Any]:
        """The keywords the draft gives meaning and this compiler enforces; the others are
        listed as ignored (no meaning) or refused (meaning not enforced)."""
        document = self.document
        refusal = document.resources.id_refusal(raw, self.pointer)
        if refusal is not None:
            try:
                document.refusals.refuse(refusal)
            finally:  # raised, the refusal's traceback holds this frame: holding it here would make a cycle
                del refusal
        ref_only = document.ref_only and "$ref" in raw
        kept: dict[str, Any] = {}
        for keyword, value in raw.items():
            if keyword in ANNOTATIONS:
                continue
            if keyword == "$ref" or (_asserts(keyword, document.asserting, raw) and not ref_only):
                kept[keyword] = value
            else:
                document.ignore(keyword, raw, self.at(keyword))
        for keyword in list(kept):
            if keyword not in SUPPORTED:
                document.refusals.refuse(UnsupportedSchema(keyword, self.at(keyword)))
                del kept[keyword]
        return kept

    def node(self) -> SchemaNode:
        kept = self.kept
        declared = kept.get("type")
        types = None if declared is None else tuple(dict.fromkeys([declared] if isinstance(declared, str) else declared))
        return SchemaNode(
            self.pointer,
            types=types,
            string=self._string(),
            number=self._number(),
            array=self._array(),
            object=self._object(),
            values=self._values(),
            any_of=self._union("anyOf"),
            one_of=self._union("oneOf"),
            nots=(self._sub("not"),) if "not" in kept else (),
            ref=self._reference(),
            all_of=self._subs("allOf") + self._conditional(),
            grounded=self.grounded,
        )

    def _conditional(self) -> tuple[Sub, ...]:
        """if/then/else as the union it means: `if` and `then`, or `not: if` and `else` (a
        missing `then` or `else` is true; core.schema.build.negation says which `if`s can be
        negated). Without `then` and `else`, or without `if`, they assert nothing."""
        kept = self.kept
        if "if" not in kept or not ("then" in kept or "else" in kept):
            return ()
        condition = self._sub("if")
        then = self._sub("then") if "then" in kept else true_sub(self.at("then"))
        otherwise = self._sub("else") if "else" in kept else true_sub(self.at("else"))
        if isinstance(kept["if"], bool):  # `if: true` always takes `then`, `if: false` always `else`
            return (then if kept["if"] else otherwise,)
        negated = Sub((SchemaNode(self.at("if"), nots=(condition,)),), self.at("if"))
        branches = (conjoin(condition, then, self.at("then")), conjoin(negated, otherwise, self.at("else")))
        union = SchemaNode(self.at("if"), any_of=UnionNode(self.at("if"), branches, exclusive=False))
        return (Sub((union,), self.at("if")),)

    def _sub(self, keyword: str) -> Sub:
        return self.document.child(self.kept[keyword], self.at(keyword))

    def _subs(self, keyword: str) -> tuple[Sub, ...]:
        where = self.at(keyword)
        return tuple(self.document.child(value, join_pointer(where, i)) for i, value in enumerate(self.kept.get(keyword, ())))

    def _named_subs(self, keyword: str) -> tuple[tuple[str, Sub], ...]:
        where = self.at(keyword)
        return tuple((name, self.document.child(value, join_pointer(where, name))) for name, value in self.kept[keyword].items())

    def _keys(self, group: frozenset[str]) -> frozenset[str]:
        return frozenset(self.kept.keys() & group)

    def _count(self, keyword: str) -> int | None:
        """A count keyword as an int: the meta-schema allows 5.0 and 1e12."""
        value = self.kept.get(keyword)
        return None if value is None else int(value)

    def _string(self) -> StringNode | None:
        keys = self._keys(STRING_KEYWORDS)
        if not keys:
            return None
        patterns = (Pattern(self.kept["pattern"], self.at("pattern")),) if "pattern" in self.kept else ()
        return StringNode(self.pointer, keys, self._count("minLength") or 0, self._count("maxLength"), patterns, self._format())

    def _format(self) -> str | None:
        """The format name; None (listed as ignored) for a name JSON Schema does not define."""
        name = self.kept.get("format")
        if name is None or name in FORMATS or name in SPECIFIED_FORMATS:
            return name
        self.document.ignored.append(self.at("format"))
        reason = format_reason(name)
        if reason is not None:
            self.document.notes.append(KeywordNote("format", self.at("format"), reason))
        return None

    def _number(self) -> NumberNode | None:
        keys = self._keys(NUMBER_KEYWORDS)
        if not keys:
            return None
        kept = self.kept
        low = high = None
        if "minimum" in kept:
            low = Bound(kept["minimum"], kept.get("exclusiveMinimum") is True, "minimum", self.at("minimum"))
        if "maximum" in kept:
            high = Bound(kept["maximum"], kept.get("exclusiveMaximum") is True, "maximum", self.at("maximum"))
        if _numeric(kept.get("exclusiveMinimum")):
            low = tighter(low, Bound(kept["exclusiveMinimum"], True, "exclusiveMinimum", self.at("exclusiveMinimum")), True)
        if _numeric(kept.get("exclusiveMaximum")):
            high = tighter(high, Bound(kept["exclusiveMaximum"], True, "exclusiveMaximum", self.at("exclusiveMaximum")), False)
        return NumberNode(self.pointer, keys, low, high, kept.get("multipleOf"))

    def _array(self) -> ArrayNode | None:
        keys = self._keys(ARRAY_KEYWORDS)
        if not keys:
            return None
        kept = self.kept
        prefix: tuple[Sub, ...] | None = None
        prefix_keyword, rest_keyword = "", "items"
        if "prefixItems" in kept:
            prefix, prefix_keyword = self._subs("prefixItems"), "prefixItems"
        elif isinstance(kept.get("items"), list):
            prefix, prefix_keyword, rest_keyword = self._subs("items"), "items", "additionalItems"
        rest = self._sub(rest_keyword) if rest_keyword in kept else None
        return ArrayNode(
            self.pointer,
            keys,
            prefix,
            prefix_keyword,
            rest,
            rest_keyword,
            self._count("minItems") or 0,
            self._count("maxItems"),
            kept.get("uniqueItems") is True,
        )

    def _object(self) -> ObjectNode | None:
        keys = self._keys(OBJECT_KEYWORDS)
        if not keys:
            return None
        kept = self.kept
        if isinstance(kept.get("properties"), dict) and "required" in kept:
            listed = kept["required"]
            self.document.required_beside_properties[self.pointer] = {
                name: place for place, name in reversed(list(enumerate(listed))) if isinstance(name, str)
            }
        names, schemas = self._dependencies()
        return ObjectNode(
            self.pointer,
            keys,
            properties=self._named_subs("properties") if "properties" in kept else (),
            required=tuple(dict.fromkeys(kept.get("required", ()))),
            additional=self._sub("additionalProperties") if "additionalProperties" in kept else None,
            patterns=self._named_subs("patternProperties") if "patternProperties" in kept else (),
            names=self._sub("propertyNames") if "propertyNames" in kept else None,
            min_properties=self._count("minProperties") or 0,
            max_properties=self._count("maxProperties"),
            dependent_names=names,
            dependent_schemas=schemas,
        )

    def _dependencies(self) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], tuple[tuple[str, Sub], ...]]:
        """(trigger, names it requires) and (trigger, schema the object must then meet), from
        draft-07 `dependencies` (either form) and 2019-09's dependentRequired/dependentSchemas."""
        names = [(trigger, tuple(required)) for trigger, required in self.kept.get("dependentRequired", {}).items()]
        schemas = list(self._named_subs("dependentSchemas")) if "dependentSchemas" in self.kept else []
        where = self.at("dependencies")
        for trigger, dependent in self.kept.get("dependencies", {}).items():
            if isinstance(dependent, list):
                names.append((trigger, tuple(dependent)))
            else:
                schemas.append((trigger, self.document.child(dependent, join_pointer(where, trigger))))
        return tuple(names), tuple(schemas)

    def _values(self) -> Values | None:
        kept = self.kept
        if "const" not in kept and "enum" not in kept:
            return None
        values = [kept["const"]] if "const" in kept else list(kept["enum"])
        if "const" in kept and "enum" in kept:
            values = keep_values(values, kept["enum"])
        keyword = "const" if "const" in kept else "enum"
        return Values(self.at(keyword), tuple(distinct_values(values)), self._keys(frozenset({"enum", "const"})))

    def _union(self, keyword: str) -> UnionNode | None:
        if keyword not in self.kept:
            return None
        return UnionNode(self.at(keyword), self._subs(keyword), keyword == "oneOf")

    def _reference(self) -> Reference | None:
        if "$ref" not in self.kept:
            return None
        where = self.at("$ref")
        if where in self.document.dropped_refs:
            return None
        try:
            target = self.document.resolve(self.kept["$ref"], where)
        except UnsupportedSchema as refusal:
            self.document.refusals.refuse(refusal)  # anchors; a reference that leads nowhere is raised
            return None
        return Reference(self.kept["$ref"], where, target)


def _numeric(value: Any) -> bool:
    return value is not None and not isinstance(value, bool)


def tighter(first: Bound | None, second: Bound | None, lower: bool) -> Bound | None:
    """The bound that excludes more: the larger lower bound (the smaller upper one); at equal
    values the exclusive one."""
    if first is None or second is None:
        return second if first is None else first
    if first.value == second.value:
        return second if second.exclusive and not first.exclusive else first
    larger = first.value > second.value
    return first if larger == lower else second
