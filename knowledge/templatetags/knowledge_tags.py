"""Template filters of the knowledge pages."""

from __future__ import annotations

import re

from django import template
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from knowledge.models import DocumentVersion

register = template.Library()

# Words the ingest pipeline stores in DocumentVersion.stage besides the statuses themselves.
_EXTRA = {
    "none": _("no version"),
    "queued": _("queued"),
    "waiting to retry": _("waiting to retry"),
}


_OCR_STAGE = re.compile(r"^ocr (\d+)/(\d+)$")  # knowledge.ingest.pipeline.ocr_stage


@register.filter
def status_label(value: str) -> str:
    """A version's status (or ingest stage) in the interface's language: ``ready`` -> "Ready",
    ``ocr 3/50`` -> "recognising text: page 3 of 50"."""
    value = value or "queued"
    recognising = _OCR_STAGE.match(value)
    if recognising:
        return gettext("Recognising text: page %(done)s of %(total)s") % {
            "done": recognising.group(1),
            "total": recognising.group(2),
        }
    try:
        return str(DocumentVersion.Status(value).label)
    except ValueError:
        return str(_EXTRA.get(value, value))


@register.filter
def ocr_warning(version: DocumentVersion | None) -> str:
    """ "Pages 3, 7 were recognised poorly …" for a version with pages under the OCR confidence
    threshold; "" otherwise. Said at display time, in the reader's language."""
    pages = version.poorly_recognised_pages if version is not None else []
    if not pages:
        return ""
    values = {
        "pages": ", ".join(str(n) for n in pages),
        "threshold": (version.ocr or {}).get("min_confidence", 0),
    }
    if len(pages) == 1:
        return (
            gettext(
                "Page %(pages)s was recognised poorly (OCR confidence under %(threshold)s %%): "
                "check its text against the page image."
            )
            % values
        )
    return (
        gettext(
            "Pages %(pages)s were recognised poorly (OCR confidence under %(threshold)s %%): "
            "check their text against the page images."
        )
        % values
    )
