"""The wheel is the product: it carries every app, its migrations, the templates, the static
files and the compiled translations, and an installed portal finds them there."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "deploy" / "checks"))

from production import build_wheel  # noqa: E402


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    """Built as the production-path check builds it: from the tree git would commit."""
    built = build_wheel(REPO, tmp_path_factory.mktemp("wheel") / "dist")
    with zipfile.ZipFile(built) as archive:
        yield archive


def _files_under(folder: Path) -> set[str]:
    return {
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def _wheel_files_under(archive: zipfile.ZipFile, prefix: str) -> set[str]:
    return {name[len(prefix) :] for name in archive.namelist() if name.startswith(prefix)}


def test_wheel_holds_every_installed_app_with_its_migrations(wheel):
    names = set(wheel.namelist())
    ours = [app for app in apps.get_app_configs() if Path(app.path).parent == REPO]
    assert {app.name for app in ours} == {
        "portal",
        "knowledge",
        "chat",
        "feedback",
        "evaluation",
        "scenarios",
        "operations",
    }
    for app in ours:
        folder = Path(app.path)
        expected = {
            f"{app.name}/{name}" for name in _files_under(folder) if not name.endswith(".mo")
        }
        missing = sorted(expected - names)
        assert not missing, f"{app.name}: missing from the wheel: {missing[:10]}"
        if (folder / "migrations").is_dir():  # operations has no models of its own
            assert any(n.startswith(f"{app.name}/migrations/0001_") for n in names), app.name


def test_wheel_holds_the_templates_static_files_and_compiled_translations(wheel):
    for folder in ("templates", "static"):
        on_disk = _files_under(REPO / folder)
        assert on_disk, folder
        assert _wheel_files_under(wheel, f"portal/{folder}/") == on_disk, folder
    catalogs = {p.relative_to(REPO / "locale").as_posix() for p in (REPO / "locale").rglob("*.po")}
    shipped = _wheel_files_under(wheel, "portal/locale/")
    assert catalogs <= shipped
    assert {c.removesuffix(".po") + ".mo" for c in catalogs} <= shipped, "compiled at build"


def test_wheel_declares_its_command_and_an_spdx_license(wheel):
    (entry_points,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    assert "knowledge-belt = portal.cli:main" in wheel.read(entry_points).decode()
    (metadata,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    assert "License-Expression: LicenseRef-Proprietary" in wheel.read(metadata).decode()


def test_an_installed_portal_renders_pages_from_the_wheels_folders(wheel, tmp_path):
    """Unpacked as pip installs it (no checkout around it), the settings point Django at the
    wheel's own template, static and locale folders, and keep data in the working folder."""
    site = tmp_path / "site-packages"
    wheel.extractall(site)
    work = tmp_path / "srv"
    work.mkdir()
    code = (
        "import django, json; from django.conf import settings; django.setup();"
        "from django.template.loader import get_template;"
        "get_template('chat/chat.html'); get_template('registration/login.html');"
        "print(json.dumps({'templates': str(settings.TEMPLATES[0]['DIRS'][0]),"
        "'static': str(settings.STATICFILES_DIRS[0]), 'locale': str(settings.LOCALE_PATHS[0]),"
        "'data': str(settings.DATA_DIR)}))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KB_DATA_DIR", "PYTHONPATH"))}
    env.update(PYTHONPATH=str(site), DJANGO_SETTINGS_MODULE="portal.settings")
    env.update(DATABASE_URL=settings.DATABASE_URL or "postgres://x@127.0.0.1:1/x")
    done = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(site)!r}); {code}"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    import json

    where = json.loads(done.stdout.strip().splitlines()[-1])
    assert where["templates"] == str(site / "portal" / "templates")
    assert where["static"] == str(site / "portal" / "static")
    assert where["locale"] == str(site / "portal" / "locale")
    assert where["data"] == str(work / "var")
