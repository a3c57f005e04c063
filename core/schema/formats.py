"""String formats enforced exactly, as regex trees over the decoded characters.

Each format matches only strings that the format checker used for final validation accepts
(Python's `date.fromisoformat` for dates, RFC 3339 for date-times), including month lengths
and leap years, so the automaton never emits a value that validation would reject.
"""

from __future__ import annotations

from ..automaton.regex import Node, Repeat, alt, char_set, chars, lit, seq
from .lexical import DIGIT, HEX_DIGIT

D = DIGIT


def _digits(low: str, high: str) -> Node:
    return chars((ord(low), ord(high)))


def _year() -> Node:
    # 0001..9999: Python's date has no year 0.
    return alt(
        seq(_digits("1", "9"), D, D, D),
        seq(lit("0"), _digits("1", "9"), D, D),
        seq(lit("00"), _digits("1", "9"), D),
        seq(lit("000"), _digits("1", "9")),
    )


def _leap_year() -> Node:
    # Divisible by 4 and not by 100, or divisible by 400; year 0000 excluded.
    by_four = alt(seq(char_set("02468"), char_set("48")), seq(char_set("2468"), lit("0")), seq(char_set("13579"), char_set("26")))
    not_century = seq(D, D, by_four)
    four_hundreds = seq(
        alt(seq(char_set("2468"), char_set("048")), seq(char_set("13579"), char_set("26")), seq(lit("0"), char_set("48"))),
        lit("00"),
    )
    return alt(not_century, four_hundreds)


def date_node() -> Node:
    day_31 = alt(seq(lit("0"), _digits("1", "9")), seq(char_set("12"), D), seq(lit("3"), char_set("01")))
    day_30 = alt(seq(lit("0"), _digits("1", "9")), seq(char_set("12"), D), lit("30"))
    day_28 = alt(seq(lit("0"), _digits("1", "9")), seq(lit("1"), D), seq(lit("2"), _digits("0", "8")))
    long_months = alt(*(lit(m) for m in ("01", "03", "05", "07", "08", "10", "12")))
    short_months = alt(*(lit(m) for m in ("04", "06", "09", "11")))
    return alt(
        seq(_year(), lit("-"), long_months, lit("-"), day_31),
        seq(_year(), lit("-"), short_months, lit("-"), day_30),
        seq(_year(), lit("-02-"), day_28),
        seq(_leap_year(), lit("-02-29")),
    )


def time_node() -> Node:
    """RFC 3339 full-time with a numeric offset or Z; leap seconds are not produced."""
    hour = alt(seq(char_set("01"), D), seq(lit("2"), _digits("0", "3")))
    minute = seq(_digits("0", "5"), D)
    fraction = seq(lit("."), Repeat(D, 1, 6))
    offset = alt(lit("Z"), seq(char_set("+-"), hour, lit(":"), minute))
    return seq(hour, lit(":"), minute, lit(":"), minute, Repeat(fraction, 0, 1), offset)


def date_time_node() -> Node:
    return seq(date_node(), lit("T"), time_node())


def uuid_node() -> Node:
    return seq(*(seq(Repeat(HEX_DIGIT, n, n), lit("-")) for n in (8, 4, 4, 4)), Repeat(HEX_DIGIT, 12, 12))


def ipv4_node() -> Node:
    # No leading zeros: Python's ipaddress (used by the validator) rejects them.
    octet = alt(
        seq(lit("25"), _digits("0", "5")), seq(lit("2"), _digits("0", "4"), D), seq(lit("1"), D, D), seq(_digits("1", "9"), D), D
    )
    return seq(octet, lit("."), octet, lit("."), octet, lit("."), octet)


def email_node() -> Node:
    """A conservative subset of addresses: local@label(.label)+ over letters, digits and ._%+-."""
    local = Repeat(
        chars((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A), (0x2E, 0x2E), (0x5F, 0x5F), (0x25, 0x25), (0x2B, 0x2B), (0x2D, 0x2D)),
        1,
        64,
    )
    label = seq(
        chars((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)),
        Repeat(chars((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A), (0x2D, 0x2D)), 0, 62),
    )
    return seq(local, lit("@"), label, Repeat(seq(lit("."), label), 1, 4))


FORMATS = {
    "date": date_node,
    "date-time": date_time_node,
    "time": time_node,
    "uuid": uuid_node,
    "ipv4": ipv4_node,
    "email": email_node,
}
