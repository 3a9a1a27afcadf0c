"""The dialog journal for staff: every question and answer with what it was built from."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.db import connection
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from chat.models import AssistantProfile, Message
from chat.present.presenting import turn_context
from portal.params import id_param, within_dates


def journal_queryset(params, viewer) -> QuerySet[Message]:
    """Messages filtered by the journal's query string (q, outcome, mode, profile, user, topic,
    topic kind, dates), each marked ``hidden`` when ``viewer`` may not read a source it cites
    (then neither its text nor its topics match a filter)."""
    messages = (
        Message.objects.with_access(viewer)
        .select_related("conversation__user", "conversation__profile")
        .annotate(source_count=Count("sources"))
        .order_by("-created_at", "-pk")
    )
    query = (params.get("q") or "").strip()
    if query:
        messages = messages.text_contains(query)
    for field in ("outcome", "mode"):
        if params.get(field):
            messages = messages.filter(**{field: params[field]})
    if id_param(params.get("profile")):
        messages = messages.filter(conversation__profile_id=id_param(params["profile"]))
    if params.get("user"):
        messages = messages.filter(conversation__user__username=params["user"])
    if params.get("topic"):
        messages = messages.filter(hidden=False, topics__contains=[params["topic"][:200]])
    if params.get("topic_kind") in Message.TopicKind.values:
        messages = messages.filter(topic_kind=params["topic_kind"])
    return within_dates(messages, params, "created_at")


def _topic_groups(viewer) -> list[tuple[str, list[dict]]]:
    """The topic filter's options: the documents' topics, then the refused questions'
    clusters, most common first; of the turns ``viewer`` may read (a topic names its source)."""
    found = topic_counts(Message.objects.readable_by(viewer), limit=300)
    groups = [
        (_("Documents' topics"), [t for t in found if t["kind"] == Message.TopicKind.DOCUMENTS]),
        (
            _("Refused questions' clusters"),
            [t for t in found if t["kind"] == Message.TopicKind.GAP],
        ),
    ]
    return [(label, rows) for label, rows in groups if rows]


@staff_member_required
@require_GET
@vary_on_headers("HX-Request")
def journal(request: HttpRequest) -> HttpResponse:
    messages = journal_queryset(request.GET, request.user)
    page = Paginator(messages, 50).get_page(request.GET.get("page"))
    counts = dict(
        journal_queryset(request.GET, request.user)
        .order_by()
        .values_list("outcome")
        .annotate(n=Count("pk"))
    )
    context = {
        "page": page,
        "counts": counts,
        "outcomes": Message.Outcome.choices,
        "modes": Message.Mode.choices,
        "profiles": AssistantProfile.objects.all(),
        "topic_groups": _topic_groups(request.user),
        "topic_kinds": [(k, label) for k, label in Message.TopicKind.choices if k],
        "params": request.GET,
    }
    if request.htmx:
        return render(request, "chat/journal.html#results", context)
    return render(request, "chat/journal.html", context)


@staff_member_required
@require_GET
def journal_entry(request: HttpRequest, pk: int) -> HttpResponse:
    message = get_object_or_404(
        Message.objects.with_access(request.user).select_related(
            "conversation__user", "conversation__profile"
        ),
        pk=pk,
    )
    if message.hidden:
        return render(request, "chat/journal_entry_hidden.html", {"m": message})
    return render(
        request,
        "chat/journal_entry.html",
        {
            "m": message,
            "turn": turn_context(message),
            "sources": message.sources.all(),
            "search_timings": (message.timings or {}).get("search", {}),
            "stage_timings": {
                k: v
                for k, v in (message.timings or {}).items()
                if k not in ("search", "search_notice")
            },
        },
    )


def topic_counts(messages: QuerySet[Message] | None = None, limit: int = 300) -> list[dict]:
    """Each topic with its kind and how many turns have it, most common first (one query)."""
    scope = messages if messages is not None else Message.objects.all()
    subquery, params = scope.order_by().values("pk").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT m.topic_kind, t.topic, count(*) FROM chat_message m "
            "CROSS JOIN LATERAL unnest(m.topics) AS t(topic) "
            f"WHERE m.id IN ({subquery}) GROUP BY 1, 2 ORDER BY 3 DESC, 2 LIMIT %s",
            [*params, limit],
        )
        return [{"kind": k, "topic": t, "count": n} for k, t, n in cursor.fetchall()]
