"""The JSON shape of an answer (manage.py ask --json, POST /api/v1/ask)."""

from __future__ import annotations

from django.conf import settings

from chat.models import Message
from chat.present.presenting import answered_from


def message_json(message: Message, *, base_url: str = "") -> dict:
    tiles = message.tiles or []
    # A question back: a document to choose ("clarify") or a version that exists ("ask").
    clarification = [t for t in tiles if t.get("kind") in ("clarify", "ask")]
    reformulations = [t for t in tiles if t.get("kind") == "reformulate"]
    sources = list(message.sources.all())
    return {
        "id": message.pk,
        "question": message.question,
        "retrieval_query": message.retrieval_query,
        "answer": message.answer,
        "outcome": message.outcome,
        "refused": message.outcome == Message.Outcome.REFUSAL,
        "partial": message.outcome == Message.Outcome.PARTIAL,
        "clarification": clarification or None,
        "reformulations": reformulations,
        "mode": message.mode,
        "answerability": message.answerability or None,
        "notice": message.notice,
        "redactions": message.redactions,
        # A prohibited request refused before any search: the rule and what matched.
        "moderation": message.moderation or None,
        "topics": message.topics,
        "topic_kind": message.topic_kind,
        "sources": [
            {
                "number": s.number,
                "document": s.title,
                "document_id": s.document_id,
                "version": s.version_label,
                "version_id": s.version_id,
                "section": s.section,
                "heading": s.heading,
                "quote": s.quote,
                "url": base_url + s.url,
                "score": round(s.score, 4),
                "cited": s.cited,
                "note": s.note,
            }
            for s in sources
        ],
        # The cascade: the tier (source priority) that answered, as `search --json` reports
        # it (null: one pass over every source), and the sources the answer came from.
        "tier": message.tier,
        "answered_from": answered_from(sources),
        "models": {
            "embedding": message.embedding_model,
            "reranker": message.reranker_model or None,
            "llm": message.llm_model or None,
        },
        "timings": message.timings,
        "tokens": {"prompt": message.prompt_tokens, "completion": message.completion_tokens},
        "llm_configured": bool(settings.LLM_BASE_URL),
    }
