"""The context's budget: how many tokens one model's context may hold, what a prompt and its
output budget leave of it, the size to load it at, and the one error for all that does not fit.

    budget = ContextBudget(trained=8192, asked=2048)   # the model's trained context, ModelOptions.n_ctx
    budget.limit                                       # 2048: what is asked, never above the trained
    budget.room(prompt_tokens, max_tokens)             # what is left (negative: by how much it is over)
    raise budget.too_small(message, needed=..., ...)   # ContextTooSmall, its remedies filled in

Every ContextTooSmall is made here, so the limit it names and whether a larger context would
help (only where the model was trained on more than is asked) are worked out one way.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ContextTooSmall

# A context loaded without a size asked for is rounded up to this many tokens, so a document
# a little longer than the one before does not load the model again.
_CONTEXT_STEP = 256


@dataclass(frozen=True)
class ContextBudget:
    """The tokens a context holds for a model trained on `trained` tokens of context, where
    `asked` were asked for (None: the trained context)."""

    trained: int
    asked: int | None = None

    @property
    def limit(self) -> int:
        """The most tokens a context may hold: the context asked for, but never more than the
        model's trained context; else the trained context."""
        return min(self.asked, self.trained) if self.asked is not None else self.trained

    @property
    def capped(self) -> bool:
        """Whether the context asked for is larger than the trained context (and is therefore cut down to it)."""
        return self.asked is not None and self.asked > self.trained

    @property
    def can_grow(self) -> bool:
        """Whether a larger context may be asked for: the model was trained on more."""
        return self.limit < self.trained

    def room(self, prompt_tokens: int, max_tokens: int) -> int:
        """The tokens the context has left beyond a prompt of `prompt_tokens` and an output
        budget of `max_tokens`; negative: by how many they need more than it holds."""
        return self.limit - prompt_tokens - max_tokens

    def size_for(self, n_tokens: int) -> int:
        """The context to load for `n_tokens`: the one asked for, else `n_tokens` rounded up
        (never past the trained context). Raises ContextTooSmall where `n_tokens` are more than
        the trained context or the one asked for."""
        if n_tokens > self.trained:
            message = f"the prompt and budget need {n_tokens} tokens, more than the model's context of {self.trained}"
            raise self.too_small(message, needed=n_tokens, shorter_document_helps=True, beyond_training=True)
        if self.asked is not None and n_tokens > self.asked:
            message = f"the prompt and budget need {n_tokens} tokens, more than the context of {self.asked}"
            raise self.too_small(message, needed=n_tokens, shorter_document_helps=True)
        return self.asked or min(self.trained, -(-n_tokens // _CONTEXT_STEP) * _CONTEXT_STEP)

    def too_small(
        self,
        message: str,
        *,
        needed: int | None,
        shorter_document_helps: bool,
        truncate_helps: bool = False,
        beyond_training: bool = False,
    ) -> ContextTooSmall:
        """The error for a prompt and budget needing `needed` tokens (None: not counted), more
        than this context holds. `beyond_training`: more than the trained context itself, which
        no context asked for can grow past; the error then names that context, else the limit."""
        return ContextTooSmall(
            message,
            needed=needed,
            context=self.trained if beyond_training else self.limit,
            shorter_document_helps=shorter_document_helps,
            larger_context_helps=not beyond_training and self.can_grow,
            truncate_helps=truncate_helps,
        )
