"""Process exit codes, documented in docs/exit-codes.md and in --help, and the one map from every
error class to its code."""

from __future__ import annotations

from enum import IntEnum

import gguf_extract
from gguf_extract import DocumentError, ExtractError, GenerationError, ModelError, OutputError, ReviewError, SchemaError


class ExitCode(IntEnum):
    OK = 0
    USAGE = 2
    SCHEMA = 3
    MODEL = 4
    DOCUMENT = 5
    GENERATION = 6
    OUTPUT = 7
    WORKER = 8  # a --workers process died before giving every document's result
    INTERNAL = 70  # an error nobody foresaw: a bug (sysexits.h's EX_SOFTWARE)
    READER_GONE = 141  # stdout's reader left (a closed pipe): 128 + SIGPIPE, as for `cat | head`
    INTERRUPTED = 130  # Ctrl-C (SIGINT)
    TERMINATED = 143  # SIGTERM


class UsageError(ExtractError):
    """The command line asks for something that cannot be done (exit 2)."""


class InternalError(ExtractError):
    """An exception the code did not foresee (exit 70), as one line instead of a traceback: in
    a batch, that document's error record, and the batch goes on."""

    def __init__(self, error: BaseException) -> None:
        detail = str(error) or repr(error)
        super().__init__(
            f"internal error: {type(error).__name__}: {detail}",
            hint="--debug shows the traceback; please report it with the schema and document if you can",
        )


def as_extract_error(error: Exception) -> ExtractError:
    """`error` itself where the library or the command line raised it; any other exception
    (a bug) as an InternalError."""
    return error if isinstance(error, ExtractError) else InternalError(error)


# Error classes the command line defines itself, for exit_code_named.
_CLI_ERRORS: dict[str, type[ExtractError]] = {kind.__name__: kind for kind in (UsageError, InternalError)}


# Each family with its code; a class takes the code of the first family it belongs to. The
# base class last: nothing raises it itself, but a caller's own subclass could reach here.
EXIT_CODES: tuple[tuple[type[ExtractError], ExitCode], ...] = (
    (UsageError, ExitCode.USAGE),
    (InternalError, ExitCode.INTERNAL),
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
    kind = _CLI_ERRORS.get(name) or getattr(gguf_extract, name, None)
    if isinstance(kind, type) and issubclass(kind, ExtractError):
        return exit_code_for_kind(kind)
    return None
