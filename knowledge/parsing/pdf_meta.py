"""The document information of a PDF (title, author, dates) in the shape ParsedDocument keeps."""

from __future__ import annotations

import re
from typing import Any

from knowledge.parsing.base import clean_text

# PDF dates: "D:YYYYMMDDHHmmSS" with optional parts and a zone ("Z", "-04'00'").
_PDF_DATE = re.compile(r"D:(\d{4})(\d\d)?(\d\d)?(\d\d)?(\d\d)?(\d\d)?(Z|[+-]\d\d'?\d\d'?)?")


def document_metadata(info: dict[str, Any], page_count: int) -> dict[str, Any]:
    """Page count and the document information PDF writers fill in, dates as ISO 8601."""
    metadata: dict[str, Any] = {"pages": page_count}
    for key in ("title", "author", "subject", "creator", "producer"):
        value = clean_text(info.get(key) or "")
        if value:
            metadata[key] = value
    for key, name in (("creationDate", "created"), ("modDate", "modified")):
        value = (info.get(key) or "").strip()
        if value:
            metadata[name] = _iso_date(value)
    return metadata


def _iso_date(value: str) -> str:
    """ "D:20220729060321-04'00'" -> "2022-07-29T06:03:21-04:00"; anything else as it is."""
    match = _PDF_DATE.match(value)
    if not match:
        return value
    year, month, day, hour, minute, second, zone = match.groups()
    text = f"{year}-{month or '01'}-{day or '01'}"
    if hour:
        text += f"T{hour}:{minute or '00'}:{second or '00'}"
        if zone:
            zone = zone.replace("'", "")
            text += "+00:00" if zone == "Z" else f"{zone[:3]}:{zone[3:5] or '00'}"
    return text


def usable_title(title: str) -> str:
    """The metadata title unless it is a file or filing number ("0000320193-22-000070")."""
    return title if sum(ch.isalpha() for ch in title) >= 3 else ""
