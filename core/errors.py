"""The one exception family raised by the library.

Every error carries a message that says what failed and a hint that says what to do next;
the command-line layer turns each class into one line on stderr and an exit code.
"""

from __future__ import annotations


class ExtractError(Exception):
    """Base class: `str(error)` is the message, `hint` the suggested next step."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class SchemaError(ExtractError):
    """The schema file is missing, not JSON, fails the meta-schema, or is unsatisfiable."""


class UnsupportedSchema(SchemaError):
    """A keyword the compiler cannot enforce exactly; the schema is refused, not weakened.

    `relaxable` is False for a keyword that lenient compilation must not ignore either,
    because the final validation could not check it (a reference that is never retrieved)."""

    def __init__(self, keyword: str, pointer: str, reason: str = "", relaxable: bool = True) -> None:
        where = pointer or "/"
        detail = f": {reason}" if reason else ""
        super().__init__(
            f"unsupported keyword '{keyword}' at {where}{detail}",
            hint="remove or rewrite that keyword; the schema is refused rather than weakened",
        )
        self.keyword = keyword
        self.pointer = pointer
        self.relaxable = relaxable


class ModelError(ExtractError):
    """The model file is missing, unreadable, or not a usable GGUF model."""


class DocumentError(ExtractError):
    """The input document is missing, unreadable, not text, or too long."""


class DocumentTooLarge(DocumentError):
    """More bytes than the context could hold as tokens; `head` holds the first `limit` bytes."""

    def __init__(self, source: str, limit: int, head: bytes) -> None:
        super().__init__(
            f"document {source} is larger than {limit} bytes, more than the context can hold as tokens",
            hint="shorten or split it, or keep its head that fits with truncate",
        )
        self.limit = limit
        self.head = head


class GenerationError(ExtractError):
    """Generation could not produce a complete, schema-valid document."""


class OutputError(ExtractError):
    """The result could not be written (stdout closed or full, an output file failed)."""


class ReviewError(ExtractError):
    """Evidence given to the review page does not fit its document (a span outside the text,
    a pointer that is not a leaf of the data, a confidence outside [0, 1])."""
