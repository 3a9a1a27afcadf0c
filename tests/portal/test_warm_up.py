"""A web process loads its models at start, on a thread, so its first question does not wait."""

from __future__ import annotations

import time

import httpx2
import pytest

from tests.conftest import PortalServer

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_web_process_loads_its_models_at_start_and_serves_meanwhile():
    server = PortalServer(KB_WARM_UP="1", KB_LOG_LEVEL="info")
    try:
        # Pages do not wait for the models (they load on a thread of their own).
        assert httpx2.get(server.url + "/login/", timeout=10).status_code == 200
        deadline = time.monotonic() + 120
        while "web process warmed up" not in server.log_path.read_text():
            assert time.monotonic() < deadline, server.log_path.read_text()[-2000:]
            assert "warm-up of the web process failed" not in server.log_path.read_text()
            time.sleep(0.5)
    finally:
        server.stop()
