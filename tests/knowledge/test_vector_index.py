"""The vector index of a model is created once, also when two workers store their first chunks
at the same moment (a fresh install with two worker processes)."""

from __future__ import annotations

import threading

from django.db import connections

from knowledge.vector_index import drop_vector_index, ensure_vector_index, vector_index_exists


def test_two_processes_creating_a_models_index_at_once_both_succeed(transactional_db):
    model_id = "test/race-model"
    drop_vector_index(model_id)
    rounds, errors = 12, []
    for _ in range(rounds):
        start = threading.Barrier(2)

        def create(start: threading.Barrier = start) -> None:
            try:
                start.wait()
                ensure_vector_index(model_id, 8)
            except Exception as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(f"{type(exc).__name__}: {exc}")
            finally:
                connections.close_all()

        threads = [threading.Thread(target=create) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert vector_index_exists(model_id)
        drop_vector_index(model_id)
    assert errors == []
