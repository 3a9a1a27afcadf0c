from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ScenariosConfig(AppConfig):
    name = "scenarios"
    verbose_name = _("Scenarios")
