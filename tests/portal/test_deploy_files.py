"""The deployment files tell one story: the image installs the wheel (no app folder copied by
hand, no failure hidden), runs as a user of its own, and compose runs exactly the systemd
units' command lines. Docker cannot run on these machines, so the files themselves are read;
``deploy/checks/production.py`` runs the units' command lines for real."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
sys.path.insert(0, str(DEPLOY / "checks"))

from production import expand, read_unit  # noqa: E402

# One set of values for every variable the files use: both sides expanded with it must agree.
VALUES = {
    "KB_HOST": "HOST",
    "KB_PORT": "PORT",
    "KB_WEB_WORKERS": "WORKERS",
    "KB_WEB_CONNECTIONS": "CONNECTIONS",
}
APPS = ("portal", "knowledge", "chat", "feedback", "evaluation", "scenarios", "operations")


def _dockerfile() -> str:
    return (DEPLOY / "Dockerfile").read_text()


def _compose() -> dict:
    return yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())


def _compose_command(service: str) -> list[str]:
    command = _compose()["services"][service]["command"]

    def variable(match: re.Match[str]) -> str:
        return VALUES[match[1]]

    return [re.sub(r"\$\{(\w+)(?::-[^}]*)?\}", variable, part) for part in command]


def _unit_command(unit: str, line: str, instance: str = "") -> list[str]:
    return expand(line, home=Path("/srv/kb"), env=VALUES, instance=instance)


def test_the_image_installs_the_wheel_and_copies_no_app_folder_by_hand():
    text = _dockerfile()
    assert re.search(r"pip wheel .*--no-deps", text)
    assert re.search(r"pip install .*/wheels/\*\.whl", text)
    runtime = text.split("\nFROM ")[-1]  # the last stage is the image that runs
    copies = re.findall(r"^COPY (.+)$", runtime, re.M)
    assert copies == ["--from=build /wheels /wheels"]
    for app in (*APPS, "templates", "static", "locale"):
        assert not re.search(rf"^COPY\s+{app}\b", text, re.M), app
    assert "|| true" not in text


def test_the_image_runs_as_a_user_of_its_own_with_the_units_virtual_environment():
    runtime = _dockerfile().split("\nFROM ")[-1]
    users = re.findall(r"^USER (\S+)$", runtime, re.M)
    assert users and users[-1] not in ("root", "0")
    assert "/srv/kb/.venv" in runtime
    assert re.search(r"^WORKDIR /srv/kb$", runtime, re.M)


@pytest.mark.parametrize("queue", ["ingest", "sync", "default"])
def test_compose_workers_run_the_worker_units_command_line(queue):
    unit = read_unit(DEPLOY / "systemd" / "kb-worker@.service")
    assert _compose_command(f"worker-{queue}") == _unit_command(unit.name, unit.start, queue)


def test_compose_web_and_beat_run_their_units_command_lines():
    web = read_unit(DEPLOY / "systemd" / "kb-web.service")
    beat = read_unit(DEPLOY / "systemd" / "kb-beat.service")
    assert _compose_command("web") == _unit_command(web.name, web.start)
    assert _compose_command("beat") == _unit_command(beat.name, beat.start)


def test_compose_runs_the_web_units_preparation_steps_before_the_web_server():
    web = read_unit(DEPLOY / "systemd" / "kb-web.service")
    prepared = {tuple(_unit_command(web.name, line)) for line in web.pre}
    services = _compose()["services"]
    one_shot = {name for name, service in services.items() if service.get("restart") == "no"}
    assert {tuple(_compose_command(name)) for name in one_shot} == prepared
    waits = services["web"]["depends_on"]
    assert all(waits[name]["condition"] == "service_completed_successfully" for name in one_shot)


def test_every_compose_portal_service_is_built_from_the_image():
    services = _compose()["services"]
    portal = [n for n, s in services.items() if "build" in s]
    assert set(portal) >= {"web", "beat", "worker-ingest", "worker-sync", "worker-default"}
    for name in portal:
        command = services[name]["command"]
        assert command[0].startswith("/srv/kb/.venv/bin/"), name


def test_units_defaults_are_written_where_systemd_reads_them():
    """Every ${VARIABLE} a unit's command uses has a default in an Environment= line, so a
    server whose environment file does not name it still starts."""
    for path in (DEPLOY / "systemd").glob("*.service"):
        unit = read_unit(path)
        for line in [*unit.pre, unit.start]:
            for name in re.findall(r"\$\{(\w+)\}", line):
                assert name in unit.environment, f"{path.name}: ${{{name}}} has no default"
        assert shlex.split(unit.start)[0].startswith("/srv/kb/.venv/bin/"), path.name


def test_the_proxy_configuration_stands_in_front_of_slow_clients():
    """deploy/nginx: whole requests read before they reach the web server, a deadline between
    two reads of a head or a body, connections per address limited (the streams' location
    too: a location's limit_conn replaces the server's), an idle upstream connection closed by
    nginx before uvicorn's keep-alive would (the production check runs nginx on this file)."""
    text = (DEPLOY / "nginx" / "knowledge-belt.conf").read_text()
    directives = re.findall(r"^\s*([a-z_]+)\s+([^;{]*);", text, re.M)

    def values(name: str) -> list[str]:
        return [value.strip() for key, value in directives if key == name]

    assert values("proxy_request_buffering") == ["on"]
    for timeout in ("client_header_timeout", "client_body_timeout"):
        assert values(timeout) and int(values(timeout)[0].rstrip("s")) <= 10
    assert len([v for v in values("limit_conn") if v.startswith("kb_address ")]) == 2
    upstream_idle = int(re.search(r"upstream[^}]*keepalive_timeout (\d+)s", text, re.S)[1])
    web = read_unit(DEPLOY / "systemd" / "kb-web.service").start
    assert upstream_idle < int(re.search(r"--timeout-keep-alive (\d+)", web)[1])


def test_the_proxy_sends_downloads_from_an_internal_location_over_the_files_folder():
    """deploy/nginx: the location KB_DOWNLOAD_ACCEL names is internal (a client cannot ask for
    it) and aliases the units' files folder (the production check downloads through it)."""
    text = (DEPLOY / "nginx" / "knowledge-belt.conf").read_text()
    location = re.search(r"location /_files/ \{([^}]*)\}", text)
    assert location and "internal;" in location[1]
    assert "alias /srv/kb/var/files/;" in location[1]
