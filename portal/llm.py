"""The LLM behind one interface: any OpenAI-compatible server (vLLM, llama.cpp, LM Studio,
Ollama) through the ``openai`` package. No server configured: ``get_llm()`` is None and the
answers are extractive.

A streamed answer has three deadlines (``KB_LLM_FIRST_TOKEN_TIMEOUT``, ``KB_LLM_TOKEN_TIMEOUT``,
``KB_LLM_TIMEOUT``): the server reads the whole prompt before its first token, which takes a CPU
server minutes, while a stream that stalls between two tokens is dead much sooner. The HTTP
stream is read in a thread of its own, so that the caller hears every ``TICK`` seconds that the
model is still reading (``stream`` yields ``""``) and gives up at the deadline that applies;
the reading thread then closes the connection (the server stops working on it) at its next
chunk, or at the HTTP read timeout when the server sends nothing more.

What the server says of its context, its tokens, and the last prompt it refused for its size:
``portal.llm_context``.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Protocol

from django.conf import settings

from portal import llm_context

TICK = 5.0  # seconds between two "still reading" signals of a stream that sends nothing


class LlmUnavailable(Exception):
    """The LLM server is down, timed out or answered with an error; the message says which."""


class LlmContextExceeded(LlmUnavailable):
    """The server refused the prompt for its size; the figures it gave (0 when it gave none)."""

    def __init__(self, message: str, *, prompt_tokens: int = 0, context: int = 0) -> None:
        super().__init__(message)
        self.prompt_tokens = prompt_tokens
        self.context = context


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class Deadlines:
    """Seconds a streamed answer may take: to its first token, between two tokens, in all."""

    first_token: float
    between_tokens: float
    total: float

    def left(self, started: float, last_token: float | None, now: float) -> tuple[float, str]:
        """Seconds left before the deadline that applies now, and what it says when it passes."""
        whole = self.total - (now - started)
        if last_token is None:
            first = self.first_token - (now - started)
            if first <= whole:
                return first, f"did not start answering within {self.first_token:g} s"
        else:
            between = self.between_tokens - (now - last_token)
            if between < whole:
                return between, f"sent nothing for {self.between_tokens:g} s"
        return whole, f"did not finish its answer within {self.total:g} s"


class LLM(Protocol):
    model_id: str

    def stream(
        self,
        messages: Sequence[dict[str, str]],
        *,
        temperature: float,
        usage: Usage,
        max_tokens: int | None = None,
    ) -> Iterator[str]:
        """Yield the answer's text as it is generated, and ``""`` every ``TICK`` seconds while
        nothing comes (the model still reads); fills ``usage`` at the end. Raises
        LlmUnavailable (LlmContextExceeded for a prompt too long) or at a deadline."""
        ...

    def complete(
        self, messages: Sequence[dict[str, str]], *, temperature: float = 0.0, max_tokens: int = 200
    ) -> str:
        """A short, non-streamed completion (classification, rewriting, reformulation)."""
        ...

    def context(self) -> llm_context.Context:
        """The server's context in tokens, and where that figure comes from."""
        ...

    def count_tokens(self, text: str) -> int:
        """The tokens of ``text`` for this server (its tokenizer, or a conservative estimate)."""
        ...


_END = object()


def _relay(open_stream: Callable[[], object], out: queue.SimpleQueue, stop: threading.Event):
    """Read the server's stream (in a daemon thread), handing each chunk, then the end or the
    error, to the caller; once the caller gave up, close the connection at the next chunk."""
    try:
        response = open_stream()
        try:
            for chunk in response:
                out.put(chunk)
                if stop.is_set():
                    break
        finally:
            response.close()
    except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, raised there
        out.put(exc)
    else:
        out.put(_END)


class OpenAICompatibleLLM:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str,
        *,
        timeout: float,
        connect_timeout: float,
        max_tokens: int,
        first_token_timeout: float | None = None,
        token_timeout: float | None = None,
        context: int = 0,
        tick: float = TICK,
    ) -> None:
        # The OpenAI-compatible backend, loaded only when an LLM is configured (get_llm returns
        # None otherwise): openai takes a second and more to import.
        import httpx2
        import openai

        self.model_id = model
        self.base_url = base_url
        self._api_key = api_key
        self._max_tokens = max_tokens
        self._configured_context = context
        self._tick = tick
        self.deadlines = Deadlines(
            first_token_timeout if first_token_timeout is not None else timeout,
            token_timeout if token_timeout is not None else timeout,
            timeout,
        )
        self._errors = (
            openai.APIError,
            openai.APIConnectionError,
            openai.APITimeoutError,
            httpx2.HTTPError,
        )
        # A read waits at most as long as the longest deadline (then the reading thread of a
        # stream its caller gave up on ends by itself).
        read = max(self.deadlines.first_token, self.deadlines.between_tokens) + tick
        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            timeout=httpx2.Timeout(read, connect=connect_timeout),
            max_retries=0,
        )

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    def stream(
        self, messages, *, temperature: float, usage: Usage, max_tokens: int | None = None
    ) -> Iterator[str]:
        out: queue.SimpleQueue = queue.SimpleQueue()
        stop = threading.Event()

        def open_stream():
            return self._client.chat.completions.create(
                model=self.model_id,
                messages=list(messages),
                temperature=temperature,
                max_tokens=max_tokens or self._max_tokens,
                stream=True,
                stream_options={"include_usage": True},
            )

        threading.Thread(
            target=_relay, args=(open_stream, out, stop), daemon=True, name="llm-stream"
        ).start()
        started, last = time.monotonic(), None
        try:
            while True:
                left, why = self.deadlines.left(started, last, time.monotonic())
                if left <= 0:
                    raise LlmUnavailable(f"the language model {why}")
                try:
                    item = out.get(timeout=min(self._tick, left))
                except queue.Empty:
                    yield ""  # still reading: the caller may say so
                    continue
                if item is _END:
                    return
                if isinstance(item, BaseException):
                    if isinstance(item, self._errors):
                        raise self._unavailable(item) from item
                    raise item
                if item.usage:
                    usage.prompt_tokens = item.usage.prompt_tokens or 0
                    usage.completion_tokens = item.usage.completion_tokens or 0
                for choice in item.choices or []:
                    if choice.delta and choice.delta.content:
                        last = time.monotonic()
                        yield choice.delta.content
        finally:
            stop.set()  # the reading thread closes the connection at its next chunk

    def complete(self, messages, *, temperature: float = 0.0, max_tokens: int = 200) -> str:
        try:
            response = self._client.chat.completions.create(
                model=self.model_id,
                messages=list(messages),
                temperature=temperature,
                max_tokens=max_tokens,
                stream=False,
            )
        except self._errors as exc:
            raise self._unavailable(exc) from exc
        return (response.choices[0].message.content or "").strip() if response.choices else ""

    def context(self) -> llm_context.Context:
        return llm_context.context_of(self.base_url, self._api_key, self._configured_context)

    def count_tokens(self, text: str) -> int:
        return llm_context.count_tokens(self.base_url, self._api_key, text)

    def _unavailable(self, exc: Exception) -> LlmUnavailable:
        if getattr(exc, "status_code", None) in (400, 413):  # the backend's APIStatusError
            prompt, context = llm_context.refused_for_size(getattr(exc, "body", None), str(exc))
            if prompt or context:
                return LlmContextExceeded(
                    f"the language model server refused a prompt of {prompt or '?'} tokens "
                    f"over its context of {context or '?'} tokens",
                    prompt_tokens=prompt,
                    context=context,
                )
        return LlmUnavailable(_describe(exc))


def _describe(exc: Exception) -> str:
    import openai  # the backend's errors: only ever raised once the backend is loaded

    if isinstance(exc, openai.APITimeoutError):
        return "the language model did not answer in time"
    if isinstance(exc, openai.APIConnectionError):
        return "the language model server cannot be reached"
    if isinstance(exc, openai.APIStatusError):
        return f"the language model server answered with an error ({exc.status_code})"
    return f"the language model failed ({type(exc).__name__})"


def build_llm(base_url: str, model: str, api_key: str, *, max_tokens: int) -> OpenAICompatibleLLM:
    """A client for one OpenAI-compatible server, with the portal's deadlines."""
    return OpenAICompatibleLLM(
        base_url,
        model,
        api_key,
        timeout=settings.LLM_TIMEOUT,
        first_token_timeout=settings.LLM_FIRST_TOKEN_TIMEOUT,
        token_timeout=settings.LLM_TOKEN_TIMEOUT,
        connect_timeout=settings.LLM_CONNECT_TIMEOUT,
        max_tokens=max_tokens,
        context=settings.LLM_CONTEXT,
    )


@cache
def get_llm() -> LLM | None:
    """The configured LLM, or None when KB_LLM_BASE_URL is not set (extractive answers)."""
    if not settings.LLM_BASE_URL:
        return None
    return build_llm(
        settings.LLM_BASE_URL,
        settings.LLM_MODEL,
        settings.LLM_API_KEY,
        max_tokens=settings.LLM_MAX_TOKENS,
    )


def temperature_for(profile) -> float:
    """The profile's temperature, or the portal's default (KB_LLM_TEMPERATURE)."""
    return profile.temperature if profile is not None else settings.LLM_TEMPERATURE
