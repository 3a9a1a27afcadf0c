"""How a message looks on the page: Markdown rendered and sanitised, citations as links."""

from __future__ import annotations

import re

from django.utils.html import escape
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from chat.answer.extractive import section_within
from chat.models import Message
from knowledge.models import Document
from portal.markdown import render_markdown

_CITE = re.compile(r"\[(\d{1,2})\]")
_TAG = re.compile(r"(<[^>]*>)")
MODE_LABELS = {
    "extractive": gettext_lazy("quotes from the documents, no language model"),
    "llm": gettext_lazy("generated from the sources"),
    "diff": gettext_lazy("from the version comparison"),
}


def answer_html(message: Message, sources: list) -> str:
    """The answer as safe HTML; [n] become links to the cited chunk in the document viewer."""
    html = render_markdown(message.answer)
    by_number = {s.number: s for s in sources}

    def link(match: re.Match[str]) -> str:
        source = by_number.get(int(match.group(1)))
        if source is None:
            return match.group(0)
        section = section_within(source.title, source.heading)
        title = escape(f"{source.title} — {section}" if section else source.title)
        return f'<a class="cite" href="{escape(source.url)}" title="{title}">[{source.number}]</a>'

    # Only in text between tags: a "[1]" inside an attribute (a code block's class, a link's
    # title) must stay as it is, or the link would be written into the attribute.
    parts = _TAG.split(html)
    return "".join(part if part.startswith("<") else _CITE.sub(link, part) for part in parts)


# In the interface's language (it replaces the answer, it is not the answer).
REVOKED_NOTE = gettext_lazy(
    "This answer quoted documents you may no longer read, so it is hidden. "
    "Ask the question again to get an answer from the documents you can read."
)


def readable_sources(message: Message, sources: list) -> tuple[list, bool]:
    """The sources the asker may still read (access is checked again on every view), and
    whether any was taken away."""
    documents = {s.document_id for s in sources if s.document_id}
    if not documents:
        return sources, False
    reader = message.conversation.user
    allowed = set(
        Document.objects.visible_to(reader).filter(pk__in=documents).values_list("pk", flat=True)
    )
    kept = [s for s in sources if s.document_id is None or s.document_id in allowed]
    return kept, len(kept) < len(sources)


def answered_from(sources: list) -> list[dict]:
    """The knowledge sources (name, cascade priority) of the documents an answer cites (of all
    its sources when it cites none), the first cited first."""
    cited = [s for s in sources if s.cited] or sources
    ids = {s.document_id for s in cited if s.document_id}
    rows = Document.objects.filter(pk__in=ids).values_list("pk", "source__name", "source__priority")
    owners = {pk: (name, priority) for pk, name, priority in rows}
    found: list[dict] = []
    for s in cited:
        owner = owners.get(s.document_id)
        if owner and all(f["source"] != owner[0] for f in found):
            found.append({"source": owner[0], "priority": owner[1]})
    return found


def cascade_label(message: Message, sources: list) -> str:
    """ "answered from tier 1: QA Bible": which tier of the cascade, which sources; "" for
    anything but an answer."""
    if message.outcome not in (Message.Outcome.ANSWER, Message.Outcome.PARTIAL):
        return ""
    names = ", ".join(f["source"] for f in answered_from(sources))
    if message.tier is not None:
        if names:
            return _("answered from tier %(tier)s: %(sources)s") % {
                "tier": message.tier,
                "sources": names,
            }
        return _("answered from tier %(tier)s") % {"tier": message.tier}
    return _("answered from %(sources)s") % {"sources": names} if names else ""


def turn_context(message: Message) -> dict:
    sources = list(message.sources.all()) if message.pk else []
    done = message.status == Message.Status.DONE
    sources, revoked = readable_sources(message, sources) if done else (sources, False)
    html = answer_html(message, sources) if done else ""
    if revoked:
        # The answer itself quotes those documents: it goes too, with a note saying why.
        html = f'<p class="notice revoked">{escape(REVOKED_NOTE)}</p>'
    return {
        "message": message,
        "done": done,
        "answer_html": html,
        "revoked": revoked,
        "sources": sources,
        "cited_sources": [s for s in sources if s.cited] or sources[:3],
        "tiles": list(enumerate(message.tiles or [])),
        "mode_label": str(MODE_LABELS.get(message.mode, "")),
        "cascade_label": cascade_label(message, sources) if done and not revoked else "",
        "context_label": (message.context or {}).get("label", ""),
    }
