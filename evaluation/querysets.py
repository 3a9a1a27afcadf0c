"""Who may read a regression case: its question and expected answer come from an answer
(``chat.querysets``' rule) and name gold documents as "source/path"."""

from __future__ import annotations

from django.db import models
from django.db.models import Q, Value
from django.db.models.expressions import RawSQL


class RegressionCaseQuerySet(models.QuerySet):
    def with_access(self, user) -> RegressionCaseQuerySet:
        """Annotated with ``hidden``: the case comes from an answer about a source ``user`` may
        not read, or names a gold document of one."""
        from chat.querysets import sees_every_message, unreadable_sources_of
        from knowledge.models import Source

        if sees_every_message(user):
            return self.annotate(hidden=Value(False))
        unreadable = list(
            Source.objects.exclude(pk__in=Source.objects.visible_to(user).values("pk")).values_list(
                "name", flat=True
            )
        )
        gold = RawSQL(
            "EXISTS (SELECT 1 FROM jsonb_array_elements_text("
            f"{self.model._meta.db_table}.gold_docs) AS gold(doc), "
            "unnest(%s::text[]) AS hidden(name) WHERE starts_with(gold.doc, hidden.name || '/'))",
            (unreadable,),
            output_field=models.BooleanField(),
        )
        return self.alias(gold_hidden=gold).annotate(
            hidden=models.Case(
                models.When(
                    Q(gold_hidden=True) | unreadable_sources_of(user, "message_id"),
                    then=Value(True),
                ),
                default=Value(False),
                output_field=models.BooleanField(),
            )
        )
