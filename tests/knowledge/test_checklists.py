"""Checklists end to end: a workbook ingested beside wiki pages on the same topics, then
searched and asked. A question naming one check gets that row, cited by sheet and row."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command

from chat.models import Conversation
from chat.pipeline import answer_now
from tests.conftest import CORPUS, ingest_folder
from tests.knowledge.checklists import ROW_POSTCODE, ROW_SHORT_PASSWORD, checklist_workbook

pytestmark = pytest.mark.django_db

# Wiki pages about the same things (form validation, an online shop): the checklist has to win.
NEIGHBOURS = [
    "prakticheskaya-chast/testirovanie-polei-i-form.md",
    "testirovanie-v-raznykh-sferakh-oblastyakh-testing-different-domains/"
    "testirovanie-internet-magazina-ecommerce.md",
]
HEADER = "| № | Раздел | Проверка | Ожидаемый результат | Статус | Комментарий |"


@pytest.fixture
def checklist_kb(tmp_path: Path) -> dict:
    folder = tmp_path / "qa"
    folder.mkdir()
    (folder / "Чек-лист регистрации и заказа.xlsx").write_bytes(checklist_workbook())
    for page in NEIGHBOURS:
        shutil.copy(CORPUS / "wiki_qa_bible_ru" / page, folder)
    summary = ingest_folder(folder, "Чек-листы", kind="checklists")
    assert summary["failed"] == 0 and summary["ready"] == 3
    return summary


def run_json(command: str, text: str, **options) -> dict:
    out = io.StringIO()
    call_command(command, text, json=True, stdout=out, **options)
    return json.loads(out.getvalue())


def test_a_question_naming_one_check_is_answered_with_that_row_cited_by_sheet_and_row(
    checklist_kb,
):
    result = run_json("ask", "Какое сообщение должно появиться, если пароль короче 8 символов?")
    assert result["refused"] is False
    first = result["sources"][0]
    assert first["document"] == "Чек-лист регистрации и заказа"
    assert first["heading"] == (
        f"Регистрация › Пароль — Лист «Регистрация», строка {ROW_SHORT_PASSWORD}"
    )
    # The quote is the item alone: its section, the header row and its own row.
    lines = first["quote"].splitlines()
    assert lines[0] == "Регистрация › Пароль" and lines[1] == HEADER
    assert lines[3].startswith("| 5 | Пароль | Пароль короче 8 символов |")
    assert "не менее 8 символов" in lines[3] and len(lines) == 4
    # The extractive answer quotes that row under the same citation.
    assert "Лист «Регистрация», строка 9 [1]" in result["answer"]
    assert "Пароль должен содержать не менее 8 символов" in result["answer"]
    assert "Пароль без цифр" not in result["answer"].split("[2]")[0]
    assert first["url"].endswith("#b-5-r1")  # the row's anchor in the document viewer


def test_an_item_under_a_section_title_row_is_cited_by_its_own_row(checklist_kb, bob):
    conversation = Conversation.objects.create(user=bob)
    message = answer_now(
        conversation,
        "Что ожидается при вводе почтового индекса из 5 цифр?",
        user=bob,
        llm=False,
    )
    first = message.sources.order_by("number").first()
    assert first.heading.endswith(f"Лист «Оформление заказа», строка {ROW_POSTCODE}")
    assert first.heading.startswith("Оформление заказа › Доставка")
    assert "Индекс должен состоять из 6 цифр" in first.quote
    assert "Корзина" not in first.quote and "Выбор самовывоза" not in first.quote


def test_a_question_about_a_whole_section_cites_its_rows(checklist_kb):
    result = run_json("ask", "Какие проверки пароля есть в чек-листе регистрации?")
    # Every row of the section names the password alike: no one row is the answer.
    headings = [s["heading"] for s in result["sources"] if s["document"].startswith("Чек-лист")]
    assert "Регистрация › Пароль — Лист «Регистрация», строки 9–12" in headings


def test_search_finds_the_section_table_of_a_named_check(checklist_kb):
    result = run_json("search", "пароль без цифр")
    top = result["results"][0]
    assert top["document"] == "Чек-лист регистрации и заказа"
    assert top["heading_path"] == ["Регистрация", "Пароль"]
    assert top["block_type"] == "test_case"
    assert "| 6 | Пароль | Пароль без цифр |" in top["text"]


def test_the_cited_item_link_opens_the_document_with_its_row_highlighted(
    checklist_kb, client, alice
):
    result = run_json("ask", "Какой статус у проверки пароля без цифр?")
    first = result["sources"][0]
    assert first["heading"].endswith("строка 10")
    client.force_login(alice)
    page = client.get(first["url"]).content.decode()
    assert '<tr id="b-5-r2" class="highlight"><td>6</td>' in page
    assert page.count('class="highlight"') == 1
