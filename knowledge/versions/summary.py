"""A change summary: sections added, removed, changed and moved; words added and removed; table
rows. Plain data, stored as JSON next to the versions it describes."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from django.utils.translation import get_language, gettext

NO_TEXT_CHANGES = "No text changes"
MAX_LISTED = 12


@dataclass
class ChangeSummary:
    sections_added: int = 0
    sections_removed: int = 0
    sections_changed: int = 0
    sections_moved: int = 0
    sections_renamed: int = 0
    words_added: int = 0
    words_removed: int = 0
    rows_added: int = 0
    rows_removed: int = 0
    rows_changed: int = 0
    # The first changed sections' labels ("2.1 Scope"), for a history line.
    changed: list[str] = field(default_factory=list)

    @property
    def text_changed(self) -> bool:
        counts = (
            self.sections_added,
            self.sections_removed,
            self.sections_changed,
            self.sections_moved,
            self.words_added,
            self.words_removed,
        )
        return any(counts)

    @property
    def display_text(self) -> str:
        """:meth:`as_text` in the interface's active language, for the pages (the answering
        pipeline passes the question's language itself)."""
        return self.as_text("ru" if (get_language() or "").startswith("ru") else "en")

    @property
    def display_changed(self) -> list[str]:
        """The changed sections' labels for the pages ("Preamble" in the interface's language)."""
        return [gettext("Preamble") if label == "Preamble" else label for label in self.changed]

    def as_text(self, language: str = "en") -> str:
        """One line: "2 sections changed, 1 added; +120 / −45 words", or "No text changes"."""
        if language == "ru":
            return self._as_russian()
        if not self.text_changed:
            return NO_TEXT_CHANGES
        parts = []
        for count, word in (
            (self.sections_changed, "changed"),
            (self.sections_added, "added"),
            (self.sections_removed, "removed"),
            (self.sections_moved, "moved"),
        ):
            if count:
                noun = "section" if count == 1 else "sections"
                parts.append(f"{count} {noun} {word}" if not parts else f"{count} {word}")
        line = ", ".join(parts)
        words = f"+{self.words_added} / −{self.words_removed} words"
        return f"{line}; {words}" if line else words

    def _as_russian(self) -> str:
        if not self.text_changed:
            return "текст не изменился"
        parts = [
            f"{word}: {count}"
            for count, word in (
                (self.sections_changed, "изменено разделов"),
                (self.sections_added, "добавлено"),
                (self.sections_removed, "удалено"),
                (self.sections_moved, "перенесено"),
            )
            if count
        ]
        words = f"слов +{self.words_added} / −{self.words_removed}"
        return f"{', '.join(parts)}; {words}" if parts else words

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChangeSummary:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})
