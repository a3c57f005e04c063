"""The bounds on what format checkers accept (core/schema/lexical/format_bounds.py) hold for
every draft's checker: each string a checker accepts is in the format's superset, and each
string of a surely-accepted set is accepted; and the oneOf of formats they tell apart compiles
exactly."""

from __future__ import annotations

import random
import string

import jsonschema
import pytest
from test_formats import REALISTIC, sample

from gguf_extract.core.automaton.charnfa import machine_from_tree
from gguf_extract.core.automaton.regex import Machine
from gguf_extract.core.schema.lexical.format_bounds import SUPERSETS, SURELY, SURELY_MOST
from gguf_extract.core.schema.lexical.formats import FORMATS

CHECKERS = [
    jsonschema.Draft4Validator.FORMAT_CHECKER,
    jsonschema.Draft7Validator.FORMAT_CHECKER,
    jsonschema.Draft202012Validator.FORMAT_CHECKER,
]
# Characters a mutation draws from: the formats' own, and some they never hold.
_ALPHABET = string.ascii_letters + string.digits + ".:-/@{}[]%$_ \n\u0661\u212a\u017f\u00e9"


def _matches(machine: Machine, text: str) -> bool:
    """Whether the (nondeterministic) character machine matches `text`."""
    states = {machine.start}
    for char in map(ord, text):
        states = {target for state in states for low, high, target in machine.edges[state] if low <= char <= high}
    return bool(states & machine.accepts)


def _mutations(text: str, rng: random.Random) -> list[str]:
    """`text` with a character dropped, replaced or inserted, a few ways."""
    found = []
    for _ in range(6):
        at = rng.randrange(len(text) + 1)
        found.append(text[:at] + rng.choice(_ALPHABET) + text[at:])
        if text:
            at = rng.randrange(len(text))
            found.append(text[:at] + text[at + 1 :])
            found.append(text[:at] + rng.choice(_ALPHABET) + text[at + 1 :])
    return found


@pytest.mark.parametrize("name", sorted(SUPERSETS))
def test_every_string_a_checker_accepts_is_in_the_superset(name: str) -> None:
    superset = machine_from_tree(SUPERSETS[name])
    rng = random.Random(f"superset/{name}")
    texts = list(REALISTIC.get(name, []))
    texts += [sample(FORMATS[name](), rng) for _ in range(200)] if name in FORMATS else []
    texts += [mutated for text in list(texts) for mutated in _mutations(text, rng)]
    accepted = 0
    for text in texts:
        if any(checker.conforms(text, name) for checker in CHECKERS if name in checker.checkers):
            accepted += 1
            assert _matches(superset, text), f"a checker accepts {name} {text!r}, outside its superset"
    assert accepted > 50


@pytest.mark.parametrize("name", sorted(SURELY))
def test_every_surely_accepted_string_is_accepted(name: str) -> None:
    rng = random.Random(f"surely/{name}")
    for _ in range(500):
        text = sample(SURELY[name], rng)
        if len(text) <= SURELY_MOST[name]:
            for checker in CHECKERS:
                assert checker.conforms(text, name), f"{name} {text!r} is rejected"
    assert all(checker.conforms("1.2.3.4", name) for checker in CHECKERS)  # numeric names too
