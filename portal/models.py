from __future__ import annotations

from django.apps import apps
from django.conf import settings
from django.contrib.postgres.expressions import ArraySubquery
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q, Value
from django.utils.translation import gettext_lazy as _


class WorkerHeartbeat(models.Model):
    """The last heartbeat of each Celery worker (every few seconds while it runs), and the
    beat's last tick; /healthz reads them."""

    class Kind(models.TextChoices):
        WORKER = "worker", _("Worker")
        BEAT = "beat", _("Beat (the schedule)")

    worker = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.WORKER)
    token = models.CharField(max_length=64, blank=True)
    beat_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.worker} @ {self.beat_at:%Y-%m-%d %H:%M:%S}"


class ApiTokenQuerySet(models.QuerySet):
    def active(self) -> ApiTokenQuerySet:
        return self.filter(revoked_at__isnull=True, user__is_active=True)


class ApiToken(models.Model):
    """A personal token for the JSON API (``Authorization: Bearer <token>``).

    Only the SHA-256 of the token is stored: the token is shown once, when it is created. A
    token is 256 random bits, so a fast hash is enough (nothing to guess a dictionary of).
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(
        max_length=16, help_text=_("The token's first characters, to tell it apart.")
    )
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.user} · {self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class AuditEventQuerySet(models.QuerySet):
    def with_access(self, user) -> AuditEventQuerySet:
        """Annotated with ``hidden``: the event names a knowledge source ``user`` may not read
        (or one since deleted), so its target and detail (file names, a document's title, a
        source's readers) are not theirs to see; superusers see every event.

        The rule of who reads a source is ``knowledge.querysets``'; the portal sits under the
        knowledge app, so the model is found by name when a page asks, not imported."""
        if user is not None and user.is_authenticated and user.is_superuser:
            return self.annotate(hidden=Value(False))
        sources = apps.get_model("knowledge", "Source").objects.visible_to(user)
        readable = ArraySubquery(sources.order_by().values("pk"))
        return self.annotate(hidden=~Q(sources__contained_by=readable))

    def text_contains(self, query: str) -> AuditEventQuerySet:
        """Events whose target holds ``query``, among those not ``hidden`` (call
        ``with_access`` first): a filter cannot tell what a hidden event names."""
        return self.filter(hidden=False, target__icontains=query)


class AuditEvent(models.Model):
    """Who did what, when and from where: sign-ins, uploads, reindexes, version edits,
    permission and source changes, tokens, the kill switch, exports (``portal.audit``)."""

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_name = models.CharField(max_length=150, blank=True)  # kept when the user is deleted
    action = models.CharField(max_length=50, db_index=True)
    target = models.CharField(max_length=300, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    address = models.GenericIPAddressField(null=True, blank=True)
    # The knowledge sources the event is about (ids, not keys: an event outlives its source);
    # its target and detail show only to those who may read all of them.
    sources = ArrayField(models.IntegerField(), default=list, blank=True)

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-pk"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.actor_name} {self.action} {self.target}"


class ExternalIdentity(models.Model):
    """A user's account at the company's identity provider (OpenID Connect) or directory (LDAP):
    matched by the provider's issuer and subject (a directory entry's stable identifier), never
    by a user name or e-mail an outsider could choose."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="external_identities"
    )
    issuer = models.CharField(max_length=300)
    subject = models.CharField(max_length=255)
    created_at = models.DateTimeField(auto_now_add=True)
    last_login_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="identity_unique_subject")
        ]

    def __str__(self) -> str:
        return f"{self.user} @ {self.issuer}"


class UserPreference(models.Model):
    """A user's own settings; for now the interface language (blank: follow the browser)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference"
    )
    language = models.CharField(
        _("interface language"), max_length=10, choices=settings.LANGUAGES, blank=True
    )

    class Meta:
        verbose_name = _("user preference")
        verbose_name_plural = _("user preferences")

    def __str__(self) -> str:
        return f"{self.user} · {self.language or 'auto'}"
