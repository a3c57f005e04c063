"""The fast meta-schema check (core.schema.read.meta_check) says yes only where jsonschema does:
on real schemas, on those schemas broken one value at a time, and on the edge cases where
drafts differ (1.0 as an integer, JSON equality in `uniqueItems`)."""

from __future__ import annotations

import copy
import gzip
import json
import random
import warnings
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gguf_extract.core.schema.read.meta_check import _PLAIN_REFERENCES
from gguf_extract.core.schema.read.validation import _fast_meta_check, _meta_validator, validator_class

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "jsonschemabench.jsonl.gz"
EVERY = 10  # an evenly spread tenth of the corpus
DRAFTS = {
    "draft-04": "http://json-schema.org/draft-04/schema#",
    "draft-06": "http://json-schema.org/draft-06/schema#",
    "draft-07": "http://json-schema.org/draft-07/schema#",
    "2019-09": "https://json-schema.org/draft/2019-09/schema",
    "2020-12": "https://json-schema.org/draft/2020-12/schema",
}
# Values put in place of any value of a schema: wrong types, edge numbers, bad patterns and URIs.
ODD_VALUES: list[Any] = [1, 1.0, -1, 0, 0.5, "x", "", None, True, False, [], {}, ["a", "a"], [1, True], [1, 1.0], "[", "a b#"]


def verdicts(schema: Any) -> tuple[bool, bool] | None:
    """(fast check, jsonschema) for `schema`, or None where it has no draft to check under."""
    try:
        cls = validator_class(schema)
    except Exception:
        return None
    fast = _fast_meta_check(cls)
    if fast is None:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # `re` on patterns it will read differently one day
        return fast(schema), _meta_validator(cls).is_valid(schema)


def with_one_value_changed(schema: Any, rng: random.Random) -> Any:
    changed = copy.deepcopy(schema)
    places: list[tuple[Any, Any]] = []
    stack = [changed]
    while stack:
        node = stack.pop()
        keys = node.keys() if isinstance(node, dict) else range(len(node)) if isinstance(node, list) else []
        for key in keys:
            places.append((node, key))
            stack.append(node[key])
    if places:
        node, key = rng.choice(places)
        node[key] = copy.deepcopy(rng.choice(ODD_VALUES))
    return changed


def test_every_draft_but_3_has_a_fast_check() -> None:
    for uri in DRAFTS.values():
        assert _fast_meta_check(validator_class({"$schema": uri})) is not None
    # 2019-09's meta-schema recurses through `$recursiveRef`: it is read inlined
    # (core.schema.read.meta). Draft 3's lists schemas in `type` (such schemas are refused,
    # after jsonschema checks them).
    assert _fast_meta_check(jsonschema.Draft3Validator) is None


@pytest.mark.skipif(not CORPUS.exists(), reason="the shared JSONSchemaBench corpus is not present")
def test_corpus_schemas_and_their_broken_copies_get_no_yes_that_jsonschema_refuses() -> None:
    with gzip.open(CORPUS, "rt", encoding="utf-8") as lines:
        schemas = [json.loads(line)["schema"] for number, line in enumerate(lines) if number % EVERY == 0]
    rng = random.Random(7)
    settled = unsettled = 0
    for schema in schemas:
        found = verdicts(schema)
        if found is not None:
            fast, slow = found
            assert slow or not fast, json.dumps(schema)[:400]
            settled, unsettled = settled + (fast == slow), unsettled + (fast != slow)
        for _ in range(2):
            broken = with_one_value_changed(schema, rng)
            found = verdicts(broken)
            assert found is None or found[1] or not found[0], json.dumps(broken)[:400]
    # The check is only worth having if it settles nearly every real schema by itself.
    assert unsettled <= settled // 100, (settled, unsettled)


@pytest.mark.parametrize("draft", sorted(DRAFTS))
@pytest.mark.parametrize(
    ("schema", "valid_in"),
    [
        ({"minLength": 1.0}, {"draft-06", "draft-07", "2019-09", "2020-12"}),  # draft 4: 1.0 is no integer
        ({"minLength": True}, set()),
        ({"enum": [1, True]}, set(DRAFTS)),  # 1 and true differ in JSON
        ({"enum": [1, 1.0]}, {"draft-06", "draft-07", "2019-09", "2020-12"}),  # equal, and unique in draft 4 only
        ({"enum": [[1], [True]]}, set(DRAFTS)),  # arrays: settled by jsonschema
        ({"required": ["a", "a"]}, set()),
        ({"required": ["a", 1]}, set()),
        ({"pattern": "["}, set()),
        ({"pattern": "^a$"}, set(DRAFTS)),
        ({"type": ["string", "string"]}, set()),
        ({"type": "integer", "multipleOf": 0}, set()),
        ({"exclusiveMinimum": True, "minimum": 1}, {"draft-04"}),
        ({"exclusiveMinimum": 3}, {"draft-06", "draft-07", "2019-09", "2020-12"}),
        ({"exclusiveMinimum": True}, set()),  # draft 4 asks for `minimum` beside it
        ({"properties": {"a": {"type": "strin"}}}, set()),
        ({"items": [{"type": "string"}, 5]}, set()),
        ({"$ref": "#/$defs/a b"}, {"draft-04"}),  # a URI reference from draft 6 on
    ],
)
def test_draft_edge_cases_get_jsonschemas_verdict(draft: str, schema: dict[str, Any], valid_in: set[str]) -> None:
    found = verdicts({"$schema": DRAFTS[draft], **schema})
    assert found is not None
    fast, slow = found
    assert slow == (draft in valid_in)
    assert slow or not fast


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_plain_references_taken_at_once_are_references_to_the_full_grammar(data: st.DataObject) -> None:
    """A string the fast check takes as a plain `uri` or `uri-reference` without the format
    checker is one RFC 3986's grammar (jsonschema's checker) takes too."""
    form = data.draw(st.sampled_from(sorted(_PLAIN_REFERENCES)))
    pattern = _PLAIN_REFERENCES[form].__self__.pattern  # type: ignore[attr-defined]
    text = data.draw(st.from_regex(pattern, fullmatch=True))
    assert jsonschema.FormatChecker().conforms(text, form), (form, text)


@pytest.mark.parametrize(
    ("form", "text", "plain"),
    [
        ("uri-reference", "#/definitions/a%20b", True),
        ("uri-reference", "other.json#/$defs/x", True),
        ("uri-reference", "", True),
        ("uri-reference", "a b#", False),
        ("uri-reference", "#/definitions/a b", False),
        ("uri-reference", "/absolute/path", False),  # a path from the root: the checker's to take
        ("uri", "http://json-schema.org/draft-07/schema#", True),
        ("uri", "https://example.com:8080/a/b?c=d#e", True),
        ("uri", "#/definitions/a", False),
        ("uri", "urn:isbn:0451450523", False),  # no `//`: the checker's to take
        ("uri", "http://[::1]/", False),
    ],
)
def test_plain_references(form: str, text: str, plain: bool) -> None:
    """Which strings the fast check takes at once; the others go to the format checker, which
    settles them (a path from the root and a URN are references all the same)."""
    assert (_PLAIN_REFERENCES[form](text) is not None) == plain
    if plain:
        assert jsonschema.FormatChecker().conforms(text, form)
