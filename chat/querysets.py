"""Who may read a turn of a conversation; every rule about messages' visibility lives here.

A message shows text of the documents it touches: those it was answered from (its answer,
quotes, source titles, topics) and those its tiles came from (a clarification's titles and
headings, a refusal's near misses: ``Message.tile_documents``). A viewer may read it when they
may read every one of those documents (``knowledge.querysets``: restricted sources, private
ones); otherwise pages about it say that it is about a source they may not read, without its
text. The asker is held to the same rule when their answer is shown again
(``chat.present.presenting.readable_sources``). Ratings, regression cases, evaluation results
and audit details that come from a message follow this rule (their querysets call it).
"""

from __future__ import annotations

from django.db import models
from django.db.models import Exists, OuterRef, Q, Value

from knowledge.models import Document


def unreadable_sources_of(user, messages: type[models.Model], message_ref: str = "pk") -> Q:
    """True for a message (``message_ref`` names it from the outer query) touching a document
    ``user`` may not read: one it cites, or one its tiles came from. ``messages`` is the
    ``Message`` model: its sources are reached through its relations, as ``chat.models``
    imports this module."""
    cited = messages._meta.get_field("sources").related_model
    tiles = messages._meta.get_field("tile_documents").remote_field.through
    readable = Document.objects.visible_to(user).values("pk")
    return Q(
        Exists(
            cited.objects.filter(message=OuterRef(message_ref), document__isnull=False).exclude(
                document__in=readable
            )
        )
    ) | Q(
        Exists(tiles.objects.filter(message=OuterRef(message_ref)).exclude(document__in=readable))
    )


def sees_every_message(user) -> bool:
    return user is not None and user.is_authenticated and user.is_superuser


class MessageQuerySet(models.QuerySet):
    def with_access(self, user) -> MessageQuerySet:
        """Annotated with ``hidden``: the message is about a source ``user`` may not read."""
        if sees_every_message(user):
            return self.annotate(hidden=Value(False))
        return self.annotate(hidden=unreadable_sources_of(user, self.model))

    def readable_by(self, user) -> MessageQuerySet:
        """The messages ``user`` may read whole."""
        if sees_every_message(user):
            return self
        return self.filter(~unreadable_sources_of(user, self.model))

    def text_contains(self, query: str) -> MessageQuerySet:
        """A search in the question, answer and searched words: among rows not ``hidden`` only
        (call ``with_access`` first), so a filter cannot tell what a hidden answer says."""
        return self.filter(
            Q(hidden=False)
            & (
                Q(question__icontains=query)
                | Q(answer__icontains=query)
                | Q(retrieval_query__icontains=query)
            )
        )
