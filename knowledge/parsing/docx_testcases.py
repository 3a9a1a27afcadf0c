"""Test cases in Word documents: a table with steps and expected results, or a whole section
headed "Тест-кейс ..." / "Test case ...", becomes one ``test_case`` block.

Its meta names the tested function (what the caption or heading says after the "Тест-кейс 3:"
label, else the nearest heading above) and the section it belongs to, so that an answer can say
"test case for <function>, section 4.2" and retrieval can filter on either.
"""

from __future__ import annotations

import re

from knowledge.parsing.base import Block, is_test_case_title

_CAPTION_PREFIX = re.compile(r"^\s*(?:таблица|table)\s*(?:№\s*)?[\d.]*\s*[-–—:.]?\s*", re.I)
_LABEL = re.compile(
    r"^\W*(?:тест[- ]?кейс\w*|test[- ]?cases?|тестовый сценарий|сценари[йи] тест\w*"
    r"|контрольный пример)\s*(?:№\s*)?(?:[\w-]*\d[\w.-]*)?\s*[:.\-–—)]*\s*",
    re.I,
)


def function_name(label: str) -> str:
    """ "Таблица 2 – Тест-кейс 3: Поиск" -> "Поиск"; "" when the label names no function."""
    text = _CAPTION_PREFIX.sub("", label, count=1)
    if not is_test_case_title(text):
        return ""
    return _LABEL.sub("", text, count=1).strip()


def table_meta(labels: list[str], heading_path: list[str], section: str) -> dict[str, str]:
    """Meta of a test-case table: the function from its caption or header, else the heading."""
    named = [name for name in map(function_name, labels) if name]
    nearest = heading_path[-1] if heading_path else ""
    function = named[0] if named else function_name(nearest) or _subject(heading_path)
    return {"function": function or next(filter(None, labels), ""), "parent_section": section}


def _subject(heading_path: list[str]) -> str:
    """The nearest enclosing heading that is not itself a test-case label ("Тест-кейсы")."""
    return next((title for title in reversed(heading_path) if not is_test_case_title(title)), "")


def group_test_case_sections(blocks: list[Block]) -> list[Block]:
    """Collapse the content of each section headed as a test case into one test_case block.

    The section runs to the next heading of the same or a higher level; the heading block stays,
    and the titles of its subsections ("Шаги", "Ожидаемый результат") become lines of the test
    case's text, so one test case is never split across blocks. A heading such as "Тест-кейсы"
    whose subsections are themselves test cases is a container, not a test case: it is left
    alone and its subsections are collapsed one by one.
    """
    out: list[Block] = []
    i = 0
    while i < len(blocks):
        block = blocks[i]
        out.append(block)
        i += 1
        if block.kind != "heading" or not is_test_case_title(block.text):
            continue
        end = i
        while end < len(blocks) and not (
            blocks[end].kind == "heading" and blocks[end].level <= block.level
        ):
            end += 1
        body = blocks[i:end]
        if body and not any(b.kind == "heading" and is_test_case_title(b.text) for b in body):
            out.append(_section_block(block, body))
            i = end
    return out


def _section_block(heading: Block, body: list[Block]) -> Block:
    only_table = body[0].table if len(body) == 1 else None
    function = function_name(heading.text) or _subject(heading.heading_path) or heading.text
    return Block(
        kind="test_case",
        text="\n\n".join(b.text for b in body),
        heading_path=list(heading.heading_path),
        section=heading.section,
        table=only_table,
        meta={"function": function, "parent_section": heading.section.rpartition(".")[0]},
    )
