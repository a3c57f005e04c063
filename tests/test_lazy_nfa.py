"""The lazy NFA: distances known at a state's birth equal a breadth-first search over the
fully expanded automaton, and laziness builds only what is visited."""

from __future__ import annotations

import collections
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_extract.core.automaton.dfa import DEAD, LazyDFA
from gguf_extract.core.automaton.keys import Keys
from gguf_extract.core.automaton.nfa import NFA, build_nfa
from gguf_extract.core.automaton.regex import Alt, Chars, Lit, Machine, Node, Repeat, Seq, Text
from gguf_extract.core.automaton.sample import sample_accepted
from gguf_extract.core.index.compiled import compile_automaton, compile_schema
from gguf_extract.core.index.guide import new_bitmask
from gguf_extract.core.schema.compiler import compile_tree
from gguf_extract.core.vocab.token_table import Vocabulary


def expanded_distances(nfa: NFA) -> dict[int, int]:
    """Expand every state reachable from the start, then a 0-1 BFS backwards from accept."""
    seen = {nfa.start}
    stack = [nfa.start]
    reverse: dict[int, list[tuple[int, int]]] = {}
    while stack:
        state = stack.pop()
        steps = [(t, 1) for _, _, t in nfa.edges_of(state)] + [(t, 0) for t in nfa.epsilons_of(state)]
        for target, cost in steps:
            reverse.setdefault(target, []).append((state, cost))
            if target not in seen:
                seen.add(target)
                stack.append(target)
    distance = {nfa.accept: 0} if nfa.accept in seen else {}
    frontier = list(distance)
    while frontier:
        following: list[int] = []
        index = 0
        while index < len(frontier):
            state = frontier[index]
            index += 1
            for source, cost in reverse.get(state, []):
                candidate = distance[state] + cost
                if source not in distance or candidate < distance[source]:
                    distance[source] = candidate
                    (frontier if cost == 0 else following).append(source)
        frontier = following
    return {state: distance.get(state, -1) for state in seen}


def _machine() -> Machine:
    # "a" then any number of characters from a quote/backslash/control mix, accepting after "a".
    return Machine(
        edges=(((0x61, 0x61, 1),), ((0x00, 0x22, 1), (0x5C, 0x5C, 1), (0x100, 0x100, 1))), start=0, accepts=frozenset({1})
    )


leaves = st.one_of(
    st.binary(min_size=0, max_size=3).map(Lit),
    st.sampled_from(
        [Chars(((0x30, 0x39),)), Chars(((0x80, 0x10FFFF),)), Chars(((0xD800, 0xDFFF),)), Chars(((0x20, 0x7E), (0x400, 0x4FF)))]
    ),
    st.just(_machine()),
    st.tuples(st.integers(0, 3), st.one_of(st.none(), st.integers(0, 3))).map(
        lambda t: Text(t[0], None if t[1] is None else t[0] + t[1])
    ),
)


def _trees(children: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
    return st.one_of(
        st.lists(children, min_size=0, max_size=3).map(lambda parts: Seq(tuple(parts))),
        st.lists(children, min_size=0, max_size=3).map(lambda options: Alt(tuple(options))),
        st.tuples(children, st.integers(0, 3), st.one_of(st.none(), st.integers(0, 3))).map(
            lambda t: Repeat(t[0], t[1], None if t[2] is None else t[1] + t[2])
        ),
    )


trees = st.recursive(leaves, _trees, max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(trees)
def test_distance_at_birth_equals_search_over_expanded_automaton(tree: Node) -> None:
    nfa = build_nfa(tree)
    for state, distance in expanded_distances(nfa).items():
        assert nfa.distance[state] == distance, f"state {state}"


@settings(max_examples=300, deadline=None)
@given(trees)
def test_no_state_needs_more_than_the_bound_of_any_state_before_it(tree: Node) -> None:
    """most_to_finish(q) bounds the distance of every state reachable from q (the decoder
    skips the budget's cuts below it)."""
    nfa = build_nfa(tree)
    distances = expanded_distances(nfa)
    for state in distances:
        bound = nfa.most_to_finish(state)
        assert bound is not None
        assert all(distances[reached] <= bound for reached in reachable(nfa, state)), f"state {state}"
    accepting_all = build_nfa(tree, accepting_all=True)
    assert accepting_all.most_to_finish(accepting_all.start) is None


def reachable(nfa: NFA, state: int) -> set[int]:
    seen, stack = {state}, [state]
    while stack:
        current = stack.pop()
        for target in [*(t for _, _, t in nfa.edges_of(current)), *nfa.epsilons_of(current)]:
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen


def test_corpus_like_schema_distances_are_exact() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 20},
            "tags": {"type": "array", "items": {"enum": ["a", "bb"]}, "minItems": 1, "maxItems": 4},
            "when": {"type": "string", "format": "date"},
            "n": {"type": "integer", "minimum": -5, "maximum": 120},
        },
        "required": ["name", "n"],
    }
    nfa = build_nfa(compile_tree(schema))
    distances = expanded_distances(nfa)
    for state, distance in distances.items():
        assert nfa.distance[state] == distance
    for state in distances:
        assert all(distances[reached] <= (nfa.most_to_finish(state) or 0) for reached in reachable(nfa, state))


def test_long_bounded_strings_build_only_visited_states() -> None:
    """A maxLength of 100,000 costs nothing until decoding walks into the string."""
    automaton = compile_automaton({"type": "string", "maxLength": 100_000})
    assert automaton.dfa.nfa_state_count < 50
    text = sample_accepted(automaton.dfa, random.Random(0), soft_limit=30)
    assert len(text) >= 2
    assert automaton.dfa.state_count < 200 and automaton.dfa.nfa_state_count < 2_000


def test_hex_digits_after_a_backslash_are_named_only_as_far_as_a_walk_reads() -> None:
    # The `\u` escapes of a class of nearly every character are tens of states of hex digits; a
    # row after the backslash names the states of its next byte, not the whole trie of digits.
    automaton = compile_automaton({"type": "string", "pattern": "^[^x]+$"}).dfa
    named = automaton.nfa_state_count
    inside = automaton.walk(automaton.start, b'"')
    automaton.row(inside)
    after_backslash = automaton.walk(inside, b"\\")
    automaton.row(after_backslash)
    assert automaton.nfa_state_count - named <= 25  # 18 here; the whole trie of digits: over 40
    for escaped in (b"\\u00e9", b"\\u4E2D", b"\\n"):
        assert automaton.is_accepting(automaton.walk(inside, escaped + b'"'))
    assert automaton.walk(inside, b"\\u0078") == DEAD  # x, escaped, is still x


def test_members_in_any_order_have_exact_distances() -> None:
    """The states after each member, named together where the next member is chosen, have
    the distance a search over the expanded automaton finds (the required ones still missing,
    each with its separator)."""
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "bb": {"type": "string", "minLength": 3},
            "c": {"type": "boolean"},
            "dd": {"enum": ["x", "long value"]},
            "e": {"type": "null"},
        },
        "required": ["bb", "dd", "e"],
        "additionalProperties": False,
    }
    nfa = build_nfa(compile_tree(schema), accepting_all=True)
    distances = expanded_distances(nfa)
    assert len(distances) > 200  # the orders of five members, each at most once
    for state, distance in distances.items():
        assert nfa.distance[state] == distance, f"state {state}"


def nearest_acceptance(nfa: NFA, state: int) -> int:
    """The fewest bytes from `state` to acceptance: a 0-1 search forward, which expands only
    the states nearer than that (the automaton accepting every text holds free-form values
    nested levels deep: expanded whole, it is very large)."""
    best = {state: 0}
    frontier = collections.deque([state])
    while frontier:
        current = frontier.popleft()
        if current == nfa.accept:
            return best[current]
        steps = [(target, 0) for target in nfa.epsilons_of(current)] + [(target, 1) for _, _, target in nfa.edges_of(current)]
        for target, cost in steps:
            if best[current] + cost < best.get(target, best[current] + cost + 1):
                best[target] = best[current] + cost
                (frontier.appendleft if cost == 0 else frontier.append)(target)
    return -1


def test_a_key_read_as_one_has_exact_distances() -> None:
    """Where any other name is an undeclared member's, an object's key is read as one state per
    position of the name automaton: its distance (through the nearest name of a member not
    written, or any other name, then what must still follow) is a search's."""
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "ab": {"type": "string", "minLength": 3},
            'b"c': {"type": "boolean"},
            "dd": {"enum": ["x", "long value"]},
            "x": False,
            "\u00e9t\u00e9": {"type": "null"},
        },
        "required": ["ab", "dd"],
    }
    nfa = build_nfa(compile_tree(schema), accepting_all=True)
    dfa = LazyDFA(nfa)
    texts = [b'{"ab": "xyz", "q": 1, "dd": "x"}', b'{"dd": "long value", "b\\"c": true, "a', b'{"ab": "abc", "a": 1, "x']
    texts.append(b'{"\\u00e9t')  # a name from U+007F up, its first character escaped
    for text in texts:
        for cut in range(len(text) + 1):
            state = dfa.walk(dfa.start, text[:cut])
            if state != DEAD:
                dfa.row(state)
    keys = [state for state in range(nfa.size) if isinstance(nfa.node_of(state), Keys)]
    assert len(keys) > 20
    for state in keys:
        assert nfa.distance[state] == nearest_acceptance(nfa, state), f"state {state}"


def test_a_literal_opening_a_sequence_is_read_without_naming_the_rest() -> None:
    """A state of a sequence that opens with a literal reads it itself: a closure keeps it
    unexpanded, its bytes are told without naming a state, and the parts after them are named
    only where a walk goes past them (the members an object may take next: a walk reads few)."""
    options = [Seq((Lit(f'"k{index}"'.encode()), Lit(b": "), Chars(((0x30, 0x39),)))) for index in range(30)]
    nfa = build_nfa(Alt(tuple(options)))
    members = nfa.closure(nfa.start)
    named = nfa.size
    assert len(members) == 30
    assert sorted(nfa.literal_rest(member) or b"" for member in members) == sorted(f'"k{i}"'.encode() for i in range(30))
    assert nfa.size == named
    after = nfa.after_literal(members[0])
    assert nfa.literal_rest(after) == b": " and nfa.size == named + 2
    # Read byte by byte through its edges, or as text at once, it leads to the same states.
    first = members[0]
    opening = nfa.literal_rest(first)
    assert opening is not None
    state = first
    for byte in b'"k':
        ((_, _, state),) = [edge for edge in nfa.edges_of(state) if edge[0] <= byte <= edge[1]]
    assert nfa.after_plain_text(first, b'"k', '"k') == (state,)
    assert nfa.literal_rest(state) == opening[2:]
    assert nfa.distance[state] == nfa.distance[first] - 2


def test_the_first_key_of_an_object_in_any_order_names_few_states_per_member(vocab: Vocabulary) -> None:
    """The masks up to where an object's first key is chosen walk the keys as literals: the
    states of each member's separator and value are not named then (seven states a member were)."""
    schema = {"type": "object", "properties": {f"field_{i}": {"type": "string"} for i in range(40)}}
    compiled = compile_schema(schema, vocab)
    automaton, _ = compiled.accepting
    guide = compiled.guide(every_valid_text=True)
    named = automaton.nfa_state_count
    bitmask = new_bitmask(vocab.size)
    guide.fill_mask(bitmask)
    guide.advance(vocab.pieces.index(b"{"))
    guide.fill_mask(bitmask)
    assert automaton.nfa_state_count - named <= 3 * 40
    allowed = {vocab.pieces[token] for token in guide.allowed_token_ids().tolist()}
    assert {b'"', b"}"} <= allowed and all(piece[:1] in (b'"', b"}") for piece in allowed)
