"""What a keyword the schema's draft gives no meaning is, so that none is ignored silently.

Validators ignore every such keyword, so a misspelled one (`maxLenght`, `requried`) drops the
constraint its author meant without a word; ajv refuses unknown keywords for that reason
(its strict mode). Each ignored keyword is judged here, in this order:

- a JSON Schema annotation (`title`, `$comment`, ...) or one of another vocabulary that
  only annotates (`x-*`, OpenAPI's `example`, editors' `markdownDescription`): silent;
- a keyword of another draft (`dependencies` under 2020-12, `prefixItems` under draft-07),
  one beside `$ref` before 2019-09, `then` without `if`: named in a note, with the
  `$schema` (or the rewrite) that gives it meaning;
- a near miss of a keyword that asserts something (same name but for case or a trailing
  `:`, or within a small edit distance, a short name keeping its first letter, a three-letter
  one a keyword less one character or with neighbours swapped, or a plural keyword made singular
  or shortened: `maxProperty`, `additionalProps`) whose value that keyword would
  accept, where that keyword would assert (`then` beside `if`), and no keyword of another
  well-known vocabulary: refused as misspelled, naming the keyword meant;
- anything else (OpenAPI's `nullable`, JSON Hyper-Schema's `href`, vendor keywords, near
  misses of annotations or ones whose value the keyword would not take): named in a note.

Tuned on the 9,557 schemas of JSONSchemaBench (bench/RESULTS.md): names that start with `_`,
`@` or `/` are a convention for keywords switched off (`_format`), and short names are only
ever one edit from what they are taken for (`form` is not `format`, `note` is not `not`), never
another first letter but the key beside it (`when` is not `then`; `#ref` is `$ref`). A
three-letter name is taken only for a keyword with one character left out (`typ`, `$rf`; the
first too: `ref` is `$ref`, and `hen` beside `if` is `then`, since a dropped key leaves the rest
of the word as typed) or a three-letter one with neighbours swapped (`nto`): a letter changed or
added in a name that short makes too many words (`url`, `key`, `note`).
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import jsonschema

from .known_keywords import ANNOTATIONS, SPECIFIED_FORMATS
from .validation import Validator, asserting_keywords, meta_schema_error, name_of

# The drafts read, oldest first, with the `$schema` that declares each.
DRAFTS: tuple[tuple[type[Validator], str], ...] = (
    (jsonschema.Draft4Validator, "http://json-schema.org/draft-04/schema#"),
    (jsonschema.Draft6Validator, "http://json-schema.org/draft-06/schema#"),
    (jsonschema.Draft7Validator, "http://json-schema.org/draft-07/schema#"),
    (jsonschema.Draft201909Validator, "https://json-schema.org/draft/2019-09/schema"),
    (jsonschema.Draft202012Validator, "https://json-schema.org/draft/2020-12/schema"),
)
# Keywords that assert only through another one: jsonschema's validator of the other reads them.
_READ_BY = {"then": "if", "else": "if", "minContains": "contains", "maxContains": "contains"}
# Draft 3's keywords, which no draft read here gives meaning.
_DRAFT_3 = frozenset({"extends", "disallow", "divisibleBy"})
# JSON Schema's annotations and identifiers not in known_keywords.ANNOTATIONS (which the compiler
# skips outright), and draft 3's keywords.
_JSON_SCHEMA_OTHERS = frozenset({"contentSchema", "$vocabulary", "$dynamicAnchor", "$recursiveAnchor"}) | _DRAFT_3
# Keywords of other vocabularies that only annotate: OpenAPI 3, JSON Hyper-Schema, and the
# editors' hints (VS Code) that schemas from SchemaStore carry.
OTHER_ANNOTATIONS = frozenset(
    {
        "example",
        "discriminator",
        "xml",
        "externalDocs",
        "links",
        "base",
        "markdownDescription",
        "enumDescriptions",
        "markdownEnumDescriptions",
        "deprecationMessage",
        "errorMessage",
        "patternErrorMessage",
        "defaultSnippets",
        "doNotSuggest",
        "suggestSortText",
        "allowComments",
        "allowTrailingCommas",
    }
)
# Keywords of other vocabularies that assert something there, with what is ignored here.
_OTHER_ASSERTIONS = {
    "nullable": "OpenAPI's 'nullable' is not JSON Schema: null is allowed only where 'type' or 'enum' allows it",
}
# JSON Hyper-Schema's keywords (draft-04's and draft-07's: a link's, and media's) not above.
# API schemas carry them; validators ignore them, so each gets a note naming its vocabulary,
# and none is taken for a misspelling (`href` is not `$ref`, nor `method` anything).
_HYPER_SCHEMA = frozenset(
    {
        "href",
        "rel",
        "anchor",
        "anchorPointer",
        "templatePointers",
        "templateRequired",
        "targetSchema",
        "targetMediaType",
        "targetHints",
        "headerSchema",
        "hrefSchema",
        "submissionMediaType",
        "submissionSchema",
        "media",
        "binaryEncoding",
        "mediaType",
        "fragmentResolution",
        "pathStart",
        "method",
        "encType",
    }
)
# Names some tools use for a JSON Schema keyword that edit distance would take for another.
_ALIASES = {"inclusiveMinimum": "minimum", "inclusiveMaximum": "maximum"}
# A leading `_` switches a keyword off by convention; `@` is JSON-LD's; `/` a comment's.
_DELIBERATE = ("_", "@", "/")
_SHORT = 5  # names this long or shorter are taken for a keyword one edit away, no further


@dataclass(frozen=True)
class KeywordNote:
    """A keyword left out because the schema's draft gives it no meaning, and why that is
    worth saying (what would give it meaning, or which keyword it looks like); or, where
    `ignored` is False, a keyword kept that likely does not do what its author meant (a
    `required` name no property declares)."""

    keyword: str
    pointer: str
    reason: str
    ignored: bool = True

    @property
    def message(self) -> str:
        return _line(self.keyword, self.pointer or "/", self.reason, self.ignored)


def summarized(notes: Iterable[KeywordNote]) -> list[str]:
    """One line per keyword and reason: the first place it is written and how many more."""
    groups: dict[tuple[str, str, bool], list[str]] = {}
    for note in notes:
        groups.setdefault((note.keyword, note.reason, note.ignored), []).append(note.pointer)
    lines = []
    for (keyword, reason, ignored), pointers in groups.items():
        more = f" (and {len(pointers) - 1} more place{'s' if len(pointers) > 2 else ''})" if len(pointers) > 1 else ""
        lines.append(_line(keyword, f"{pointers[0] or '/'}{more}", reason, ignored))
    return lines


def _line(keyword: str, where: str, reason: str, ignored: bool) -> str:
    return f"{'ignoring ' if ignored else ''}'{keyword}' at {where}: {reason}"


class Judge:
    """Judges the keywords one draft gives no meaning (see the module's docstring)."""

    def __init__(self, draft: type[Validator], declared: bool) -> None:
        self.draft = draft
        self.asserting = _asserting_in(draft)
        self.declared = declared

    def misspelling(self, keyword: str, schema: dict[str, Any]) -> str | None:
        """The asserting keyword that `keyword` of `schema` misspells, where its value suits
        that keyword and the keyword would assert there (`then` only beside `if`: spelt right
        it would assert nothing, so a `hen` without `if` is no slip worth refusing), and a
        `ref` stands alone; else None."""
        if _known(keyword):
            return None
        meant = _near_miss(keyword, asserting=True)
        if meant is None or not _suits(meant, schema[keyword]) or self._annotating(keyword, schema, meant):
            return None
        return meant if _READ_BY.get(meant, keyword) in schema else None

    def _annotating(self, keyword: str, schema: dict[str, Any], meant: str) -> bool:
        """Whether `keyword`, `meant` less its `$`, is more likely an annotation of its own: where
        keywords beside it assert, a `ref` is a reference kept as data (a foreign key, as in
        `{"type": "string", "format": "uuid", "ref": "#/definitions/tag"}`); one standing alone
        is a `$ref` whose `$` was dropped (JSONSchemaBench has both)."""
        if not meant.startswith("$") or meant[1:] != keyword:
            return False
        return any(other in self.asserting for other in schema if other != keyword)

    def reason(self, keyword: str, schema: dict[str, Any], ref_only: bool) -> str | None:
        """Why `keyword` of `schema` (not a misspelling) is worth a note; None where it only
        annotates, or where another keyword's refusal covers it. `ref_only`: the draft
        ignores keywords beside `$ref`."""
        if keyword in ANNOTATIONS or keyword in OTHER_ANNOTATIONS or keyword[:2].lower() == "x-":
            return None
        if keyword in self.asserting:
            return self._unread(keyword, schema, ref_only)
        meaning = _draft_giving_meaning(keyword, self.draft)
        if meaning is not None:
            draft, uri = meaning
            whose = "the draft its \"$schema\" names" if self.declared else "the draft of a schema without \"$schema\""
            return (
                f"a {name_of(draft)} keyword, which {name_of(self.draft)} ({whose}) does not read;"
                f" declare \"$schema\": \"{uri}\" to give it meaning"
            )
        if keyword in _OTHER_ASSERTIONS:
            return _OTHER_ASSERTIONS[keyword]
        if keyword in _HYPER_SCHEMA:
            return "a JSON Hyper-Schema keyword, which JSON Schema validators ignore"
        if keyword in _DRAFT_3:
            return "a draft 3 keyword, which no later draft reads"
        if keyword in _JSON_SCHEMA_OTHERS:
            return None
        # An annotation whose value suits it is the likelier meaning than an asserting keyword
        # whose value does not (`$def` holding schemas is `$defs`, not `$ref`).
        annotation = _near_miss(keyword, asserting=False)
        if annotation is not None and _suits(annotation, schema[keyword]):
            return f"not a JSON Schema keyword; did you mean '{annotation}'?"
        if (meant := _near_miss(keyword, asserting=True)) is not None:
            return self._unsuited(keyword, schema, meant)
        return "not a JSON Schema keyword"

    def _unsuited(self, keyword: str, schema: dict[str, Any], meant: str) -> str:
        """The note for a near miss of `meant` not refused: for its value, its place beside
        other keywords, or a missing reader."""
        looks = f"not a JSON Schema keyword; it looks like '{meant}'"
        if not _suits(meant, schema[keyword]):
            return f"{looks}, but holds no value '{meant}' takes"
        if self._annotating(keyword, schema, meant):
            return f"{looks}, but stands beside keywords that assert, as an annotation would; write '{meant}' if meant"
        return f"{looks}, which has no meaning without '{_READ_BY[meant]}' beside it"

    def _unread(self, keyword: str, schema: dict[str, Any], ref_only: bool) -> str | None:
        if ref_only and "$ref" in schema:
            return (
                f"{name_of(self.draft)} validators ignore every keyword beside '$ref'; make the '$ref' and it two"
                " schemas of an 'allOf', or declare 2019-09 or later"
            )
        reader = _READ_BY.get(keyword, keyword)
        return None if reader in schema else f"no meaning without '{reader}' beside it"


def _draft_giving_meaning(keyword: str, draft: type[Validator]) -> tuple[type[Validator], str] | None:
    """The draft nearest to `draft` in which `keyword` asserts, and its `$schema`; or None."""
    order = [cls for cls, _ in DRAFTS]
    here = order.index(draft) if draft in order else len(order) - 1
    found = [(abs(index - here), index) for index, (cls, _) in enumerate(DRAFTS) if keyword in _asserting_in(cls)]
    return DRAFTS[min(found)[1]] if found else None


@functools.cache
def _asserting_in(draft: type[Validator]) -> frozenset[str]:
    own = asserting_keywords(draft)
    return own | {keyword for keyword, by in _READ_BY.items() if by in own}


@functools.cache
def _targets(asserting: bool) -> tuple[str, ...]:
    """The keywords a name may be a near miss of: asserting ones, or annotations."""
    every_asserting = frozenset().union(*(_asserting_in(cls) for cls, _ in DRAFTS))
    if asserting:
        return tuple(sorted(every_asserting))
    return tuple(sorted((ANNOTATIONS | _JSON_SCHEMA_OTHERS) - _DRAFT_3 - every_asserting - {"x-grounded"}))


@functools.lru_cache(maxsize=4096)
def _near_miss(name: str, asserting: bool) -> str | None:
    """The keyword `name` is nearest to, where it is near enough to be taken for it (a name
    whose length differs by more than two is never measured: its cost stays bounded)."""
    if not name or name.startswith(_DELIBERATE):
        return None
    if asserting and name in _ALIASES:
        return _ALIASES[name]
    if asserting and (plural := _plural_slips().get(name.casefold())) is not None:
        return plural
    folded, trimmed, letters = name.casefold(), name.strip(" :\"'"), Counter(name)
    close = []
    for keyword in _targets(asserting):
        if keyword.casefold() == folded or keyword == trimmed:
            return keyword
        shorter = min(len(name), len(keyword))
        limit = 1 if shorter <= _SHORT else 2
        if shorter < 4:
            if _short_slip(name, keyword):
                close.append((1, keyword))
            continue
        if abs(len(name) - len(keyword)) > limit:
            continue
        # Letters one has and the other lacks each take an edit: a cheap bound before the costly one.
        if max(sum((letters - _LETTERS[keyword]).values()), sum((_LETTERS[keyword] - letters).values())) > limit:
            continue
        if (distance := _edits_within(name, keyword, limit)) <= limit and _plausible_typo(name, keyword, limit):
            close.append((distance, keyword))
    return min(close)[1] if close else None


@functools.cache
def _plural_slips() -> dict[str, str]:
    """Each asserting keyword with a plural ending (`additionalProperties`, `minItems`), keyed
    by its forms with that ending made singular or shortened, casefolded: `ies` as `y`
    (`maxProperty`), `s` dropped (`minItem`, `dependentSchema`), `Properties` as `Props`
    (`additionalProps`). Three edits or more away from the keyword, the `y` and `Props` forms
    escape the edit distance, yet each names the keyword meant as plainly as a typo does."""
    slips: dict[str, str] = {}
    for keyword in _targets(True):
        forms = [keyword.replace("Properties", "Props")] if "Properties" in keyword else []
        if keyword.endswith("ies"):
            forms.append(keyword[:-3] + "y")
        elif keyword.endswith("s"):
            forms.append(keyword[:-1])
        slips.update((form.casefold(), keyword) for form in forms if not _known(form))
    return slips


def _short_slip(name: str, keyword: str) -> bool:
    """Whether `name`, of three characters, is a slip typing `keyword`: one of its four
    characters left out (`typ`, `enm`, `$rf`, and `ref` for `$ref`: a dropped first key is a
    slip, not another word, as a changed one is), or two neighbours of a three-letter one swapped
    (`nto`). No other edit is taken for one: a changed or added letter in a name this short makes
    too many other words (`nat`, `note`, `url`, `key`)."""
    if len(name) != 3:
        return False
    if len(keyword) == 4:
        return any(keyword[:i] + keyword[i + 1 :] == name for i in range(4))
    if len(keyword) != 3:
        return False
    return name in (keyword[1] + keyword[0] + keyword[2], keyword[0] + keyword[2] + keyword[1])


def format_reason(name: str) -> str | None:
    """Why `format: name`, a name JSON Schema does not define, is worth a note: where it looks
    like one it defines (`emial`, `datetime`, `Date`, `url`), the schema's author meant a
    check that validators skip. None for other names (OpenAPI's `int32` and `byte`), which
    validators ignore as they are meant to."""
    meant = _FORMAT_ALIASES.get(name.casefold()) or nearest(name, _FORMAT_NAMES)
    if meant is None or name in SPECIFIED_FORMATS:
        return None
    return f"'{name}' is not a format JSON Schema defines, so validators ignore it; did you mean '{meant}'?"


def nearest(name: str, names: Iterable[str]) -> str | None:
    """Of `names`, the one `name` is a likely typo of, within a keyword's near miss's reach
    (equal but for case; one edit for names of up to five characters, two for longer ones;
    the first letter kept, see _plausible_typo); None where none is that near. Names longer
    than 64 characters are not measured, nor more than the first _MOST_MEASURED of `names`:
    the cost stays bounded (a schema is untrusted input)."""
    folded, close = name.casefold(), []
    for known in itertools.islice(names, _MOST_MEASURED):
        if known == name:
            continue
        if known.casefold() == folded:
            return known
        shorter = min(len(name), len(known))
        limit = 1 if shorter <= _SHORT else 2
        if shorter < 4 or abs(len(name) - len(known)) > limit or max(len(name), len(known)) > 64:
            continue
        if (distance := _edits_within(name, known, limit)) <= limit and _plausible_typo(name, known, limit):
            close.append((distance, known))
    return min(close)[1] if close else None


_MOST_MEASURED = 512  # names a guess is looked for among


def _edits_within(first: str, second: str, limit: int) -> int:
    """The Damerau-Levenshtein distance (optimal string alignment: insertions, deletions,
    substitutions and swaps of neighbours, one each) where it is at most `limit`, else some
    number above `limit`: the common start and end are left out first (they cost no edit), and
    the measure stops once two rows running are all above `limit` (no later row can come back
    under it: a swap reaches back two rows)."""
    start = 0
    while start < min(len(first), len(second)) and first[start] == second[start]:
        start += 1
    end = 0
    while end < min(len(first), len(second)) - start and first[-1 - end] == second[-1 - end]:
        end += 1
    first, second = first[start : len(first) - end], second[start : len(second) - end]
    before: list[int] | None = None
    previous = list(range(len(second) + 1))
    for i, a in enumerate(first, 1):
        current = [i] + [0] * len(second)
        for j, b in enumerate(second, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b))
            if before is not None and i > 1 and j > 1 and a == second[j - 2] and first[i - 2] == b:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit and min(previous) > limit:
            return limit + 1
        before, previous = previous, current
    return previous[-1]


# Names some tools use for a format JSON Schema defines under another name.
_FORMAT_ALIASES = {"url": "uri"}
_FORMAT_NAMES = tuple(sorted(SPECIFIED_FORMATS))


def _plausible_typo(name: str, keyword: str, limit: int) -> bool:
    """Whether `name`, within `limit` edits of `keyword`, is a typo of it rather than another
    word: a short name (one edit allowed) that differs only in its first letter is a word of
    its own (`when` is not `then`, `href` not `$ref`) unless that letter is the key beside the
    keyword's on a keyboard (`#ref`: `#` is beside `$`). Typing slips keep a word's first
    letter; and in a short name one edit may well make another word."""
    if limit > 1 or len(name) != len(keyword) or name[0] == keyword[0] or name[1:] != keyword[1:]:
        return True
    first, second = _KEYS.get(name[0]), _KEYS.get(keyword[0])
    return first is not None and second is not None and first[0] == second[0] and abs(first[1] - second[1]) == 1


# Each key's row and place on a US keyboard, shifted or not: where a slip of the finger lands.
_ROWS: tuple[str, ...] = ("`1234567890-=", "~!@#$%^&*()_+", "qwertyuiop[]", "QWERTYUIOP{}")
_ROWS += ("asdfghjkl;'", 'ASDFGHJKL:"', "zxcvbnm,./", "ZXCVBNM<>?")
_KEYS = {key: (row // 2, place) for row, keys in enumerate(_ROWS) for place, key in enumerate(keys)}


_LETTERS = {keyword: Counter(keyword) for keyword in _targets(True) + _targets(False)}


def _suits(keyword: str, value: Any) -> bool:
    """Whether `value` is a valid value of `keyword` in the draft that gives it meaning (a
    name whose value does not fit, `"multiple": true` for multipleOf, is not a misspelling)."""
    _, uri = _draft_giving_meaning(keyword, DRAFTS[-1][0]) or DRAFTS[-1]
    return meta_schema_error({"$schema": uri, keyword: value}) is None


def _known(keyword: str) -> bool:
    """Whether `keyword` is a keyword of some vocabulary above, or a vendor's (`x-`)."""
    return keyword in _KNOWN or keyword[:2].lower() == "x-" or _draft_giving_meaning(keyword, DRAFTS[-1][0]) is not None


_KNOWN = ANNOTATIONS | OTHER_ANNOTATIONS | _JSON_SCHEMA_OTHERS | _OTHER_ASSERTIONS.keys() | _HYPER_SCHEMA
