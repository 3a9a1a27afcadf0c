"""An answer whose web process died mid-stream (chat.pipeline.lease).

The message stayed "running" for ever: the browser's reconnect waited three minutes for a
stream that no longer existed and then showed nothing, and an API answer cut off the same way
was never closed. Now the reconnect takes the answer over once its process is seen gone, and
the beat's sweep closes the ones nobody came back for, with a notice.
"""

from __future__ import annotations

import os
import threading
import time
from datetime import timedelta

import psutil
import pytest
from django.utils import timezone

from chat.models import Message
from chat.pipeline import start_message
from chat.pipeline.lease import finish_interrupted
from portal.processes import started, this_process


def dead_owner() -> str:
    pid = os.getpid() + 50_000
    while psutil.pid_exists(pid):
        pid += 1
    return f"{this_process().split(':')[0]}:{pid}:1.0:1"


def running(conversation, question: str, owner: str, beat_ago: float = 0.0) -> Message:
    message = start_message(conversation, question)
    Message.objects.filter(pk=message.pk).update(
        status=Message.Status.RUNNING,
        claimed_by=owner,
        heartbeat_at=timezone.now() - timedelta(seconds=beat_ago),
    )
    return message


def stream(client, message: Message) -> str:
    response = client.get(f"/chat/messages/{message.pk}/stream/")
    return b"".join(response.streaming_content).decode()


@pytest.mark.django_db
def test_a_reconnect_answers_a_question_whose_stream_died_with_its_process(
    client, bob, conversation
):
    message = running(conversation, "Что такое регрессионное тестирование?", dead_owner())
    client.force_login(bob)
    body = stream(client, message)
    assert "event: restart" in body  # the dead stream's text is cleared in the browser
    assert "event: done" in body
    message.refresh_from_db()
    assert message.status == Message.Status.DONE and message.outcome
    assert Message.objects.filter(conversation=conversation).count() == 1  # asked once


@pytest.mark.django_db(transaction=True)
def test_a_reconnect_waits_for_a_stream_still_at_work(client, bob, conversation):
    alive = threading.Event()
    owner: list[str] = []

    def answering() -> None:  # another thread of this process, still streaming
        owner.append(this_process())
        alive.set()
        time.sleep(2)
        Message.objects.filter(pk=message.pk).update(
            status=Message.Status.DONE, outcome=Message.Outcome.ANSWER, answer="Its answer."
        )

    message = start_message(conversation, "Что такое смоук-тест?")
    worker = threading.Thread(target=answering)
    worker.start()
    alive.wait(10)
    Message.objects.filter(pk=message.pk).update(
        status=Message.Status.RUNNING, claimed_by=owner[0], heartbeat_at=timezone.now()
    )
    client.force_login(bob)
    body = stream(client, message)
    worker.join()
    assert "event: restart" not in body  # not answered a second time
    assert "Its answer." in body


@pytest.mark.django_db
def test_the_sweep_closes_answers_nobody_came_back_for_with_a_notice(conversation, settings):
    settings.ANSWER_STALE_SECONDS = 90
    dead = running(conversation, "Что такое тест-кейс?", dead_owner())
    silent = running(conversation, "What is a test plan?", "other-host:1:1.0:1", beat_ago=91)
    parent = psutil.Process(os.getppid())  # a live process of this machine
    host = this_process().split(":")[0]
    live = running(
        conversation, "Что такое баг?", f"{host}:{parent.pid}:{started(parent.pid):.3f}:1"
    )
    fresh_elsewhere = running(conversation, "What is a bug?", "other-host:1:1.0:1", beat_ago=10)

    assert finish_interrupted() == 2
    for message, words in ((dead, "Ответ прерван"), (silent, "The answer was interrupted")):
        message.refresh_from_db()
        assert message.status == Message.Status.DONE
        assert message.outcome == Message.Outcome.ERROR
        assert message.notice.startswith(words) and message.question  # the question is kept
    for message in (live, fresh_elsewhere):
        message.refresh_from_db()
        assert message.status == Message.Status.RUNNING
