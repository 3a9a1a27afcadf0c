"""``POST /api/v1/ask``: the whole answer pipeline for tools and agents (personal API tokens).

Body: JSON ``{"question": "...", "profile": "Draft test cases", "conversation": 12}`` (profile
and conversation optional; a conversation of the token's owner continues it). Answer: the same
JSON as ``manage.py ask --json``.
"""

from __future__ import annotations

import json

from django.http import HttpRequest, JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from chat.models import AssistantProfile, Conversation
from chat.pipeline import answer_now
from chat.pipeline.guard import chat_enabled
from chat.present.serialize import message_json
from knowledge.embedding import EmbeddingModelMismatch
from portal.api_auth import api_token_required
from portal.params import id_param, unstorable
from portal.throttle import over_limit

MAX_QUESTION_CHARS = 4000


def _error(message: str, status: int = 400) -> JsonResponse:
    # In the interface's language (Accept-Language, else KB_LANGUAGE), readable as it is.
    return JsonResponse(
        {"error": str(message)}, status=status, json_dumps_params={"ensure_ascii": False}
    )


@api_token_required
@require_POST
def ask_api(request: HttpRequest) -> JsonResponse:
    try:
        # NaN and Infinity are no JSON (RFC 8259), though Python's parser takes them.
        body = json.loads(request.body or b"{}", parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return _error(_('The body must be JSON: {"question": "..."}'))
    if not isinstance(body, dict):
        return _error(_('The body must be JSON: {"question": "..."}'))
    if reason := unstorable(body):  # the request guard refuses it first; never stored anyway
        return _error(_("The body holds text that cannot be stored: %(what)s.") % {"what": reason})
    # Text only: a list, an object or a number is not a question ("['a']" was asked as one).
    for name in ("question", "profile"):
        if body.get(name) is not None and not isinstance(body[name], str):
            return _error(_("%(name)s must be text.") % {"name": name})
    question = (body.get("question") or "").strip()
    if not question:
        return _error(_("question is required."))
    if len(question) > MAX_QUESTION_CHARS:
        return _error(
            _("question is longer than %(max)d characters.") % {"max": MAX_QUESTION_CHARS}
        )
    if not chat_enabled():
        return _error(_("The chat is switched off by an administrator."), status=503)
    limited = over_limit(request, "ask", json=True)
    if limited is not None:
        return limited
    conversation = _conversation(request, body)
    if isinstance(conversation, JsonResponse):
        return conversation
    try:
        message = answer_now(conversation, question, user=request.user)
    except EmbeddingModelMismatch as exc:
        return _error(str(exc), status=503)
    return JsonResponse(
        message_json(message, base_url=request.build_absolute_uri("/").rstrip("/")),
        json_dumps_params={"ensure_ascii": False},
    )


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _conversation(request: HttpRequest, body: dict) -> Conversation | JsonResponse:
    if body.get("conversation"):
        pk = id_param(body["conversation"])
        found = Conversation.objects.filter(pk=pk, user=request.user).first() if pk else None
        return found or _error(_("No such conversation of yours."), status=404)
    profile = None
    if body.get("profile"):
        profile = AssistantProfile.objects.filter(name__iexact=str(body["profile"])).first()
        if profile is None:
            return _error(_("No profile %(name)r.") % {"name": body["profile"]}, status=404)
    # Untitled: the first question's redacted text becomes the title (chat.pipeline).
    return Conversation.objects.create(user=request.user, profile=profile)
