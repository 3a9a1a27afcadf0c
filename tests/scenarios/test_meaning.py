"""The guided analysis reads meanings (``scenarios.meaning``): a change said in other words than
the documents reaches the requirement through the sentence closest to it in e5's space (the
second vectors the portal keeps), directly or through the test method that checks it; each
requirement node shows the tie (the change's statement, the document's sentence, the
closeness), and the exports carry it.

A small product of its own (a parking app's ТЗ and ПМИ, written for these tests), ingested
through the pipeline and read by the bundled e5 model as the workers read it; the map is built
by the analysis service as ``manage.py analyse`` builds it."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

import pytest
from django.core.management import call_command
from django.urls import reverse

from knowledge.embedding import E5Embedder
from knowledge.ingest import second
from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.registration import register_file
from knowledge.models import Source
from scenarios.corpus import corpus_for
from scenarios.exports import walk
from scenarios.models import Analysis
from scenarios.relevance import rank
from scenarios.terms import read_terms
from tests.i18n_check import untranslated

pytestmark = pytest.mark.django_db

TZ = """ПРИЛОЖЕНИЕ ДЛЯ ОПЛАТЫ ПАРКОВКИ

Техническое задание

# ВВЕДЕНИЕ

## Наименование программы

Наименование программы – «Приложение для оплаты парковки».

## Краткая характеристика области применения

Водитель оплачивает стоянку банковской картой или через систему быстрых платежей (СБП).

# ТРЕБОВАНИЯ К ПРОГРАММЕ

## Требования к составу выполняемых функций

Клиентское приложение должно реализовывать следующие функции:

- показывать карту парковочных зон;
- оплачивать стоянку банковской картой;
- оплачивать стоянку через систему быстрых платежей;
- продлевать оплаченную стоянку.

## Требования к квитанциям

Квитанция об оплате отправляется на электронную почту водителя.

## Требования к надежности

Программа должна сохранять работоспособность при сбоях внешних систем.

## Требования к программным средствам

Операционная система iOS 15 или более поздняя версия.
"""
PMI = """ПРИЛОЖЕНИЕ ДЛЯ ОПЛАТЫ ПАРКОВКИ

Программа и методика испытаний

# ОБЪЕКТ ИСПЫТАНИЙ

## Наименование

Наименование – «Приложение для оплаты парковки».

# МЕТОДЫ ИСПЫТАНИЙ

## Проверка оплаты в авиарежиме

Во время оплаты перевести телефон в авиарежим, затем выключить авиарежим: оплата завершается без повторного ввода данных.

Проверяется выполнение п. 2.3 технического задания.

## Продление стоянки

Открыть оплаченную стоянку, нажать «Продлить», проверить время окончания.
"""
CARD = "Экран оплаты: добавить оплату банковской картой Мир."
RECEIPT = "Чек после покупки должен приходить на e-mail."
OFFLINE = (
    "Когда при покупке теряется интернет, после восстановления соединения всё должно дойти до "
    "конца без действий пользователя."
)
SBP = "Оплата через СБП: показывать QR-код на экране."


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    return E5Embedder(threads=1)


def _ingest(source: Source, name: str, text: str) -> None:
    registration = register_file(source, name, text.encode(), enqueue=False)
    assert ingest_version(registration.version.pk).status == "ready"


@pytest.fixture
def product(e5):
    source = Source.objects.create(name="Parking specs", kind=Source.Kind.SPECS)
    _ingest(source, "tz.md", TZ)
    _ingest(source, "pmi.md", PMI)
    second.fill_second_vectors(e5)  # as the workers do once a version is ready
    return source


def _analyse(description: str) -> dict:
    out = io.StringIO()
    call_command("analyse", description, json=True, stdout=out)
    return json.loads(out.getvalue())


def _requirements(tree: dict) -> dict[str, dict]:
    return {n["source"]["section"]: n for _, n in walk(tree) if n["kind"] == "requirement"}


def _ties(node: dict) -> list[dict]:
    return [c for c in node["children"] if c["kind"] == "tie"]


def test_a_statement_in_other_words_reaches_the_requirement_closest_in_meaning(product):
    tree = _analyse(f"{CARD} {RECEIPT}")
    found = _requirements(tree)
    assert "2.1" in found  # by its words: «банковский», «карта»
    receipts = found["2.2"]  # no word shared: «чек», «покупка», «e-mail»
    assert receipts["confidence"] == "high"
    tie = _ties(receipts)[0]["tie"]
    assert tie["change"] == RECEIPT
    assert tie["sentence"] == "Квитанция об оплате отправляется на электронную почту водителя"
    assert tie["kind"] == "requirement" and tie["where"] == "2.2"
    assert 0.8 < tie["closeness"] <= 1.0
    assert f"{tie['closeness']:.2f}" in _ties(receipts)[0]["label"]
    assert "close in meaning" in receipts["note"]
    # The words alone do not reach it: the tie is the evidence.
    corpus = corpus_for(None)
    words_only = rank(read_terms(f"{CARD} {RECEIPT}"), corpus)
    assert "2.2" not in {t.key[1] for t in words_only.touched + words_only.folded}


def test_a_test_method_close_in_meaning_leads_to_the_requirement_it_names(product):
    tree = _analyse(f"{CARD} {OFFLINE}")
    reliability = _requirements(tree)["2.3"]  # the method says "п. 2.3 технического задания"
    tie = _ties(reliability)[0]["tie"]
    assert tie["change"] == OFFLINE and tie["kind"] == "test"
    assert tie["where"] == "2.1 Проверка оплаты в авиарежиме"
    assert "авиарежим" in tie["sentence"]
    tests = [n["source"]["title"] for n in reliability["children"] if n["kind"] == "test"]
    assert "Проверка оплаты в авиарежиме" in tests
    corpus = corpus_for(None)
    words_only = rank(read_terms(f"{CARD} {OFFLINE}"), corpus)
    assert "2.3" not in {t.key[1] for t in words_only.touched + words_only.folded}


def test_an_abbreviation_reads_as_the_phrase_the_documents_define_it_by(product):
    # The ТЗ says "системы быстрых платежей (СБП)" once, in its introduction; its function
    # list says the phrase alone.
    tree = _analyse(SBP)
    functions = _requirements(tree)["2.1"]
    shared = functions["why"]["shared"]
    assert {"быстрый", "платеж"} <= set(shared), shared
    assert shared["быстрый"] == "2.1-3"  # «оплачивать стоянку через систему быстрых платежей»
    assert not {"быстрый", "платеж"} & set(read_terms(SBP).weights)  # not the change's words


def test_without_second_vectors_the_map_reads_words_alone(e5):
    source = Source.objects.create(name="Parking specs", kind=Source.Kind.SPECS)
    _ingest(source, "tz.md", TZ)
    _ingest(source, "pmi.md", PMI)  # the e5 vectors are not made yet
    tree = _analyse(f"{CARD} {RECEIPT}")
    assert "2.1" in _requirements(tree) and "2.2" not in _requirements(tree)
    assert not [n for _, n in walk(tree) if n["kind"] == "tie"]


def test_the_page_and_every_export_carry_the_ties(product, client, bob):
    client.force_login(bob)
    russian = {"HTTP_ACCEPT_LANGUAGE": "ru"}
    response = client.post(reverse("scenarios"), {"task": f"{CARD} {RECEIPT}"}, **russian)
    analysis = Analysis.objects.get(user=bob)
    while analysis.current_question:
        client.post(reverse("analysis_answer", args=[analysis.pk]), {"answer": ""}, **russian)
        analysis.refresh_from_db()
    page = client.get(response["Location"], **russian).content.decode()
    assert "Близко по смыслу:" in page
    assert "«Чек после покупки должен приходить на e-mail.»" in page
    assert untranslated(page) == []  # the ties' words are the interface's language

    def export(fmt: str) -> str:
        url = reverse("analysis_export", args=[analysis.pk, fmt])
        return client.get(url).content.decode()

    tie = "«Чек после покупки должен приходить на e-mail.» ≈ «Квитанция об оплате"
    assert tie in export("md")
    opml = ET.fromstring(export("opml").encode())
    tied = [o for o in opml.iter("outline") if o.get("_closeness")]
    assert tied and any(tie in o.get("text") for o in tied)
    freemind = ET.fromstring(export("mm").encode())
    nodes = [n for n in freemind.iter("node") if tie in n.get("TEXT")]
    assert nodes and nodes[0].find("attribute").get("NAME") == "closeness"
