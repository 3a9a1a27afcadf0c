from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = _("Evaluation")

    def ready(self) -> None:
        from evaluation import signals  # noqa: F401  (ratings become regression cases)
