"""Code-point ranges to UTF-8 byte-range sequences.

The automaton runs on bytes because model tokens are bytes (a token may hold half a
character). A code-point range becomes a few sequences of byte ranges, each sequence one
fixed-length encoding: the classic split used by RE2 and Rust's regex-syntax.
"""

from __future__ import annotations

from functools import lru_cache

ByteRanges = tuple[tuple[int, int], ...]

_ENCODING_LIMITS = ((0, 0x7F), (0x80, 0x7FF), (0x800, 0xFFFF), (0x10000, 0x10FFFF))
_SURROGATES = (0xD800, 0xDFFF)


@lru_cache(maxsize=4096)
def utf8_sequences(low: int, high: int) -> tuple[ByteRanges, ...]:
    """Byte-range sequences matching exactly the UTF-8 encodings of code points low..high.

    Surrogates (U+D800..U+DFFF) are skipped: they have no valid UTF-8 encoding. Cached: a
    string with maxLength n repeats the same character class n times.
    """
    result: list[ByteRanges] = []
    for part_low, part_high in _without_surrogates(low, high):
        for enc_low, enc_high in _ENCODING_LIMITS:
            a, b = max(part_low, enc_low), min(part_high, enc_high)
            if a <= b:
                _split_aligned(a, b, result)
    return tuple(result)


def _without_surrogates(low: int, high: int) -> list[tuple[int, int]]:
    s_low, s_high = _SURROGATES
    if high < s_low or low > s_high:
        return [(low, high)]
    parts = []
    if low < s_low:
        parts.append((low, s_low - 1))
    if high > s_high:
        parts.append((s_high + 1, high))
    return parts


def _split_aligned(a: int, b: int, out: list[ByteRanges]) -> None:
    """Split [a, b] (same encoded length) until every byte position is an independent range."""
    for continuation_bytes in (1, 2, 3):
        mask = (1 << (6 * continuation_bytes)) - 1
        if a & ~mask != b & ~mask:
            if a & mask:
                _split_aligned(a, a | mask, out)
                _split_aligned((a | mask) + 1, b, out)
                return
            if b & mask != mask:
                _split_aligned(a, (b & ~mask) - 1, out)
                _split_aligned(b & ~mask, b, out)
                return
    encoded_low = chr(a).encode("utf-8")
    encoded_high = chr(b).encode("utf-8")
    out.append(tuple(zip(encoded_low, encoded_high, strict=True)))
