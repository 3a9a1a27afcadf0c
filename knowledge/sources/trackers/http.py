"""A tracker's HTTP API: JSON in and out, every failure a ``SyncError`` in plain words.

The token travels in a header only, never in a URL, so no message or log line can show it.
Busy answers (429, 502, 503, 504) and dropped connections are tried again a couple of times
with a short backoff; anything else ends the sync at once, and the sync service keeps nothing
of it.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit

import httpx2

from knowledge.sources.base import SyncError

BUSY = {429, 502, 503, 504}


class JsonClient:
    def __init__(
        self,
        base: str,
        headers: dict[str, str],
        *,
        timeout: float,
        retries: int = 2,
        backoff: float = 1.0,
        token_hint: str = "",
    ) -> None:
        self.base = base.rstrip("/")
        self.host = urlsplit(self.base).hostname or self.base
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.token_hint = token_hint  # which variables hold the token, for a 401
        self._client = httpx2.Client(
            headers={"Accept": "application/json", **headers},
            timeout=httpx2.Timeout(timeout, connect=min(timeout, 10.0)),
            # A redirect to a sign-in page is a refusal, not data; and followed, it would carry
            # the token to whatever host it names (knowledge.sources.tracker: KB_TRACKER_HOSTS).
            follow_redirects=False,
        )

    def get(self, path: str, params: dict | None = None) -> tuple[Any, httpx2.Headers]:
        return self._send("GET", path, params, None)

    def post(
        self, path: str, params: dict | None = None, body: Any = None
    ) -> tuple[Any, httpx2.Headers]:
        return self._send("POST", path, params, body)

    def close(self) -> None:
        self._client.close()

    def _send(self, method: str, path: str, params, body) -> tuple[Any, httpx2.Headers]:
        url = self.base + path
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                response = self._client.request(method, url, params=params, json=body)
            except httpx2.TimeoutException:
                problem = f"The tracker at {self.host} did not answer within {self.timeout:.0f} s"
                continue
            except httpx2.HTTPError as exc:
                problem = f"Could not reach the tracker at {self.host} ({type(exc).__name__})"
                continue
            if response.status_code in BUSY:
                problem = f"The tracker at {self.host} is busy ({response.status_code})"
                continue
            if response.status_code >= 300:
                raise SyncError(self._refusal(response, path))
            try:
                return response.json(), response.headers
            except ValueError:
                raise SyncError(
                    f"The tracker at {self.host} answered {path} with something that is not JSON; "
                    "check the source's URL."
                ) from None
        raise SyncError(f"{problem}; nothing was changed, the next sync tries again.")

    def _refusal(self, response: httpx2.Response, path: str) -> str:
        status = response.status_code
        if status == 401:
            return (
                f"The tracker at {self.host} refused the token (401): it is missing, wrong or "
                f"expired. {self.token_hint}".strip()
            )
        if status == 403:
            return (
                f"The tracker at {self.host} refused access (403): the token's account may not "
                "read these tickets."
            )
        if status == 404:
            return f"The tracker at {self.host} has nothing at {path} (404): check the URL and the query."
        if status >= 500:
            return (
                f"The tracker at {self.host} failed with a server error ({status}); nothing was "
                "changed, the next sync starts again from the same point."
            )
        if 300 <= status < 400:
            return (
                f"The tracker at {self.host} sent a redirect ({status}) instead of data: check the "
                "URL (the API's address, not a sign-in page)."
            )
        said = _message(response)
        return f"The tracker at {self.host} rejected the request ({status}){': ' + said if said else ''}."


def _message(response: httpx2.Response) -> str:
    """The tracker's own words about a refused request (a JQL error, a bad filter)."""
    try:
        data = response.json()
    except ValueError:
        return ""
    if not isinstance(data, dict):
        return ""
    parts = (
        data.get("errorMessages") or data.get("errors") or data.get("message") or data.get("error")
    )
    if isinstance(parts, dict):
        parts = [f"{k}: {v}" for k, v in parts.items()]
    if isinstance(parts, list):
        parts = "; ".join(str(p) for p in parts)
    return str(parts or "")[:300]
