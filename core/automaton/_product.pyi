from collections.abc import Callable, Iterable

def product_pairs(
    first_edges: tuple[tuple[tuple[int, int, int], ...], ...],
    first_start: int,
    second_edges: tuple[tuple[tuple[int, int, int], ...], ...],
    second_start: int,
    first_open: frozenset[int],
    second_open: frozenset[int],
    limit: int,
) -> tuple[list[list[tuple[int, int, int]]], list[tuple[int, int]], dict[int, int]] | None: ...
def finished_pairs(
    rows: list[list[tuple[int, int, int]]], accepts: set[int], base: int, size: int
) -> tuple[tuple[tuple[tuple[int, int, int], ...], ...], int, list[int]] | None: ...
def fewest_bytes(
    edges: tuple[tuple[tuple[int, int, int], ...], ...],
    accepts: Iterable[int],
    cost_of: Callable[[int, int], int | None],
    first: int,
    known: list[int | None],
) -> list[int | None]: ...
