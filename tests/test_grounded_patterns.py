"""Grounded pattern strings: a string with a `pattern` (or a format held no other way, as
`time` or `duration`) is held under grounding to the document's spans its automaton accepts,
released where there is none, and bounded on a hostile document. Unit tests run a fake model
over the hand-made vocabulary; the `model` ones run the bundled model."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
from conftest import grounded_decode, searched_record, spy_on_shares
from typer.testing import CliRunner

from gguf_extract import Extractor, check_schema_support
from gguf_extract.cli.app import check_app
from gguf_extract.core.grounding.document_values import DocumentValues
from gguf_extract.core.grounding.follower import Grounding
from gguf_extract.core.grounding.pattern_spans import MOST_SPAN_BYTES, MOST_STEPS, ScanBudget, pattern_spans
from gguf_extract.core.grounding.tables import vocabulary_bodies
from gguf_extract.core.grounding.value_holds import ValueGrounding, ValuePlace
from gguf_extract.core.index.compiled import CompiledSchema, compile_schema
from gguf_extract.core.results.evidence import CONFIDENCE_EXPONENT, ValueEvidence, gather
from gguf_extract.core.vocab.token_table import Vocabulary

SEEDS = range(10)
CVE = "^CVE-\\d{4}-\\d{4,}$"
ADVISORY = (
    "Security advisory, July 2024.\n"
    "Release 5.6.2 fixes two issues: CVE-2024-3094, the backdoor found in the xz library, and\n"
    "CVE-2023-44487, the HTTP/2 rapid reset attack (see also CWE-400). Both are rated critical."
)
STATED = {"CVE-2024-3094", "CVE-2023-44487"}


def object_of(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def cve_list(**more: Any) -> dict[str, Any]:
    return object_of(cves={"type": "array", "items": {"type": "string", "pattern": CVE, **more}, "minItems": 1, "maxItems": 4})


def run(
    vocab: Vocabulary, schema: Any, document: str, seed: int, grounded: bool = True
) -> tuple[Any, dict[str, ValueEvidence], Grounding | None]:
    """The value (validated by the schema's validator, formats included), its evidence, and the
    grounding that followed the run."""
    compiled, output, decoder, grounding = grounded_decode(vocab, schema, document, seed, 300, grounded)
    value = compiled.validate(output.decode())
    jsonschema.validate(value, schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    return value, gather(output, document, decoder.choices, searched_record(grounding)), grounding


def cut(document: str, evidence: ValueEvidence) -> str:
    assert evidence.span is not None
    return " ".join(document[evidence.span[0] : evidence.span[1]].split())


# -- held while written ------------------------------------------------------------------------


def test_every_item_of_a_grounded_pattern_list_is_one_the_document_states(vocab: Vocabulary) -> None:
    for seed in SEEDS:
        value, evidence, _ = run(vocab, cve_list(), ADVISORY, seed)
        assert value["cves"] and set(value["cves"]) <= STATED, value
        for index, item in enumerate(value["cves"]):
            found = evidence[f"/cves/{index}"]
            assert found.grounded is True and cut(ADVISORY, found) == item


def test_without_grounding_the_fake_model_invents_identifiers(vocab: Vocabulary) -> None:
    """The control for the test above: the pattern alone lets any identifier through."""
    items = [item for seed in SEEDS for item in run(vocab, cve_list(), ADVISORY, seed, grounded=False)[0]["cves"]]
    assert sum(item not in STATED for item in items) >= len(items) // 2


def test_released_where_the_document_states_no_such_span(vocab: Vocabulary) -> None:
    """No CVE id in the document: the value is written as the schema alone allows (valid: run
    validates it) and its evidence says it is not grounded, never a failure."""
    for seed in SEEDS:
        value, evidence, _ = run(vocab, cve_list(), "Nothing to report this month; CWE-79 only.", seed)
        assert all(re.fullmatch(CVE, item) for item in value["cves"])
        assert all(evidence[f"/cves/{index}"].grounded is False for index in range(len(value["cves"])))


def test_an_unanchored_pattern_holds_a_span_that_contains_a_match(vocab: Vocabulary) -> None:
    """`\\d{4}` asks for four digits somewhere in the string: any span of the document at word
    edges holding four digits in a row is a candidate, and nothing else is."""
    document = "Ticket ABC-1234 was filed by Ann on Monday."
    schema = object_of(ticket={"type": "string", "pattern": "\\d{4}"})
    for seed in SEEDS:
        value, evidence, _ = run(vocab, schema, document, seed)
        assert re.search("\\d{4}", value["ticket"]) and value["ticket"] in document, value
        assert evidence["/ticket"].grounded is True and cut(document, evidence["/ticket"]) == value["ticket"]


def test_a_pattern_with_alternation_holds_either_branch_the_document_states(vocab: Vocabulary) -> None:
    document = "Invoice INV-2024 for order PO-77; reference X-1 and INVOICE-5."
    schema = object_of(ref={"type": "string", "pattern": "^(INV|PO)-\\d+$"})
    seen = {run(vocab, schema, document, seed)[0]["ref"] for seed in SEEDS}
    assert seen <= {"INV-2024", "PO-77"} and len(seen) == 2, seen


@pytest.mark.parametrize(
    ("field", "document", "stated"),
    [
        (
            {"type": "string", "format": "time"},
            "Doors 2024-06-14T09:30:00Z; it ends 17:00:00+02:00 or 18:15:00Z.",
            {"17:00:00+02:00", "18:15:00Z"},
        ),
        ({"type": "string", "format": "duration"}, "Retention is P30D, the grace period PT12H.", {"P30D", "PT12H"}),
    ],
)
def test_a_format_held_no_other_way_is_held_as_a_pattern(vocab: Vocabulary, field: Any, document: str, stated: set[str]) -> None:
    """`time` and `duration` are written otherwise in prose, so they are no terms; the spans
    their automaton accepts are the candidates (`09:30:00Z` inside `...T09:30:00Z` is inside a
    word, so it is none)."""
    schema = object_of(value=field)
    assert compile_schema(schema, vocab, grounded=True).grounded_pointers == ["/properties/value"]
    for seed in SEEDS:
        value, evidence, _ = run(vocab, schema, document, seed)
        assert value["value"] in stated and evidence["/value"].grounded is True, value


def test_x_grounded_opts_a_pattern_string_out_or_in(vocab: Vocabulary) -> None:
    schema = object_of(
        free={"type": "string", "pattern": CVE, "x-grounded": False}, held={"type": "string", "pattern": CVE, "x-grounded": True}
    )
    assert compile_schema(schema, vocab, grounded=True).grounded_pointers == ["/properties/held"]
    for seed in SEEDS:
        value, evidence, _ = run(vocab, schema, ADVISORY, seed, grounded=False)
        assert value["held"] in STATED and evidence["/held"].grounded is True
        assert evidence["/free"].grounded is None


def test_a_span_may_hold_the_documents_quotes_escaped(vocab: Vocabulary) -> None:
    """The document is read as a JSON body: its quotes are escaped there, and a span holding
    them is written so (an escaped quote does not end the value)."""
    document = 'He said "Hello there" and left.'
    schema = object_of(quote={"type": "string", "pattern": '^".+"$'})
    for seed in SEEDS:
        value, evidence, _ = run(vocab, schema, document, seed)
        assert value["quote"] == '"Hello there"' and evidence["/quote"].grounded is True


def test_a_label_naming_the_property_narrows_the_spans(vocab: Vocabulary) -> None:
    """As for the other held values: where the document states values under a label naming the
    property, those are the candidates, and the evidence span is on the labeled line."""
    document = "Order PO-77 refers to INV-12 and INV-99.\nInvoice: INV-2024\n"
    schema = object_of(invoice={"type": "string", "pattern": "^[A-Z]+-\\d+$"})
    for seed in SEEDS:
        value, evidence, _ = run(vocab, schema, document, seed)
        assert value["invoice"] == "INV-2024" and evidence["/invoice"].span == (50, 58)


def test_a_pattern_beside_another_held_kind_in_one_place_is_released(vocab: Vocabulary) -> None:
    schema = object_of(either={"anyOf": [{"type": "string", "format": "email"}, {"type": "string", "pattern": CVE}]})
    for seed in range(4):
        value, evidence, _ = run(vocab, schema, ADVISORY + " Write to ann@example.org.", seed)
        assert evidence["/either"].grounded is False, value


def test_a_held_pattern_values_confidence_is_the_models_choice_among_the_candidates(
    vocab: Vocabulary, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each choice inside a held pattern string is scored among the tokens allowed there, as a
    term's is, and the value's confidence is made of those."""
    shares = spy_on_shares(monkeypatch)
    schema = object_of(cve={"type": "string", "pattern": CVE})
    for seed in SEEDS:
        shares.clear()
        value, evidence, _ = run(vocab, schema, ADVISORY, seed)
        assert shares and all(allowed <= 3 for allowed, _ in shares), shares  # at most two ids and the close
        product = float(np.prod([found for _, found in shares]))
        assert evidence["/cve"].confidence == pytest.approx(product**CONFIDENCE_EXPONENT, abs=1e-6), value


def test_the_tokens_a_pattern_string_allows_are_those_each_candidate_is_read_to_allow(vocab: Vocabulary) -> None:
    """The tokens found from the spellings' rests (the vocabulary's body tables, given) are the
    ones reading every candidate token finds (no tables), at every prefix of every spelling:
    inside one, closing it, and inside an escape."""
    document = 'Ann said "a\\b" to BOB-12, BOB-123 and BOB-1234 (see BOB-12x).'
    schema = object_of(who={"type": "string", "pattern": '^[A-Z"a-z\\\\-]+[^ ]*$'})
    dfa = compile_schema(schema, vocab, grounded=True).automaton
    quick = ValueGrounding(dfa, vocab.pieces, DocumentValues(document), True, vocabulary_bodies(vocab))
    read = ValueGrounding(dfa, vocab.pieces, DocumentValues(document), True)
    every = np.array([token for token, piece in enumerate(vocab.pieces) if piece], dtype=np.int32)  # what the index offers
    spellings, _ = scan(schema["properties"]["who"], vocab, document)
    assert spellings is not None and b'\\"a\\\\b\\"' in spellings and len(spellings) > 5
    for spelling in spellings:
        for length in range(len(spelling) + 1):
            text = b'{"who": "' + spelling[:length]
            for follower in (quick, read):
                follower.restore(ValuePlace(dfa.start, 0, None, 0))
                follower.feed(text)
                assert follower.holding, text
            assert quick.restrict(b"", every).tolist() == read.restrict(b"", every).tolist(), text


# -- what the document offers: spans at word edges, bounded --------------------------------------


def scan(
    schema: Any, vocab: Vocabulary, document: str, budget: ScanBudget | None = None
) -> tuple[dict[bytes, list[tuple[int, int]]] | None, ScanBudget]:
    """The spans the string at the schema's root may be, from its opening quote."""
    compiled = compile_schema(schema, vocab, grounded=True)
    dfa = compiled.automaton
    spent = budget or ScanBudget()
    found = pattern_spans(dfa, dfa.walk(dfa.start, b'"'), DocumentValues(document).laid_out, spent)
    return (None if found is None else found.spans), spent


def test_spans_start_and_end_at_word_edges(vocab: Vocabulary) -> None:
    spans, _ = scan({"type": "string", "pattern": "^[A-Z]+-\\d+$"}, vocab, "ABC-12 xABC-12 ABC-123x ABC-1 (ABC-1).")
    assert spans == {b"ABC-12": [(0, 6)], b"ABC-1": [(24, 29), (31, 36)]}


def test_a_hostile_pattern_on_a_megabyte_finishes_within_its_counted_bound(vocab: Vocabulary) -> None:
    """`^(a|aa)+$` over a megabyte of `a a a ...`: every word is a span, and the scan gives up
    (the value is released) long before walking the document through the automaton; over one
    word of a million `a`s, one start is walked MOST_SPAN_BYTES bytes at most and no span is
    found. `.*` on prose gives up within the document's budget of steps too."""
    pattern = {"type": "string", "pattern": "^(a|aa)+$"}
    spans, spent = scan(pattern, vocab, "a " * 500_000)
    assert spans is None and 0 < spent.taken <= MOST_STEPS
    spans, spent = scan(pattern, vocab, "a" * 1_000_000)
    assert spans == {} and spent.taken == MOST_SPAN_BYTES
    prose = ("The fix for CVE-2024-3094 shipped in release 5.6.2; see the advisory. " * 15_000)[:1_000_000]
    spans, spent = scan({"type": "string", "pattern": ".*"}, vocab, prose)
    assert spans is None and spent.taken <= MOST_STEPS
    spans, spent = scan({"type": "string", "pattern": CVE}, vocab, prose)
    # A step per word start (all but the ids die at their first byte), then per id one per byte after its
    # first and one on the space that ends it.
    starts = int(DocumentValues(prose).laid_out.piece_starts.sum())
    assert spans is not None and list(spans) == [b"CVE-2024-3094"]
    assert spent.taken == starts + len(spans[b"CVE-2024-3094"]) * len(b"CVE-2024-3094")


def test_a_spent_budget_releases_and_never_walks_further(vocab: Vocabulary) -> None:
    spans, spent = scan({"type": "string", "pattern": CVE}, vocab, ADVISORY, ScanBudget(left=10))
    assert spans is None and spent.taken == 0


def test_a_hostile_document_runs_end_to_end_released_and_valid(vocab: Vocabulary) -> None:
    """The whole run on a megabyte: the values are released, valid, and the steps taken are
    counted within the document's budget."""
    schema = object_of(a={"type": "string", "pattern": "^(a|aa)+$"}, any={"type": "string", "pattern": ".*", "maxLength": 20})
    value, evidence, grounding = run(vocab, schema, "a " * 500_000, 0)
    assert grounding is not None and grounding.values is not None
    assert evidence["/a"].grounded is False and evidence["/any"].grounded is False, value
    assert grounding.values.budget.taken <= MOST_STEPS


# -- what is listed as grounded ----------------------------------------------------------------


def test_check_lists_a_pattern_string_among_the_grounded_pointers(tmp_path: Path) -> None:
    schema = object_of(
        cves={"type": "array", "items": {"type": "string", "pattern": CVE}}, at={"type": "string", "format": "time"}
    )
    schema["properties"]["note"] = {"type": "string", "pattern": "^x", "x-grounded": False}
    report = check_schema_support(schema)
    assert report.groundable == ["/properties/cves/items", "/properties/at"]
    assert report.never_grounded == ["/properties/note"]
    path = tmp_path / "cves.json"
    path.write_text(json.dumps(schema))
    result = CliRunner().invoke(check_app, [str(path)])
    assert result.exit_code == 0, result.stderr
    assert "grounded with --grounded: /properties/cves/items, /properties/at\n" in result.stdout
    assert "never grounded (x-grounded: false): /properties/note\n" in result.stdout


def test_property_names_are_never_held(vocab: Vocabulary) -> None:
    """A pattern on property names (`propertyNames`, the names `patternProperties` matches) is
    no value: only the values are held."""
    schema = {
        "type": "object",
        "propertyNames": {"pattern": "^[a-z]+$"},
        "patternProperties": {"^x": {"type": "string", "pattern": "^a"}},
    }
    compiled: CompiledSchema = compile_schema(schema, vocab, grounded=True)
    assert compiled.grounded_pointers == ["/patternProperties/^x"]


# -- the bundled model ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def extractor() -> Extractor:
    return Extractor.open()


@pytest.mark.model
def test_the_bundled_model_lists_only_the_cve_ids_the_document_states(extractor: Extractor) -> None:
    schema = object_of(cves={"type": "array", "items": {"type": "string", "pattern": CVE}})
    run = extractor.extract(extractor.compile(schema, grounded=True), ADVISORY)
    value = run.run()
    assert value["cves"] and set(value["cves"]) <= STATED, value
    for index, item in enumerate(value["cves"]):
        found = run.evidence[f"/cves/{index}"]
        assert found.grounded is True and cut(ADVISORY, found) == item


@pytest.mark.model
def test_the_bundled_model_is_released_where_no_span_matches(extractor: Extractor) -> None:
    schema = object_of(cve={"type": "string", "pattern": CVE})
    run = extractor.extract(extractor.compile(schema, grounded=True), "Nothing to report this month; CWE-79 only.")
    value = run.run()
    assert re.fullmatch(CVE, value["cve"]) and run.evidence["/cve"].grounded is False


@pytest.mark.model
def test_the_command_keeps_no_invented_identifier_in_a_list(tmp_path: Path) -> None:
    """An advisory naming no CVE id: under --grounded each id the model writes is released
    (the document states none), dropped from the list, and named on stderr; stdout holds
    only ids the document states (none), and the exit is 0."""
    schema, document = tmp_path / "advisory.json", tmp_path / "advisory.txt"
    schema.write_text(json.dumps(object_of(cves={"type": "array", "maxItems": 4, "items": {"type": "string", "pattern": CVE}})))
    document.write_text(
        "Security release 2.4.1\n\nThis release fixes a heap overflow in the PNG decoder reported by Jane Roe,\n"
        "and a path traversal in the archive extractor. Users of 2.4.0 should upgrade.\n"
    )
    grounded = subprocess.run(
        [sys.executable, "-m", "gguf_extract", "--schema", str(schema), str(document), "--grounded"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert grounded.returncode == 0, grounded.stderr
    assert json.loads(grounded.stdout) == {"cves": []}
    dropped = re.findall(r'/cves/\d+ "(CVE-[0-9-]+)" is not stated in the document .*: dropped from its array', grounded.stderr)
    assert len(dropped) == len(grounded.stderr.strip().splitlines()), grounded.stderr  # here the bundled model wrote 4


def test_a_pattern_names_a_piece_of_a_range_or_a_hyphenated_word(vocab: Vocabulary) -> None:
    """`-` and `.` join no words for a pattern: `2019` and `2024` of `2019-2024` are years a
    `^\\d{4}$` value may be, the whole range one `^\\d{4}-\\d{4}$` may be; a piece inside letters
    or digits still is none."""
    document = "Copyright (c) 2019-2024 Jane Doe, 20245 x2023"
    years, _ = scan({"type": "string", "pattern": "^\\d{4}$"}, vocab, document)
    assert years == {b"2019": [(14, 18)], b"2024": [(19, 23)]}
    ranges, _ = scan({"type": "string", "pattern": "^\\d{4}-\\d{4}$"}, vocab, document)
    assert ranges == {b"2019-2024": [(14, 23)]}


def test_a_held_year_of_a_range_has_its_span_in_the_evidence(vocab: Vocabulary) -> None:
    document = "Copyright (c) 2019-2024 Jane Doe"
    schema = object_of(year={"type": "string", "pattern": "^\\d{4}$"})
    for seed in SEEDS:
        value, evidence, _ = run(vocab, schema, document, seed)
        found = evidence["/year"]
        assert value["year"] in {"2019", "2024"} and found.grounded is True and cut(document, found) == value["year"]
