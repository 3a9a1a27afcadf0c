"""How an answer is shown: citations become links in text only, never inside an attribute."""

from __future__ import annotations

import pytest

from chat.models import Message, MessageSource
from chat.present.presenting import answer_html

pytestmark = pytest.mark.django_db


def test_a_citation_inside_an_attribute_is_left_alone(conversation):
    message = Message.objects.create(
        conversation=conversation,
        question="q",
        answer="```[1]\nrestart billing\n```\n\nСм. [1].",
        status=Message.Status.DONE,
    )
    source = MessageSource.objects.create(
        message=message, number=1, title="Runbook", heading="Restart", url="/documents/1/"
    )
    html = answer_html(message, [source])
    assert html.count('<a class="cite"') == 1
    assert 'class="language-[1]"' in html or "language-" not in html
    assert "language-<a" not in html
    assert html.rstrip().endswith('title="Runbook — Restart">[1]</a>.</p>')


def test_an_old_answer_hides_what_its_reader_may_no_longer_read(client, bob):
    from chat.models import Conversation
    from chat.pipeline import answer_now
    from knowledge.ingest.pipeline import ingest_version
    from knowledge.ingest.registration import register_file
    from knowledge.models import Source

    source = Source.objects.create(name="Board", is_public=False)
    source.readers.add(bob)
    text = "Сервис биллинга перезапускается командой systemctl restart billing на узле app-3."
    ingest_version(register_file(source, "runbook.txt", text.encode(), enqueue=False).version.pk)
    conversation = Conversation.objects.create(user=bob)
    message = answer_now(conversation, "Как перезапустить сервис биллинга?", user=bob, llm=None)
    assert message.sources.exists()
    client.force_login(bob)
    page = client.get(f"/chat/{conversation.pk}/").content.decode()
    assert "systemctl restart billing" in page

    source.readers.remove(bob)
    page = client.get(f"/chat/{conversation.pk}/", HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert "systemctl restart billing" not in page
    assert "больше нет доступа" in page  # the note is in the interface's language
    page = client.get(f"/chat/{conversation.pk}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "systemctl restart billing" not in page
    assert "you may no longer read" in page


def test_a_quoted_table_row_shows_its_cells_line_breaks_as_spaces_not_as_br(client, bob):
    from bs4 import BeautifulSoup

    from chat.models import Conversation

    conversation = Conversation.objects.create(user=bob)
    message = Message.objects.create(
        conversation=conversation, question="q", answer="a [1]", status=Message.Status.DONE
    )
    MessageSource.objects.create(
        message=message,
        number=1,
        title="Alpha and Beta",
        url="/documents/1/",
        quote="| Alpha | Beta |\n|---|---|\n| Entry:<br>- tests ready | Entry:<br>- users chosen |",
        cited=True,
    )
    client.force_login(bob)
    page = client.get(f"/chat/{conversation.pk}/").content.decode()
    quote = BeautifulSoup(page, "html.parser").select_one(".sources blockquote.quote")
    assert "<br>" not in quote.get_text()
    assert "| Entry: - tests ready | Entry: - users chosen |" in quote.get_text()
