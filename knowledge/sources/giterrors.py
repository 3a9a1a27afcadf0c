"""git's error output in plain words, for the source's last sync error."""

from __future__ import annotations

import re

_CREDENTIALS = re.compile(r"(\w+://)[^/@\s']+@")

_REFUSED = (
    "could not read username",
    "could not read password",
    "authentication failed",
    "permission denied",
    "returned error: 401",
    "returned error: 403",
    "access denied",
    "invalid username or password",
)
_MISSING = (
    "does not appear to be a git repository",
    "repository not found",
    "returned error: 404",
    "not found",
    "no such file or directory",
)
_UNREACHABLE = (
    "could not resolve host",
    "failed to connect",
    "connection refused",
    "connection timed out",
    "operation timed out",
    "network is unreachable",
    "no route to host",
    "could not resolve hostname",
    "ssl",
)


def explain(stderr: str, command: str, url: str, branch: str) -> str:
    """What went wrong, for staff: no git jargon where plain words say it, no secrets (``url``
    is already redacted), and git's own last line when nothing better is known."""
    text = stderr.lower()
    if command == "fetch":
        if "couldn't find remote ref" in text:
            if branch:
                return f'The branch "{branch}" does not exist in {url}.'
            return f"The repository at {url} has no commits yet."
        if any(marker in text for marker in _REFUSED):
            return (
                f"The repository at {url} refused access: check the credentials "
                "(a token in the URL, a credential helper, or the worker's SSH key)."
            )
        if any(marker in text for marker in _UNREACHABLE):
            return f"Could not reach {url}: {_last_line(stderr)}"
        if any(marker in text for marker in _MISSING):
            return f"There is no git repository at {url}."
        return f"git could not fetch {url}: {_last_line(stderr)}"
    return f"git {command} failed: {_last_line(stderr)}"


def _last_line(stderr: str) -> str:
    """git's message without its "fatal:" prefix; its advice lines dropped."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    fatal = [line for line in lines if line.lower().startswith(("fatal:", "error:"))]
    line = (fatal or lines or ["no message"])[0]
    if line.lower().startswith(("fatal:", "error:")):
        line = line.split(":", 1)[1].strip()
    return _CREDENTIALS.sub(r"\1***@", line)  # git hides passwords itself; a token, not always
