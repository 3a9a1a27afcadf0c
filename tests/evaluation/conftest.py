"""Evaluation fixtures: the chat's test LLM server (answering model and judge)."""

from __future__ import annotations

from tests.chat.conftest import _llm_server, llm, llm_server  # noqa: F401
