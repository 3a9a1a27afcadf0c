from __future__ import annotations

from html import unescape

from django import template
from django.utils.html import strip_tags

from feedback.models import Rating
from portal.markdown import render_markdown

register = template.Library()


@register.simple_tag(takes_context=True)
def rating_for(context, message) -> Rating | None:
    """The viewer's rating of ``message``, for the buttons under an answer.

    The rating view passes the row it just saved as ``feedback_rating``. On the chat page the
    ratings of the whole conversation are read in one query, the first time an answer asks,
    and kept on the request: one query per page, not one per answer. Without a request (an
    answer rendered for the event stream, just finished) there is no rating yet.
    """
    if "feedback_rating" in context:
        return context["feedback_rating"]
    request = context.get("request")
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or message.pk is None:
        return None
    cache = request.__dict__.setdefault("_feedback_ratings", {})
    conversation_id = message.conversation_id
    if conversation_id not in cache:
        cache[conversation_id] = {
            r.message_id: r
            for r in Rating.objects.filter(user=user, message__conversation_id=conversation_id)
        }
    return cache[conversation_id].get(message.pk)


@register.simple_tag
def rating_reasons() -> list[tuple[str, str]]:
    """The reason chips offered with a thumbs down, as (value, label)."""
    return list(Rating.Reason.choices)


@register.filter
def plain_text(markdown_text: str) -> str:
    """Markdown (an answer) as one line of plain text, for excerpts."""
    return " ".join(unescape(strip_tags(render_markdown(markdown_text or ""))).split())
