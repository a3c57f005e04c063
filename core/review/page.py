"""The review page: one self-contained HTML file showing where each extracted value came from.

The page has every span highlighted in its document's text, a table of fields, and
low-confidence values marked. The envelopes are checked first (core.review.evidence), then
drawn (core.review.markup); the page is written atomically. Nothing here reads documents or
runs a model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from ..errors import OutputError, ReviewError
from ..files import write_atomically
from .evidence import ReviewDocument, check_document


def render_review(documents: Sequence[ReviewDocument], min_confidence: float | None = None) -> str:
    """The review page for `documents`, as one HTML string (no network, no external files).

    Values whose confidence is below `min_confidence` are marked low. Cost: linear in the total
    text and number of fields. Raises ReviewError for a malformed envelope or a bad threshold."""
    from .markup import render_page  # drawing is only needed here; keep imports light

    _check_threshold(min_confidence)
    checked = [check_document(document, min_confidence) for document in documents]
    return render_page(checked, min_confidence)


def write_review(path: Path, documents: Sequence[ReviewDocument], min_confidence: float | None = None) -> None:
    """Render the page and write it to `path` through a temporary file in the same folder,
    fsync and a rename, so `path` is either its old self or the complete page. The file gets
    the mode any new file would (0666 less the umask). Raises ReviewError before writing
    anything, OutputError when the file cannot be written."""
    page = render_review(documents, min_confidence)
    try:
        write_atomically(path, page)
    except OSError as error:
        raise OutputError(
            f"cannot write the review page {path}: {error.strerror or error}",
            hint="choose a writable folder for the review page",
        ) from None


def _check_threshold(min_confidence: float | None) -> None:
    if min_confidence is not None and (math.isnan(min_confidence) or not 0.0 <= min_confidence <= 1.0):
        raise ReviewError(f"min_confidence {min_confidence} is outside [0, 1]", hint="give a probability such as 0.5")
