"""A wiki (or any folder of documents) kept in a git repository.

The repository is fetched into a bare copy under ``KB_SOURCES_DIR/<source id>`` with the ``git``
command (any URL git can fetch, or a local path; never a shell, always a timeout). The first
sync lists the whole tree; later ones read ``git diff --raw -M <last synced> <fetched>``, so
only changed files are read again, deleted files leave search and renamed files keep their
document. ``history_depth`` N imports the last N commits of each page as its versions, oldest
first, labelled "<date> <short sha>".
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath
from zoneinfo import ZoneInfo

from django.conf import settings

from knowledge.ingest.files import SKIPPED_NAMES
from knowledge.ingest.registration import SUPPORTED_SUFFIXES
from knowledge.models import redact_url
from knowledge.sources.base import ChangedItem, Changes, ItemVersion, SyncError
from knowledge.sources.giterrors import explain

NOT_FILES = {"120000", "160000", "000000"}  # symbolic links, submodules, nothing
SYNCED_REF = "refs/kb/fetched"


@dataclass(frozen=True)
class Entry:
    """One line of ``git diff --raw`` / ``git log --raw`` / ``git ls-tree``."""

    status: str  # A, M, D, R, T
    path: str
    blob: str
    mode: str
    old_path: str = ""
    old_mode: str = ""


@dataclass(frozen=True)
class Commit:
    sha: str
    time: int  # committer time, epoch seconds
    blob: str  # the page's bytes at this commit


class GitConnector:
    """Reads a source's repository; one instance per sync (it may hold a ``git cat-file``)."""

    def __init__(self, source, *, root: Path | None = None, timeout: float | None = None) -> None:
        self.url = source.sync_url.strip()
        self.branch = source.branch.strip()
        self.subpath = source.subpath.strip().strip("/")
        self.depth = max(1, source.history_depth)
        self.repo = (root or settings.SOURCES_DIR) / str(source.pk) / "repo.git"
        self.timeout = timeout or settings.GIT_TIMEOUT_SECONDS
        self._reader: subprocess.Popen | None = None

    # --- the interface ---------------------------------------------------------------------

    def changes(self, cursor: str) -> Changes:
        head = self._fetch()
        where = f"commit {head[:7]}"
        if cursor == head:
            return Changes(cursor=head, where=where)
        if cursor and self._known(cursor):
            wanted, deleted = self._changed(cursor, head)
            revisions = [f"{cursor}..{head}"]
            complete = False
        else:  # a first sync, or a cursor this copy never saw: everything, and the rest goes
            wanted, deleted = self._listed(head), []
            revisions, complete = [head], True
            if not wanted:
                place = f"under {self.subpath}/" if self.subpath else "in the repository"
                raise SyncError(
                    f"No documents the portal can read {place} at {where}; nothing was changed."
                )
        refused = self._too_big(wanted)
        history = self._history(revisions, set(wanted))
        items = (
            ChangedItem(
                path=document,
                previous_path=previous,
                versions=self._versions(history.get(path) or [Commit(head, 0, blob)]),
            )
            for path, (document, previous, blob) in sorted(wanted.items())
        )
        return Changes(
            cursor=head,
            items=items,
            deleted=deleted,
            complete=complete,
            refused=refused,
            where=where,
        )

    def close(self) -> None:
        if self._reader is not None:
            self._reader.kill()
            self._reader.wait()
            self._reader = None

    # --- fetching ----------------------------------------------------------------------------

    def _fetch(self) -> str:
        if not (self.repo / "HEAD").exists():
            self.repo.mkdir(parents=True, exist_ok=True)
            self._git("init", "--bare", "--quiet", ".")
        ref = f"refs/heads/{self.branch}" if self.branch else "HEAD"
        self._git(
            "fetch", "--no-tags", "--force", "--quiet", "--", self.url, f"+{ref}:{SYNCED_REF}"
        )
        return self._git("rev-parse", "--verify", f"{SYNCED_REF}^{{commit}}").strip()

    def _known(self, commit: str) -> bool:
        try:
            self._git("cat-file", "-e", f"{commit}^{{commit}}")
        except SyncError:
            return False
        return True

    # --- what changed ------------------------------------------------------------------------

    def _listed(self, head: str) -> dict[str, tuple[str, str, str]]:
        """repo path -> (document path, previous document path, blob) of every document."""
        out = self._git("ls-tree", "-r", "-z", "--full-tree", head)
        wanted = {}
        for record in filter(None, out.split("\0")):
            meta, path = record.split("\t", 1)
            mode, _, blob = meta.split()
            document = self.document_path(path, mode)
            if document:
                wanted[path] = (document, "", blob)
        return wanted

    def _changed(self, old: str, new: str) -> tuple[dict[str, tuple[str, str, str]], list[str]]:
        out = self._git("diff", "--raw", "-z", "-M", "--no-abbrev", old, new)
        wanted, deleted = {}, []
        for entry in parse_raw(out.split("\0")):
            document = self.document_path(entry.path, entry.mode)
            before = self.document_path(entry.old_path or entry.path, entry.old_mode)
            if entry.status == "D" or not document:
                if before and entry.status != "A":
                    deleted.append(before)
                continue
            # A file renamed from outside the folder (or from a non-document) is a new one.
            previous = before if entry.status == "R" and before else ""
            wanted[entry.path] = (document, previous, entry.blob)
        return wanted, deleted

    def document_path(self, path: str, mode: str) -> str | None:
        """The document a repository file is, or None when it is not one."""
        if not path or mode in NOT_FILES:
            return None
        if self.subpath:
            if not path.startswith(self.subpath + "/"):
                return None
            path = path[len(self.subpath) + 1 :]
        pure = PurePosixPath(path)
        if any(part.startswith(".") for part in pure.parts):
            return None
        if pure.suffix.lower() not in SUPPORTED_SUFFIXES or pure.name in SKIPPED_NAMES:
            return None
        return path

    def _too_big(self, wanted: dict[str, tuple[str, str, str]]) -> list[tuple[str, str]]:
        """Files over the upload limit, taken out of ``wanted`` (never read)."""
        if not wanted:
            return []
        blobs = "".join(f"{blob}\n" for _, _, blob in wanted.values())
        sizes = {}
        for line in self._git("cat-file", "--batch-check", stdin=blobs).splitlines():
            parts = line.split()
            if len(parts) == 3:
                sizes[parts[0]] = int(parts[2])
        limit = settings.MAX_UPLOAD_MB * 1024 * 1024
        refused = []
        for path, (document, _, blob) in list(wanted.items()):
            if sizes.get(blob, 0) > limit:
                del wanted[path]
                megabytes = sizes[blob] / 1024 / 1024
                refused.append(
                    (
                        document,
                        f"The file is {megabytes:.0f} MB; the limit is {settings.MAX_UPLOAD_MB} MB",
                    )
                )
        return refused

    # --- history -----------------------------------------------------------------------------

    def _history(self, revisions: list[str], paths: set[str]) -> dict[str, list[Commit]]:
        """repo path -> the commits that changed it (up to ``depth``, newest first), renames
        followed back, along the first-parent line (a merge counts as one change)."""
        out = self._git(
            "log",
            "--first-parent",
            "--diff-merges=first-parent",
            "--raw",
            "-z",
            "--no-abbrev",
            "-M",
            "--format=%x01%H%x00%ct",
            *revisions,
            "--",
        )
        tracking = {path: path for path in paths}  # its name at this point -> its name now
        found: dict[str, list[Commit]] = {path: [] for path in paths}
        for sha, time, entries in parse_log(out):
            moves: dict[str, str] = {}
            for entry in entries:
                current = tracking.pop(entry.path, None)
                if current is None:
                    continue
                if entry.status == "D" or entry.mode in NOT_FILES:
                    continue
                found[current].append(Commit(sha, time, entry.blob))
                if len(found[current]) >= self.depth or entry.status == "A":
                    continue
                moves[entry.old_path if entry.status == "R" else entry.path] = current
            tracking.update(moves)  # after the commit: a name freed and reused in it stays apart
            if not tracking:
                break
        return found

    def _versions(self, commits: list[Commit]) -> Iterator[ItemVersion]:
        zone = ZoneInfo(settings.TIME_ZONE)
        for commit in reversed(commits):  # oldest first
            when = datetime.fromtimestamp(commit.time or 0, tz=zone) if commit.time else None
            label = f"{when.date().isoformat()} {commit.sha[:7]}" if when else commit.sha[:7]
            yield ItemVersion(
                data=self._read(commit.blob),
                label=label,
                label_date=when.date() if when else None,
                updated_at=when,
            )

    def _read(self, blob: str) -> bytes:
        """A blob's bytes, through one ``git cat-file --batch`` kept open for the sync (a local
        copy: no network, so no timeout per read; the process ends with the sync)."""
        if self._reader is None:
            self._reader = subprocess.Popen(
                ["git", "-C", str(self.repo), "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=git_env(),
            )
        assert self._reader.stdin is not None and self._reader.stdout is not None
        self._reader.stdin.write(blob.encode() + b"\n")
        self._reader.stdin.flush()
        header = self._reader.stdout.readline().split()
        if len(header) != 3:
            raise SyncError(f"The copy of the repository lacks a file ({blob[:12]}); sync again")
        data = self._reader.stdout.read(int(header[2]))
        self._reader.stdout.read(1)  # the newline after the contents
        return data

    # --- running git -------------------------------------------------------------------------

    def _git(self, *args: str, stdin: str | None = None) -> str:
        """Run git in the copy; a failure becomes a SyncError in plain words."""
        process = subprocess.Popen(
            ["git", "-C", str(self.repo), *args],
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=git_env(),
            start_new_session=True,  # so that a timeout ends git's helpers (ssh, remote-https) too
        )
        try:
            out, err = process.communicate(stdin.encode() if stdin else None, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise SyncError(
                f"git did not finish within {self.timeout:.0f} s ({args[0]} {redact_url(self.url)}); "
                "the server may be unreachable or the repository too large"
            ) from None
        if process.returncode != 0:
            message = err.decode("utf-8", "replace")
            raise SyncError(explain(message, args[0], redact_url(self.url), self.branch))
        return out.decode("utf-8", "replace")


def git_env() -> dict[str, str]:
    """git never asks for a password on a terminal (it fails instead), and speaks English."""
    env = dict(os.environ)
    env.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C", LANG="C")
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes -o ConnectTimeout=20")
    return env


def parse_raw(tokens: list[str]) -> Iterator[Entry]:
    """Entries of ``--raw -z`` output: ":old new oldblob newblob status", then one path, or
    two for a rename or copy."""
    i = 0
    while i < len(tokens):
        head = tokens[i].lstrip("\n")
        if not head.startswith(":"):
            i += 1
            continue
        old_mode, mode, _, blob, status = head[1:].split(" ")
        kind = status[0]
        if kind in "RC":
            yield Entry(kind, tokens[i + 2], blob, mode, old_path=tokens[i + 1], old_mode=old_mode)
            i += 3
        else:
            yield Entry(kind, tokens[i + 1], blob, mode, old_mode=old_mode)
            i += 2


def parse_log(out: str) -> Iterator[tuple[str, int, list[Entry]]]:
    """(sha, committer time, entries) per commit of ``git log --raw -z --format=%x01%H%x00%ct``."""
    for record in out.split("\x01"):
        if not record.strip():
            continue
        tokens = record.split("\0")
        yield tokens[0].strip(), int(tokens[1].strip()), list(parse_raw(tokens[2:]))
