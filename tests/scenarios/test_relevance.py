"""Which requirement statements a change touches (``scenarios.relevance`` over
``scenarios.corpus``), on a small product of its own: a parking app's ТЗ and ПМИ, stored as
parsed versions, their roles read as the ingest reads them."""

from __future__ import annotations

import hashlib

import pytest

from knowledge.models import Document, DocumentVersion, Source
from knowledge.roles import read_role
from scenarios.corpus import corpus_for
from scenarios.relevance import rank
from scenarios.terms import read_terms

pytestmark = pytest.mark.django_db


def _heading(number: str, text: str, level: int) -> dict:
    return {"kind": "heading", "text": text, "level": level, "section": number}


def _text(number: str, text: str) -> dict:
    return {"kind": "text", "text": text, "section": number}


TZ = [
    _text("", "ПРИЛОЖЕНИЕ ДЛЯ ОПЛАТЫ ПАРКОВКИ"),
    _text("", "Техническое задание"),
    _heading("1", "ВВЕДЕНИЕ", 1),
    _heading("1.1", "Наименование программы", 2),
    _text("1.1", "Наименование программы – «Приложение для оплаты парковки»."),
    _heading("3", "НАЗНАЧЕНИЕ РАЗРАБОТКИ", 1),
    _heading("3.1", "Функциональное назначение", 2),
    _text("3.1", "Назначением программы является оплата стоянки и выдача электронных квитанций."),
    _heading("4", "ТРЕБОВАНИЯ К ПРОГРАММЕ", 1),
    _heading("4.1", "Требования к составу выполняемых функций", 2),
    _text("4.1", "Клиентское приложение должно реализовывать следующие функции:"),
    _text("4.1", "- показывать карту парковочных зон;"),
    _text("4.1", "- оплачивать стоянку банковской картой;"),
    _text("4.1", "- продлевать оплаченную стоянку."),
    _heading("4.2", "Требования к интерфейсу", 2),
    _text(
        "4.2",
        "На экране оплаты должны располагаться кнопки выбора зоны и поле суммы, позволяющие "
        "выполнять функции п. 4.1.",
    ),
    _heading("4.3", "Требования к надежности", 2),
    _text("4.3", "При потере связи с платёжным шлюзом запрос повторяется через минуту."),
    _heading("4.4", "Требования к программным средствам", 2),
    _text("4.4", "Операционная система iOS 15 или более поздняя версия."),
    _heading("4.5", "Требования к маркировке и упаковке", 2),
    _text("4.5", "Не предъявляются."),
    _heading("5", "ТРЕБОВАНИЯ К ДОКУМЕНТАЦИИ", 1),
    _heading("5.1", "Состав документации", 2),
    {
        "kind": "list",
        "section": "5.1",
        "text": "- «Парковка». Техническое задание (ГОСТ 19.201-78);\n"
        "- «Парковка». Программа и методика испытаний (ГОСТ 19.301-79).",
    },
    _heading("8", "ПОРЯДОК КОНТРОЛЯ И ПРИЕМКИ", 1),
    _heading("8.1", "Общие требования к приемке", 2),
    _text(
        "8.1",
        "Работа принимается при условии, что квитанция приходит на почту водителя не позже "
        "чем через минуту после оплаты.",
    ),
    _text("8.1", "Исполнитель: Петров П. П."),
]
PMI = [
    _text("", "ПРИЛОЖЕНИЕ ДЛЯ ОПЛАТЫ ПАРКОВКИ"),
    _text("", "Программа и методика испытаний"),
    _heading("1", "ОБЪЕКТ ИСПЫТАНИЙ", 1),
    _heading("1.1", "Наименование", 2),
    _text("1.1", "Наименование – «Приложение для оплаты парковки»."),
    _heading("6", "МЕТОДЫ ИСПЫТАНИЙ", 1),
    _heading("6.1", "Испытание выполнения требований к интерфейсу", 2),
    _text(
        "6.1",
        "Экран оплаты содержит вкладку истории и список избранных зон; во вкладке истории "
        "открыть последнюю стоянку.",
    ),
    _heading("6.2", "Испытание выполнения требований к составу выполняемых функций", 2),
    _heading("6.2.1", "Продление стоянки", 3),
    _text("6.2.1", "Открыть оплаченную стоянку, нажать «Продлить», проверить время окончания."),
]


def _document(source: Source, title: str, blocks: list[dict]) -> Document:
    document = Document.objects.create(
        source=source,
        path=f"{title}.docx",
        title=title,
        detected_role=read_role(title=title, source_kind=source.kind, blocks=blocks),
    )
    version = DocumentVersion.objects.create(
        document=document,
        number=1,
        sha256=hashlib.sha256(title.encode()).hexdigest(),
        filename=f"{title}.docx",
        status=DocumentVersion.Status.READY,
        parsed={"title": title, "blocks": blocks},
    )
    Document.objects.filter(pk=document.pk).update(current_version=version)
    return document


@pytest.fixture
def product():
    source = Source.objects.create(name="Parking specs", kind=Source.Kind.SPECS)
    return {
        "ТЗ": _document(source, "ТЗ парковки", TZ),
        "ПМИ": _document(source, "Испытания парковки", PMI),
    }


def _sections(ranking) -> list[str]:
    return [t.key[1] for t in ranking.touched]


def test_the_statements_sharing_the_changes_words_are_its_requirements(product):
    corpus = corpus_for(None)
    change = read_terms(
        "Экран оплаты: рядом с полем суммы добавить кнопку выбора способа платежа (карта или СБП)."
    )
    ranking = rank(change, corpus)
    assert ranking.specified
    assert _sections(ranking)[0] == "4.2"
    best = ranking.touched[0]
    shared = {w for m in best.matches.values() for w in m.shared}
    assert {"поле", "кнопка", "сумма"} <= shared
    # The name and the document list are never requirements; "не предъявляются" states none;
    # the purpose and the acceptance criterion are, outside the requirements part too.
    numbers = {r.statement.section.number for r in corpus.requirements}
    assert numbers == {"3.1", "4.1", "4.2", "4.3", "4.4", "8.1"}


def test_a_change_nothing_specifies_is_said_to_be_a_gap(product):
    corpus = corpus_for(None)
    ranking = rank(
        read_terms("Добавить тёмную тему оформления и выбор размера шрифта в профиле."), corpus
    )
    assert not ranking.specified
    # The product's own name says nothing about which requirement a change touches.
    named = rank(read_terms("Переименовать приложение для оплаты парковки."), corpus)
    assert not named.specified


def test_a_test_sharing_the_changes_words_leads_to_the_requirement_it_checks(product):
    # The ТЗ never says "история" or "избранные зоны"; the ПМИ's interface test does, and it
    # checks the interface requirement (titled after it), which names the functions of 4.1.
    corpus = corpus_for(None)
    change = read_terms("Вкладка истории: показывать избранные зоны над списком стоянок.")
    ranking = rank(change, corpus)
    assert ranking.specified
    assert _sections(ranking)[:2] == ["4.2", "4.1"]
    interface, functions = ranking.touched[:2]
    assert [corpus.tests[j].section.number for j in interface.tests] == ["6.1"]
    assert functions.referenced_by == ["4.2"]
    assert [corpus.tests[j].section.number for j, _ in ranking.tests][:1] == ["6.1"]


def test_roles_decide_which_documents_hold_requirements(product):
    # Staff say the ПМИ is the requirements document: its sections become the requirements.
    Document.objects.filter(pk=product["ТЗ"].pk).update(role="other")
    Document.objects.filter(pk=product["ПМИ"].pk).update(role="requirements")
    corpus = corpus_for(None)
    assert {r.loaded.document.pk for r in corpus.requirements} == {product["ПМИ"].pk}
    assert not corpus.tests


def test_a_requirement_stated_outside_the_requirements_part_is_one_the_change_touches(product):
    # The acceptance criterion (8.1) and the purpose (3.1) say what the receipts must do; no
    # section of the requirements part speaks of them.
    corpus = corpus_for(None)
    change = read_terms(
        "Квитанции: отправлять электронную квитанцию на почту водителя сразу после оплаты."
    )
    ranking = rank(change, corpus)
    assert ranking.specified
    assert _sections(ranking)[0] == "8.1"
    assert "3.1" in _sections(ranking) + [t.key[1] for t in ranking.folded]
    acceptance = ranking.touched[0]
    assert {corpus.requirements[i].statement.form for i in acceptance.matches} == {"acceptance"}


def test_a_method_under_a_part_titled_after_the_requirements_leads_to_the_functions_it_lists(
    product,
):
    corpus = corpus_for(None)
    method = next(j for j, t in enumerate(corpus.tests) if t.section.number == "6.2.1")
    links = {
        corpus.requirements[i].statement.id: kind for i, kind in corpus.linked_to(method).items()
    }
    # The functions 4.1 lists, by the part's title; not the interface nor the reliability.
    assert links == {"4.1-1": "part", "4.1-2": "part", "4.1-3": "part"}
    ranking = rank(
        read_terms("Продление: кнопка «Продлить» показывает новое время окончания."), corpus
    )
    functions = next(t for t in ranking.touched if t.key[1] == "4.1")
    assert method in functions.tests


def test_a_section_with_less_evidence_is_kept_folded_not_dropped(product):
    corpus = corpus_for(None)
    change = read_terms(
        "Экран оплаты: поле суммы и кнопки выбора зоны крупнее; при потере связи со шлюзом "
        "показать сообщение."
    )
    ranking = rank(change, corpus)
    assert _sections(ranking)[0] == "4.2"
    assert all(t.confident for t in ranking.touched)
    # The reliability statement shares two of the change's words, the screen's five.
    assert "4.3" in [t.key[1] for t in ranking.folded]
    folded = [t.key[1] for t in ranking.folded]
    assert folded and all(not t.confident for t in ranking.folded)
    assert not set(folded) & set(_sections(ranking))
    best = ranking.touched[0].score
    assert all(t.score < best for t in ranking.folded)
