"""The operations app: backup and restore."""

from __future__ import annotations

from django.apps import AppConfig


class OperationsConfig(AppConfig):
    name = "operations"
    verbose_name = "Operations"
