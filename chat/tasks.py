"""Celery tasks of the chat: thin wrappers around the pipeline's services."""

from __future__ import annotations

import logging

from chat.pipeline.lease import finish_interrupted
from portal.celery import app

logger = logging.getLogger(__name__)


@app.task(name="chat.finish_interrupted_answers", ignore_result=True)
def finish_interrupted_answers() -> int:
    """Close the answers whose process died mid-answer and that no browser took over (the
    beat runs this)."""
    closed = finish_interrupted()
    if closed:
        logger.info("closed %d interrupted answers", closed)
    return closed
