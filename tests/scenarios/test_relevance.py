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
    _heading("6.2", "Продление стоянки", 2),
    _text("6.2", "Открыть оплаченную стоянку, нажать «Продлить», проверить время окончания."),
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
    # The title and the document list are never requirements; "не предъявляются" states none.
    numbers = {r.statement.section.number for r in corpus.requirements}
    assert numbers == {"4.1", "4.2", "4.3", "4.4"}


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
