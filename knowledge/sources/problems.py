"""What is wrong with a source's sync settings, in plain words: the admin form and the
``source`` command ask before a source that syncs itself is saved."""

from __future__ import annotations

from pathlib import PurePosixPath

from knowledge.models import Source
from knowledge.sources.tracker import settings_problem


def sync_settings_problems(source: Source) -> dict[str, str]:
    """Field -> what is wrong, for a source that syncs itself (the admin and the command)."""
    problems: dict[str, str] = {}
    connector = source.connector
    if not connector:
        return problems
    url = source.sync_url.strip()
    if not url:
        problems["sync_url"] = "A source that syncs needs the URL or path it syncs from."
    elif url.startswith("-"):
        problems["sync_url"] = "A URL or path cannot start with '-'."
    if connector == "folder" and url and not url.startswith("/"):
        problems["sync_url"] = "A folder is given by its absolute path on the server."
    if connector == "tracker" and url and (problem := settings_problem(url)):
        problems["sync_url"] = problem
    if source.branch.startswith("-") or ".." in source.branch or " " in source.branch:
        problems["branch"] = "Not a branch name."
    if ".." in PurePosixPath(source.subpath).parts:
        problems["subpath"] = "The folder must be inside the repository."
    return problems
