"""Process exit codes, documented in the README and in --help."""

from __future__ import annotations

from enum import IntEnum


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
