"""The context's budget (core.runtime.context_budget): its limit, what a prompt and output budget
leave of it, the size a context is loaded at, and the one ContextTooSmall with its remedies."""

from __future__ import annotations

import pytest

from gguf_extract.core.errors import ContextTooSmall
from gguf_extract.core.runtime.context_budget import ContextBudget


@pytest.mark.parametrize(
    ("asked", "limit", "capped", "can_grow"),
    [(None, 8192, False, False), (2048, 2048, False, True), (8192, 8192, False, False), (10000, 8192, True, False)],
)
def test_the_limit_is_what_is_asked_never_above_the_trained_context(
    asked: int | None, limit: int, capped: bool, can_grow: bool
) -> None:
    budget = ContextBudget(8192, asked)
    assert (budget.limit, budget.capped, budget.can_grow) == (limit, capped, can_grow)


def test_room_is_what_a_prompt_and_its_budget_leave_negative_when_over() -> None:
    budget = ContextBudget(8192, 1024)
    assert budget.room(900, 100) == 24
    assert budget.room(1000, 100) == -76


def test_a_context_is_loaded_at_the_size_asked_else_rounded_up_within_the_trained() -> None:
    assert ContextBudget(8192).size_for(600) == 768
    assert ContextBudget(8192).size_for(8100) == 8192
    assert ContextBudget(8192, 2048).size_for(600) == 2048


def test_more_than_the_context_asked_for_may_be_helped_by_a_larger_one() -> None:
    with pytest.raises(ContextTooSmall) as raised:
        ContextBudget(8192, 512).size_for(581)
    error = raised.value
    assert str(error) == "the prompt and budget need 581 tokens, more than the context of 512"
    assert (error.needed, error.context, error.larger_context_helps, error.shorter_document_helps) == (581, 512, True, True)
    assert not error.truncate_helps


def test_more_than_the_trained_context_names_it_and_no_larger_context_helps() -> None:
    with pytest.raises(ContextTooSmall) as raised:
        ContextBudget(8192, 512).size_for(9101)
    error = raised.value
    assert str(error) == "the prompt and budget need 9101 tokens, more than the model's context of 8192"
    assert (error.needed, error.context, error.larger_context_helps) == (9101, 8192, False)
    assert error.hint == "shorten the document or lower max_tokens"


def test_too_small_fills_in_the_limit_and_whether_a_larger_context_helps() -> None:
    error = ContextBudget(8192, 512).too_small("too long", needed=700, shorter_document_helps=True, truncate_helps=True)
    assert (error.needed, error.context, error.larger_context_helps, error.truncate_helps) == (700, 512, True, True)
    assert error.hint == "shorten the document, lower max_tokens, raise n_ctx, or pass truncate=True to keep the head that fits"
    trained = ContextBudget(8192).too_small("no room", needed=None, shorter_document_helps=False)
    assert (trained.context, trained.larger_context_helps, trained.hint) == (8192, False, "lower max_tokens")
