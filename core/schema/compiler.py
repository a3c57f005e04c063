"""JSON Schema to a regex tree in the canonical layout: the entry point.

Canonical layout: one line, `", "` between members and elements, `": "` after keys,
properties in schema order. The schema is read into typed nodes once (nodes/schema_document.py,
nodes/schema_node.py), subschemas are merged as nodes (nodes/conjunction.py), and each kind of
value has its own builder (build/compilation.py dispatches). Every keyword is either enforced
exactly or refused with its JSON pointer (UnsupportedSchema), and a keyword the draft gives no
meaning is listed, noted or, where it looks misspelled, refused (read/unknown_keywords.py):
nothing is silently dropped. Generating fewer documents than the schema allows is fine (no
additional properties are ever emitted, numbers have bounded digits); generating one it forbids
is never fine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..automaton.regex import Node
from ..defaults import DEFAULT_RECURSION_DEPTH
from ..errors import UnsupportedSchema
from .build.compilation import Compilation
from .nodes.schema_document import SchemaDocument
from .read.load import Schema, refuse_reference_cycles
from .read.mixed_drafts import refuse_mixed_drafts
from .read.resources import Resources
from .read.unknown_keywords import KeywordNote
from .refusals import DepthCut, Refusals
from .work_limits import Fuel, check_document_floor


@dataclass
class CompiledTree:
    """A schema's regex tree; the keywords it ignored because the schema's draft gives them
    no meaning (unknown or vendor keywords such as `x-order`), each as a JSON pointer, and
    notes on those worth a warning; compiled leniently, the keywords refused and left out;
    the units of compile work it took (see work_limits.Fuel)."""

    tree: Node
    ignored: list[str]
    refused: list[UnsupportedSchema] = field(default_factory=list)
    work: int = 0
    notes: list[KeywordNote] = field(default_factory=list)


def compile_tree(root: Schema, *, recursion_depth: int = DEFAULT_RECURSION_DEPTH) -> Node:
    """The regex tree of every document in canonical layout that `root` accepts."""
    return compile_schema_tree(root, recursion_depth=recursion_depth).tree


def compile_schema_tree(
    root: Schema, *, recursion_depth: int = DEFAULT_RECURSION_DEPTH, lenient: bool = False
) -> CompiledTree:
    """Like compile_tree, also listing the keywords that were ignored as meaningless.

    A recursive `$ref` is expanded at most `recursion_depth` times along any path; deeper
    values are not generated (an optional property, an anyOf branch or array items are left
    out there), and a schema whose recursion cannot stop within the limit is refused.
    `lenient` leaves out every keyword that would be refused and lists it in `refused`
    (one pass; only a recursion that cannot stop makes it start again, reading that `$ref`
    as absent)."""
    resources = Resources(root)
    resources.refuse_remote()
    refuse_reference_cycles(root, resources)
    refuse_mixed_drafts(resources)
    refusals, fuel = Refusals(lenient), Fuel()
    dropped: frozenset[str] = frozenset()
    while True:
        document = SchemaDocument(root, refusals, dropped, resources)
        build = Compilation(document, recursion_depth, fuel)
        try:
            tree = build.value(document.child(root, ""))
        except DepthCut as cut:
            refusal = UnsupportedSchema(
                "$ref",
                cut.pointer,
                f"recursive reference {cut.ref!r} cannot stop within {recursion_depth} levels; raise the recursion depth",
                relaxable=cut.pointer not in dropped,  # read as absent already, and still cut: leniency has no more to give
            )
            try:
                if cut.pointer in dropped:
                    raise refusal from None
                refusals.refuse(refusal)  # raises it unless lenient
            finally:  # this frame is in the refusal's traceback when raised: holding it would make a cycle
                del refusal
            dropped |= {cut.pointer}
            continue
        check_document_floor(tree, build.floor)
        notes = list(dict.fromkeys(document.notes))
        return CompiledTree(tree, list(dict.fromkeys(document.ignored)), refusals.found, fuel.used, notes)
