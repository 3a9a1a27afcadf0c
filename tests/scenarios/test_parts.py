"""What each part of a GOST-style document is for (``scenarios.parts``): the matter around the
content that holds no requirement and no check, and the kinds of test sections."""

from __future__ import annotations

from scenarios import parts
from scenarios.numbering import Section


def _section(path: list[str], lines: list[str] = (), number: str = "1") -> Section:
    return Section(number, path[-1], len(path), list(path), 0, 0, list(lines) or ["текст"])


def test_title_contents_registration_and_document_lists_are_matter():
    assert parts.is_matter(_section(["ВВЕДЕНИЕ", "Наименование программы"]))
    assert parts.is_matter(_section(["ОБЪЕКТ ИСПЫТАНИЙ", "Обозначение испытуемой программы"]))
    assert parts.is_matter(_section(["СОДЕРЖАНИЕ"]))
    assert parts.is_matter(_section(["ЛИСТ РЕГИСТРАЦИИ ИЗМЕНЕНИЙ"]))
    assert parts.is_matter(_section(["ПРИЛОЖЕНИЕ 2", "Термины"]))
    registration = ["| Изм. | Измененных | Замененных | Новых | Аннулированных |"]
    assert parts.is_matter(_section(["9.1 Алгоритм"], registration))
    documents = [
        "На испытания представляется:",
        "- «Парковки». Техническое задание (ГОСТ 19.201-78);",
        "- «Парковки». Программа и методика испытаний (ГОСТ 19.301-79);",
        "- «Парковки». Руководство оператора (ГОСТ 19.505-79).",
    ]
    assert parts.is_matter(
        _section(["ТРЕБОВАНИЯ К ДОКУМЕНТАЦИИ", "Состав документации"], documents)
    )


def test_requirements_and_checks_are_not_matter():
    assert not parts.is_matter(
        _section(
            ["ТРЕБОВАНИЯ К ПРОГРАММЕ", "Требования к интерфейсу"],
            ["Экран оплаты показывает сумму и кнопку «Оплатить»."],
        )
    )
    documentation = ["Документация сдаётся в печатном виде, подписанная руководителем."]
    assert not parts.is_matter(_section(["ТРЕБОВАНИЯ К ДОКУМЕНТАЦИИ", "Особые"], documentation))


def test_a_test_programmes_sections_are_methods_declared_requirements_or_its_environment():
    sections = [
        _section(["ТРЕБОВАНИЯ К ПРОГРАММЕ", "Требования к интерфейсу"]),
        _section(["СРЕДСТВА И ПОРЯДОК ИСПЫТАНИЙ", "Программные средства"]),
        _section(["МЕТОДЫ ИСПЫТАНИЙ", "Оплата картой"]),
    ]
    sections.append(Section("6", "МЕТОДЫ ИСПЫТАНИЙ", 1, ["МЕТОДЫ ИСПЫТАНИЙ"], 0, 0, ["x"]))
    with_parts = parts.has_test_parts(sections)
    assert with_parts
    kinds = [parts.test_kind(s, has_parts=with_parts) for s in sections[:3]]
    assert kinds == ["declared", "environment", "method"]
    # A checklist or a list of test cases has no such parts: every section checks something.
    assert parts.test_kind(_section(["Регистрация"]), has_parts=False) == "method"
