"""Who answers a question, and what happens when that process dies mid-answer.

A message is claimed once (pending -> running) by the process that answers it, which records
itself (``portal.processes``) and beats while its answer streams. A web process killed
mid-stream leaves a running message nobody will finish: the browser's reconnect takes it over
(``take_over``) once the process is seen gone from this machine, or once its heartbeat is older
than ``ANSWER_STALE_SECONDS`` (a process elsewhere); the beat's ``finish_interrupted`` closes
the ones nobody came back for, with a plain notice, so no question is left without an answer.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator
from datetime import timedelta
from typing import TypeVar

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from chat.answer import wording
from chat.models import Message
from knowledge.text.language import detect
from portal.processes import process_gone, this_process

Status = Message.Status
T = TypeVar("T")
R = TypeVar("R")
BEAT_SECONDS = 5.0  # a streaming answer records that it lives at most this often


def claim(message: Message) -> bool:
    """Pending -> running, once: a reconnecting browser must not answer the question twice."""
    return bool(
        Message.objects.filter(pk=message.pk, status=Status.PENDING).update(
            status=Status.RUNNING, claimed_by=this_process(), heartbeat_at=timezone.now()
        )
    )


def _abandoned(claimed_by: str, heartbeat_at) -> bool:
    stale = timezone.now() - timedelta(seconds=settings.ANSWER_STALE_SECONDS)
    return heartbeat_at is None or heartbeat_at < stale or process_gone(claimed_by)


def take_over(message: Message) -> bool:
    """Claim a running answer whose process died (see the module's docstring); True once for
    one caller, False while its process lives."""
    row = (
        Message.objects.filter(pk=message.pk, status=Status.RUNNING)
        .values("claimed_by", "heartbeat_at")
        .first()
    )
    if row is None or not _abandoned(row["claimed_by"], row["heartbeat_at"]):
        return False
    return bool(
        Message.objects.filter(
            pk=message.pk,
            status=Status.RUNNING,
            claimed_by=row["claimed_by"],
            heartbeat_at=row["heartbeat_at"],
        ).update(claimed_by=this_process(), heartbeat_at=timezone.now())
    )


class Heartbeat:
    """Records, at most every ``BEAT_SECONDS``, that the answer of a message still streams, and
    from which thread (an answer streamed by another thread than the one that claimed it is
    not taken for gone when the claimant's thread ends)."""

    def __init__(self, message_id: int) -> None:
        self.message_id = message_id
        self.owner = (
            Message.objects.filter(pk=message_id).values_list("claimed_by", flat=True).first() or ""
        )
        self.last = time.monotonic()

    def relay(self, events: Generator[T, None, R]) -> Generator[T, None, R]:
        """Yield ``events`` on, beating as they pass; return what they return."""
        while True:
            try:
                event = next(events)
            except StopIteration as stop:
                return stop.value
            self.beat()
            yield event

    def beat(self) -> None:
        if time.monotonic() - self.last < BEAT_SECONDS:
            return
        self.last = time.monotonic()
        me = this_process()
        # Only while the claim is still this answer's: a reconnect that took it over owns it.
        if Message.objects.filter(
            pk=self.message_id, status=Status.RUNNING, claimed_by=self.owner
        ).update(heartbeat_at=timezone.now(), claimed_by=me):
            self.owner = me


def interrupted_messages() -> Iterator[Message]:
    """Running answers whose process died: gone from this machine, or silent too long."""
    stale = timezone.now() - timedelta(seconds=settings.ANSWER_STALE_SECONDS)
    running = Message.objects.filter(status=Status.RUNNING).only(
        "pk", "question", "claimed_by", "heartbeat_at"
    )
    for message in running.filter(Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True)):
        yield message
    for message in running.filter(heartbeat_at__gte=stale):
        if process_gone(message.claimed_by):
            yield message


def finish_interrupted() -> int:
    """Close the running answers whose process died and that no browser took over: an error
    with a notice in the question's language (the question is kept; asked again, it is
    answered). Returns how many."""
    closed = 0
    for message in interrupted_messages():
        notice = wording.say("interrupted", detect(message.question))
        closed += Message.objects.filter(
            pk=message.pk,
            status=Status.RUNNING,
            claimed_by=message.claimed_by,
            heartbeat_at=message.heartbeat_at,
        ).update(
            status=Status.DONE,
            outcome=Message.Outcome.ERROR,
            answer=notice,
            notice=notice,
            finished_at=timezone.now(),
        )
    return closed
