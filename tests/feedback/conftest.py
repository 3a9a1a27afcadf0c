"""Rows for feedback tests: documents, answers with their sources, ratings; and a small real
knowledge base (a few pages of the QA wiki) ingested through the real services."""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from chat.models import Conversation, Message, MessageSource
from feedback.models import Rating
from feedback.services import rate_answer
from knowledge.models import Document, DocumentVersion, Source

WIKI_PAGES = [
    "obshee/defekty-i-oshibki.md",
    "obshee/alfa-i-beta-testirovanie-alpha-testing-and-beta-testing.md",
    "obshee/biznes-logika-business-logic.md",
]


def make_document(source: Source, title: str, *, label: str = "v1") -> Document:
    """A document whose current version is ready (no chunks: enough for the journal's rows)."""
    document = Document.objects.create(source=source, path=f"{title}.md", title=title)
    version = DocumentVersion.objects.create(
        document=document,
        number=1,
        label=label,
        sha256=hashlib.sha256(title.encode()).hexdigest(),
        file=f"{title}.md",
        filename=f"{title}.md",
        status=DocumentVersion.Status.READY,
    )
    document.current_version = version
    document.save(update_fields=["current_version"])
    return document


def make_answer(
    user,
    question: str = "Что такое дефект?",
    *,
    outcome: str = "answer",
    answer: str = "Дефект — это несоответствие требованиям [1].",
    documents: list[Document] = (),
    profile=None,
    timings: dict | None = None,
    created_at: datetime | None = None,
    conversation: Conversation | None = None,
) -> Message:
    """A finished message as the answer service stores it, with one source per document."""
    conversation = conversation or Conversation.objects.create(
        user=user, profile=profile, title=question[:120]
    )
    message = Message.objects.create(
        conversation=conversation,
        question=question,
        answer=answer,
        outcome=outcome,
        mode="extractive",
        status=Message.Status.DONE,
        timings=timings or {"rewrite_ms": 1.0, "search_ms": 40.0, "total_ms": 50.0},
    )
    if created_at is not None:
        Message.objects.filter(pk=message.pk).update(created_at=created_at)
        message.refresh_from_db()
    for number, document in enumerate(documents, start=1):
        version = document.current_version
        MessageSource.objects.create(
            message=message,
            number=number,
            document=document,
            version=version,
            title=document.title,
            version_label=version.label if version else "",
            section=f"{number}.1",
            heading=f"{document.title} › Раздел {number}",
            url=f"/documents/{document.pk}/?chunk={number}#c{number}",
            score=0.9 - number / 10,
            cited=number == 1,
        )
    return message


def rate(message: Message, user, value: str, reasons=(), comment: str = "") -> Rating:
    return rate_answer(message, user, value, reasons=list(reasons), comment=comment)


def day(text: str) -> datetime:
    """Noon of a local date: safely inside that day whatever the time zone."""
    return timezone.make_aware(datetime.fromisoformat(f"{text}T12:00:00"))


@pytest.fixture
def wiki(db):
    return Source.objects.create(name="QA wiki", kind=Source.Kind.WIKI)


def corpus_file(relative: str) -> Path:
    return Path(settings.DEMO_CORPUS_DIR) / "wiki_qa_bible_ru" / relative


def ingest_wiki_pages(source: Source, pages=WIKI_PAGES) -> list[Document]:
    """Register and ingest a few real pages of the QA wiki now (real parser, chunker, USE)."""
    from knowledge.ingest.pipeline import ingest_version
    from knowledge.ingest.registration import register_file

    documents = []
    for page in pages:
        registration = register_file(
            source, page, corpus_file(page).read_bytes(), enqueue=False, via="test"
        )
        result = ingest_version(registration.version.pk)
        assert result.status == "ready", result.error
        documents.append(Document.objects.get(pk=registration.document.pk))
    return documents
