"""Library errors in the command line's words.

The library speaks of its own parameters (`max_tokens`, `n_ctx`, `truncate=True`, `encoding`,
a model's path); a person at the command line is told the flags that set them instead. Each
error class whose advice depends on a setting is worded here from the error's fields; every
other error is shown as the library words it.
"""

from __future__ import annotations

from typing import NamedTuple

from gguf_extract import (
    ContextTooSmall,
    DocumentNotFound,
    DocumentTooLarge,
    ExtractError,
    ModelNotFound,
    ModelNotGGUF,
    SequenceSlotRefused,
    TokenBudgetTooSmall,
    UndecodableDocument,
    UnsupportedSchema,
)


class Wording(NamedTuple):
    message: str
    hint: str


def worded(error: ExtractError) -> Wording:
    """`error`'s message and hint as the command line says them."""
    match error:
        case TokenBudgetTooSmall(shortest=int(shortest)):
            message = (
                f"the shortest document this schema allows is {shortest} bytes, which may take {shortest} tokens:"
                f" {shortest - error.max_tokens} more than --max-tokens {error.max_tokens}"
            )
            return Wording(message, f"raise --max-tokens to at least {shortest}")
        case TokenBudgetTooSmall():
            return Wording(error.message, "raise --max-tokens")
        case ContextTooSmall(truncate_helps=True):
            remedies = error.remedies("--max-tokens", "--ctx", "--truncate")
            return Wording(error.message, f"{remedies}; or pass --chunk to extract from all of it piece by piece")
        case ContextTooSmall():
            return Wording(error.message, error.remedies("--max-tokens", "--ctx", "--truncate"))
        case SequenceSlotRefused():
            # Only a batch meets it, whose error records carry the message alone: the remedy goes in it.
            remedy = "lower --max-tokens, pass --chunk with a smaller --ctx, or a smaller --parallel (1: one after another)"
            return Wording(f"{error.message}; {remedy}", remedy)
    return Wording(error.message, _hint(error))


def _hint(error: ExtractError) -> str:
    match error:
        case DocumentTooLarge():
            return "shorten or split it, pass --chunk to extract from all of it piece by piece, or --truncate to keep its head"
        case UndecodableDocument():
            return "pass --encoding with the file's encoding (e.g. --encoding latin-1), or convert it to UTF-8"
        case DocumentNotFound():
            return "check the path, or pass - to read stdin"
        case ModelNotFound(path=None):
            return "reinstall gguf-extract, or pass --model PATH to a GGUF file"
        case ModelNotFound(searched=None):
            return "check --model or EXTRACT_MODEL"
        case ModelNotFound(listed=True):
            return "pass --model a GGUF file's path, or the name of one of the cached models listed"
        case ModelNotFound():
            return "pass --model a GGUF file's path (no model folder here holds a GGUF file for --model to find by name)"
        case ModelNotGGUF():
            return "pass a .gguf file to --model"
        case UnsupportedSchema():  # a misspelled keyword too: its remedy names the keyword meant
            return error.remedy("--lenient")
    return error.hint
