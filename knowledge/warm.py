"""What a web process loads at its start, on a thread of its own, so that its first questions
do not wait for it: the URL configuration (it imports every view), the language tools
(natasha's models, pymorphy3's dictionary), the configured embedder and e5 (a question's vector
from each), one reading.

Measured on the demo (benchmarks/load.py, 2026-12-07): a web process's first ask took 3.3 s
cold (the language tools 1.5 s, the USE model 1.2 s, the URL configuration 0.6 s), the next
ones 0.2-0.3 s (what stays cold: the lemmas of the words met so far, 0.7 s); at 32 users
the first asks of both processes queued behind those loads (ask max 19.9 s). ``portal.asgi``
starts it (``KB_WARM_UP``; off in the test suite's servers, which answer few questions).
"""

from __future__ import annotations

import logging
import time

from django.urls import get_resolver

from knowledge.embedding import get_embedder, get_second_embedder
from knowledge.question import read

logger = logging.getLogger(__name__)

# A sentence of the kind people ask: it loads every tool a reading uses (a value's kind, a
# named thing, the syntax) without naming anything of a knowledge base.
SENTENCE = "Кто утвердил план переезда склада в новое здание и когда?"


def warm_up() -> None:
    """Load the models a question needs; a failure is logged, never raised (a question would
    meet it again, with its own message)."""
    started = time.perf_counter()
    try:
        get_resolver().url_patterns  # noqa: B018 - imports the views, as a first request would
        read(SENTENCE)  # the language tools load together, at a reading's first use
        # Not query_vector(): a question's vector is kept per text, this one is nobody's.
        get_embedder().embed_query(SENTENCE)
        second = get_second_embedder()
        if second is not None:
            second.embed_query(SENTENCE)
    except Exception:
        logger.warning("warm-up of the web process failed", exc_info=True)
        return
    logger.info("web process warmed up in %.1f s", time.perf_counter() - started)
