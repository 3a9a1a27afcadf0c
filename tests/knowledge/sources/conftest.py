"""A real git repository for the source tests: Markdown pages of the QA Bible wiki, committed
with ``git`` in a temporary folder, and committed to again between syncs."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from django.core.management import call_command

from knowledge.models import Chunk
from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.retrieval.types import Filters
from knowledge.retrieval.weights import Hits
from tests.knowledge.conftest import WIKI

ZBP = "obshee/politika-otsutstviya-bagov-zbp-zero-bug-policy.md"
SHIFT_LEFT = "obshee/testirovanie-so-sdvigom-vlevo-shift-left-testing.md"
SOAK = "vidy-metody-urovni-testirovaniya/testirovanie-vynoslivosti-stabilnosti-endurance-soak-stability-testing.md"
CONFORMANCE = "vidy-metody-urovni-testirovaniya/testirovanie-na-sootvetstvie-conformance-compliance-testing.md"
PAGES = [ZBP, SHIFT_LEFT, SOAK, CONFORMANCE]
EXCEPTIONS = (
    "\n## Исключения\n\nКосметические дефекты в архивных модулях заносятся в журнал техдолга "
    "и исправляются раз в квартал.\n"
)


class WikiRepo:
    """A git repository with a working tree; every commit has the date it is given."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True)
        self.git("init", "--quiet", "--initial-branch", "main")
        self.git("config", "user.name", "Wiki Editor")
        self.git("config", "user.email", "editor@example.com")

    def git(self, *args: str, day: str = "2024-03-01") -> str:
        stamp = f"{day}T12:00:00+03:00"
        env = {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp, "HOME": str(self.path)}
        return subprocess.run(
            ["git", "-C", str(self.path), *args],
            check=True,
            capture_output=True,
            text=True,
            env={**_path_env(), **env},
        ).stdout.strip()

    def copy(self, page: str, to: str | None = None) -> None:
        target = self.path / (to or page)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(WIKI / page, target)

    def append(self, page: str, text: str) -> None:
        with (self.path / page).open("a", encoding="utf-8") as handle:
            handle.write(text)

    def commit(self, message: str, *, day: str) -> str:
        self.git("add", "--all")
        self.git("commit", "--quiet", "-m", message, day=day)
        return self.git("rev-parse", "HEAD")


def _path_env() -> dict[str, str]:
    import os

    return {"PATH": os.environ["PATH"], "LC_ALL": "C"}


@pytest.fixture
def wiki(tmp_path) -> WikiRepo:
    """Four wiki pages in one commit of 2024-03-01."""
    repo = WikiRepo(tmp_path / "wiki")
    for page in PAGES:
        repo.copy(page)
    repo.commit("Four pages of the QA Bible", day="2024-03-01")
    return repo


def add_source(name: str, url: str, *args: str) -> str:
    out = io.StringIO()
    call_command("source", "add", name, "--kind", "git", f"--url={url}", *args, stdout=out)
    return out.getvalue()


def sync(name: str) -> dict:
    """``manage.py source sync NAME --json``: the sync and the ingest of what it registered."""
    out = io.StringIO()
    call_command("source", "sync", name, "--json", stdout=out)
    return json.loads(out.getvalue())


def found_paths(query: str, source_id: int) -> list[str]:
    """Paths of the documents search finds for ``query`` in the source, best first (every
    searchable chunk counts: no minimum score)."""
    result = search(
        query,
        filters=Filters(source_ids=[source_id]),
        options=SearchOptions(hits=Hits(k=20, per_document=1, cascade=False), min_score=-1.0),
    )
    documents = dict(
        Chunk.objects.filter(pk__in=[h.chunk_id for h in result.hits]).values_list(
            "pk", "document__path"
        )
    )
    return [documents[h.chunk_id] for h in result.hits]
