"""Staff see only what they may read: a staff member who is not a reader of a restricted source
gets every page about it (journal, journal entry, feedback page and export, regression set,
topics) without its text; upload, a new source by name and reindex need the right to read (and
upload to write) the source; a test analysis re-checks its reader's access when opened.

alice the superuser, bob a reader of the restricted "Board minutes", carol staff outside it.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from chat.models import Conversation, Message
from chat.pipeline import answer_now
from evaluation.regression import case_from_message
from feedback.services import rate_answer
from feedback.tasks import assign_topics
from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.registration import register_file
from knowledge.models import Document, DocumentVersion, Source
from scenarios.models import Analysis

pytestmark = pytest.mark.django_db

SECRET = "Совет директоров утвердил бюджет отдела тестирования: сорок два миллиона рублей."
QUESTION = "Какой бюджет отдела тестирования утвердил совет директоров?"
HIDDEN = "about a source you may not read"


@pytest.fixture
def carol(django_user_model):
    return django_user_model.objects.create_user("carol", "carol@example.com", "x", is_staff=True)


@pytest.fixture
def board(bob):
    source = Source.objects.create(name="Board minutes", is_public=True, restricted=True)
    source.readers.add(bob)
    version = register_file(source, "minutes.txt", SECRET.encode(), enqueue=False).version
    ingest_version(version.pk)
    return source


@pytest.fixture
def asked(board, bob):
    """bob's answered question citing the board's minutes, rated down, in the regression set."""
    conversation = Conversation.objects.create(user=bob)
    message = answer_now(conversation, QUESTION, user=bob, llm=None)
    assert message.sources.filter(document__source=board).exists(), message.answer
    assign_topics(message.pk)  # the feedback task the answer queues after its commit
    rate_answer(message, bob, "down", reasons=["incomplete"], comment="")
    return message


def _page(client, url: str, **params) -> str:
    response = client.get(url, params)
    assert response.status_code == 200, (url, response.status_code)
    return response.content.decode()


def test_the_journal_and_its_entry_say_a_turn_is_about_an_unreadable_source_without_its_text(
    client, alice, carol, asked
):
    client.force_login(carol)
    journal = _page(client, "/journal/")
    assert HIDDEN in journal
    for text in ("сорок два миллиона", "Какой бюджет", "Board minutes"):
        assert text not in journal
    assert "сорок два" not in _page(client, "/journal/", q="сорок")  # no search by its text
    entry = _page(client, f"/journal/{asked.pk}/")
    assert HIDDEN in entry and "сорок два миллиона" not in entry and "Board minutes" not in entry
    assert "Какой бюджет" not in entry
    client.force_login(alice)  # a superuser reads everything
    assert "сорок два миллиона" in _page(client, f"/journal/{asked.pk}/")
    assert "Board minutes" in _page(client, "/journal/")


def test_the_feedback_page_its_export_and_the_topics_leave_the_restricted_text_out(
    client, alice, carol, asked
):
    client.force_login(carol)
    page = _page(client, "/feedback/")
    assert HIDDEN in page
    for text in ("сорок два миллиона", "Какой бюджет", "Board minutes", "minutes.txt"):
        assert text not in page, text
    rating = asked.ratings.get()
    export = client.post("/feedback/export/", {"rating": [rating.pk]})
    body = export.content.decode()
    assert "сорок два" not in body and "Board minutes" not in body and "Какой бюджет" not in body
    period = client.post("/feedback/export/", {"scope": "period"}).content.decode()
    assert "сорок два" not in period and "Board minutes" not in period
    client.force_login(alice)
    assert "Board minutes" in _page(client, "/feedback/")
    lines = client.post("/feedback/export/", {"rating": [rating.pk]}).content.decode()
    assert "сорок два" in lines


def test_the_regression_set_shows_a_case_about_an_unreadable_source_without_its_text(
    client, alice, carol, asked
):
    case_from_message(asked, user=alice, behaviour="answer", expected_answer="42 миллиона")
    client.force_login(carol)
    cases = _page(client, "/evaluation/cases/")
    assert HIDDEN in cases
    assert "Какой бюджет" not in cases and "42 миллиона" not in cases
    assert "Board minutes" not in cases
    client.force_login(alice)
    assert "Какой бюджет" in _page(client, "/evaluation/cases/")


def test_staff_cannot_upload_into_or_reindex_a_source_they_may_not_read(client, carol, board):
    document = Document.objects.get(source=board)
    before = DocumentVersion.objects.filter(document=document).count()
    client.force_login(carol)
    forged = SimpleUploadedFile("minutes.txt", b"Budget: zero.")
    response = client.post("/documents/upload/", {"files": [forged], "source": board.pk})
    assert response.status_code in (302, 403, 404)
    forged = SimpleUploadedFile("minutes.txt", b"Budget: zero.")
    client.post("/documents/upload/", {"files": [forged], "new_source": "board MINUTES "})
    client.post("/documents/upload/", {"files": [forged], "new_source": "Board minutes"})
    assert DocumentVersion.objects.filter(document=document).count() == before
    assert client.post(f"/documents/{document.pk}/reindex/").status_code == 404
    assert client.post(f"/sources/{board.pk}/reindex/").status_code == 404
    client.post("/documents/reindex/")  # everything carol may read: not the board
    from portal.models import AuditEvent

    reindex = AuditEvent.objects.filter(action="reindex", actor=carol).last()
    assert reindex is not None and reindex.detail.get("versions", 0) == 0
    # A new source by a name nobody uses is still carol's to create.
    notes = SimpleUploadedFile("notes.md", b"# Notes\n\nRelease on Friday.\n")
    client.post("/documents/upload/", {"files": [notes], "new_source": "Carol's notes"})
    assert Source.objects.filter(name="Carol's notes").exists()


LOOK_ALIKES = [
    "Board\u00a0minutes",  # a no-break space
    "Board minutes\u200b",  # a zero-width space
    "\u0412oard minutes",  # a Cyrillic В
    "Вoаrd mіnutes",  # Cyrillic В, а, і
    "Board\u3164minutes",  # HANGUL FILLER for the space
    "ＢＯＡＲＤ  MINUTES",  # fullwidth, two spaces
    # Issue 50: Unicode's look-alikes (UTS #39), and punctuation around or between the words.
    "Board minutes.",
    "Board-minutes",
    "Βoard minutes",  # a Greek capital beta
    "\u13f4oard minutes",  # CHEROKEE LETTER YV for the B
    "Board mіnutеs",  # Cyrillic і and е
]


@pytest.mark.parametrize("name", LOOK_ALIKES)
def test_a_source_named_like_an_existing_one_is_that_source(client, carol, alice, board, name):
    """The upload form's new source, the admin and the command line: a name that only looks
    different from a restricted source's is not a new source beside it."""
    from django.core.management import call_command
    from django.core.management.base import CommandError

    client.force_login(carol)
    forged = SimpleUploadedFile("minutes.txt", b"Budget: zero.")
    client.post("/documents/upload/", {"files": [forged], "new_source": name})
    assert list(Source.objects.values_list("name", flat=True)) == ["Board minutes"]
    assert DocumentVersion.objects.filter(document__source=board).count() == 1
    with pytest.raises(CommandError, match="looks the same"):
        call_command("source", "add", name, "--kind=folder", "--url=/srv/wiki")
    client.force_login(alice)
    response = client.post(
        "/admin/knowledge/source/add/",
        {"name": name, "kind": "uploads", "priority": 1, "history_depth": 1},
    )
    assert response.status_code == 200 and "looks the same" in response.content.decode()
    assert Source.objects.count() == 1


def test_a_test_analysis_rechecks_its_readers_access_when_opened_and_exported(client, bob, board):
    document = Document.objects.get(source=board)
    url = f"/documents/{document.pk}/?version=1&chunk=1#chunk-1"
    tree = {
        "label": "Бюджет",
        "kind": "root",
        "url": "",
        "note": "",
        "children": [
            {
                "label": "Requirements",
                "kind": "group",
                "url": "",
                "note": "",
                "children": [
                    {
                        "label": "minutes · сорок два миллиона",
                        "kind": "requirement",
                        "url": url,
                        "note": "",
                        "children": [
                            {
                                "label": "Проверить сорок два",
                                "kind": "check",
                                "url": "",
                                "note": "",
                                "children": [],
                            }
                        ],
                    }
                ],
            }
        ],
    }
    analysis = Analysis.objects.create(
        user=bob, title="Бюджет", description="бюджет", status="ready", tree=tree
    )
    client.force_login(bob)
    assert "сорок два миллиона" in _page(client, f"/scenarios/analyses/{analysis.pk}/")
    board.readers.remove(bob)
    page = _page(client, f"/scenarios/analyses/{analysis.pk}/")
    assert "сорок два" not in page and "no longer read" in page
    for fmt in ("md", "opml", "mm"):
        body = client.get(f"/scenarios/analyses/{analysis.pk}/export.{fmt}").content.decode()
        assert "сорок два" not in body and f"/documents/{document.pk}/" not in body, fmt


def test_a_superuser_and_a_reader_still_see_everything_they_may_read(client, alice, bob, asked):
    client.force_login(alice)
    assert HIDDEN not in _page(client, "/journal/")
    assert json.dumps("Board minutes")[1:-1] in _page(client, "/feedback/")
    assert Message.objects.readable_by(bob).filter(pk=asked.pk).exists()


# --- the third pass: tiles, evaluation runs and the audit log follow the same rule -----------

MEANINGS = ("Протокол испытаний", "Сетевой протокол")


@pytest.fixture
def glossary(bob):
    """A restricted source of two documents about different things named "протокол": bob's
    "Что такое протокол?" is asked back with a tile for each, and a question near them but
    answered by neither is refused with their titles as reformulation tiles."""
    from tests.chat.test_policy import _two_meanings

    source = _two_meanings("Closed glossary")
    source.restricted = True
    source.save()
    source.readers.add(bob)
    return source


def test_clarification_and_refusal_tiles_of_an_unreadable_source_are_hidden_from_staff(
    client, alice, bob, carol, glossary
):
    asked = answer_now(Conversation.objects.create(user=bob), "Что такое протокол?", user=bob)
    refused = answer_now(
        Conversation.objects.create(user=bob), "протокол совещания квазаров", user=bob
    )
    assert asked.outcome == Message.Outcome.CLARIFICATION, asked.answer
    assert refused.outcome == Message.Outcome.REFUSAL and refused.tiles, refused.answer
    for message in (asked, refused):
        assign_topics(message.pk)
    asked.refresh_from_db()
    assert asked.topics  # the candidates' topics: they name the restricted source
    client.force_login(carol)
    pages = {
        "journal": _page(client, "/journal/"),
        "topic filter": _page(client, "/journal/", topic=asked.topics[0]),
        "clarification": _page(client, f"/journal/{asked.pk}/"),
        "refusal": _page(client, f"/journal/{refused.pk}/"),
        "feedback": _page(client, "/feedback/"),
    }
    for where, page in pages.items():
        for text in (*MEANINGS, "Closed glossary", json.dumps("Closed glossary")[1:-1]):
            assert text not in page, (where, text)
    assert HIDDEN in pages["clarification"] and HIDDEN in pages["refusal"]
    client.force_login(alice)  # a superuser reads everything
    assert all(title in _page(client, f"/journal/{asked.pk}/") for title in MEANINGS)
    assert "Closed glossary" in _page(client, "/journal/")


def test_staff_cannot_put_an_unreadable_turn_into_the_regression_set_or_switch_its_case(
    client, alice, carol, asked
):
    from evaluation.models import RegressionCase

    client.force_login(carol)
    response = client.post(f"/evaluation/from-message/{asked.pk}/", {"behaviour": "answer"})
    assert response.status_code == 404 and not RegressionCase.objects.exists()
    case = case_from_message(asked, user=alice, behaviour="answer", expected_answer="")
    assert client.post(f"/evaluation/cases/{case.pk}/toggle/").status_code == 404
    case.refresh_from_db()
    assert case.active
    client.force_login(alice)
    assert client.post(f"/evaluation/cases/{case.pk}/toggle/").status_code == 302


def test_an_evaluation_run_as_a_reader_shows_its_answers_only_to_readers(
    client, alice, carol, bob, board, tmp_path
):
    """A staff member who may not read the board runs no risk of seeing it on the run pages
    however the run was made: here ``eval --user bob`` over a set with the board's question."""
    from django.core.management import call_command

    from evaluation.models import EvalRun

    questions = tmp_path / "set.jsonl"
    cases = [
        {"id": "board-1", "group": "answerable", "question": QUESTION,
         "gold_docs": ["Board minutes/minutes.txt"]},
        {"id": "free-1", "group": "out_of_domain", "question": "Кто выиграл чемпионат мира?"},
    ]  # fmt: skip
    questions.write_text("\n".join(json.dumps(c, ensure_ascii=False) for c in cases) + "\n")
    for _ in range(2):
        call_command("eval", str(questions), "--user", "bob", stdout=io.StringIO())
    first, second = EvalRun.objects.order_by("pk")
    client.force_login(carol)
    pages = [
        _page(client, f"/evaluation/runs/{second.pk}/"),
        _page(client, f"/evaluation/runs/{second.pk}/", q="бюджет"),
        _page(client, "/evaluation/compare/", a=first.pk, b=second.pk, show="all"),
    ]
    for page in pages:
        for text in ("сорок два", "Какой бюджет", "Board minutes", "minutes"):
            assert text not in page, text
    assert "A question about a source you may not read" in pages[0]
    assert "board-1" in pages[0] and "free-1" in pages[0]  # each row, its outcome, no text
    client.force_login(alice)
    assert "Какой бюджет" in _page(client, f"/evaluation/runs/{second.pk}/")


def test_the_audit_log_shows_events_about_an_unreadable_source_without_their_details(
    client, alice, carol, board
):
    document = Document.objects.get(source=board)
    client.force_login(alice)
    plan = SimpleUploadedFile("merger-plan-2027.md", b"# Merger\n\nWe buy the competitor.\n")
    client.post("/documents/upload/", {"files": [plan], "source": board.pk})
    client.post(f"/documents/{document.pk}/reindex/")
    client.post(f"/documents/{document.pk}/role/", {"role": "knowledge"})
    client.get("/documents/")  # alice reads her own notices of those
    client.force_login(carol)
    page = _page(client, "/audit/")
    searched = _page(client, "/audit/", q="Board")
    csv = client.get("/audit/", {"format": "csv"}).content.decode()
    for text in ("merger-plan-2027", "Board minutes", "minutes"):
        assert text not in page and text not in searched and text not in csv, text
    assert "About a source you may not read" in page and "upload" in page
    client.force_login(alice)
    assert "merger-plan-2027" in _page(client, "/audit/")
