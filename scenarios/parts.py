"""The parts of a GOST-style document and what each is for (no Django here).

A ТЗ, a ПМИ or a specification has, around its content, matter that states no requirement and
checks nothing. It is recognised by what it holds, whatever its title (``is_matter``):

- a **title page** or an **approval sheet**: signature blanks, "УТВЕРЖДАЮ", "«___» ____ 2019 г.",
  "Подп. и дата", "Листов 17";
- a **table of contents**: lines ending with a page number, or links to the page's anchors;
- a **list of documents** or of literature: lines naming document types ("Техническое
  задание (ГОСТ 19.201-78)"), standards, publishers, addresses;
- a **registration of changes**: the table of changed, replaced and new sheets.

The introduction, the purpose, the terms of a ТЗ hold statements of their own kind: a
requirements document offers only the statements whose form states a requirement
(``scenarios.statements``), so a name ("Наименование программы – «Парковка»") is never one.

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
_REGISTRATION_TABLE = re.compile(r"аннулированн|измененн\w*\s*\|\s*замененн", re.IGNORECASE)
# A line of a list of documents or of literature: a standard, a publisher, an address.
_REFERENCE = re.compile(
    r"\bГОСТ\s*(?:Р\s*)?[\d.]|\bGOST\b|\bISO\s*\d|\bRFC\s*\d|\[Электронный ресурс\]|\bURL:|"
    r"https?://|\bISBN\b|\bИзд(?:ательство|-во)\b|(?<!\w)(?:М|СПб)\.\s*:|\bet al\.",
    re.IGNORECASE,
)
# A line of a title page or an approval sheet: signatures, dates left blank, sheet counts.
_SIGNATURE = re.compile(
    r"«_*»|_{3,}|(?<!\w)(?:УТВЕРЖДАЮ|СОГЛАСОВАНО|APPROVED)(?!\w)|\bПодп(?:\.|ись)|\bИнв\.\s*№|"
    r"\bВзам\.\s*инв|\bЛистов\s+\d|^\s*(?:\w+\s+)?(?:19|20)\d\d(?:\s*г\.?)?\s*$",
    re.IGNORECASE,
)
# A line of a table of contents: a title and its page number, or a link to an anchor.
_CONTENTS_LINE = re.compile(r"^(?:\d+(?:\.\d+)*\.?\s*)?\S.{1,150}?[\s.]\d{1,3}$|^\[[^\]]+\]\(#")
MATTER_SHARE = 0.6  # of a section's lines, for a list of documents or a table of contents
SIGNATURE_SHARE = 0.5


def _share(lines: Sequence[str], test) -> float:
    return sum(1 for line in lines if test(line)) / len(lines) if lines else 0.0


def lists_documents(lines: Sequence[str]) -> bool:
    """A list of documents (the documentation to deliver, the literature): most of its lines
    name a document type, a standard, a publisher or an address."""
    return (
        len(lines) >= 2
        and _share(lines, lambda line: named_type(line) or _REFERENCE.search(line)) >= MATTER_SHARE
    )


def _contents(lines: Sequence[str]) -> bool:
    """A table of contents: most lines end with a page number, the numbers never going back
    (a list of versions, "iOS 15", "Android 8", is not one), or link to the page's anchors."""
    entries = [line.lstrip("-–—•* ") for line in lines]
    found = [entry for entry in entries if _CONTENTS_LINE.search(entry)]
    if len(lines) < 3 or len(found) < MATTER_SHARE * len(lines):
        return False
    pages = [int(m[1]) for entry in found if (m := re.search(r"(\d+)$", entry))]
    return pages == sorted(pages)


def is_matter(section: Section) -> bool:
    """A title page or approval sheet, a table of contents, a list of documents or literature,
    a registration of changes: what holds no requirement and no check, by what it holds (see
    the module docstring)."""
    lines = section.lines
    if any(_REGISTRATION_TABLE.search(line) for line in lines):
        return True
    if len(lines) >= 2 and _share(lines, _SIGNATURE.search) >= SIGNATURE_SHARE:
        return True
    return _contents(lines) or lists_documents(lines)


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
