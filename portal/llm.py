"""The LLM behind one interface: any OpenAI-compatible server (vLLM, llama.cpp, LM Studio,
Ollama) through the ``openai`` package. No server configured: ``get_llm()`` is None and the
answers are extractive."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Protocol

from django.conf import settings


class LlmUnavailable(Exception):
    """The LLM server is down, timed out or answered with an error; the message says which."""


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


class LLM(Protocol):
    model_id: str

    def stream(
        self, messages: Sequence[dict[str, str]], *, temperature: float, usage: Usage
    ) -> Iterator[str]:
        """Yield the answer's text as it is generated; fills ``usage`` at the end."""
        ...

    def complete(
        self, messages: Sequence[dict[str, str]], *, temperature: float = 0.0, max_tokens: int = 200
    ) -> str:
        """A short, non-streamed completion (classification, rewriting, reformulation)."""
        ...


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
    ) -> None:
        # The OpenAI-compatible backend, loaded only when an LLM is configured (get_llm returns
        # None otherwise): openai takes a second and more to import.
        import httpx2
        import openai

        self.model_id = model
        self._max_tokens = max_tokens
        self._errors = (
            openai.APIError,
            openai.APIConnectionError,
            openai.APITimeoutError,
            httpx2.HTTPError,
        )
        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            timeout=httpx2.Timeout(timeout, connect=connect_timeout),
            max_retries=0,
        )

    def stream(self, messages, *, temperature: float, usage: Usage) -> Iterator[str]:
        try:
            response = self._client.chat.completions.create(
                model=self.model_id,
                messages=list(messages),
                temperature=temperature,
                max_tokens=self._max_tokens,
                stream=True,
                stream_options={"include_usage": True},
            )
            for chunk in response:
                if chunk.usage:
                    usage.prompt_tokens = chunk.usage.prompt_tokens or 0
                    usage.completion_tokens = chunk.usage.completion_tokens or 0
                for choice in chunk.choices or []:
                    if choice.delta and choice.delta.content:
                        yield choice.delta.content
        except self._errors as exc:
            raise LlmUnavailable(_describe(exc)) from exc

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
            raise LlmUnavailable(_describe(exc)) from exc
        return (response.choices[0].message.content or "").strip() if response.choices else ""


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
    """A client for one OpenAI-compatible server, with the portal's timeouts."""
    return OpenAICompatibleLLM(
        base_url,
        model,
        api_key,
        timeout=settings.LLM_TIMEOUT,
        connect_timeout=settings.LLM_CONNECT_TIMEOUT,
        max_tokens=max_tokens,
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
