from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    verbose_name = _("Knowledge base")

    def ready(self) -> None:
        from knowledge import signals  # noqa: F401  (a deleted document leaves the statistics)
        from knowledge.retrieval.weights import weights

        # The ranking's weights are read from the environment now, so that a bad value stops
        # the process at start with one line, as a bad setting does.
        weights()
