"""Where a `$ref` leads, as jsonschema's resolver (the `referencing` library) reads it.

A reference is resolved against the base URI of the schema it is written in: the root's
`$id`, changed by the `$id` of every subschema on the way there (draft 4: `id`; before
2019-09 an `$id` beside `$ref` is ignored and one that is only a fragment, `#name`, names an
anchor, not a resource). The result names a resource of this document (the root or an
embedded subschema, by its URI) and a JSON pointer inside that resource, or a plain-name
fragment: an anchor (`$anchor`; before 2019-09 an id that is only a fragment, `"$id": "#name"`)
declared in that resource. Nothing is ever
retrieved: a reference to any other URI is refused, and so is one to a URI (or an anchor) that
two subschemas declare (which one a validator picks depends on the order it crawls them).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote, urldefrag, urljoin

import referencing._core  # Resolver, for the annotation only: referencing exports no public name for it
import referencing.jsonschema

from ...errors import SchemaError, UnsupportedSchema
from ...jsontext import join_pointer, unescape_pointer_part
from .validation import NO_RETRIEVAL, draft_name, validator_class


@dataclass(frozen=True)
class _Draft:
    """Where a draft's subschemas are, as its resolver looks for embedded resources."""

    id_keyword: str
    legacy: bool  # an id beside `$ref` is ignored; an id that is only a fragment is an anchor
    one: frozenset[str]  # the value is a schema
    lists: frozenset[str]  # a list of schemas
    maps: frozenset[str]  # names to schemas
    loose: frozenset[str] = frozenset()  # any object below counts (`items`, `dependencies`)


_LISTS = frozenset({"allOf", "anyOf", "oneOf"})
_OLD_MAPS = frozenset({"definitions", "patternProperties", "properties"})
_OLD_LOOSE = frozenset({"items", "dependencies"})
_NEW_MAPS = frozenset({"$defs", "definitions", "dependentSchemas", "patternProperties", "properties"})
_NEW_ONE = frozenset({"additionalProperties", "contains", "contentSchema", "else", "if", "not", "propertyNames", "then"}) | {
    "unevaluatedItems",
    "unevaluatedProperties",
}
_DRAFT_06_ONE = frozenset({"additionalItems", "additionalProperties", "contains", "not", "propertyNames"})
_DRAFTS = {
    "draft-04": _Draft("id", True, frozenset({"additionalItems", "additionalProperties", "not"}), _LISTS, _OLD_MAPS, _OLD_LOOSE),
    "draft-06": _Draft("$id", True, _DRAFT_06_ONE, _LISTS, _OLD_MAPS, _OLD_LOOSE),
    "draft-07": _Draft("$id", True, _DRAFT_06_ONE | {"if", "then", "else"}, _LISTS, _OLD_MAPS, _OLD_LOOSE),
    "2019-09": _Draft("$id", False, _NEW_ONE | {"additionalItems"}, _LISTS, _NEW_MAPS, frozenset({"items"})),
    "2020-12": _Draft("$id", False, _NEW_ONE | {"items"}, _LISTS | {"prefixItems"}, _NEW_MAPS),
}

REFERENCE_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


@dataclass(frozen=True)
class _Place:
    """A value of the document, the base URI there, and the names walked since the last
    subschema that set it."""

    value: Any
    base: str
    since: tuple[str, ...]


class Resources:
    """The base URI of every place in one root schema and the resources it embeds."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.draft = _DRAFTS.get(draft_name(root), _DRAFTS["2020-12"])
        self.root_uri = self._id(root) or ""
        self._places: dict[str, _Place] = {"": _Place(root, self.root_uri, ())}
        self.claims: dict[str, list[str]] = {self.root_uri: [""]}  # URI -> pointers of the subschemas declaring it
        self.anchors: dict[tuple[str, str], list[str]] = {}  # (resource URI, name) -> pointers declaring it
        self._dynamic_anchors: set[tuple[str, str]] = set()
        self._agreement: dict[tuple[str, str], bool] = {}  # (ref, where) -> the validator finds the same
        self._resolver: referencing._core.Resolver[Any] | None = None
        self._crawled = False  # claims and anchors: read on the first reference (most schemas write none)
        self.references_written, self._declares = _keywords_written(root)
        self._subschemas: list[tuple[dict[str, Any], str]] | None = None

    def _crawl_once(self) -> None:
        if not self._crawled:
            self._crawled = True
            self._note_anchors(self.root, self.root_uri, "")
            if self._declares:  # else no subschema claims a URI or an anchor: nothing to find
                self._crawl()

    def every_subschema(self) -> list[tuple[dict[str, Any], str]]:
        """subschemas(root), listed once for every pass that reads them all."""
        if self._subschemas is None:
            self._subschemas = list(subschemas(self.root))
        return self._subschemas

    def resolve(self, ref: Any, where: str) -> tuple[Any, str]:
        """The subschema the reference `ref`, written at `where` (the keyword's own pointer),
        names, and its pointer in the root.

        Raises UnsupportedSchema (not relaxable) for a URI that is no resource of this document
        or is declared twice, or an anchor declared twice; UnsupportedSchema for an anchor that
        only a `$dynamicAnchor` declares; UnresolvableReference when the pointer or the anchor
        leads nowhere, or to something that is not a schema (`#/required`)."""
        if not isinstance(ref, str):
            raise SchemaError(f"$ref at {where or '/'} must be a string, not {type(ref).__name__}")
        resource, fragment = self._resource(ref, where)
        if fragment and not fragment.startswith("/"):
            pointer = self._anchor(self._uri(ref, where)[0], unquote(fragment), ref, where)
            return self.raw(pointer), pointer
        target, pointer = self.raw(resource), resource
        if fragment:
            for part in unquote(fragment)[1:].split("/"):
                target, pointer = _step(target, pointer, unescape_pointer_part(part), ref, where)
        if not isinstance(target, dict | bool):
            raise UnresolvableReference(where, f"{ref!r} names {_kind(target)}, not a schema")
        if resource:  # inside an embedded resource: followed only where the validator finds the same
            self._agreed(ref, where, pointer)
        return target, pointer

    def refuse_remote(self) -> None:
        """Raise UnsupportedSchema (not relaxable) for the first reference that names no
        resource of this document: it would be retrieved, which never happens, so neither the
        compiler nor the final validation could check what it asks. A keyword that cannot be
        checked at all must not be ignored, even when refused keywords are."""
        if not self.references_written:
            return
        for sub, pointer in self.every_subschema():
            for keyword in REFERENCE_KEYWORDS:
                ref = sub.get(keyword)
                if isinstance(ref, str):
                    self._resource(ref, join_pointer(pointer, keyword), keyword)

    def id_refusal(self, schema: dict[str, Any], pointer: str) -> UnsupportedSchema | None:
        """The refusal of an id that is not a string in the schema at `pointer`, or None.
        jsonschema's resolver reads the id of every subschema it validates and fails on any
        other value; the meta-schema checks ids only where keywords are, not in a part of the
        schema reached through a `$ref` alone."""
        keyword = self.draft.id_keyword
        if keyword not in schema or isinstance(schema[keyword], str) or (self.draft.legacy and "$ref" in schema):
            return None
        return UnsupportedSchema(
            keyword,
            join_pointer(pointer, keyword),
            "is not a string, and the validator fails on an id that is not one (no document could be checked);"
            " make it a URI string or remove it",
            relaxable=False,
        )

    def raw(self, pointer: str) -> Any:
        """The value at `pointer` (a SchemaError when there is none)."""
        return self._known(pointer).value

    def base(self, pointer: str) -> str:
        """The base URI of the schema at `pointer` (a SchemaError when there is none)."""
        return self._known(pointer).base

    def _known(self, pointer: str) -> _Place:
        place = self._place(pointer)
        if place is None:
            raise SchemaError(f"nothing in the schema at {pointer or '/'}")
        return place

    def _uri(self, ref: str, where: str) -> tuple[str, str]:
        """(the URI `ref`, written at `where`, names, the fragment)."""
        if ref.startswith("#") and not self._declares:
            return self.root_uri, ref[1:]  # no subschema sets a base: the root's is every place's
        base = self.base(where.rpartition("/")[0])
        if ref.startswith("#"):
            return base, ref[1:]
        uri, fragment = urldefrag(urljoin(base, ref))
        return uri, fragment

    def _anchor(self, uri: str, name: str, ref: str, where: str) -> str:
        """The pointer of the subschema that declares the anchor `name` in the resource `uri`."""
        self._crawl_once()
        declared = self.anchors.get((uri, name), [])
        if len(declared) == 1:
            self._agreed(ref, where, declared[0])
            return declared[0]
        if len(declared) > 1:
            places = " and ".join(pointer or "/" for pointer in declared)
            reason = f"{ref!r} names the anchor {name!r}, which the subschemas at {places} all declare, so it is ambiguous"
            raise UnsupportedSchema("$ref", where, reason + "; rename one of them", relaxable=False)
        if (uri, name) in self._dynamic_anchors:
            raise UnsupportedSchema("$ref", where, f"{ref!r} names a $dynamicAnchor, which is not supported")
        raise UnresolvableReference(where, f"{ref!r} names no anchor declared in {uri or 'the root'!r}")

    def _agreed(self, ref: str, where: str, pointer: str) -> None:
        """Raise UnsupportedSchema (not relaxable) unless jsonschema's resolver, reading `ref`
        where it is written, finds the subschema at `pointer`. It does not under a relative
        base URI with a directory (`"$id": "a/root.json"`): there it finds no embedded resource
        and no anchor, and validation would fail on the reference."""
        key = (ref, where)
        if key not in self._agreement:
            self._agreement[key] = self._validator_finds(ref, where, pointer)
        if not self._agreement[key]:
            reason = f"the validator does not resolve {ref!r} to the subschema at {pointer or '/'}, as it must"
            hint = " (a relative base URI with a directory?); give the root an absolute $id, or point $ref at '#/$defs/...'"
            raise UnsupportedSchema("$ref", where, reason + hint, relaxable=False)

    def _validator_finds(self, ref: str, where: str, pointer: str) -> bool:
        """Whether jsonschema's resolver, reading `ref` where it is written, finds the subschema
        at `pointer`: an anchor is followed only where the two agree."""
        try:
            here = self._validator_resolver().lookup("#" + quote(where.rpartition("/")[0]))
            found = here.resolver.lookup(ref).contents
        except Exception:  # whatever stops the validator's resolver stops validation there too
            return False
        return found is self.raw(pointer)

    def _validator_resolver(self) -> referencing._core.Resolver[Any]:
        """The resolver validation builds for this root (once)."""
        if self._resolver is None:
            specification = referencing.jsonschema.specification_with(validator_class(self.root).META_SCHEMA["$schema"])
            self._resolver = NO_RETRIEVAL.resolver_with_root(specification.create_resource(self.root))
        return self._resolver

    def _note_anchors(self, value: Any, base: str, pointer: str) -> None:
        """Record the anchors the subschema `value` at `pointer` declares in the resource `base`."""
        if not isinstance(value, dict):
            return
        draft = self.draft
        if draft.legacy:
            identifier = value.get(draft.id_keyword)
            if isinstance(identifier, str) and identifier.startswith("#") and len(identifier) > 1 and "$ref" not in value:
                self.anchors.setdefault((base, identifier[1:]), []).append(pointer)
            return
        if isinstance(value.get("$anchor"), str):
            self.anchors.setdefault((base, value["$anchor"]), []).append(pointer)
        if isinstance(value.get("$dynamicAnchor"), str):
            self._dynamic_anchors.add((base, value["$dynamicAnchor"]))

    def _resource(self, ref: str, where: str, keyword: str = "$ref") -> tuple[str, str]:
        """(pointer of the resource `ref` names, fragment inside it)."""
        uri, fragment = self._uri(ref, where)
        self._crawl_once()
        declared = self.claims.get(uri, [])
        if not declared:
            raise UnsupportedSchema(
                keyword,
                where,
                f"{ref!r} is not inside this schema (it names {uri!r}); references are never retrieved over the network"
                " or from files: copy the referenced schema under '$defs' and point at it with '#/$defs/...'",
                relaxable=False,
            )
        if len(declared) > 1:
            places = " and ".join(pointer or "/" for pointer in declared)
            raise UnsupportedSchema(
                keyword,
                where,
                f"{ref!r} names {uri or 'the root'!r}, which the subschemas at {places} all declare, so it is ambiguous;"
                f" give each embedded resource its own {self.draft.id_keyword!r}",
                relaxable=False,
            )
        return declared[0], fragment

    def _place(self, pointer: str) -> _Place | None:
        found = self._places.get(pointer)
        if found is None and pointer:
            parent, _, part = pointer.rpartition("/")
            above = self._place(parent)
            found = None if above is None else self._step_place(above, unescape_pointer_part(part))
            if found is not None:
                self._places[pointer] = found
        return found

    def _step_place(self, place: _Place, name: str) -> _Place | None:
        """The place `name` below `place`: the base changes where a subschema (a value in a
        schema position of the draft) declares an id."""
        value = place.value
        if isinstance(value, dict) and name in value:
            child = value[name]
        elif isinstance(value, list) and name.isdigit() and int(name) < len(value):
            child = value[int(name)]
        else:
            return None
        since = (*place.since, name)
        identifier = self._id(child) if self._in_schema_position(since, child) else None
        if identifier is None:
            return _Place(child, place.base, since)
        return _Place(child, urljoin(place.base, identifier), ())

    def _in_schema_position(self, since: tuple[str, ...], value: Any) -> bool:
        draft, names = self.draft, iter(since)
        for name in names:
            if name in draft.loose and isinstance(value, dict):
                return True
            if name in draft.one:
                continue
            if name in draft.lists | draft.maps and next(names, None) is not None:
                continue
            return False
        return True

    def _id(self, value: Any) -> str | None:
        """The id a subschema declares (without a trailing `#`), or None."""
        draft = self.draft
        if not isinstance(value, dict) or (draft.legacy and "$ref" in value):
            return None
        identifier = value.get(draft.id_keyword)
        if not isinstance(identifier, str) or (draft.legacy and identifier.startswith("#")):
            return None
        return identifier.rstrip("#")

    def _crawl(self) -> None:
        """Every embedded resource by its URI, as the resolver crawls the subschemas."""
        stack = [""]
        while stack:
            pointer = stack.pop()
            place = self._places[pointer]
            for child in self._children(place.value, pointer):
                found = self._place(child)
                if found is not None and isinstance(found.value, dict):
                    if not found.since:
                        self.claims.setdefault(found.base, []).append(child)
                    self._note_anchors(found.value, found.base, child)
                    stack.append(child)

    def _children(self, value: Any, pointer: str) -> Iterator[str]:
        """The pointers of the subschemas directly inside the schema `value`."""
        if not isinstance(value, dict):
            return
        draft = self.draft
        for keyword, inner in value.items():
            if keyword == "dependencies" and keyword in draft.loose:
                # The resolver crawls dependencies only when the first one is a schema.
                if isinstance(inner, dict) and isinstance(next(iter(inner.values()), None), dict):
                    here = join_pointer(pointer, keyword)
                    yield from (join_pointer(here, name) for name in inner)
            elif keyword in draft.one or (keyword in draft.loose and isinstance(inner, dict)):
                yield join_pointer(pointer, keyword)
            elif (keyword in draft.lists or keyword in draft.loose) and isinstance(inner, list):
                here = join_pointer(pointer, keyword)
                yield from (join_pointer(here, index) for index in range(len(inner)))
            elif keyword in draft.maps and isinstance(inner, dict):
                here = join_pointer(pointer, keyword)
                yield from (join_pointer(here, name) for name in inner)


class UnresolvableReference(UnsupportedSchema):
    """A `$ref` that leads nowhere. Never left out with the branch or optional property that
    holds it, nor ignored by lenient compilation: the final validation would fail on it."""

    def __init__(self, pointer: str, reason: str) -> None:
        super().__init__("$ref", pointer, reason, relaxable=False)
        self.hint = "point $ref at a schema inside this one, e.g. '#/$defs/name'"


def _step(target: Any, pointer: str, part: str, ref: str, where: str) -> tuple[Any, str]:
    if isinstance(target, dict) and part in target:
        return target[part], join_pointer(pointer, part)
    if isinstance(target, list) and part.isdigit() and int(part) < len(target):
        return target[int(part)], join_pointer(pointer, int(part))
    raise UnresolvableReference(where, f"{ref!r} does not resolve inside the schema")


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    return "null" if value is None else "a number"


# Keywords whose value is a schema, a list of schemas, or a map of names to schemas, in any
# draft: where a validator may find references (values of other keywords are data).
_ONE_SCHEMA = _NEW_ONE | {"additionalItems", "items"}
_SCHEMA_LISTS = _LISTS | {"prefixItems", "items"}
_SCHEMA_MAPS = _NEW_MAPS | {"dependencies"}


def subschemas(schema: Any) -> Iterator[tuple[dict[str, Any], str]]:
    """Every object in a schema position of any draft, with its JSON pointer (iterative)."""
    stack: list[tuple[Any, str]] = [(schema, "")]
    while stack:
        sub, pointer = stack.pop()
        if isinstance(sub, dict):
            yield sub, pointer
            stack.extend(inside(sub, pointer))


def inside(sub: dict[str, Any], pointer: str) -> Iterator[tuple[Any, str]]:
    """The values of `sub` in schema positions of any draft, with their JSON pointers."""
    for keyword, value in sub.items():  # (a pointer joined only for a schema position: most keywords are none)
        if keyword in _ONE_SCHEMA and isinstance(value, dict):
            yield value, join_pointer(pointer, keyword)
        elif keyword in _SCHEMA_LISTS and isinstance(value, list):
            here = join_pointer(pointer, keyword)
            yield from ((item, join_pointer(here, index)) for index, item in enumerate(value))
        elif keyword in _SCHEMA_MAPS and isinstance(value, dict):
            here = join_pointer(pointer, keyword)
            yield from ((item, join_pointer(here, name)) for name, item in value.items())


# Keywords by which a subschema declares a resource or an anchor, in any draft.
_DECLARING = ("$id", "id", "$anchor", "$dynamicAnchor")


def _keywords_written(root: Any) -> tuple[bool, bool]:
    """Whether a reference keyword (REFERENCE_KEYWORDS) is written anywhere in `root`, and
    whether a string is written under an id or anchor keyword anywhere below it, in a schema
    position or not (one walk): supersets, so a walk for references is skipped only where it
    could find none, and the crawl for the subschemas that declare a resource or an anchor
    only where it could find none (`id` as a property's name holds a schema, not a string)."""
    references = declares = False
    stack = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if not references:
                references = any(keyword in item for keyword in REFERENCE_KEYWORDS)
            if not declares and item is not root:
                declares = any(isinstance(item.get(keyword), str) for keyword in _DECLARING)
            if references and declares:
                break
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return references, declares
