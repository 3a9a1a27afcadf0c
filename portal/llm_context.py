"""What the LLM server says of its context: how many tokens it holds, how many a text takes,
and the last prompt it refused for its size.

- **The context**: ``KB_LLM_CONTEXT`` when set; else what the server says (llama.cpp's
  ``/v1/models`` ``meta.n_ctx`` or ``/props``, vLLM's ``max_model_len``); else
  ``LLM_CONTEXT_FALLBACK``. A refusal for size that names the server's context teaches it to
  this process (``learn``).
- **Tokens**: the server's own tokenizer (llama.cpp's ``/tokenize``) when it has one, else a
  conservative estimate (``ESTIMATE`` tokens a character: Qwen2.5's tokenizer takes 0.17-0.37 on
  the demo's pages, Russian and English).
- **Problems** (a prompt refused for its size, a deadline passed) are logged and kept in Redis
  for the staff health page (``/healthz/services``: the ``llm`` entry), shared by every process.
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
import time
from dataclasses import dataclass
from functools import lru_cache

import httpx2
import redis
from django.conf import settings

logger = logging.getLogger(__name__)

ESTIMATE = 0.4  # tokens per character when the server cannot count them
_PROBLEM_KEY = "kb:llm:problem"
_PROBLEM_SECONDS = 24 * 3600  # a problem stays on the health page this long
_RETRY_SECONDS = 60.0  # a server that did not say its context is asked again after this
_SIZE = re.compile(r"(\d[\d,]*)\s*tokens?", re.I)


@dataclass(frozen=True)
class Context:
    tokens: int
    source: str  # "KB_LLM_CONTEXT", "/v1/models", "/props", "max_model_len", "refusal", "default"


_lock = threading.Lock()
_known: dict[str, tuple[Context, float]] = {}  # base URL -> (context, when read)
_tokenizes: dict[str, bool] = {}  # base URL -> whether /tokenize answers


def _root(base_url: str) -> str:
    return re.sub(r"/v\d+/?$", "", base_url.rstrip("/"))


def _get(url: str, api_key: str, *, method: str = "GET", body: dict | None = None):
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    response = httpx2.request(method, url, json=body, headers=headers, timeout=2.0)
    response.raise_for_status()
    return response.json()


def context_of(base_url: str, api_key: str = "", configured: int = 0) -> Context:
    """The server's context in tokens (see the module docstring); read once per process."""
    if configured:
        with _lock:
            learned = _known.get(base_url)
        if learned and learned[0].source == "refusal" and learned[0].tokens < configured:
            return learned[0]
        return Context(configured, "KB_LLM_CONTEXT")
    with _lock:
        known = _known.get(base_url)
    if known and (known[0].source != "default" or time.monotonic() - known[1] < _RETRY_SECONDS):
        return known[0]
    found = _ask_server(base_url, api_key) or Context(settings.LLM_CONTEXT_FALLBACK, "default")
    with _lock:
        _known[base_url] = (found, time.monotonic())
    return found


def _ask_server(base_url: str, api_key: str) -> Context | None:
    try:
        models = _get(f"{base_url.rstrip('/')}/models", api_key).get("data") or []
        for model in models:
            meta = model.get("meta") or {}
            if meta.get("n_ctx"):
                return Context(int(meta["n_ctx"]), "/v1/models")
            if model.get("max_model_len"):
                return Context(int(model["max_model_len"]), "max_model_len")
    except (httpx2.HTTPError, ValueError, AttributeError, TypeError):
        pass
    try:
        props = _get(f"{_root(base_url)}/props", api_key)
        n_ctx = (props.get("default_generation_settings") or {}).get("n_ctx")
        if n_ctx:
            return Context(int(n_ctx), "/props")
    except (httpx2.HTTPError, ValueError, AttributeError, TypeError):
        pass
    return None


def learn(base_url: str, tokens: int) -> None:
    """The server said its context refusing a prompt: believe it from now on (this process)."""
    with _lock:
        _known[base_url] = (Context(tokens, "refusal"), time.monotonic())


def count_tokens(base_url: str, api_key: str, text: str) -> int:
    """``text``'s tokens by the server's tokenizer, or ``estimate(text)`` without one."""
    if not text:
        return 0
    if _tokenizes.get(base_url) is not False:
        try:
            found = _get(f"{_root(base_url)}/tokenize", api_key, method="POST",
                         body={"content": text, "add_special": False})  # fmt: skip
            _tokenizes[base_url] = True
            return int(found.get("count") or len(found["tokens"]))
        except (httpx2.HTTPError, ValueError, KeyError, TypeError):
            _tokenizes[base_url] = False
    return estimate(text)


def estimate(text: str) -> int:
    """A conservative count of ``text``'s tokens for a tokenizer not asked."""
    return math.ceil(len(text) * ESTIMATE)


def refused_for_size(body: object, message: str) -> tuple[int, int]:
    """(the prompt's tokens, the server's context) of an error refusing a prompt for its size;
    (0, 0) for any other error. llama.cpp says both (``n_prompt_tokens``, ``n_ctx``); vLLM
    and others say them in words ("maximum context length is 4096 tokens … requested 5000")."""
    error = body.get("error", body) if isinstance(body, dict) else {}
    if isinstance(error, dict) and (error.get("n_ctx") or error.get("n_prompt_tokens")):
        return int(error.get("n_prompt_tokens") or 0), int(error.get("n_ctx") or 0)
    text = (error.get("message") if isinstance(error, dict) else None) or message or ""
    if not re.search(r"context|too long|maximum", text, re.I):
        return 0, 0
    sizes = [int(n.replace(",", "")) for n in _SIZE.findall(text)]
    if "exceeds" in text and len(sizes) >= 2:
        return sizes[0], sizes[1]  # llama.cpp: "request (N tokens) exceeds … (C tokens)"
    if len(sizes) >= 2:  # vLLM: "maximum context length is C tokens. However, you requested N"
        return max(sizes[1:]), sizes[0]
    return (0, sizes[0]) if sizes else (0, 0)


@lru_cache(maxsize=1)
def _redis():
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=1, socket_connect_timeout=1)


def record_problem(text: str) -> None:
    """Log a problem of the LLM path in words the admin acts on, and keep it for the health
    page (a Redis outage loses only the health page's copy)."""
    logger.warning("LLM: %s", text)
    entry = json.dumps({"at": time.time(), "text": text})
    try:
        _redis().set(_PROBLEM_KEY, entry, ex=_PROBLEM_SECONDS)
    except redis.RedisError:
        logger.info("LLM problem not kept for the health page: Redis unavailable")


def health_detail() -> str:
    """The ``llm`` entry of the staff health page: the server and its context; raises with the
    last problem of the past day (a prompt refused for its size, a deadline passed). Optional:
    the portal answers with quotes without an LLM, so it never makes the portal unhealthy."""
    if not settings.LLM_BASE_URL:
        return "not configured: answers are extractive"
    found = context_of(settings.LLM_BASE_URL, settings.LLM_API_KEY, settings.LLM_CONTEXT)
    said = f"{settings.LLM_MODEL} at {settings.LLM_BASE_URL}, context {found.tokens} tokens ({found.source})"
    try:
        raw = _redis().get(_PROBLEM_KEY)
    except redis.RedisError:
        raw = None
    if raw:
        problem = json.loads(raw)
        ago = time.time() - float(problem.get("at", 0))
        raise RuntimeError(f"{said}; {ago / 60:.0f} min ago: {problem.get('text', '')}")
    return said
