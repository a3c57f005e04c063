"""Drawing the review page from checked documents (core.review.evidence): HTML only, every piece of
text escaped here and nowhere else.

The text is cut at every span boundary into pieces; each piece covered by spans becomes one
`<mark>` naming all of them (`data-spans`), so overlapping and nested spans need no nesting of
elements and a span's text is exactly its pieces in order. Labels are empty elements whose
pointer CSS draws (`data-pointer`), so copying the text copies the document, not the labels.
"""

from __future__ import annotations

import html
import json
import re
from collections import defaultdict
from collections.abc import Sequence

from .assets import PAGE_SCRIPT, PAGE_STYLE
from .evidence import CheckedDocument, Field

# Confidence bands, most sure first: (css class, lower bound, legend text).
BANDS = (
    ("c4", 0.9, "≥ 0.9"),
    ("c3", 0.7, "0.7 \u2013 0.9"),
    ("c2", 0.5, "0.5 \u2013 0.7"),
    ("c1", 0.3, "0.3 \u2013 0.5"),
    ("c0", 0.0, "< 0.3"),
)
NO_CHOICE = ("cn", "no choice (forced)")

# C0 controls (but tab and newline) as their visible Control Pictures, DEL likewise, C1 controls
# as U+FFFD: HTML forbids them in text, and a character for a character keeps offsets aligned.
_CONTROLS = {code: 0x2400 + code for code in range(0x20) if code not in (0x09, 0x0A, 0x0D)}
_CONTROLS.update({0x7F: 0x2421, **{code: 0xFFFD for code in range(0x80, 0xA0)}})
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_LABEL_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def visible_text(piece: str, after: str = "") -> str:
    """What the page shows for `piece` of a document whose next character is `after`: CR LF
    and a lone CR as one line break (as browsers read them), controls as visible symbols, lone
    surrogates (undecodable bytes) as U+FFFD. Not escaped."""
    piece = re.sub("\r(?=\n)", "", piece)
    if piece.endswith("\r") and after == "\n":
        piece = piece[:-1]
    return _LONE_SURROGATE.sub("\ufffd", piece.replace("\r", "\n").translate(_CONTROLS))


def visible_label(label: str) -> str:
    """A source name, pointer or value as shown: controls and lone surrogates as backslash
    escapes (`\\udcff`, the form sources take for undecodable file-name bytes). Not escaped."""
    return _LABEL_CONTROLS.sub(lambda match: _backslashed(match.group()), label)


def band(confidence: float | None) -> str:
    """The CSS class of the confidence band `confidence` falls in."""
    if confidence is None:
        return NO_CHOICE[0]
    return next(name for name, lower, _ in BANDS if confidence >= lower)


def render_page(documents: Sequence[CheckedDocument], min_confidence: float | None) -> str:
    """The whole page: header with legend, the document list, one section per document (the
    first shown, the others hidden until chosen), and the style and script inline."""
    sections = "".join(_section(number, document, min_confidence) for number, document in enumerate(documents))
    single = " single" if len(documents) <= 1 else ""
    title = f"Extraction review · {len(documents)} document{'s' if len(documents) != 1 else ''}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_escape(title)}</title><style>{PAGE_STYLE}</style></head>\n"
        f'<body class="review{single}">{_header(documents, min_confidence)}\n<div class="layout">'
        f"{_document_list(documents)}<main>{sections}</main></div>\n"
        f"<script>{PAGE_SCRIPT}</script></body></html>\n"
    )


def _header(documents: Sequence[CheckedDocument], min_confidence: float | None) -> str:
    fields = [field for document in documents for field in document.fields]
    parts = [f"{len(documents)} document{'s' if len(documents) != 1 else ''}", f"{len(fields)} values"]
    if min_confidence is not None:
        parts.append(f"{sum(field.low for field in fields)} below {min_confidence:g}")
    parts.append(f"{sum(field.span is None for field in fields)} ungrounded")
    failed = sum(document.error is not None for document in documents)
    if failed:
        parts.append(f"{failed} failed")
    summary = " · ".join(parts)
    return (
        f'<header class="top"><h1>Extraction review</h1><p class="summary">{_escape(summary)}</p>'
        f'{_legend(min_confidence)}<label class="toggle"><input type="checkbox" id="labels" checked> labels</label></header>'
    )


def _legend(min_confidence: float | None) -> str:
    chips = [f'<span class="chip {name}">{_escape(text)}</span>' for name, _, text in BANDS]
    chips.append(f'<span class="chip {NO_CHOICE[0]}">{_escape(NO_CHOICE[1])}</span>')
    if min_confidence is not None:
        chips.append(f'<span class="chip lowmark">below {min_confidence:g}</span>')
    return f'<div class="legend" aria-label="Confidence colours">confidence {"".join(chips)}</div>'


def _document_list(documents: Sequence[CheckedDocument]) -> str:
    items = "".join(_document_item(number, document) for number, document in enumerate(documents))
    return (
        '<nav class="docs" aria-label="Documents"><input type="search" id="filter" placeholder="Filter by name">'
        '<label class="toggle"><input type="checkbox" id="only-flagged"> only flagged</label>'
        f'<ol id="doclist">{items}</ol></nav>'
    )


def _document_item(number: int, document: CheckedDocument) -> str:
    low = sum(field.low for field in document.fields)
    ungrounded = sum(field.span is None for field in document.fields)
    badges = ""
    if document.error is not None:
        badges += '<span class="badge failed">failed</span>'
    if low:
        badges += f'<span class="badge low" title="values below the threshold">{low}</span>'
    if ungrounded:
        badges += f'<span class="badge ungrounded" title="values not found in the text">{ungrounded}</span>'
    flagged = int(bool(low or document.error is not None))
    current = ' class="current"' if number == 0 else ""
    name = _escape(visible_label(document.source))
    return (
        f'<li data-flagged="{flagged}"><a href="#doc-{number}" data-doc="{number}"{current}>'
        f'<span class="name" title="{name}">{name}</span>{badges}</a></li>'
    )


def _section(number: int, document: CheckedDocument, min_confidence: float | None) -> str:
    hidden = " hidden" if number else ""
    error = f'<p class="error">{_escape(visible_label(document.error))}</p>' if document.error else ""
    text = _highlighted(document.text, document.fields) if document.text else '<span class="empty">(no text)</span>'
    return (
        f'<section class="doc" id="document-{number}" data-doc="{number}"{hidden}>'
        f"<h2>{_escape(visible_label(document.source))}</h2>{_stats(document, min_confidence)}{error}"
        f'<div class="panes"><div class="text">{text}</div>'
        f"{_table(number, document.fields)}</div></section>\n"
    )


def _stats(document: CheckedDocument, min_confidence: float | None) -> str:
    fields = document.fields
    if document.error is not None:
        return f'<p class="stats">failed · {len(document.text):,} characters</p>'
    parts = [f"{len(fields)} values"]
    if min_confidence is not None:
        parts.append(f"{sum(field.low for field in fields)} below {min_confidence:g}")
    parts.append(f"{sum(field.span is None for field in fields)} ungrounded")
    parts.append(f"{len(document.text):,} characters")
    return f'<p class="stats">{_escape(" · ".join(parts))}</p>'


def _highlighted(text: str, fields: Sequence[Field]) -> str:
    """The text with a label at each span's start and a `<mark>` for each piece under spans."""
    starting: defaultdict[int, list[int]] = defaultdict(list)
    ending: defaultdict[int, list[int]] = defaultdict(list)
    for index, field in enumerate(fields):
        if field.span is not None:
            starting[field.span[0]].append(index)
            ending[field.span[1]].append(index)
    bounds = sorted({0, len(text), *starting, *ending})
    active: set[int] = set()
    out: list[str] = []
    for position, following in zip(bounds, [*bounds[1:], None], strict=True):
        active.difference_update(ending.get(position, ()))
        opening = sorted(starting.get(position, ()), key=lambda index: -_length(fields[index]))
        out.extend(_label(index, fields[index]) for index in opening)
        active.update(index for index in opening if _length(fields[index]) > 0)
        if following is not None:
            piece = _escape(visible_text(text[position:following], text[following : following + 1]))
            out.append(_mark(piece, sorted(active), fields) if active else piece)
    return "".join(out)


def _mark(piece: str, covering: list[int], fields: Sequence[Field]) -> str:
    """A piece under spans, coloured as the innermost (shortest) of them, ties to the least sure."""
    inner_index = min(covering, key=lambda index: (_length(fields[index]), _sure(fields[index])))
    inner = fields[inner_index]
    classes = f"seg {band(inner.confidence)}{' low' if inner.low else ''}{' nested' if len(covering) > 1 else ''}"
    title = "\n".join(_describe(fields[index]) for index in covering)
    spans = " ".join(map(str, covering))
    return f'<mark class="{classes}" data-spans="{spans}" data-inner="{inner_index}" title="{_escape(title)}">{piece}</mark>'


def _label(index: int, field: Field) -> str:
    classes = f"tag {band(field.confidence)}{' low' if field.low else ''}{' empty' if _length(field) == 0 else ''}"
    pointer = _escape(visible_label(field.pointer) or "/")
    return f'<span class="{classes}" data-field="{index}" data-pointer="{pointer}" title="{_escape(_describe(field))}"></span>'


def _table(number: int, fields: Sequence[Field]) -> str:
    if not fields:
        return '<div class="fields"><p class="empty">No values.</p></div>'
    rows = "".join(_row(number, index, field) for index, field in enumerate(fields))
    return (
        '<div class="fields"><table><thead><tr><th>Field</th><th>Value</th><th>Confidence</th><th>Span</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )


def _row(number: int, index: int, field: Field) -> str:
    classes = " ".join(name for name, on in (("low", field.low), ("ungrounded", field.span is None)) if on)
    value = json.dumps(field.value, ensure_ascii=False)
    confidence = "—" if field.confidence is None else f"{field.confidence:.2f}"
    low = ' <span class="badge low">low</span>' if field.low else ""
    return (
        f'<tr id="d{number}-f{index}" data-field="{index}" class="{classes}">'
        f'<td class="pointer"><code>{_escape(visible_label(field.pointer) or "/")}</code></td>'
        f'<td class="value">{_escape(visible_label(value))}</td>'
        f'<td class="confidence"><span class="chip {band(field.confidence)}" title="{_escape(repr(field.confidence))}">'
        f'{confidence}</span>{low}</td><td class="span">{_span_cell(field)}</td></tr>'
    )


def _span_cell(field: Field) -> str:
    if field.span is None:
        return '<span class="badge ungrounded" title="not found verbatim in the text">ungrounded</span>'
    start, end = field.span
    grounded = ' <span class="badge grounded" title="constrained to be a span of the text">grounded</span>'
    return f'<span title="characters {start} to {end}">{start}\u2013{end}</span>{grounded if field.grounded else ""}'


def _describe(field: Field) -> str:
    confidence = "no choice" if field.confidence is None else f"confidence {field.confidence:.2f}"
    return f"{visible_label(field.pointer) or '/'} · {confidence}{' · LOW' if field.low else ''}"


def _length(field: Field) -> int:
    return 0 if field.span is None else field.span[1] - field.span[0]


def _sure(field: Field) -> float:
    return 2.0 if field.confidence is None else field.confidence


def _escape(text: str) -> str:
    return html.escape(text, quote=True)


def _backslashed(character: str) -> str:
    code = ord(character)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
