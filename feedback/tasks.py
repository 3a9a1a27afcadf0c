"""The feedback app's background work: naming the topics of a finished turn."""

from __future__ import annotations

from celery import shared_task

from chat.models import Message
from feedback.tagging import assign


@shared_task(name="feedback.assign_topics", ignore_result=True)
def assign_topics(message_pk: int) -> None:
    """Name the topics of one finished turn (queued by the answer after its commit): the
    documents it cites, or, refused, the cluster of refused questions it joins."""
    message = Message.objects.filter(pk=message_pk, status=Message.Status.DONE).first()
    if message is None:
        return
    assign(message)
    message.save(update_fields=["topics", "topic_kind"])
