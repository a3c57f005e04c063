"""The on-disk cache of compiled schemas: the automaton as far as earlier runs explored it.

An entry is keyed by the schema's canonical JSON, the compile options, the vocabulary's
fingerprint and the package version (core.cache adds the last two and a digest), so it is found
only for the same schema on the same vocabulary. It holds the lazy NFA and DFA with every state
built so far and the token sets of narrow states (wide ones are cheap to recompute and large to
store). A run that finds it skips the meta-schema check and compilation and starts with the
masks of every state earlier runs visited. Lenient compiles that ignored keywords are not
cached (their refusals must be reported on every run).
"""

from __future__ import annotations

import json
import pickle
import zlib
from typing import Any

from . import cache
from .automaton.dfa import LazyDFA
from .index import TokenIndex
from .schema.load import Schema
from .vocab import TokenTable, Vocabulary

KIND = "compiled"
# Token sets larger than this are recomputed rather than stored (a wide state's set is most of
# the vocabulary: hundreds of kilobytes, and a text run recomputes it in about a millisecond).
STORED_TRANSITIONS_LIMIT = 4096


def schema_key(schema: Schema, vocab: Vocabulary, recursion_depth: int, lenient: bool) -> str | None:
    """The entry key, or None for a schema that cannot be written as canonical JSON."""
    try:
        canonical = json.dumps(schema, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):
        return None
    return cache.entry_key(KIND, canonical, vocab.fingerprint, str(recursion_depth), str(lenient))


def load(key: str, table: TokenTable) -> tuple[LazyDFA, TokenIndex] | None:
    """The automaton and index stored under `key`, or None (absent, damaged, or from a format
    this code does not read)."""
    data = cache.read_bytes(KIND, key)
    if data is None:
        return None
    try:
        stored = pickle.loads(zlib.decompress(data))
        dfa, transitions, singles = stored["dfa"], stored["transitions"], stored["singles"]
        if not isinstance(dfa, LazyDFA):
            return None
        index = TokenIndex(dfa, table)
        index.restore(transitions, singles)
    except Exception:  # a digest-checked entry from an older layout can fail in many ways
        return None
    return dfa, index


def store(key: str, dfa: LazyDFA, index: TokenIndex) -> None:
    """Write the automaton as explored so far; a failure to write is ignored."""
    narrow = {state: found for state, found in index.computed().items() if found.size <= STORED_TRANSITIONS_LIMIT}
    payload: dict[str, Any] = {"dfa": dfa, "transitions": narrow, "singles": index.singles()}
    try:
        data = zlib.compress(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL), 1)
    except RecursionError:
        return
    cache.write_bytes(KIND, key, data)
