"""The chat window: conversations, asking, the streamed answer (server-sent events), tiles."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator

from asgiref.sync import sync_to_async
from django.contrib import messages as flash
from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.html import escape
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from chat.models import AssistantProfile, ChatSettings, Conversation, Message
from chat.pipeline import claim, start_message, stream_answer, take_over
from chat.pipeline.guard import chat_enabled
from chat.present.presenting import turn_context
from portal import audit
from portal.capacity import claim_stream, release_connection, too_many_streams
from portal.params import id_param
from portal.throttle import over_limit

MAX_QUESTION_CHARS = 4000


def _conversations(request: HttpRequest):
    return Conversation.objects.filter(user=request.user).select_related("profile")[:50]


@require_GET
def chat_home(request: HttpRequest) -> HttpResponse:
    latest = Conversation.objects.filter(user=request.user).first()
    if latest is not None and chat_enabled():
        return redirect("conversation", pk=latest.pk)
    return _render_chat(request, None)


@require_GET
def conversation(request: HttpRequest, pk: int) -> HttpResponse:
    current = get_object_or_404(Conversation, pk=pk, user=request.user)
    return _render_chat(request, current)


def _render_chat(request: HttpRequest, current: Conversation | None) -> HttpResponse:
    turns = []
    if current is not None:
        turns = [turn_context(m) for m in current.messages.prefetch_related("sources")]
    return render(
        request,
        "chat/chat.html",
        {
            "conversation": current,
            "conversations": _conversations(request),
            "profiles": AssistantProfile.objects.all(),
            "turns": turns,
            "enabled": chat_enabled(),
            "settings_row": ChatSettings.current(),
        },
    )


@require_POST
def new_conversation(request: HttpRequest) -> HttpResponse:
    """A new conversation with the chosen profile; with a question (the home page's box) it is
    asked at once, and the conversation's page streams its answer."""
    profile = AssistantProfile.objects.filter(pk=id_param(request.POST.get("profile")) or 0).first()
    if profile is None:
        profile = AssistantProfile.objects.filter(is_default=True).first()
    question = (request.POST.get("question") or "").strip()[:MAX_QUESTION_CHARS]
    if question:
        if not chat_enabled():
            return redirect("home")
        limited = over_limit(request, "ask")
        if limited is not None:
            return limited
    created = Conversation.objects.create(user=request.user, profile=profile)
    if question:
        start_message(created, question)
    return redirect("conversation", pk=created.pk)


@require_POST
def ask(request: HttpRequest, pk: int) -> HttpResponse:
    """Store the question and return its turn, whose answer streams from ``stream``."""
    current = get_object_or_404(Conversation, pk=pk, user=request.user)
    question = (request.POST.get("question") or "").strip()[:MAX_QUESTION_CHARS]
    if not chat_enabled():
        return render(request, "chat/chat.html#disabled", {})
    if not question:
        return HttpResponse(status=204)
    limited = over_limit(request, "ask")
    if limited is not None:
        return limited
    message = start_message(current, question)
    return render(request, "chat/chat.html#turn", {"turn": turn_context(message)})


@require_POST
def tile(request: HttpRequest, pk: int, index: int) -> HttpResponse:
    """A clarification tile answers restricted to its document; a reformulation tile searches
    with its words; both answer the original question."""
    original = get_object_or_404(Message, pk=pk, conversation__user=request.user)
    tiles = original.tiles or []
    if not 0 <= index < len(tiles) or not chat_enabled():
        raise Http404
    chosen = tiles[index]
    if chosen.get("kind") == "ask":  # a version that exists, asked about instead
        message = start_message(original.conversation, chosen.get("query") or original.question)
    elif chosen.get("kind") == "clarify":
        message = start_message(
            original.conversation,
            original.question,
            context={"document_id": chosen.get("document_id"), "label": chosen.get("label")},
        )
    else:
        message = start_message(
            original.conversation, original.question, search_override=chosen.get("query", "")
        )
    return render(request, "chat/chat.html#turn", {"turn": turn_context(message)})


@require_GET
def stream(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    """Server-sent events: status, then tokens as the LLM sends them, then the finished answer."""
    message = get_object_or_404(
        Message.objects.select_related("conversation__profile"),
        pk=pk,
        conversation__user=request.user,
    )
    # A stream lasts as long as the answer (or the wait for another stream's answer): one user
    # holds at most KB_STREAMS_PER_USER of the web process's stream slots (htmx retries later).
    if not claim_stream(request, request.user.pk):
        return too_many_streams()
    events = _events(message, request.user, translation.get_language())
    # Under ASGI (uvicorn) hand Django an async iterator, each step run in the request's thread;
    # under WSGI the plain generator streams as it is.
    body = _async_events(events) if hasattr(request, "scope") else events
    response = StreamingHttpResponse(body, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: pass each event through at once
    return response


async def _async_events(events: Iterator[bytes]) -> AsyncIterator[bytes]:
    step = sync_to_async(next, thread_sensitive=True)
    done = object()
    while (chunk := await step(events, done)) is not done:
        yield chunk


def _sse(event: str, data: str) -> bytes:
    lines = data.splitlines() or [""]
    return (f"event: {event}\n" + "".join(f"data: {line}\n" for line in lines) + "\n").encode()


def _events(message: Message, user, language: str) -> Iterator[bytes]:
    yield b": stream open\n\n"
    if claim(message):
        yield from _answer(message, user)
    else:
        # A reconnect while another stream answers, or after it finished: wait for the result;
        # when the stream that answered died with its process, answer here instead (once).
        deadline = time.monotonic() + 180
        while Message.objects.filter(pk=message.pk, status=Message.Status.RUNNING).exists():
            if take_over(message):
                # The text the dead stream had sent is cleared: this one starts again.
                yield _sse("restart", "")
                with translation.override(language):
                    yield _sse("status", escape(_("The connection was lost; answering again…")))
                yield from _answer(message, user)
                break
            if time.monotonic() > deadline:
                break
            release_connection()  # half a second of waiting must not hold a pooled connection
            time.sleep(0.5)
            yield b": waiting\n\n"
    message.refresh_from_db()
    # Rendered after the view returned (and maybe in another thread): in the request's language.
    with translation.override(language):
        html = render_to_string("chat/chat.html#answer", {"turn": turn_context(message)})
    yield _sse("done", html)


def _answer(message: Message, user) -> Iterator[bytes]:
    for event in stream_answer(message, user=user):
        release_connection()  # the next event may be an LLM's token, seconds away
        if event.kind == "token":
            yield _sse("token", escape(event.text).replace("\n", "<br>"))
        elif event.kind == "status":
            yield _sse("status", escape(event.text))


@staff_member_required
@require_POST
def toggle_chat(request: HttpRequest) -> HttpResponse:
    """The staff kill switch (the environment variable KB_CHAT_ENABLED=0 overrides it)."""
    row = ChatSettings.current()
    row.chat_enabled = request.POST.get("enabled") == "1"
    row.updated_by = request.user
    row.save()
    audit.record(request, "kill-switch", "chat on" if row.chat_enabled else "chat off")
    flash.success(
        request, _("The chat is on.") if row.chat_enabled else _("The chat is off for everyone.")
    )
    return redirect("home")
