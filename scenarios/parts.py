"""The parts of a GOST-style document and what each is for (no Django here).

A ТЗ, a ПМИ or a specification has, around its content, matter that states no requirement and
checks nothing: the title page and the approval sheet, the annotation and the contents, the
introduction (the program's name and designation, its field of use, the purpose of the tests),
the list of documents, terms and literature, appendices, the change registration sheet. The
scenarios never show those as requirements or tests (``is_matter``).

A test document's sections are of three kinds (``test_kind``): **method** (under a part of
methods, tests, checks: "МЕТОДЫ ИСПЫТАНИЙ"; every section of a checklist or of a document
without parts), **declared** (under a part restating the requirements to check, "ТРЕБОВАНИЯ К
ПРОГРАММЕ" of a ПМИ: declared for checking, no method) and **environment** (the means and
conditions of testing: "Программные средства, используемые во время испытаний").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from knowledge.roles import named_type
from scenarios.numbering import Section

# A part of a test document that checks things: its methods, test cases, checks, checklists.
TEST_PART = re.compile(
    r"метод|испытание\b|провер|тест-кейс|тестов\w* сценари|тестов\w* случа|чек-лист|"
    r"\btest|\bcheck|verification",
    re.IGNORECASE,
)
REQUIREMENTS_PART = re.compile(r"требовани|requirement", re.IGNORECASE)
ENVIRONMENT_PART = re.compile(
    r"средств|услови|стенд|environment|equipment|tools|conditions", re.IGNORECASE
)
# Front and back matter of GOST 19.xxx / 34.xxx documents and their English counterparts, by the
# title that opens it (a title page's and a registration sheet's words are its own).
_MATTER_TITLE = re.compile(
    r"^(?:аннотаци|содержани|оглавлени|введени|наименовани|обозначени|цель\b|назначени|"
    r"объект испытани|область применени|краткая характеристика области|основани\w* для разработки|"
    r"документы, на основании|лист\w* (?:регистрации|утверждения)|список (?:использ|литератур)|"
    r"перечень (?:документ|сокращени|термин)|термин|приложени|технико-экономическ|"
    r"стадии и этапы|порядок контроля и приемки|"
    r"abstract|contents|table of contents|introduction|purpose|scope|references|bibliography|"
    r"glossary|terms and definitions|appendix|annex|revision history|change log)",
    re.IGNORECASE,
)
_REGISTRATION_TABLE = re.compile(r"аннулированн|измененн\w*\s*\|\s*замененн", re.IGNORECASE)
_GOST_REFERENCE = re.compile(r"\bГОСТ\s*[\d.]|\bGOST\b|\bISO\s*\d", re.IGNORECASE)


def _opens_matter(title: str) -> bool:
    return bool(_MATTER_TITLE.match(" ".join(title.replace("ё", "е").split())))


def lists_documents(lines: Sequence[str]) -> bool:
    """A list of documents (the documentation to deliver, the literature): most of its lines
    name a document type or a standard."""
    named = [line for line in lines if named_type(line) or _GOST_REFERENCE.search(line)]
    return len(lines) >= 2 and len(named) >= 0.6 * len(lines)


def is_matter(section: Section) -> bool:
    """Title page, contents, introduction, registration sheet, lists of documents, terms and
    appendices: what holds no requirement and no check (see the module docstring)."""
    if any(_opens_matter(title) for title in section.path):
        return True
    if any(_REGISTRATION_TABLE.search(line) for line in section.lines):
        return True
    return lists_documents(section.lines)


def test_kind(section: Section, *, has_parts: bool) -> str:
    """ "method", "declared" or "environment" (see the module docstring); a document without
    such parts (a checklist, a list of test cases) is all methods."""
    top = section.path[0] if section.path else section.title
    if TEST_PART.search(top) or not has_parts:
        return "method"
    if REQUIREMENTS_PART.search(top):
        return "declared"
    if ENVIRONMENT_PART.search(top):
        return "environment"
    return "method" if any(TEST_PART.search(t) for t in section.path) else ""


def has_test_parts(sections: Sequence[Section]) -> bool:
    """Does the document have top-level parts of methods (else every section checks)?"""
    return any(s.level == 1 and TEST_PART.search(s.title) for s in sections)
