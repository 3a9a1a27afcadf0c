"""How an answer is shown: citations become links in text only, never inside an attribute."""

from __future__ import annotations

import pytest

from chat.models import Message, MessageSource
from chat.presenting import answer_html

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
