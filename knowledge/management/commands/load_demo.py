"""``manage.py load_demo``: register the demo knowledge base once (the worker ingests it)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from knowledge.demo import load_demo_knowledge_base


class Command(BaseCommand):
    help = "Register the demo documents of ../shared/corpus once; the worker ingests them."

    def handle(self, *args: Any, **options: Any) -> None:
        message = load_demo_knowledge_base()
        if message:
            self.stdout.write(message)
