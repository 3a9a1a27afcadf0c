"""``manage.py ask "QUESTION" [--profile NAME] [--json]``: the whole answer pipeline."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _

from chat.models import AssistantProfile, Conversation
from chat.pipeline import answer_now
from chat.present.serialize import message_json
from portal.accounts import command_user


class Command(BaseCommand):
    help = "Ask the knowledge base a question (retrieval + answer); prints the answer and sources."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("question")
        parser.add_argument("--profile", default="", help="assistant profile name")
        parser.add_argument(
            "--user", default="", help="answer as this user (permissions); default: a staff view"
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        user = self._user(options["user"])
        profile = None
        if options["profile"]:
            profile = AssistantProfile.objects.filter(name__iexact=options["profile"]).first()
            if profile is None:
                names = ", ".join(AssistantProfile.objects.values_list("name", flat=True))
                raise CommandError(
                    _("no profile %(name)r; profiles: %(names)s")
                    % {"name": options["profile"], "names": names}
                )
        conversation = Conversation.objects.create(user=user, profile=profile)
        message = answer_now(conversation, options["question"], user=user)
        payload = message_json(message)
        if options["json"]:
            self.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2))
            return
        if payload["notice"]:
            self.stdout.write(self.style.WARNING(payload["notice"]))
        self.stdout.write(payload["answer"])
        for tile in payload["clarification"] or payload["reformulations"] or []:
            self.stdout.write(f"  ? {tile['label']}")
        for source in payload["sources"]:
            mark = "*" if source["cited"] else " "
            self.stdout.write(
                f"{mark}[{source['number']}] {source['document']} ({source['version']}) "
                f"§{source['section'] or '-'} {source['heading']}  score {source['score']:.3f}  {source['url']}"
            )

    def _user(self, username: str):
        # The command line is an operator's tool: it answers with a staff view, under a service
        # account so that its conversations are kept apart from people's.
        try:
            return command_user(username)
        except LookupError as exc:
            raise CommandError(str(exc)) from None
