"""What a document is for the people who test a product: its role.

requirements  a ТЗ, a specification, user stories, an API description: what the product must do
tests         a test programme and methods (ПМИ), test plans and cases: how it is checked
checklist     a checklist: rows of checks with a status
knowledge     a wiki: what the team knows about testing and the domain
code          a program text (ГОСТ 19.401 "Текст программы"), a source listing
other         everything else: an explanatory note, manuals, policies, tickets

Read once per version when it is stored (``read_role``), from, in this order: the kind of
source for wikis, checklists and trackers (a wiki page about writing a ТЗ is still a wiki
page); the document type a GOST title page or the title names ("Техническое задание", "ПМИ",
"Текст программы"...), the earliest named; the file's structure (checklist sheets, test-case
tables, an OpenAPI description); words of the title ("requirements", "test plan"). Staff may
set the role of a source or of one document; what they set wins (``Document.effective_role``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from django.db import models
from django.utils.translation import gettext_lazy as _

from knowledge.text.matching import ABBREVIATIONS


class Role(models.TextChoices):
    REQUIREMENTS = "requirements", _("Requirements (ТЗ, specification, user stories)")
    TESTS = "tests", _("Test programme and methods (ПМИ, test cases)")
    CHECKLIST = "checklist", _("Checklist")
    KNOWLEDGE = "knowledge", _("Knowledge (wiki)")
    CODE = "code", _("Code (program text)")
    OTHER = "other", _("Other")


# Document types by the words that name them (lower case, ё as е), GOST 19/34 and their
# English counterparts. The GOST abbreviations (knowledge.text.matching) are spelled out
# before matching: "ТЗ-Шакруа" names a "техническое задание".
TYPE_NAMES: dict[str, tuple[str, ...]] = {
    Role.REQUIREMENTS: (
        "техническое задание", "технические требования", "спецификация требований",
        "функциональные требования", "пользовательские истории", "requirements specification",
        "software requirements", "technical specification", "functional specification",
        "product requirements", "user stories",
    ),
    Role.TESTS: (
        "программа и методика испытаний", "методика испытаний", "программа испытаний",
        "план тестирования", "тестовые сценарии", "тест-кейсы", "test plan", "test cases",
        "test procedure", "test programme", "test program", "test specification",
    ),
    Role.CHECKLIST: ("чек-лист", "чеклист", "checklist", "check list"),
    Role.CODE: ("текст программы", "исходный текст", "program text", "source code", "листинг"),
    Role.OTHER: (
        "пояснительная записка", "руководство оператора", "руководство программиста",
        "руководство системного программиста", "руководство пользователя", "описание программы",
        "user guide", "user manual",
    ),
}  # fmt: skip
# Words of a title that say "requirements" without naming a GOST type: "Требования к API",
# "Payment service specification", "Спецификация экрана оплаты".
_TITLE_REQUIREMENTS = re.compile(
    r"(?<!\w)(?:требовани\w*|спецификаци\w*|requirements?|specifications?|user stor\w*)(?!\w)",
    re.IGNORECASE,
)
_SOURCE_ROLES = {"wiki": Role.KNOWLEDGE, "checklists": Role.CHECKLIST, "tracker": Role.OTHER}
_ABBREVIATION = re.compile(r"(?<![^\W\d_])([А-ЯЁA-Z]{2,4})(?![^\W\d_])")
# What follows a title page: its annotation or its table of contents.
_AFTER_TITLE_PAGE = re.compile(
    r"^(?:аннотация|содержание|оглавление|abstract|contents|table of contents)$", re.IGNORECASE
)
OPENING_BLOCKS = 40  # a title page and a table of contents fit in the first blocks
OPENING_CHARS = 4000
_CODE_LINE = re.compile(
    r"[{};]\s*$|^\s*(?:#include|import |from \S+ import|using |public |private |def |class )"
)


def _normal(text: str) -> str:
    return " ".join(text.casefold().replace("ё", "е").split())


def _spelled_out(text: str) -> str:
    """The text with GOST abbreviations written in full ("ТЗ" -> "техническое задание")."""

    def expand(match: re.Match[str]) -> str:
        full = ABBREVIATIONS.get(match[1].casefold())
        return f"{match[1]} {full}" if full else match[1]

    return _ABBREVIATION.sub(expand, text)


# Every type name in one pattern (read line by line over whole documents: one search, not one
# per name); the names found at the earliest place then decide, as ``min`` over all would.
_TYPE_NAME = re.compile(
    "|".join(rf"(?<!\w){re.escape(name)}(?!\w)" for names in TYPE_NAMES.values() for name in names)
)


def named_type(text: str) -> str:
    """The role of the document type ``text`` names first ("" when it names none)."""
    text = _normal(_spelled_out(text))
    first = _TYPE_NAME.search(text)
    if first is None:
        return ""
    at = first.start()
    roles = [
        role
        for role, names in TYPE_NAMES.items()
        for name in names
        if text.startswith(name, at) and not (text[at + len(name) : at + len(name) + 1].isalnum())
    ]
    return min(roles)


def opening(blocks: Iterable[Mapping[str, Any]]) -> str:
    """The title page: the text of the blocks before the first heading, the annotation or the
    contents (at most the first ``OPENING_BLOCKS``), and the first heading itself."""
    parts: list[str] = []
    for index, block in enumerate(blocks):
        text = str(block.get("text", ""))
        if index >= OPENING_BLOCKS or sum(map(len, parts)) > OPENING_CHARS:
            break
        if _AFTER_TITLE_PAGE.match(text.strip()):
            break
        parts.append(text)
        if block.get("kind") == "heading":
            break
    return "\n".join(parts)[:OPENING_CHARS]


def _by_structure(blocks: list[Mapping[str, Any]], fmt: str) -> str:
    """A role the file's structure shows: checklist sheets, test-case tables, an API
    description, a listing made of code lines."""
    if any((block.get("meta") or {}).get("checklist") for block in blocks):
        return Role.CHECKLIST
    if sum(1 for block in blocks if block.get("kind") == "test_case") >= 3:
        return Role.TESTS
    if fmt == "openapi":
        return Role.REQUIREMENTS
    lines = [
        line
        for block in blocks
        if block.get("kind") != "heading"
        for line in str(block.get("text", "")).splitlines()
        if line.strip()
    ]
    if len(lines) >= 20 and sum(1 for ln in lines if _CODE_LINE.search(ln)) >= 0.4 * len(lines):
        return Role.CODE
    return ""


def read_role(
    *, title: str, source_kind: str, blocks: Iterable[Mapping[str, Any]] = (), fmt: str = ""
) -> str:
    """The role of a document read from its source's kind, title page, title and structure
    (see the module docstring); ``Role.OTHER`` when nothing says."""
    if source_kind in _SOURCE_ROLES:
        return _SOURCE_ROLES[source_kind]
    blocks = list(blocks)
    named = named_type(title) or named_type(opening(blocks))
    if named:
        return named
    by_structure = _by_structure(blocks, fmt)
    if by_structure:
        return by_structure
    if _TITLE_REQUIREMENTS.search(title):
        return Role.REQUIREMENTS
    return Role.OTHER
