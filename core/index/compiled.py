"""The compiled artefact (automaton + token index for one vocabulary) and its cheap cursor."""

from __future__ import annotations

import gc
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..automaton.dfa import DEAD, LazyDFA
from ..automaton.nfa import build_nfa
from ..automaton.regex import Lit, generated_nodes
from ..defaults import DEFAULT_RECURSION_DEPTH
from ..errors import GenerationError, SchemaError, UnsupportedSchema
from ..grounding.follower import Grounding, grounds, text_labels
from ..grounding.value_holds import holds, value_labels
from ..schema.compiler import compile_schema_tree
from ..schema.read.load import Schema, check_schema
from ..schema.read.unknown_keywords import KeywordNote, summarized
from ..schema.read.validation import best_error, validator_for_schema
from ..vocab.token_table import TokenTable, Vocabulary
from .guide import Guide
from .token_index import TokenIndex

_TABLES: dict[str, TokenTable] = {}


def accepting_automaton(generator: LazyDFA) -> LazyDFA:
    """The automaton of every text the schema allows, from the generator's (the same tree, each
    Either's accepted side: members in any order, undeclared properties); built lazily, as any."""
    return LazyDFA(build_nfa(generator.tree, accepting_all=True))


def token_table(vocab: Vocabulary) -> TokenTable:
    """The array layout of `vocab`, built once per process and vocabulary."""
    table = _TABLES.get(vocab.fingerprint)
    if table is None:
        table = TokenTable(vocab)
        _TABLES[vocab.fingerprint] = table
    return table


@dataclass
class CompiledSchema:
    """A schema compiled for one vocabulary. Expensive parts are built lazily and cached
    here, so reuse one instance for every document with the same schema and model. A Guide
    (`guide()`) is the way to walk its automata; `automaton`, `token_index` and `accepting`
    show them, read-only, to what inspects them (tests, benchmarks, `extract check`)."""

    schema: Schema
    vocab: Vocabulary
    _dfa: LazyDFA
    _index: TokenIndex
    compile_seconds: float
    relaxed: list[UnsupportedSchema] = field(default_factory=list)
    grounded: bool = False  # plain strings are spans of the document unless `x-grounded` says otherwise
    notes: list[KeywordNote] = field(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        """What a caller should be told about keywords left out because the schema's draft
        gives them no meaning (keywords of another draft, unknown ones, a format name close to
        a defined one) or that leave a value open (a `required` name no property declares):
        one line per keyword and reason. Misspelled keywords are refused (relaxed when
        lenient) instead."""
        return summarized(self.notes)

    @cached_property
    def grounded_pointers(self) -> list[str]:
        """The schema pointers of the plain string values written as spans of the document, then
        those of the dates, numbers, terms and pattern strings held to the ones it states."""
        strings = [label.pointer for label in text_labels(self._dfa.tree) if grounds(label, self.grounded)]
        return strings + self._held_value_pointers

    @cached_property
    def _held_value_pointers(self) -> list[str]:
        """The schema pointers of the dates, numbers, terms and pattern strings held to those the
        document states."""
        return [label.pointer for label in value_labels(self._dfa.tree) if holds(label, self.grounded)]

    @property
    def automaton(self) -> LazyDFA:
        """The automaton of the texts a generator writes (no undeclared properties: a subset of
        `accepting`'s), grown lazily as guides explore it. Shared: read it, never change it."""
        return self._dfa

    @property
    def token_index(self) -> TokenIndex:
        """`automaton`'s token index for `vocab`: the tokens each state allows, built lazily."""
        return self._index

    @property
    def grounds_any(self) -> bool:
        return bool(self.grounded_pointers)

    @cached_property
    def may_withhold(self) -> bool:
        """Whether a value could be withheld after it was written (core.results.abstain): the
        generator may write `null` somewhere, or an array, from which an item could be dropped
        (a literal holding `null` or `[`: `null`, `": null}`, `": [`). Only then need the output
        wait for the whole document."""
        nodes = generated_nodes(self._dfa.tree)
        return any(isinstance(node, Lit) and (b"null" in node.data or b"[" in node.data) for node in nodes)

    def guide(self, *, every_valid_text: bool = False) -> Guide:
        """A new Guide at the start of this schema's automaton (cheap; one per generation): the
        texts the decoder writes (declared properties in schema order), or with
        `every_valid_text` also members in any order and undeclared properties where
        `additionalProperties` allows them (slower: see the departures in docs/schema-support.md)."""
        automaton, token_index = self.accepting if every_valid_text else (self._dfa, self._index)
        return Guide(automaton, token_index)

    @cached_property
    def accepting(self) -> tuple[LazyDFA, TokenIndex]:
        """The automaton of every text the schema allows (members in any order, undeclared
        properties where `additionalProperties` allows them) and its token index, built on
        first use; `automaton` and `token_index` are the generator's, a subset (see NFA)."""
        dfa = accepting_automaton(self._dfa)
        return dfa, TokenIndex(dfa, self._index.table)

    def grounding(self, document: str) -> Grounding | None:
        """What holds this schema's grounded strings to spans of `document` in one
        generation; None where the schema grounds no string."""
        if not self.grounds_any:
            return None
        return Grounding(self._dfa, self.vocab, document, self.grounded, hold_values=bool(self._held_value_pointers))

    def validate(self, text: str) -> Any:
        """Parse `text` and validate it against the schema, formats included.

        Raises GenerationError if it is not a complete, valid document, SchemaError if the
        schema holds a reference that does not resolve inside it (none is ever retrieved)."""
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            raise GenerationError(f"output is not complete JSON: {error.msg}") from None
        with _deep_recursion():  # a document nests as deeply as its schema allows
            problem = best_error(validator_for_schema(self.schema), value)
        if problem is not None:
            raise GenerationError(f"output fails the schema: {problem.message}")
        return value


@dataclass
class SchemaAutomaton:
    """A schema's byte automaton, before any vocabulary is involved (what `extract check`
    reports). `ignored` lists keywords with no meaning in the schema's draft, by pointer,
    `notes` those worth a warning, with why; `work` the units of compile work it took (the limit is limits.MAX_COMPILE_FUEL)."""

    schema: Schema
    dfa: LazyDFA
    ignored: list[str]
    seconds: float
    relaxed: list[UnsupportedSchema] = field(default_factory=list)
    work: int = 0
    notes: list[KeywordNote] = field(default_factory=list)


def compile_automaton(
    schema: Schema, *, recursion_depth: int = DEFAULT_RECURSION_DEPTH, lenient: bool = False
) -> SchemaAutomaton:
    """Check `schema` and build its automaton. Raises SchemaError / UnsupportedSchema (with
    the keyword and its JSON pointer) when it is invalid or cannot be enforced exactly.

    `lenient` leaves out each keyword that would be refused instead (listed in `relaxed`, all
    found in one compilation); the caller must still validate output against the full schema."""
    started = time.perf_counter()
    with _cycle_collection_paused():
        check_schema(schema)
        with _deep_recursion():
            return _compile_checked(schema, recursion_depth, started, lenient)


@contextmanager
def _cycle_collection_paused() -> Iterator[None]:
    """Compiling allocates many small objects that mostly live on (the nodes and the tree),
    which set off Python's cyclic collector again and again, each pass walking the growing
    tree to find nothing to collect (the tree holds no cycles): up to a third of the compile
    time of the largest schemas. Paused while compiling, the collector is back to how it was
    after (other threads' garbage waits that long too)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def _deep_recursion(limit: int = 20_000) -> Iterator[None]:
    """Tree and NFA construction recurse once per nesting level of the schema; Python 3.11
    calls between Python functions use no C stack, so a higher limit is safe here."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def _compile_checked(schema: Schema, recursion_depth: int, started: float, lenient: bool) -> SchemaAutomaton:
    try:
        compiled_tree = compile_schema_tree(schema, recursion_depth=recursion_depth, lenient=lenient)
    except RecursionError:
        raise SchemaError("the schema nests too deeply to compile", hint="flatten deeply nested sub-schemas") from None
    try:
        nfa = build_nfa(compiled_tree.tree)
    except RecursionError:
        raise SchemaError("the schema nests too deeply to compile", hint="lower the recursion depth") from None
    dfa = LazyDFA(nfa)
    if dfa.start == DEAD:
        raise SchemaError("no JSON document satisfies this schema")
    ignored = list(dict.fromkeys(compiled_tree.ignored))
    seconds = time.perf_counter() - started
    return SchemaAutomaton(schema, dfa, ignored, seconds, compiled_tree.refused, compiled_tree.work, compiled_tree.notes)


def compile_schema(
    schema: Schema,
    vocab: Vocabulary,
    *,
    recursion_depth: int = DEFAULT_RECURSION_DEPTH,
    lenient: bool = False,
    grounded: bool = False,
) -> CompiledSchema:
    """Compile `schema` for `vocab`. Raises SchemaError / UnsupportedSchema before any
    generation when the schema is invalid or cannot be enforced exactly (see
    compile_automaton for `lenient`).

    Nothing of a compiled schema is stored on disk: an automaton is Python objects, and
    reading such objects back from a file would run whatever code the file names."""
    started = time.perf_counter()
    table = token_table(vocab)
    automaton = compile_automaton(schema, recursion_depth=recursion_depth, lenient=lenient)
    index = TokenIndex(automaton.dfa, table)
    seconds = time.perf_counter() - started
    return CompiledSchema(schema, vocab, automaton.dfa, index, seconds, automaton.relaxed, grounded, automaton.notes)
