"""Read rules for the knowledge base; every permission check on sources lives here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import models
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce, NullIf

from knowledge.text.confusables import look_alike

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser


def sees_everything(user) -> bool:
    """Superusers read every source; staff every source but the restricted ones."""
    return user is not None and user.is_authenticated and user.is_superuser


def _source_filter(user: AbstractBaseUser | AnonymousUser | None, prefix: str = "") -> Q | None:
    """Q over sources the user may read; None means "everything" (superusers).

    A restricted source is read by its named readers and groups only: not by everyone when it
    is also public, and not by staff who are not named (superusers still read it)."""
    if user is None or not user.is_authenticated:
        return Q(pk__in=[])
    if sees_everything(user):
        return None
    named = Q(**{f"{prefix}readers": user}) | Q(**{f"{prefix}reader_groups__in": user.groups.all()})
    if user.is_staff:
        return Q(**{f"{prefix}restricted": False}) | named
    return (Q(**{f"{prefix}is_public": True}) & Q(**{f"{prefix}restricted": False})) | named


class SourceQuerySet(models.QuerySet):
    def visible_to(self, user) -> SourceQuerySet:
        rule = _source_filter(user)
        return self if rule is None else self.filter(rule).distinct()

    def named_like(self, name: str):
        """The source whose name looks like ``name`` (``knowledge.text.confusables.look_alike``: the
        same with a no-break space, an invisible character, another case, punctuation around
        its words or a look-alike letter of another script: "Ѕecret A" with a Cyrillic Ѕ,
        "Secret Α" with a Greek alpha, "Secret-A"), the oldest; None when none. Sources are
        few: their names are compared here, not in SQL."""
        rows = self.order_by("pk").values_list("pk", "name")
        found = next((pk for pk, other in rows if look_alike(name, other)), None)
        return None if found is None else self.get(pk=found)

    def writable_by(self, user) -> SourceQuerySet:
        """Sources ``user`` may add documents to (upload, reindex): staff, and only the sources
        they may read; superusers every source. A staff member who is not a reader of a
        restricted source must not put a new current version in front of its readers."""
        if user is None or not user.is_authenticated or not user.is_staff:
            return self.none()
        return self.visible_to(user)


def _related(queryset: models.QuerySet, field: str) -> type[models.Model]:
    """The model a foreign key of the queryset's model points at: ``knowledge.models`` imports
    this module, so the querysets reach the other models through their relations."""
    return queryset.model._meta.get_field(field).related_model


class DocumentQuerySet(models.QuerySet):
    def visible_to(self, user) -> DocumentQuerySet:
        rule = _source_filter(user)
        if rule is None:
            return self
        sources = _related(self, "source").objects.visible_to(user)
        return self.filter(source__in=sources.values("pk"))

    def live(self) -> DocumentQuerySet:
        return self.filter(removed_at__isnull=True)

    def of_role(self, *roles: str) -> DocumentQuerySet:
        """Documents whose role (``Document.effective_role``: set on the document, else on its
        source, else read from it) is one of ``roles``."""
        return self.alias(effective=_effective_role()).filter(effective__in=roles)


def _effective_role():
    """``Document.effective_role`` in SQL."""
    return Coalesce(
        NullIf(F("role"), Value("")),
        NullIf(F("source__role"), Value("")),
        NullIf(F("detected_role"), Value("")),
        Value("other"),
    )


class VersionQuerySet(models.QuerySet):
    def visible_to(self, user) -> VersionQuerySet:
        if sees_everything(user):
            return self
        documents = _related(self, "document").objects.visible_to(user)
        return self.filter(document__in=documents.values("pk"))


class ChunkQuerySet(models.QuerySet):
    def visible_to(self, user) -> ChunkQuerySet:
        if sees_everything(user):
            return self
        sources = _related(self, "source").objects.visible_to(user)
        return self.filter(source__in=sources.values("pk"))

    def searchable(self) -> ChunkQuerySet:
        return self.filter(searchable=True)

    def for_reading(self, *related: str, keep: tuple[str, ...] = ()) -> ChunkQuerySet:
        """Chunks with ``related`` ("document", "version", "source") joined in, without the
        columns that only search reads: the chunk's vectors and full-text vector (unless named
        in ``keep``), its document's full-text vector and its version's parsed document (30 KB
        of JSON on average on the demo knowledge base). Showing a search's eight hits used to
        read and decode all of them, a tenth of the request's time."""
        deferred = [f for f in _BULK[""] if f not in keep]
        deferred += [f"{name}__{f}" for name in related for f in _BULK.get(name, ())]
        return self.select_related(*related).defer(*deferred)


# What ``ChunkQuerySet.for_reading`` leaves out, by relation ("": the chunk itself).
_BULK = {
    "": ("embedding", "sparse", "search_vector"),
    "document": ("search_vector",),
    "version": ("parsed", "timings"),
}
