"""The newcomer's path: data commands on a database nobody has migrated yet."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import psycopg
import pytest
from django.db import connection

from tests.conftest import ROOT, subprocess_env


@pytest.fixture
def fresh_database(db):
    name = f"kb_fresh_{uuid.uuid4().hex[:8]}"
    yield name
    params = connection.get_connection_params()
    params["dbname"] = "postgres"
    with psycopg.connect(**params, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_search_on_a_fresh_database_migrates_first_instead_of_a_traceback(fresh_database):
    done = subprocess.run(
        [sys.executable, "manage.py", "search", "тест-кейс", "--json"],
        cwd=ROOT,
        env=subprocess_env(KB_DB_NAME=fresh_database),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert "preparing the database" in done.stderr
    answer = json.loads(done.stdout)
    assert answer["found"] is False and answer["results"] == []
