from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PortalConfig(AppConfig):
    name = "portal"
    verbose_name = _("Portal")

    def ready(self) -> None:
        from portal import audit  # noqa: F401 - connects the sign-in receivers
