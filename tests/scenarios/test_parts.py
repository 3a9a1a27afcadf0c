"""What each part of a GOST-style document is for (``scenarios.parts``): the matter around the
content that holds no requirement and no check, recognised by what it holds, and the kinds of
test sections."""

from __future__ import annotations

from scenarios import parts
from scenarios.numbering import Section


def _section(path: list[str], lines: list[str] = (), number: str = "1") -> Section:
    return Section(number, path[-1], len(path), list(path), 0, 0, list(lines) or ["текст"])


def test_matter_is_recognised_by_what_it_holds_whatever_its_title():
    approval = [
        "УТВЕРЖДАЮ",
        "Руководитель проекта",
        "_____________ П. П. Петров",
        "«___» ______ 2024 г.",
    ]
    assert parts.is_matter(_section(["1.1 Общие сведения"], approval))
    contents = [
        "1. Введение 3",
        "2. Требования к программе 5",
        "2.1. Требования к интерфейсу 5",
        "3. Порядок приемки 9",
    ]
    assert parts.is_matter(_section(["Оглавление документа"], contents))
    assert parts.is_matter(_section(["Разделы"], ["[Введение](#vvedenie)", "[Оплата](#oplata)",
                                                  "[Квитанции](#kvitancii)"]))  # fmt: skip
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
    literature = [
        "Иванов И. И. Мобильные платежи. – М.: Издательство «Наука», 2019.",
        "Парковочные зоны города [Электронный ресурс]// URL: https://example.org/zones.",
    ]
    assert parts.is_matter(_section(["Источники"], literature))


def test_a_title_alone_makes_no_matter():
    # An introduction's title says nothing of what it holds: its statements decide
    # (``scenarios.statements``); a section titled "Введение" may state a requirement.
    assert not parts.is_matter(
        _section(["ВВЕДЕНИЕ", "Назначение"], ["Приложение должно принимать оплату картой."])
    )
    assert not parts.is_matter(_section(["СОДЕРЖАНИЕ"], ["Экран оплаты показывает сумму."]))


def test_requirements_and_checks_are_not_matter():
    assert not parts.is_matter(
        _section(
            ["ТРЕБОВАНИЯ К ПРОГРАММЕ", "Требования к интерфейсу"],
            ["Экран оплаты показывает сумму и кнопку «Оплатить»."],
        )
    )
    documentation = ["Документация сдаётся в печатном виде, подписанная руководителем."]
    assert not parts.is_matter(_section(["ТРЕБОВАНИЯ К ДОКУМЕНТАЦИИ", "Особые"], documentation))
    versions = ["Android 14", "iOS 15", "Windows 10"]
    assert not parts.is_matter(_section(["Требования к программным средствам"], versions))


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
