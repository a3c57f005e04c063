"""Whether the strings generated for one schema meet another's string keywords: none (apart) or
all (within), decided on character automata, soundly: "apart" holds for a superset of what
the judging keywords accept (each pattern as either engine may read it, each format as the
superset of lexical/format_bounds.py), "within" for a subset (each pattern as both engines read
it, each format as its generated subset or the wider set every checker surely accepts). Where
an automaton would be too large, or a keyword is not read here, the answer is "unknown",
said as False.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict

from ...automaton.charnfa import AutomatonTooLarge, complement, intersect, is_empty, length_machine, machine_from_tree
from ...automaton.regex import Machine
from ..lexical.char_sets import UNIVERSE
from ..lexical.format_bounds import SUPERSETS, SURELY, SURELY_MOST
from ..lexical.format_machines import format_machine
from ..lexical.formats import FORMATS
from ..lexical.pattern import UnsupportedPattern, pattern_either, pattern_tree, pattern_unmatched
from ..nodes.schema_node import SchemaNode, StringNode

STATE_LIMIT = 20_000  # states an automaton built for a decision may have; beyond, "unknown"


class _Unknown(Exception):
    """An automaton this decision needs is too large, or a keyword is not read here."""


def strings_apart(node: SchemaNode, judge: StringNode) -> bool:
    """Whether no string generated for `node` meets the string keywords `judge` holds."""
    try:
        generated = _generated(node.string)
        wider = [_machine("either", pattern.source) for pattern in judge.patterns]
        if judge.format in SUPERSETS:
            wider.append(_machine("superset", judge.format))
        wider += [_machine("pattern", pattern.source, negated=True) for pattern in judge.unmatched]
        if judge.min_length or judge.max_length is not None:
            wider.append(length_machine(judge.min_length, judge.max_length))
        return any(is_empty(intersect(generated, machine, STATE_LIMIT)) for machine in wider)
    except (_Unknown, AutomatonTooLarge):  # not known to be apart: as if not
        return False


def strings_within(node: SchemaNode, judge: StringNode) -> bool:
    """Whether every string generated for `node` meets the string keywords `judge` holds."""
    try:
        generated = _generated(node.string)
        outside = [_machine("pattern", pattern.source, negated=True) for pattern in judge.patterns]
        outside += [_machine("either", pattern.source) for pattern in judge.unmatched]
        if judge.format is not None:
            outside.append(_machine("surely", judge.format, negated=True))
            if judge.format in SURELY_MOST:
                outside.append(length_machine(SURELY_MOST[judge.format] + 1, None))
        if judge.min_length:
            outside.append(length_machine(0, judge.min_length - 1))
        if judge.max_length is not None:
            outside.append(length_machine(judge.max_length + 1, None))
        return all(is_empty(intersect(generated, machine, STATE_LIMIT)) for machine in outside)
    except (_Unknown, AutomatonTooLarge):  # not known to be within: as if not
        return False


def _generated(string: StringNode | None) -> Machine:
    """The strings generated for `string`'s keywords (excluded values aside: a superset)."""
    if string is None:
        return length_machine(0, None)
    machines = [_machine("pattern", pattern.source) for pattern in string.patterns]
    machines += [_machine("unmatched", pattern.source) for pattern in string.unmatched]
    if string.format is not None:
        machines.append(_machine("format", string.format))
    if string.min_length or string.max_length is not None:
        machines.append(length_machine(string.min_length, string.max_length))
    if not machines:
        return length_machine(0, None)
    found = machines[0]
    try:
        for machine in machines[1:]:
            found = intersect(found, machine, STATE_LIMIT)
    except AutomatonTooLarge:
        raise _Unknown() from None
    return found


def _machine(kind: str, key: str, negated: bool = False) -> Machine:
    found = _machines(kind, key, negated)
    if found is None:
        raise _Unknown()
    return found


def _machines(kind: str, key: str, negated: bool) -> Machine | None:
    """One automaton, by what it is of: a pattern as both engines read it, as either may, the
    strings it leaves out; a format's generated subset, its superset, what surely passes; or
    (`negated`) every other string. None where too large or not read here. Kept for the
    process: those of formats (a few hundred at most), and the latest of patterns up to a
    number of edges in all (a schema's own: a oneOf of twenty patterned branches compares
    each with each, and one pattern's may take megabytes)."""
    if kind in ("pattern", "either", "unmatched"):
        return _PATTERN_MACHINES.get((kind, key, negated))
    return _format_machines(kind, key, negated)


class _LatestMachines:
    """The machines of patterns built latest, kept while their edges number at most `edges`
    together (the latest one always)."""

    def __init__(self, edges: int) -> None:
        self._edges = edges
        self._kept: OrderedDict[tuple[str, str, bool], tuple[Machine | None, int]] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()  # compilations may run in threads of their own

    def get(self, key: tuple[str, str, bool]) -> Machine | None:
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
                return found[0]
        machine = _machine_built(*key)
        size = 1 if machine is None else sum(map(len, machine.edges)) + 1
        with self._lock:
            if key not in self._kept:
                self._kept[key] = (machine, size)
                self._held += size
            while self._held > self._edges and len(self._kept) > 1:
                self._held -= self._kept.popitem(last=False)[1][1]
        return machine


_PATTERN_MACHINES = _LatestMachines(edges=200_000)  # tens of megabytes at most


@functools.lru_cache(maxsize=256)
def _format_machines(kind: str, key: str, negated: bool) -> Machine | None:
    return _machine_built(kind, key, negated)


def _machine_built(kind: str, key: str, negated: bool) -> Machine | None:
    try:
        if negated:
            found = _machines(kind, key, False)
            return None if found is None else complement(found, UNIVERSE, STATE_LIMIT)
        if kind == "pattern":
            return machine_from_tree(pattern_tree(key), STATE_LIMIT)
        if kind == "either":
            return machine_from_tree(pattern_either(key), STATE_LIMIT)
        if kind == "unmatched":
            return pattern_unmatched(key, STATE_LIMIT)
        if kind == "superset":
            return machine_from_tree(SUPERSETS[key], STATE_LIMIT)
        if key not in FORMATS:
            return None
        if kind == "surely" and key in SURELY:
            return machine_from_tree(SURELY[key], STATE_LIMIT)
        machine = format_machine(key)  # the one the string's own tree compiles to (stored where slow)
        return machine if len(machine.edges) <= STATE_LIMIT else None
    except (UnsupportedPattern, AutomatonTooLarge):
        return None
