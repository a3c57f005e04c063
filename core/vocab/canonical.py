"""Forced text as the model itself would tokenize it.

The decoder evaluates forced text (keys, separators) without sampling it; tokenized the way
the model's own tokenizer would, the model reads it as it reads text it was trained on.
"""

from __future__ import annotations

from collections.abc import Callable

from .token_table import TokenTable


def canonical_tokens(text: bytes, tokenize: Callable[[bytes], list[int]], table: TokenTable) -> list[int]:
    """`tokenize(text)`, or a greedy longest-match split where the tokenizer does not give
    `text` back (e.g. it adds a leading-space prefix)."""
    tokens = tokenize(text)
    pieces = table.vocab.pieces
    if tokens and b"".join(pieces[t] for t in tokens) == text:
        return tokens
    return greedy_tokens(text, table)


def greedy_tokens(text: bytes, table: TokenTable) -> list[int]:
    """`text` split into the longest tokens that start it, from the left."""
    tokens: list[int] = []
    pieces = table.vocab.pieces
    rest = text
    while rest:
        candidates = table.with_prefix(rest[:1])
        best = max((int(t) for t in candidates if rest.startswith(pieces[t])), key=lambda t: len(pieces[t]))
        tokens.append(best)
        rest = rest[len(pieces[best]) :]
    return tokens
