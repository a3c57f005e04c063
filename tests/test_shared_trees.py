"""Trees built once for what they are made of: integer and number trees once per compilation
for each content of their keywords (a bound or multipleOf written in many places: one
automaton), each place keeping its own grounding mark, its own refusals, and its own verdicts
where the validator chose the values; a member's name and the `": "` after it once per name."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gguf_extract.core.index.compiled import SchemaAutomaton, compile_automaton
from gguf_extract.core.schema.read.validation import validator_for_schema

CENTS = {"type": "number", "minimum": 0, "multipleOf": 0.01}
DOZENS = {"type": "integer", "minimum": 0, "multipleOf": 12}


def accepts(automaton: SchemaAutomaton, value: Any) -> bool:
    dfa = automaton.dfa
    return dfa.is_accepting(dfa.walk(dfa.start, json.dumps(value).encode()))


def test_a_numbers_keywords_written_in_many_places_are_built_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import gguf_extract.core.schema.build.numbers as numbers

    calls: list[tuple[Any, ...]] = []
    original = numbers.integer_values

    def counted(*args: Any, **keywords: Any) -> Any:
        calls.append(args)
        return original(*args, **keywords)

    monkeypatch.setattr(numbers, "integer_values", counted)
    properties = {f"price{i}": CENTS for i in range(6)} | {f"box{i}": DOZENS for i in range(6)}
    properties["late"] = {"type": "integer", "minimum": 5, "multipleOf": 12}  # other keywords: its own tree
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    automaton = compile_automaton(schema)
    assert len(calls) == 3  # the cents (written as whole multiples), the dozens, the late ones
    validator = validator_for_schema(schema)
    for name, value in [("price0", 3), ("price5", -2), ("box0", 0), ("box4", 24), ("late", 0), ("late", 12), ("box2", 13)]:
        document = {name: value}
        assert accepts(automaton, document) is validator.is_valid(document), document


def test_each_place_of_a_shared_number_refuses_its_own_keyword() -> None:
    # A multipleOf no automaton holds exactly, written twice: relaxed at each place, by its pointer.
    third = {"type": "number", "multipleOf": 0.3}
    automaton = compile_automaton({"type": "object", "properties": {"a": third, "b": third}}, lenient=True)
    assert sorted(refusal.pointer for refusal in automaton.relaxed) == ["/properties/a/multipleOf", "/properties/b/multipleOf"]


def test_decimals_listed_for_bounds_written_twice_are_those_the_validator_accepts() -> None:
    # No whole number lies within these bounds: the multiples listed are those the validator
    # accepts for the node at hand (a tree so chosen is not shared between places); each place
    # writes exactly what the validator accepts.
    tenths = {"type": "number", "minimum": 0.1, "maximum": 0.5, "multipleOf": 0.1}
    schema = {"type": "object", "properties": {"a": tenths, "b": tenths}, "required": ["a", "b"], "additionalProperties": False}
    automaton = compile_automaton(schema)
    validator = validator_for_schema(schema)
    for a, b in [(0.1, 0.2), (0.3, 0.5), (0.4, 0.25), (0.6, 0.1)]:
        document = {"a": a, "b": b}
        assert accepts(automaton, document) is validator.is_valid(document), document


def test_a_members_key_is_one_node_per_name_and_reads_as_json_writes_it() -> None:
    from gguf_extract.core.automaton.regex import Seq
    from gguf_extract.core.schema.build.objects import member_key

    assert member_key("id") is member_key("id")
    schema = {"type": "object", "properties": {"caf\u00e9": {"type": "integer"}, "id": {"type": "integer"}}, "required": ["id"]}
    automaton = compile_automaton({"type": "array", "items": schema})
    for text, valid in [
        ('[{"id": 1}]', True),
        ('[{"caf\\u00e9": 1, "id": 2}]', True),
        ('[{"café": 1, "id": 2}]', True),
        ('[{"cafe": 1}]', False),
    ]:
        dfa = automaton.dfa
        assert dfa.is_accepting(dfa.walk(dfa.start, text.encode())) is valid, text
    assert isinstance(member_key("caf\u00e9"), Seq)


@pytest.mark.parametrize("seed", range(200))
def test_an_objects_fewest_bytes_known_from_its_members_are_what_measuring_finds(seed: int) -> None:
    # object_of keeps the fewest bytes of its members' body (required ones and their separators)
    # rather than measuring the tails between them: the same number measuring them finds.
    import random

    from gguf_extract.core.automaton.measure import GENERATED
    from gguf_extract.core.automaton.regex import Chars, Either, Repeat, alt, lit, seq
    from gguf_extract.core.schema.build.trees import object_of

    rng = random.Random(seed)

    def member(index: int) -> object:
        value = rng.choice(
            [
                lit("1"),
                lit("true"),
                seq(lit('"'), Repeat(Chars(((0x61, 0x7A),)), rng.randrange(0, 4), None), lit('"')),
                alt(lit("null"), lit("12345")),
            ]
        )
        return seq(lit(f'"m{index}": '), value)

    members = [(member(index), rng.random() < 0.4) for index in range(rng.randrange(0, 9))]
    tree = object_of(members)  # type: ignore[arg-type]
    body = tree.parts[1]  # type: ignore[attr-defined]
    generated = body.generated if isinstance(body, Either) else body
    kept = GENERATED.measure(generated)
    assert kept == GENERATED._measure(generated)  # from its parts, measured as the generator measures them


def _shapes(count: int) -> dict[str, Any]:
    """A oneOf of `count` object shapes told apart by a `kind` const, each a `$ref`."""
    definitions = {
        f"shape{i}": {
            "type": "object",
            "properties": {"kind": {"const": f"shape{i}"}, "size": {"type": "integer"}},
            "required": ["kind"],
            "additionalProperties": False,
        }
        for i in range(count)
    }
    return {"definitions": definitions, "oneOf": [{"$ref": f"#/definitions/shape{i}"} for i in range(count)]}


def test_a_oneofs_branches_are_read_once_for_the_pairwise_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    import gguf_extract.core.schema.nodes.schema_document as schema_document

    reads: list[str] = []
    original = schema_document._Reader.__init__

    def counted(self: Any, document: Any, raw: Any, pointer: str) -> None:
        reads.append(pointer)
        original(self, document, raw, pointer)

    monkeypatch.setattr(schema_document._Reader, "__init__", counted)
    schema = _shapes(12)
    automaton = compile_automaton(schema)
    # 12 branches make 132 ordered pairs; each schema is read at most twice (once quietly for
    # the analysis, once to compile), not once per pair.
    assert max(reads.count(pointer) for pointer in set(reads)) <= 2
    validator = validator_for_schema(schema)
    for i in range(12):
        value = {"kind": f"shape{i}", "size": i}
        assert validator.is_valid(value) and accepts(automaton, value)
    assert not accepts(automaton, {"kind": "shape99"})
    assert not accepts(automaton, {"kind": "shape1", "size": 1, "extra": 2})


def test_the_oneof_analysis_reads_a_branch_only_as_far_as_its_pairs_need() -> None:
    # Branch 0 is told apart by `k`; its `y` admits no string, so it is left out, and the
    # reference under `z`, which leads nowhere, is never read (nor was it when each pair read
    # its branches afresh).
    branch = {
        "type": "object",
        "required": ["k", "y", "z"],
        "properties": {
            "k": {"const": "a"},
            "y": {"type": "string", "minLength": 3, "maxLength": 1},
            "z": {"$ref": "#/$defs/missing"},
        },
    }
    other = {"type": "object", "required": ["k"], "properties": {"k": {"const": "b"}}}
    automaton = compile_automaton({"type": "object", "properties": {"p": {"oneOf": [branch, other]}}})
    assert accepts(automaton, {"p": {"k": "b"}})


def test_the_oneof_analysis_meets_a_dangling_reference_where_the_pairs_first_read_it() -> None:
    from gguf_extract.core.schema.read.resources import UnresolvableReference

    first = {
        "type": "object",
        "required": ["k", "z"],
        "properties": {"k": {"const": "a"}, "z": {"$ref": "#/$defs/missingA"}},
    }
    second = {"type": "object", "required": ["k"], "properties": {"k": {"const": "b"}}}
    with pytest.raises(UnresolvableReference) as raised:
        compile_automaton({"oneOf": [first, second, {"anyOf": [{"$ref": "#/$defs/missingB"}]}]})
    assert "/oneOf/0/properties/z/$ref" in str(raised.value)


def test_a_deep_tree_is_measured_without_reaching_the_recursion_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past a bounded depth the fewest bytes are measured by a stack: the recursion limit is
    never met (where it was, a finalizer the cyclic collector ran at that depth failed)."""
    from gguf_extract.core.automaton.measure import ShortestMatch
    from gguf_extract.core.automaton.regex import alt, lit, seq

    met: list[int] = []
    original = ShortestMatch._measure

    def counted(self: ShortestMatch, node: Any) -> Any:
        try:
            return original(self, node)
        except RecursionError:
            met.append(1)
            raise

    monkeypatch.setattr(ShortestMatch, "_measure", counted)
    node = lit("a")
    for _ in range(5000):  # "b" then the level below or "cc": 1 + min(below, 2)
        node = seq(lit("b"), alt(node, lit("cc")))
    assert ShortestMatch(accepting_all=False).measure(node) == 3
    assert not met
