"""Topics on every dialog turn: the documents' topics (source › section) for answers, the
nearest cluster of refused questions for refusals, a noise bucket for empty or nonsense
questions; the backfill command; the journal filters by topic."""

from __future__ import annotations

import io
import json

import pytest
import redis
from django.core.management import call_command

from chat.models import Conversation, Message
from chat.pipeline import answer_now
from feedback.gaps import content_gaps
from feedback.tagging import document_topics, is_noise, topic_of
from feedback.tasks import assign_topics
from knowledge.models import Document, Source
from tests.feedback.conftest import make_answer, make_document

pytestmark = pytest.mark.django_db

NONSENSE = [
    "???",
    "123 456",
    "фывапролдж",
    "asdfgh",
    "ааааааа",
    "хахаха",
    "привет",
    "ок",
    "qwerty йцукен",
]
QUESTIONS = ["SQL?", "ПМИ", "Jenkins", "Как приготовить борщ?", "тестирование персональных данных"]


def ask(user, question: str) -> Message:
    """Answer, then name the turn's topics as the worker does after the answer's commit."""
    message = answer_now(Conversation.objects.create(user=user), question, user=user, llm=None)
    assign_topics(message.pk)
    message.refresh_from_db()
    return message


def test_an_answer_queues_the_naming_of_its_topics_after_its_commit(
    demo_kb, bob, django_capture_on_commit_callbacks, settings
):
    queue = redis.Redis.from_url(settings.REDIS_URL)
    queue.delete("default")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        message = answer_now(
            Conversation.objects.create(user=bob), "Что такое верификация?", user=bob, llm=None
        )
    # Stored without topics: naming them is not the answer's work.
    assert message.topic_kind == Message.TopicKind.NONE and message.topics == []
    assert len(callbacks) == 1
    callbacks[0]()
    [raw] = queue.lrange("default", 0, -1)
    envelope = json.loads(raw)
    assert envelope["headers"]["task"] == "feedback.assign_topics"
    assert envelope["headers"]["argsrepr"] == f"({message.pk},)"
    queue.delete("default")


def test_a_documents_topic_is_its_source_and_section():
    assert (
        topic_of("QA Bible", "wiki", "obshee/defekty.md", "Дефекты", "Общее") == "QA Bible › Общее"
    )
    assert topic_of("QA Bible", "wiki", "test-dizain/x.md", "X") == "QA Bible › test-dizain"
    assert topic_of("QA Bible", "wiki", "README.md", "Введение") == "QA Bible"
    assert topic_of("Specs", "specs", "ТЗ.docx", "ТЗ") == "Specs › ТЗ"
    assert topic_of("Tickets", "tracker", "SUP-12", "SUP-12: crash") == "Tickets"


def test_folder_topics_are_named_by_the_folders_index_page(db):
    wiki = Source.objects.create(name="Wiki", kind="wiki")
    index = Document.objects.create(source=wiki, path="obshee/README.md", title="Общее")
    page = Document.objects.create(source=wiki, path="obshee/defekty.md", title="Дефекты")
    loose = Document.objects.create(source=wiki, path="mobile/ios.md", title="iOS")
    assert document_topics([index.pk, page.pk, loose.pk]) == {
        index.pk: "Wiki › Общее",
        page.pk: "Wiki › Общее",
        loose.pk: "Wiki › mobile",
    }


@pytest.mark.parametrize("question", NONSENSE)
def test_empty_or_nonsense_questions_are_noise(question):
    assert is_noise(question)


@pytest.mark.parametrize("question", QUESTIONS)
def test_short_and_out_of_domain_questions_are_not_noise(question):
    assert not is_noise(question)


def test_an_answer_gets_the_topics_of_the_documents_it_cites(demo_kb, bob):
    message = ask(bob, "Что такое верификация и валидация?")
    assert message.outcome in ("answer", "partial")
    assert message.topic_kind == Message.TopicKind.DOCUMENTS
    assert message.topics[0] == "QA Bible › Общее"
    cited = message.sources.filter(cited=True).values_list("document_id", flat=True)
    assert set(message.topics) <= set(document_topics(cited).values())

    spec = ask(bob, "Какие требования к надёжности приложения указаны в ТЗ?")
    assert spec.topics and spec.topics[0].startswith("HSE app specifications › ")


def test_refused_questions_join_the_nearest_cluster_and_nonsense_lands_in_noise(demo_kb, bob):
    first = ask(bob, "Как испечь пышные оладьи на кефире?")
    second = ask(bob, "Как испечь оладьи на кефире?")
    other = ask(bob, "Кто выиграл чемпионат мира по футболу 2018 года?")
    assert [m.outcome for m in (first, second, other)] == ["refusal"] * 3
    assert first.topic_kind == Message.TopicKind.GAP
    assert first.topics == ["Как испечь пышные оладьи на кефире?"]
    assert second.topics == first.topics  # the nearest cluster
    assert other.topics == ["Кто выиграл чемпионат мира по футболу 2018 года?"]  # its own

    noise = [ask(bob, q) for q in ("фывапролдж", "???", "asdfgh")]
    assert {m.outcome for m in noise} == {"refusal"}
    assert {m.topic_kind for m in noise} == {Message.TopicKind.NOISE}
    assert all(m.topics == [] for m in noise)

    gaps = content_gaps(Message.objects.all())
    asked = [q for topic in gaps for q, _ in topic.questions]
    assert "Как испечь пышные оладьи на кефире?" in asked
    assert not {"фывапролдж", "???", "asdfgh"} & set(asked)  # counted apart, not as gaps


def test_the_topics_command_tags_turns_stored_before_topics(db, bob):
    wiki = Source.objects.create(name="QA wiki", kind="wiki")
    Document.objects.create(source=wiki, path="obshee/README.md", title="Общее")
    page = make_document(wiki, "Дефекты")
    page.path = "obshee/defekty.md"
    page.save()
    answered = make_answer(bob, "Что такое дефект?", documents=[page])
    refused = [
        make_answer(bob, q, outcome="refusal", answer="нет ответа")
        for q in ("Как оформить отпуск?", "Как оформить отпуск в компании?", "йцукен")
    ]
    assert Message.objects.filter(topic_kind="").count() == 4

    out = io.StringIO()
    call_command("topics", json=True, stdout=out)
    counts = json.loads(out.getvalue())
    assert counts == {"documents": 1, "gap": 2, "noise": 1, "clusters": 1}
    answered.refresh_from_db()
    assert answered.topics == ["QA wiki › Общее"]
    labels = {m.question: m.topics for m in Message.objects.filter(pk__in=[r.pk for r in refused])}
    assert labels["йцукен"] == []
    assert labels["Как оформить отпуск?"] == labels["Как оформить отпуск в компании?"]
    assert len(labels["Как оформить отпуск?"]) == 1

    out = io.StringIO()
    call_command("topics", json=True, stdout=out)
    assert json.loads(out.getvalue()) == {}  # nothing left untagged


def test_the_journal_filters_by_topic_and_topic_kind(client, alice, bob):
    wiki = Source.objects.create(name="QA wiki", kind="wiki")
    specs = Source.objects.create(name="Specs", kind="specs")
    defects = make_document(wiki, "Дефекты")
    tz = make_document(specs, "ТЗ")
    make_answer(bob, "Что такое дефект?", documents=[defects])
    make_answer(bob, "Что требует ТЗ?", documents=[tz])
    make_answer(bob, "фывапролдж", outcome="refusal", answer="нет ответа")
    call_command("topics", stdout=io.StringIO())

    client.force_login(alice)
    page = client.get("/journal/").content.decode()
    assert '<option value="QA wiki">' in page and '<option value="Specs › ТЗ">' in page
    filtered = client.get("/journal/", {"topic": "Specs › ТЗ"}).content.decode()
    assert "Что требует ТЗ?" in filtered
    assert "Что такое дефект?" not in filtered and "фывапролдж" not in filtered
    partial = client.get("/journal/", {"topic": "QA wiki"}, HTTP_HX_REQUEST="true")
    assert "Что такое дефект?" in partial.content.decode()
    assert "Что требует ТЗ?" not in partial.content.decode()
    assert "<html" not in partial.content.decode()
    noise = client.get("/journal/", {"topic_kind": "noise"}).content.decode()
    assert "фывапролдж" in noise and "Что такое дефект?" not in noise
