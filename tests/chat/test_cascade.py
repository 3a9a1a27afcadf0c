"""The cascade in answers: ``ask --json`` and the chat page say which tier (source priority)
answered and from which source, as ``search --json`` says the tier."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from chat.models import Message
from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.registration import register_file
from knowledge.models import Source

VPN = """# Удалённый доступ

Чтобы подключиться к VPN из дома, установите клиент OpenVPN, импортируйте профиль
company.ovpn из портала самообслуживания и войдите с корпоративной учётной записью.
"""
BILLING = """# Перезапуск биллинга

Сервис биллинга перезапускается командой systemctl restart billing на узле app-3; после
перезапуска дежурный проверяет очередь платежей на панели мониторинга.
"""


@pytest.fixture
def tiers(db):
    wiki = Source.objects.create(name="Team wiki", kind="wiki", priority=1)
    tracker = Source.objects.create(name="Closed tickets", kind="tracker", priority=2)
    for source, name, text in [(wiki, "vpn.md", VPN), (tracker, "OPS-17.md", BILLING)]:
        ingest_version(register_file(source, name, text.encode(), enqueue=False).version.pk)
    return wiki, tracker


def ask(question: str, *args: str) -> dict:
    out = io.StringIO()
    call_command("ask", question, "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def search_tier(query: str) -> int | None:
    out = io.StringIO()
    call_command("search", query, "--json", stdout=out)
    return json.loads(out.getvalue())["tier"]


def test_ask_json_says_which_tier_and_source_answered(tiers):
    first = ask("Как подключиться к VPN из дома?")
    assert first["refused"] is False
    assert first["tier"] == 1 == search_tier("Как подключиться к VPN из дома?")
    assert first["answered_from"] == [{"source": "Team wiki", "priority": 1}]

    second = ask("Какой командой перезапустить сервис биллинга?")
    assert second["refused"] is False
    assert second["tier"] == 2 == search_tier("Какой командой перезапустить сервис биллинга?")
    assert second["answered_from"] == [{"source": "Closed tickets", "priority": 2}]


def test_a_refusal_names_no_tier(tiers):
    refused = ask("Какой рецепт у борща с фасолью?")
    assert refused["refused"] is True
    assert refused["tier"] is None and refused["answered_from"] == []


def test_one_pass_over_every_source_has_no_tier_but_names_the_source(tiers, ranking_weights):
    ranking_weights(hits={"cascade": False})
    answer = ask("Какой командой перезапустить сервис биллинга?")
    assert answer["tier"] is None
    assert answer["answered_from"] == [{"source": "Closed tickets", "priority": 2}]


def test_the_chat_page_shows_the_tier_discreetly(client, bob, tiers):
    answer = ask("Какой командой перезапустить сервис биллинга?", "--user", "bob")
    message = Message.objects.get(pk=answer["id"])
    client.force_login(bob)
    html = client.get(f"/chat/{message.conversation_id}/").content.decode()
    assert '<span class="tier">· answered from tier 2: Closed tickets</span>' in html
