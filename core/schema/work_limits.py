"""Resource limits: schemas whose automaton would cost too much to build or to walk.

The automaton is lazy, so a schema costs what decoding visits; but every document must reach
its end, and the fewest bytes a document needs must all be walked. Walking a byte costs a few
kilobytes (a DFA row of 256 targets, the NFA states behind it), and a byte inside free text
about ten times as much (each position of a string where any character may come creates a
state per UTF-8 shape). So two floors are bounded, each a count known from the regex tree
before anything is built: the fewest bytes a value needs, and among them the fewest characters
of free text. Objects with a binding property count and multipleOf divisors are bounded by
the nodes or states they would create. Every limit is a count, never a time, so a schema is
refused or compiled the same way on every machine.
"""

from __future__ import annotations

import collections
import functools
from collections import deque

from ..automaton.measure import shortest_generated
from ..automaton.regex import Alt, AnyOrder, Chars, Either, Lit, Machine, Node, Repeat, Seq
from ..errors import SchemaError, UnsupportedSchema

# Fewest bytes a value (and so the whole document) may need: far above real documents (the
# largest floor in JSONSchemaBench is 20,445 bytes: 600 required objects in an array).
MAX_FLOOR_BYTES = 32_768
# Fewest characters of free text (string positions open to any character) a value may need.
MAX_FLOOR_TEXT = 4_096
# Regex nodes an object with a binding minProperties/maxProperties may build: one tail per
# (property, properties written so far).
MAX_OBJECT_NODES = 200_000
# States of the remainder automaton of an integer divisor (after its factors of 10).
MAX_DIVISOR_STATES = 10_000
# Multiples within bounds listed one by one, for divisors too large for the remainder automaton.
MAX_LISTED_MULTIPLES = 1_000

# Units of compile work a schema may use (see Fuel and WORK_WEIGHTS): at least 1.25 times what
# any schema of JSONSchemaBench that compiles needs (the most, 119,769 units, is a pattern's
# automaton), and reached after about 1.3 s of compiling (measured CPU time on this project's
# 2-core machine) by the schemas it refuses, whose recursion unrolls into millions of units.
MAX_COMPILE_FUEL = 150_000
# What each kind of work costs in units, about 10 microseconds of compiling each (fitted over
# the corpus): a schema compiled into the tree (per schema and references being expanded, its
# own tree and floors included), a pair of schemas merged, a property merged or placed (object
# tails: properties times the counts that matter), an anyOf/oneOf branch (oneOf: per pair),
# a listed value judged by the validator, an automaton state of a string's constraints.
WORK_WEIGHTS: dict[str, int] = {"schema": 15, "merge": 3, "member": 1, "branch": 1, "value": 1, "state": 3}


class Fuel:
    """Deterministic compile work, counted instead of timed, so that a schema compiles or is
    refused the same way on every machine and under any load. Each kind of work costs its
    weight in units (WORK_WEIGHTS); `counts` holds how much of each kind was done."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = MAX_COMPILE_FUEL if limit is None else limit
        self.used = 0
        self.counts: collections.Counter[str] = collections.Counter()

    def burn(self, pointer: str, kind: str = "schema", count: int = 1) -> None:
        """Spend `count` pieces of work of `kind` on the schema at `pointer`. Raises
        CompileWorkExceeded past the limit."""
        self.counts[kind] += count
        self.used += WORK_WEIGHTS[kind] * count
        if self.used > self.limit:
            raise CompileWorkExceeded(self.limit, pointer)


class CompileWorkExceeded(UnsupportedSchema):
    """The schema needs more compile work than any schema may use. An UnsupportedSchema so
    that no optional property or anyOf branch swallows it (a compile cut short at an
    arbitrary point would still be sound, but would depend on where the count ran out),
    and never relaxed."""

    def __init__(self, limit: int, pointer: str) -> None:
        super().__init__("", pointer, relaxable=False)
        self.message = (
            f"the schema needs more than {limit:,} units of compile work (schemas compiled and merged, properties"
            f" placed, values checked; the limit any schema may use), reached at {pointer or '/'}"
        )
        self.args = (self.message,)
        self.hint = "lower the recursion depth, or split the schema into smaller ones"


class Floor:
    """The fewest bytes each node of a regex tree matches, and the characters of free text
    on such a shortest match. Kept on the nodes themselves (a node never changes), so a tree
    shared by compilations (a format's) is measured once per process."""

    def problem(self, node: Node) -> str | None:
        """Why a value of `node` is refused (floor_problem on `of(node)`), or None.

        Asked first of the generator's shortest text as its NFA measures it (kept on the
        nodes, so the NFA measures nothing again): that is never below `of(node)`'s bytes,
        which are never below its free text, so at most MAX_FLOOR_TEXT bytes there neither
        floor can be passed, and the tree is not measured again. Only past that are the
        floors themselves measured."""
        if (shortest_generated(node) or 0) <= MAX_FLOOR_TEXT:  # None: nothing matches, refused elsewhere
            return None
        return floor_problem(*self.of(node))

    def of(self, node: Node) -> tuple[int, int]:
        """(bytes, free-text characters); matching nothing counts as (0, 0)."""  # a lower bound either way
        kept = node.__dict__
        found: tuple[int, int] | None = kept.get(_FLOOR)
        if found is None:
            found = kept[_FLOOR] = self._measure(node)
        return found

    def _measure(self, node: Node) -> tuple[int, int]:
        if isinstance(node, Lit):
            return len(node.data), 0
        if isinstance(node, Chars):
            return _chars_floor(node.ranges)
        if isinstance(node, Seq):
            parts = [self.of(part) for part in node.parts]
            return sum(p[0] for p in parts), sum(p[1] for p in parts)
        if isinstance(node, Alt):
            # The option a shortest document takes: its free text is what a walk there meets.
            return min((self.of(option) for option in node.options), default=(0, 0))
        if isinstance(node, Either):  # what the generator must write
            return self.of(node.generated)
        if isinstance(node, AnyOrder):  # only an Either's accepted side, never measured here
            return 0, 0
        if isinstance(node, Repeat):
            item_bytes, item_text = self.of(node.item)
            return node.low * item_bytes, node.low * item_text
        fewest = _machine_characters(node) if isinstance(node, Machine) else max(node.low, _machine_characters(node.machine))
        return fewest, fewest


_FLOOR = "_floor"  # where a node keeps its floor (frozen dataclasses: written to __dict__ directly)


@functools.lru_cache(maxsize=4096)
def _chars_floor(ranges: tuple[tuple[int, int], ...]) -> tuple[int, int]:
    """(bytes, free-text characters) of one character of `ranges`. Cached: character classes
    of hundreds of ranges (a negated class, \\w) come back in node after node."""
    lowest = min((low for low, _ in ranges), default=0)
    free = any(high > 0x7F for _, high in ranges)
    return _utf8_length(lowest), int(free)


def _utf8_length(code_point: int) -> int:
    return 1 if code_point < 0x80 else 2 if code_point < 0x800 else 3 if code_point < 0x10000 else 4


def _machine_characters(machine: Machine) -> int:
    """Fewest characters from the machine's start to acceptance (breadth-first)."""
    seen = {machine.start: 0}
    queue = deque([machine.start])
    while queue:
        state = queue.popleft()
        if state in machine.accepts:
            return seen[state]
        for _, _, target in machine.edges[state]:
            if target not in seen:
                seen[target] = seen[state] + 1
                queue.append(target)
    return 0


def floor_problem(bytes_needed: int, text_needed: int) -> str | None:
    """Why a value needing these floors is refused, or None when both are within limits."""
    if bytes_needed > MAX_FLOOR_BYTES:
        return f"every value here needs at least {bytes_needed} bytes, above the limit of {MAX_FLOOR_BYTES}"
    if text_needed > MAX_FLOOR_TEXT:
        return f"every value here needs at least {text_needed} characters of free text, above the limit of {MAX_FLOOR_TEXT}"
    return None


def check_document_floor(tree: Node, floor: Floor) -> None:
    """Refuse a whole schema whose shortest document is beyond the floors (the keyword checks
    catch single keywords; this catches many small ones adding up). `floor` holds what the
    compilation measured already."""
    problem = floor.problem(tree)
    if problem is not None:
        raise SchemaError(
            f"the schema's shortest document is too long to generate: {problem.replace('every value here', 'it')}",
            hint="lower minItems, minLength, pattern repetitions or the number of required properties",
        )
