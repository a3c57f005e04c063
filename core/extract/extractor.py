"""The public entry: load a model once, compile schemas for it, stream extractions.

    extractor = Extractor.open()                       # bundled model, tokenizer only
    compiled = extractor.compile(schema)               # once per schema
    run = extractor.extract(compiled, document="...")  # an iterable of text chunks
    for chunk in run: print(chunk, end="")
    run.value, run.stats                               # parsed JSON and figures, after iteration

The weights load on the first extraction, with a context just large enough for the prompt
and the token budget (never above the model's trained context).
"""

from __future__ import annotations

import codecs
import contextlib
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import asdict, dataclass, fields
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from ..decode.decoder import Decoder
from ..decode.requests import Prompt, Request, noting_output
from ..decode.types import DecodeStats, Logits, SamplingSettings
from ..defaults import DEFAULT_RECURSION_DEPTH
from ..errors import ExtractError
from ..grounding.follower import Grounding
from ..index.compiled import CompiledSchema, compile_schema
from ..json_reader import read_leaves
from ..model import ChatPrompt, GGUFModel, bundled_model_path
from ..model_files import resolve_model
from ..results.abstain import FlaggedValue, withhold
from ..results.evidence import ValueEvidence, gather
from ..runtime.context_budget import ContextBudget
from ..runtime.scheduler import JobSteps, Outcome
from ..runtime.session import ModelOptions, Session
from ..schema.read.load import Schema
from ..vocab.cache import cached_vocabulary, unsafe_reason
from .prompt import Prompts, common_length

T = TypeVar("T")


@dataclass
class ExtractionStats(DecodeStats):
    """The decoder's figures plus the prompt and compile costs of one extraction."""

    prompt_tokens: int = 0
    prompt_tokens_reused: int = 0  # already in the model's context from the previous extraction
    document_tokens_dropped: int = 0  # cut from the document's end to fit the context (truncate)
    compile_seconds: float = 0.0
    prompt_seconds: float = 0.0
    budget_closed_at: str | None = None  # the value being written when the token budget began to rule tokens out
    threads: int = 0  # the llama.cpp threads the model runs with (for a GPU build, its CPU side)

    def as_dict(self) -> dict[str, Any]:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(self).items()}


class Extractor:
    """A model (tokenizer loaded at once, weights on first use) and the schemas compiled for it:
    its prompts (core.extract.prompt.Prompts) and its model in use (core.runtime.session.Session)."""

    def __init__(self, model_path: Path, options: ModelOptions) -> None:
        self.model_path = model_path
        self.options = options
        self.tokenizer = GGUFModel.load_vocab_only(model_path)
        # Why the on-disk cache is not used although asked for (None: used, or not asked for).
        self.cache_refusal = unsafe_reason() if options.use_cache else None
        self.vocabulary = cached_vocabulary(model_path, self.tokenizer.vocabulary, options.use_cache)
        self.prompts = Prompts(self.tokenizer)
        self.session = Session(model_path, options, self.tokenizer.n_ctx_train)

    @staticmethod
    def open(model_path: Path | str | None = None, options: ModelOptions | None = None) -> Extractor:
        """Open `model_path` (a GGUF file, or the name of one other local tools have downloaded:
        core.model_files.resolve_model), or the bundled SmolLM2-135M-Instruct when None.
        Raises ModelError."""
        path = resolve_model(model_path) if model_path is not None else bundled_model_path()
        return Extractor(path, options or ModelOptions())

    def compile(
        self, schema: Schema, *, recursion_depth: int = DEFAULT_RECURSION_DEPTH, lenient: bool = False, grounded: bool = False
    ) -> CompiledSchema:
        """Compile `schema` for this model's vocabulary (cheap; reuse the result). With
        `grounded`, every plain string value (no format, pattern, enum or const) is written as a
        span of the document (core.grounding.follower); a schema's `x-grounded` annotation overrides
        that per string either way."""
        return compile_schema(schema, self.vocabulary, recursion_depth=recursion_depth, lenient=lenient, grounded=grounded)

    def prompt_for(self, compiled: CompiledSchema, document: str, instructions: str | None = None) -> ChatPrompt:
        return self.prompts.for_document(compiled, document, instructions)

    def prompt_token_count(self, compiled: CompiledSchema, document: str, instructions: str | None = None) -> int:
        """How many tokens the prompt for `document` takes (cheap: tokenizing only)."""
        return len(self.prompts.tokens_of(self.prompt_for(compiled, document, instructions)))

    def extract(
        self,
        compiled: CompiledSchema,
        document: str,
        settings: SamplingSettings | None = None,
        instructions: str | None = None,
        truncate: bool = False,
    ) -> Extraction:
        """Stream the JSON extracted from `document` (chat template, schema outline, document).

        A document too long for the context with the token budget raises DocumentError naming
        its size; with `truncate` its head that fits is used instead (the extraction's
        `stats.document_tokens_dropped` says how much was left out, and its `document` is that
        head: grounding and evidence see what the model saw)."""
        settings = settings or SamplingSettings()
        prompt = self.prompt_for(compiled, document, instructions)
        tokens = self.prompts.tokens_of(prompt)
        excess = -self.budget.room(len(tokens), settings.max_tokens)
        dropped = 0
        if excess > 0:
            prompt, tokens, dropped, document = self._fit(compiled, document, instructions, settings, excess, truncate)
        return self._extraction(compiled, prompt, tokens, settings, instructions, dropped, document)

    @property
    def budget(self) -> ContextBudget:
        """The context's budget: its limit, and what a prompt and output budget leave of it."""
        return self.session.budget

    @property
    def context_limit(self) -> int:
        """The most tokens a context may hold: the context asked for (ModelOptions.n_ctx), but
        never more than the model's trained context; else the trained context."""
        return self.budget.limit

    @property
    def context_capped(self) -> bool:
        """Whether the context asked for is larger than the model's trained context (and is
        therefore cut down to it)."""
        return self.budget.capped

    @cached_property
    def document_byte_limit(self) -> int:
        """The most bytes a document can have and still fit the context: no token stands for
        more bytes than the vocabulary's longest, so a larger document cannot fit. Read
        documents with this limit (core.documents.document) so a huge or endless one is refused at once."""
        longest = max(map(len, self.vocabulary.pieces), default=1)
        return self.context_limit * max(1, longest)

    def _fit(
        self,
        compiled: CompiledSchema,
        document: str,
        instructions: str | None,
        settings: SamplingSettings,
        excess: int,
        truncate: bool,
    ) -> tuple[ChatPrompt, list[int], int, str]:
        """The prompt (and its tokens) for the head of `document` that fits, how many of the
        document's tokens were dropped, and the head."""
        pieces = self.vocabulary.pieces
        tokens = self.tokenizer.tokenize(document.encode("utf-8"))
        limit, budget = self.context_limit, settings.max_tokens
        if not truncate:
            message = (
                f"the document has {len(tokens)} tokens; with the instructions and a budget of {budget} output"
                f" tokens it needs {limit + excess} tokens, {excess} more than the context of {limit}"
            )
            raise self.budget.too_small(message, needed=limit + excess, shorter_document_helps=True, truncate_helps=True)
        keep = len(tokens) - excess
        while keep > 0:
            head = b"".join(pieces[t] for t in tokens[:keep]).decode("utf-8", "ignore")
            if head.strip():
                prompt = self.prompt_for(compiled, head, instructions)
                prompt_tokens = self.prompts.tokens_of(prompt)
                if self.budget.room(len(prompt_tokens), budget) >= 0:
                    return prompt, prompt_tokens, len(tokens) - keep, head
            keep -= max(1, excess // 8)  # re-tokenizing the cut may cost a few tokens more
        message = (
            f"the instructions and a budget of {budget} output tokens leave no room for the document in the"
            f" context of {limit} tokens"
        )
        raise self.budget.too_small(message, needed=None, shorter_document_helps=False)

    def extract_prompt(
        self, compiled: CompiledSchema, prompt: str, settings: SamplingSettings | None = None, instructions: str | None = None
    ) -> Extraction:
        """Stream the JSON generated after `prompt`, given as is (control-token text such as
        <|im_start|> in it is parsed: the caller wrote it). The part it shares with every prompt
        for this schema and `instructions` is evaluated once and kept for the next extraction."""
        whole = ChatPrompt.raw(prompt)
        return self._extraction(compiled, whole, self.prompts.tokens_of(whole), settings or SamplingSettings(), instructions, 0)

    def _extraction(
        self,
        compiled: CompiledSchema,
        prompt: ChatPrompt,
        tokens: list[int],
        settings: SamplingSettings,
        instructions: str | None,
        dropped: int,
        document: str | None = None,
    ) -> Extraction:
        shared = self.shared_prefix(compiled, instructions)
        return Extraction(self, compiled, prompt, tokens, settings, common_length(tokens, shared), dropped, document)

    def shared_prefix(self, compiled: CompiledSchema, instructions: str | None = None) -> list[int]:
        """The prompt tokens every document shares for this schema and instructions (the
        instructions and the schema's outline): the common start of two prompts' tokens."""
        return self.prompts.shared_prefix(compiled, instructions)

    @property
    def loaded_model(self) -> GGUFModel | None:
        """The model with weights, once an extraction has loaded it."""
        return self.session.loaded_model

    def model_for(self, n_tokens: int) -> GGUFModel:
        """The loaded model, (re)loaded with a context of at least `n_tokens`."""
        return self.session.model_for(n_tokens)

    # -- many documents together (core.runtime) ------------------------------------------------

    def extract_many(
        self,
        compiled: CompiledSchema,
        documents: Iterable[str],
        settings: SamplingSettings | None = None,
        instructions: str | None = None,
        truncate: bool = False,
        parallel: int | None = None,
    ) -> Iterator[Extraction | ExtractError]:
        """Each document's finished extraction (as `extract(...).run()` leaves it: value, text,
        evidence, stats), in input order; a document that fails gives its ExtractError in its
        place and the others go on. `parallel` documents are decoded together as sequences of
        one context (core.runtime); 1 is one after another, None the machine's
        `default_parallel`. Any other exception is raised."""

        def job(document: str) -> JobSteps[Extraction]:
            extraction = self.extract(compiled, document, settings, instructions, truncate)
            yield from extraction.steps()
            return extraction

        jobs = (lambda document=document: job(document) for document in documents)
        together = self.default_parallel if parallel is None else parallel
        with contextlib.closing(self.run_parallel(jobs, compiled, instructions, together)) as outcomes:
            for outcome in outcomes:
                if isinstance(outcome.error, ExtractError):
                    yield outcome.error
                elif outcome.error is not None:
                    raise outcome.error
                else:
                    assert outcome.value is not None
                    yield outcome.value

    def run_parallel(
        self,
        jobs: Iterable[Callable[[], JobSteps[T]]],
        compiled: CompiledSchema,
        instructions: str | None = None,
        parallel: int = 1,
    ) -> Generator[Outcome[T], None, None]:
        """Run `jobs` (each making the steps of extractions with `compiled` and `instructions`,
        such as `Extraction.steps`, whose shared prompt prefix is evaluated once for all)
        `parallel` at a time, each on one sequence of a shared context, stepped by one
        scheduler (core.runtime.scheduler); outcomes in input order. With `parallel` 1, one
        after another on the model's own context. No more sequences are made than there are
        jobs (each sequence's slot is context memory): the first `parallel` jobs are read
        before any runs."""
        return self.session.run(jobs, parallel, lambda: self.shared_prefix(compiled, instructions))

    @property
    def threads(self) -> int:
        """The llama.cpp threads the model runs (or will run) with: ModelOptions.n_threads, or one
        a core this process may use, never the machine's load (core.model.threads_for)."""
        return self.session.threads

    @property
    def default_parallel(self) -> int:
        """How many documents of a batch to decode together when not told: DEFAULT_GPU_PARALLEL
        where the model runs on a GPU, else 1 (on this project's 2-core CPU more measured no
        faster: a batch there is mostly prompts, already evaluated 512 tokens at a time)."""
        return self.session.default_parallel


class Withholding:
    """The withholding of doubtful values, the same for an extraction from one prompt and for
    one piece by piece (core.extract.chunked): each holds its `text`, `value`, `evidence` and
    compiled schema."""

    _compiled: CompiledSchema
    text: str
    value: Any
    evidence: dict[str, ValueEvidence]

    def withhold(
        self, min_confidence: float | None = None, *, abstain: bool = False, null_unstated: bool = True
    ) -> list[FlaggedValue]:
        """Once run: withhold the doubtful values (core.results.abstain). With `null_unstated`
        (the default), each value the document does not state (released from grounding, no
        span: the model's own) is written as `null`; with `abstain`, each array item whose
        confidence is below `min_confidence` is dropped from its array and each such value
        written as `null`; each only where the whole document still validates so. `text`,
        `value` and `evidence` follow (a value written as `null` has no span, confidence or
        grounding left, an item after a dropped one its new pointer). Returns every unstated
        value and every value below `min_confidence` (when given), with what became of it
        (`null`, `dropped`, or `kept` where the schema allows neither or it was not asked), by
        the pointers the model wrote them at."""
        result = withhold(
            self.text, self.evidence, self._compiled, min_confidence=min_confidence, abstain=abstain, null_unstated=null_unstated
        )
        if result.changed:
            self.text, self.value, self.evidence = result.text, result.value, result.evidence
        return result.flagged


class Extraction(Withholding):
    """One extraction: iterate for text chunks; afterwards `text`, `value`, `stats`, and
    `evidence` (JSON pointer of each leaf value -> where it came from in the document and how
    sure the model was; see core.results.evidence), with spans in `document`, the text
    the prompt holds (with truncate, the head that fit). `budget_closed_at` names the value being written
    when the token budget began to rule tokens out (None: it never did)."""

    def __init__(
        self,
        extractor: Extractor,
        compiled: CompiledSchema,
        prompt: ChatPrompt,
        prompt_tokens: list[int],
        settings: SamplingSettings,
        prefix_length: int,
        document_tokens_dropped: int,
        document: str | None = None,
    ) -> None:
        self._extractor = extractor
        self._compiled = compiled
        self.prompt = prompt.text
        self._prompt_tokens = prompt_tokens
        self._prefix_length = min(prefix_length, len(prompt_tokens) - 1)
        self._settings = settings
        self.stats = ExtractionStats(
            prompt_tokens=len(prompt_tokens),
            document_tokens_dropped=document_tokens_dropped,
            compile_seconds=compiled.compile_seconds,
            threads=extractor.threads,
        )
        self.document = document
        self.text = ""
        self.value: Any = None
        self.evidence: dict[str, ValueEvidence] = {}
        self.budget_closed_at: str | None = None
        # Called with (tokens evaluated, tokens to evaluate) after each batch of the prompt's
        # part after the shared prefix: a long prompt takes minutes on a small CPU.
        self.on_prompt_progress: Callable[[int, int], None] | None = None

    def __iter__(self) -> Iterator[str]:
        """The JSON text as it is decided: this extraction's steps run alone on the model's own
        context (core.runtime), as one document of a batch one at a time is."""
        utf8 = codecs.getincrementaldecoder("utf-8")()
        for event in self._extractor.session.alone.run([self.steps]):
            if event.output:
                text = utf8.decode(event.output)
                if text:
                    yield text
            elif event.outcome is not None and event.outcome.error is not None:
                raise event.outcome.error

    def steps(self) -> Generator[bytes | Request, Logits | None, None]:
        """This extraction, stepped (core.decode.requests): the prompt and every evaluation as
        requests, the output's bytes as they are decided; once done, `text`, `value`,
        `evidence` and `stats` are set. A scheduler runs it (core.runtime.scheduler)."""
        prefix = self._prompt_tokens[: self._prefix_length]
        rest = self._prompt_tokens[self._prefix_length :]
        prompt = Prompt(prefix, rest, len(self._prompt_tokens) + self._settings.max_tokens, self.on_prompt_progress)
        logits = yield prompt
        assert logits is not None
        self.stats.prompt_tokens_reused = prompt.reused
        self.stats.prompt_seconds = time.perf_counter() - prompt.started
        tokenizer = self._extractor.tokenizer
        decoder = Decoder(tokenizer, self._compiled, self._settings, rest, self._grounding())
        output = bytearray()
        steps = decoder.steps(logits[-1])
        try:
            yield from noting_output(steps, output.extend)
        finally:
            steps.close()
            self._record(decoder)
        self.text = output.decode("utf-8")
        self.value = self._compiled.validate(self.text)
        self._gather_evidence(decoder)

    def _grounding(self) -> Grounding | None:
        """Grounding for this document, where the schema has strings to ground."""
        return None if self.document is None else self._compiled.grounding(self.document)

    def _gather_evidence(self, decoder: Decoder) -> None:
        output = self.text.encode("utf-8")
        record = decoder.grounding.record() if decoder.grounding is not None else None
        self.evidence = gather(output, self.document, decoder.choices, record)
        if decoder.budget_bound_at is not None:
            self.budget_closed_at = self.stats.budget_closed_at = read_leaves(output).pointer_at(decoder.budget_bound_at)

    def _record(self, decoder: Decoder) -> None:
        for item in fields(DecodeStats):
            setattr(self.stats, item.name, getattr(decoder.stats, item.name))

    def run(self) -> Any:
        """Consume the stream and return the validated value."""
        for _ in self:
            pass
        return self.value
