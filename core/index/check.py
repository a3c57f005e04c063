"""`extract check`: what the compiler makes of a schema, without any model.

Compiles leniently so that every refused keyword is found in one compilation (not just the first),
counts the keywords that are enforced, lists the ones ignored as meaningless in the schema's
draft (with why, where that is worth a warning: core.schema.read.unknown_keywords), and reports the
automaton's size and one example document drawn from it.
"""

from __future__ import annotations

import collections
import random
from dataclasses import dataclass, field
from typing import Any

from ..automaton.sample import sample_accepted
from ..defaults import DEFAULT_RECURSION_DEPTH
from ..errors import UnsupportedSchema
from ..grounding.follower import grounds, text_labels
from ..grounding.value_holds import holds, value_labels
from ..jsontext import join_pointer
from ..schema.read.known_keywords import ANNOTATIONS, SUPPORTED
from ..schema.read.load import Schema
from ..schema.read.resources import inside
from ..schema.read.unknown_keywords import KeywordNote
from ..schema.read.validation import draft_name
from .compiled import compile_automaton


@dataclass
class SchemaReport:
    """The outcome of checking one schema. `supported` means every keyword is enforced."""

    draft: str
    enforced: dict[str, int]
    refused: list[UnsupportedSchema]
    ignored: list[str]
    nfa_states: int
    dfa_states_explored: int
    shortest_document_bytes: int
    example: str
    seconds: float
    # Plain string values: grounded with `grounded=True` (or `x-grounded: true`), and not
    # (`x-grounded: false`), by schema pointer.
    groundable: list[str] = field(default_factory=list)
    never_grounded: list[str] = field(default_factory=list)
    # The ignored keywords worth a warning (a keyword of another draft, an unknown one), with why.
    notes: list[KeywordNote] = field(default_factory=list)

    @property
    def supported(self) -> bool:
        return not self.refused

    @property
    def fully_enforced(self) -> bool:
        """Supported, and nothing worth a warning: no keyword that looks meant as a constraint
        is ignored (`format: "emial"`, another draft's keyword), no `required` name is left open."""
        return self.supported and not self.notes

    def as_dict(self) -> dict[str, Any]:
        return {
            "supported": self.supported,
            "fully_enforced": self.fully_enforced,
            "draft": self.draft,
            "enforced": self.enforced,
            "refused": [{"keyword": r.keyword, "pointer": r.pointer, "message": r.message} for r in self.refused],
            "ignored": self.ignored,
            "nfa_states": self.nfa_states,
            "dfa_states_explored": self.dfa_states_explored,
            "shortest_document_bytes": self.shortest_document_bytes,
            "example": self.example,
            "seconds": round(self.seconds, 4),
            "grounded_with_flag": self.groundable,
            "never_grounded": self.never_grounded,
            "notes": [{"keyword": n.keyword, "pointer": n.pointer, "reason": n.reason} for n in self.notes],
        }


def check_schema_support(schema: Schema, *, recursion_depth: int = DEFAULT_RECURSION_DEPTH) -> SchemaReport:
    """Report on `schema`. Raises SchemaError when it is invalid or unsatisfiable even with
    the refused keywords left out."""
    automaton = compile_automaton(schema, recursion_depth=recursion_depth, lenient=True)
    example = sample_accepted(automaton.dfa, random.Random(0), soft_limit=200).decode("utf-8")
    labels = text_labels(automaton.dfa.tree)
    values = value_labels(automaton.dfa.tree)
    return SchemaReport(
        draft=draft_name(schema),
        enforced=dict(
            sorted(_enforced_keywords(schema, {r.pointer for r in automaton.relaxed} | set(automaton.ignored)).items())
        ),
        refused=automaton.relaxed,
        ignored=automaton.ignored,
        nfa_states=automaton.dfa.nfa_state_count,
        dfa_states_explored=automaton.dfa.state_count,
        shortest_document_bytes=automaton.dfa.distance(automaton.dfa.start),
        example=example,
        seconds=automaton.seconds,
        groundable=[label.pointer for label in labels if grounds(label, True)]
        + [label.pointer for label in values if holds(label, True)],
        never_grounded=[label.pointer for label in labels if not grounds(label, True)]
        + [label.pointer for label in values if not holds(label, True)],
        notes=automaton.notes,
    )


def _enforced_keywords(schema: Any, refused: set[str]) -> collections.Counter[str]:
    """Counts of the constraining keywords written in schema positions (core.schema.read.resources
    says which values are schemas), outside the refused and ignored ones and what they hold.
    Property names, `$defs` names and the values of `enum`, `const` and `default` are data,
    never keywords: a property named `format` counts nothing."""
    counts: collections.Counter[str] = collections.Counter()
    stack: list[tuple[Any, str]] = [(schema, "")]
    while stack:
        sub, pointer = stack.pop()
        if not isinstance(sub, dict):
            continue
        for keyword, value in sub.items():
            if join_pointer(pointer, keyword) in refused:
                continue
            if keyword in SUPPORTED and keyword not in ANNOTATIONS:
                counts[keyword] += 1
            stack.extend(inside({keyword: value}, pointer))
    return counts
