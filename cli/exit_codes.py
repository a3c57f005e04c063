"""Process exit codes, documented in the README and in --help, and the one map from every
error class to its code."""

from __future__ import annotations

from enum import IntEnum

from ..core import errors
from ..core.errors import DocumentError, ExtractError, GenerationError, ModelError, OutputError, ReviewError, SchemaError


class ExitCode(IntEnum):
    OK = 0
    USAGE = 2
    SCHEMA = 3
    MODEL = 4
    DOCUMENT = 5
    GENERATION = 6
    OUTPUT = 7
    WORKER = 8  # a --workers process died before giving every document's result
    INTERRUPTED = 130  # Ctrl-C (SIGINT)
    TERMINATED = 143  # SIGTERM


class UsageError(ExtractError):
    """The command line asks for something that cannot be done (exit 2)."""


# Each family with its code; a class takes the code of the first family it belongs to. The
# base class last: nothing raises it itself, but a caller's own subclass could reach here.
EXIT_CODES: tuple[tuple[type[ExtractError], ExitCode], ...] = (
    (UsageError, ExitCode.USAGE),
    (SchemaError, ExitCode.SCHEMA),
    (ModelError, ExitCode.MODEL),
    (DocumentError, ExitCode.DOCUMENT),
    (GenerationError, ExitCode.GENERATION),
    (OutputError, ExitCode.OUTPUT),
    (ReviewError, ExitCode.OUTPUT),  # the review page cannot be made from the evidence
    (ExtractError, ExitCode.USAGE),
)


def exit_code_for(error: ExtractError) -> ExitCode:
    return exit_code_for_kind(type(error))


def exit_code_for_kind(kind: type[ExtractError]) -> ExitCode:
    return next(code for family, code in EXIT_CODES if issubclass(kind, family))


def exit_code_named(name: str) -> ExitCode | None:
    """The code of the error class called `name` (as a batch record's `type` gives it), or
    None where no error class has that name."""
    kind = UsageError if name == UsageError.__name__ else getattr(errors, name, None)
    if isinstance(kind, type) and issubclass(kind, ExtractError):
        return exit_code_for_kind(kind)
    return None
