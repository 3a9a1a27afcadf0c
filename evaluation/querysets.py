"""Who may read a regression case or an evaluation result: their questions, answers and sources
come from answers (``chat.querysets``' rule: a viewer may read them when they may read every
source they touch) and name gold documents as "source/path"."""

from __future__ import annotations

from django.db import models
from django.db.models import Exists, Q, Value
from django.db.models.expressions import RawSQL

from chat.models import Message
from chat.querysets import sees_every_message, unreadable_sources_of
from knowledge.models import Document, Source


def _gold_hidden(table: str, field: str, user) -> RawSQL:
    """True for a row whose gold documents ("source/path", a JSON list in ``field``) name a
    source ``user`` may not read."""
    unreadable = list(
        Source.objects.exclude(pk__in=Source.objects.visible_to(user).values("pk")).values_list(
            "name", flat=True
        )
    )
    return RawSQL(
        f"EXISTS (SELECT 1 FROM jsonb_array_elements_text({table}.{field}) AS gold(doc), "
        "unnest(%s::text[]) AS hidden(name) WHERE starts_with(gold.doc, hidden.name || '/'))",
        (unreadable,),
        output_field=models.BooleanField(),
    )


def _sources_hidden(table: str, field: str, user) -> Exists:
    """True for a row whose stored sources (a JSON list of {"document_id", ...} in ``field``,
    as ``chat.present.serialize`` writes them) name a document ``user`` may not read: the
    answer's message may be gone, its copy in the row is not."""
    named = RawSQL(
        f"SELECT (source.item->>'document_id')::bigint FROM jsonb_array_elements({table}.{field}) "
        "AS source(item) WHERE jsonb_typeof(source.item) = 'object' "
        "AND source.item->>'document_id' ~ '^[0-9]{1,18}$'",
        (),
    )
    return Exists(
        Document.objects.filter(pk__in=named).exclude(
            pk__in=Document.objects.visible_to(user).values("pk")
        )
    )


def _hidden(rule: Q) -> models.Case:
    return models.Case(
        models.When(rule, then=Value(True)),
        default=Value(False),
        output_field=models.BooleanField(),
    )


class RegressionCaseQuerySet(models.QuerySet):
    def with_access(self, user) -> RegressionCaseQuerySet:
        """Annotated with ``hidden``: the case comes from an answer about a source ``user`` may
        not read, or names a gold document of one."""
        if sees_every_message(user):
            return self.annotate(hidden=Value(False))
        table = self.model._meta.db_table
        return self.alias(gold_hidden=_gold_hidden(table, "gold_docs", user)).annotate(
            hidden=_hidden(Q(gold_hidden=True) | unreadable_sources_of(user, Message, "message_id"))
        )

    def readable_by(self, user) -> RegressionCaseQuerySet:
        """The cases ``user`` may read whole (and so switch on and off)."""
        return self.with_access(user).filter(hidden=False)


class EvalResultQuerySet(models.QuerySet):
    def with_access(self, user) -> EvalResultQuerySet:
        """Annotated with ``hidden``: the result's answer (its message, or the sources stored
        with it) touches a source ``user`` may not read, or its gold names one. A run asked as
        a reader of a restricted source holds that source's text."""
        if sees_every_message(user):
            return self.annotate(hidden=Value(False))
        table = self.model._meta.db_table
        return self.alias(
            gold_hidden=_gold_hidden(table, "gold", user),
            sources_hidden=_sources_hidden(table, "sources", user),
        ).annotate(
            hidden=_hidden(
                Q(gold_hidden=True)
                | Q(sources_hidden=True)
                | unreadable_sources_of(user, Message, "message_id")
            )
        )

    def text_contains(self, query: str) -> EvalResultQuerySet:
        """A search in the question and case id, among rows not ``hidden`` only (call
        ``with_access`` first), so a filter cannot tell what a hidden question says."""
        return self.filter(
            Q(hidden=False) & (Q(question__icontains=query) | Q(case_id__icontains=query))
        )
