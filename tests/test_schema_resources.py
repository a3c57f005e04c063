"""Where a `$ref` leads, checked against the resolver jsonschema itself uses (`referencing`):
for every reference in generated schemas of every draft (embedded resources with `$id`, draft
4's `id`, fragments, relative references naming a resource), the compiler's target is the
very subschema the validator's resolver finds, or the compiler refuses the reference."""

from __future__ import annotations

import contextlib
from typing import Any
from urllib.parse import quote

import pytest
import referencing.exceptions
import referencing.jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fuzz import SCHEMAS, drafted_schemas

from gguf_extract.core.errors import SchemaError, UnsupportedSchema
from gguf_extract.core.extract.prompt import describe_schema
from gguf_extract.core.index.compiled import compile_automaton
from gguf_extract.core.jsontext import join_pointer
from gguf_extract.core.schema.read.load import check_schema
from gguf_extract.core.schema.read.resources import Resources, UnresolvableReference, subschemas
from gguf_extract.core.schema.read.validation import NO_RETRIEVAL, validator_class, validator_for_schema

DRAFT_03 = "http://json-schema.org/draft-03/schema#"
DRAFT_04 = "http://json-schema.org/draft-04/schema#"
DRAFT_07 = "http://json-schema.org/draft-07/schema#"


def validator_target(root: Any, pointer: str, ref: str) -> Any:
    """What jsonschema's resolver finds for `ref` written in the schema at `pointer`; raises
    referencing's Unresolvable when it finds nothing."""
    specification = referencing.jsonschema.specification_with(validator_class(root).META_SCHEMA["$schema"])
    resource = specification.create_resource(root)
    resolver = NO_RETRIEVAL.resolver_with_root(resource)
    here = resolver.lookup("#" + quote(pointer))  # the walk there sets the base URI, as validation does
    return here.resolver.lookup(ref).contents


def references(root: Any) -> list[tuple[str, str]]:
    return [(pointer, sub["$ref"]) for sub, pointer in subschemas(root) if isinstance(sub.get("$ref"), str)]


@settings(max_examples=SCHEMAS, deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True)
@given(drafted_schemas)
def test_every_reference_names_what_the_validator_resolves_or_is_refused(root: Any) -> None:
    resources = Resources(root)
    own_drafts = [pointer for sub, pointer in subschemas(root) if pointer and "$schema" in sub]

    def own_draft(pointer: str) -> bool:
        return any(pointer == p or pointer.startswith(p + "/") for p in own_drafts)

    for pointer, ref in references(root):
        try:
            target, target_pointer = resources.resolve(ref, join_pointer(pointer, "$ref"))
        except UnsupportedSchema:
            continue  # refused: fail closed
        if own_draft(pointer) or own_draft(target_pointer):
            continue  # read under its own draft: compiled only where reached, checked there (tests/test_mixed_drafts.py)
        if isinstance(target, bool) and validator_class(root).META_SCHEMA["$schema"] in (DRAFT_04, DRAFT_03):
            # Drafts 3 and 4 have no boolean schemas: their meta-schema refuses this one before any
            # reference is followed, and referencing's legacy lookup cannot step into it.
            with pytest.raises(SchemaError, match="fails the JSON Schema meta-schema"):
                check_schema(root)
            continue
        expected = validator_target(root, pointer, ref)
        assert target is expected or (isinstance(target, bool) and target == expected), (pointer, ref)


def test_the_resolver_oracle_sees_embedded_resources() -> None:
    """The oracle itself: a fragment inside an embedded resource names that resource's part."""
    inner = {"$id": "in.json", "$defs": {"v": {"type": "string"}}, "properties": {"v": {"$ref": "#/$defs/v"}}}
    root = {"$defs": {"in": inner, "v": {"type": "integer"}}}
    assert validator_target(root, "/$defs/in/properties/v", "#/$defs/v") is inner["$defs"]["v"]
    assert Resources(root).resolve("#/$defs/v", "/$defs/in/properties/v/$ref") == (inner["$defs"]["v"], "/$defs/in/$defs/v")


@pytest.mark.parametrize(
    ("root", "pointer", "base"),
    [
        ({"$id": "https://e.com/a/root.json", "$defs": {"x": {"$id": "x/y.json"}}}, "/$defs/x", "https://e.com/a/x/y.json"),
        ({"$defs": {"x": {"$id": "y.json", "$defs": {"z": {"$id": "z.json"}}}}}, "/$defs/x/$defs/z", "z.json"),
        # draft 7: an $id beside $ref is ignored; one that is only a fragment names an anchor
        ({"$schema": DRAFT_07, "definitions": {"x": {"$id": "y.json", "$ref": "#"}}}, "/definitions/x", ""),
        ({"$schema": DRAFT_07, "definitions": {"x": {"$id": "#x"}}}, "/definitions/x", ""),
        # draft 4 reads `id`; a value that is not in a schema position sets nothing
        ({"$schema": DRAFT_04, "items": [{"id": "i.json"}]}, "/items/0", "i.json"),
        ({"$schema": DRAFT_04, "enum": [{"id": "e.json"}]}, "/enum/0", ""),
    ],
)
def test_base_uri_of_a_subschema(root: Any, pointer: str, base: str) -> None:
    assert Resources(root).base(pointer) == base


def test_a_pointer_that_leads_nowhere_is_not_relaxable() -> None:
    with pytest.raises(UnsupportedSchema) as refusal:
        Resources({"$defs": {"x": {"$id": "x.json"}}}).resolve("x.json#/nothing", "/$ref")
    assert (refusal.value.pointer, refusal.value.relaxable) == ("/$ref", False)
    with pytest.raises(SchemaError, match="must be a string"):
        Resources({}).resolve(3, "/$ref")


def test_the_prompt_describes_a_reference_where_it_is_written() -> None:
    inner = {"$id": "in.json", "$defs": {"v": {"type": "string"}}, "type": "object", "properties": {"v": {"$ref": "#/$defs/v"}}}
    schema = {"$defs": {"in": inner, "v": {"type": "integer"}}, "type": "object", "properties": {"i": {"$ref": "#/$defs/in"}}}
    outline = describe_schema(schema)
    assert "v?: string" in outline and "integer" not in outline


def test_an_id_that_is_not_a_string_is_refused_where_the_meta_schema_does_not_look() -> None:
    """Reached only through a `$ref` (no keyword position), a subschema's non-string id passes
    the meta-schema, and jsonschema's resolver then fails on it while validating."""
    schema = {
        "$schema": DRAFT_04,
        "systems": {"type": "array", "items": {"id": {"type": "integer"}}},
        "properties": {"s": {"$ref": "#/systems"}},
    }
    with pytest.raises(AttributeError):
        validator_for_schema(schema).is_valid({"s": [1]})
    for lenient in (False, True):
        with pytest.raises(UnsupportedSchema) as refusal:
            compile_automaton(schema, lenient=lenient)
        assert (refusal.value.keyword, refusal.value.pointer) == ("id", "/systems/items/id")


@pytest.mark.parametrize(
    ("root", "pointer", "ref", "target"),
    [
        ({"$defs": {"n": {"$anchor": "n", "type": "integer"}}}, "/properties/a", "#n", "/$defs/n"),
        ({"$schema": DRAFT_07, "definitions": {"n": {"$id": "#n", "type": "integer"}}}, "/properties/a", "#n", "/definitions/n"),
        ({"$schema": DRAFT_04, "definitions": {"n": {"id": "#n", "type": "integer"}}}, "/properties/a", "#n", "/definitions/n"),
        # an anchor belongs to the resource it is declared in
        (
            {"$defs": {"in": {"$id": "in.json", "$defs": {"n": {"$anchor": "n"}}}, "n": {"$anchor": "n"}}},
            "/properties/a",
            "in.json#n",
            "/$defs/in/$defs/n",
        ),
        (
            {"$defs": {"in": {"$id": "in.json", "$defs": {"n": {"$anchor": "n"}}}, "n": {"$anchor": "n"}}},
            "/$defs/in",
            "#n",
            "/$defs/in/$defs/n",
        ),
        ({"$id": "https://e.com/r.json", "$defs": {"n": {"$anchor": "n"}}}, "/properties/a", "r.json#n", "/$defs/n"),
    ],
)
def test_an_anchor_names_the_subschema_the_validator_finds(root: dict[str, Any], pointer: str, ref: str, target: str) -> None:
    root = {**root, "properties": {"a": {"type": "string"}}}
    found, found_pointer = Resources(root).resolve(ref, join_pointer(pointer, "$ref"))
    assert found_pointer == target
    assert found is validator_target(root, pointer, ref)


def test_anchors_that_name_nothing_or_two_places_are_refused() -> None:
    twice = {"$defs": {"a": {"$anchor": "n"}, "b": {"$anchor": "n"}}}
    with pytest.raises(UnsupportedSchema, match="ambiguous") as refusal:
        Resources(twice).resolve("#n", "/$ref")
    assert not refusal.value.relaxable
    with pytest.raises(UnresolvableReference):
        Resources({"$defs": {"a": {"$anchor": "m"}}}).resolve("#n", "/$ref")
    # draft 7: an id beside $ref is ignored, so it declares no anchor
    with pytest.raises(UnresolvableReference):
        Resources({"$schema": DRAFT_07, "definitions": {"a": {"$id": "#n", "$ref": "#"}}}).resolve("#n", "/$ref")
    with pytest.raises(UnsupportedSchema, match="dynamicAnchor") as refusal:
        Resources({"$defs": {"a": {"$dynamicAnchor": "n"}}}).resolve("#n", "/$ref")
    assert refusal.value.relaxable


@pytest.mark.parametrize(
    ("pointer", "ref"),
    [("/properties/a", "in.json#/$defs/n"), ("/$defs/in", "#/$defs/n"), ("/properties/a", "in.json"), ("/$defs/in", "#n")],
)
def test_references_the_validator_cannot_follow_are_refused(pointer: str, ref: str) -> None:
    """Under a relative root id with a directory, jsonschema's resolver finds no embedded
    resource and no anchor: such a reference is refused, whatever this module would find."""
    root = {
        "$id": "a/root.json",
        "$defs": {"in": {"$id": "in.json", "$defs": {"n": {"type": "string", "$anchor": "n"}}}},
        "properties": {"a": {"type": "string"}},
    }
    with pytest.raises(referencing.exceptions.Unresolvable):
        validator_target(root, pointer, ref)
    with pytest.raises(UnsupportedSchema, match="does not resolve") as refusal:
        Resources(root).resolve(ref, join_pointer(pointer, "$ref"))
    assert not refusal.value.relaxable
    assert Resources(root).resolve("#/$defs/in", "/properties/a/$ref")[1] == "/$defs/in"  # the root's own parts are found


@pytest.mark.parametrize(
    ("schema", "recursive"),
    [
        ({"type": "string"}, False),
        ({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "string"}}, "$ref": "#/$defs/a"}, False),
        (
            {
                "$defs": {"a": {"items": {"$ref": "#/$defs/b"}}, "b": {"properties": {"x": {"$ref": "#/$defs/a"}}}},
                "$ref": "#/$defs/a",
            },
            True,
        ),
        ({"properties": {"child": {"$ref": "#"}}}, True),
        (
            {"$defs": {"n": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/n"}]}}, "properties": {"a": {"$ref": "#/$defs/n"}}},
            True,
        ),
        # read as written (a superset, as reach.py says): a cycle among definitions no walk uses counts
        ({"$defs": {"a": {"$ref": "#/$defs/a"}, "b": {"type": "integer"}}, "$ref": "#/$defs/b"}, True),
    ],
)
def test_references_tell_whether_one_can_meet_itself(schema: dict[str, Any], recursive: bool) -> None:
    """Where no reference reachable from the root meets itself below its target, the depth limit
    cuts nowhere, and compiled trees are shared without reckoning which references they meet."""
    from gguf_extract.core.schema.build.reach import References

    assert References(Resources(schema)).recursive() is recursive


# Names whose pointers sort between a pointer and those below it ("/a!" between "/a" and "/a/"),
# and ones escaped in pointers.
_NAMES = st.sampled_from(["a", "a!", "a/b", "a~", "b", "$ref"])
_REFS = st.sampled_from(["#", "#/a", "#/a!", "#/a~1b", "#/a~0", "#/a/a", "#/b/0", "#/a!/b", "#/nowhere"])
_JSON = st.recursive(
    st.builds(lambda ref: {"$ref": ref}, _REFS) | st.integers(0, 3) | st.just("text"),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_NAMES, inner, max_size=4),
    max_leaves=12,
)


def _refs_inside(resources: Resources, value: Any, pointer: str) -> set[str]:
    """The targets of the `$ref` strings written anywhere in `value` (at `pointer`), walked."""
    found: set[str] = set()
    if isinstance(value, dict):
        if isinstance(value.get("$ref"), str):
            with contextlib.suppress(SchemaError):  # refused where it is reached: no target
                found.add(resources.resolve(value["$ref"], join_pointer(pointer, "$ref"))[1])
        for name, item in value.items():
            found |= _refs_inside(resources, item, join_pointer(pointer, name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found |= _refs_inside(resources, item, join_pointer(pointer, index))
    return found


def _containers(value: Any, pointer: str) -> list[str]:
    """The pointer of every object and array in `value`, itself included (any may be asked of)."""
    if not isinstance(value, dict | list):
        return []
    items = value.items() if isinstance(value, dict) else enumerate(value)
    return [pointer, *(found for name, item in items for found in _containers(item, join_pointer(pointer, name)))]


@given(st.dictionaries(_NAMES, _JSON, max_size=4))
def test_the_references_below_a_subschema_are_those_a_walk_of_it_finds(root: dict[str, Any]) -> None:
    from gguf_extract.core.schema.build.reach import References

    resources = Resources(root)
    references = References(resources)
    for pointer in _containers(root, ""):
        reached, queue = set(), [*_refs_inside(resources, resources.raw(pointer), pointer)]
        while queue:
            target = queue.pop()
            if target not in reached:
                reached.add(target)
                queue += _refs_inside(resources, resources.raw(target), target)
        assert references.below(pointer) == reached
