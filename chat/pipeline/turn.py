"""A turn of the conversation as the pipeline's steps see it, and how it ends."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from chat.answer.prompting import PromptSource
from chat.assess.answerability import Answerability
from chat.models import Message
from knowledge.question import Question
from knowledge.retrieval import Filters, SearchResult
from portal.llm import LLM


@dataclass
class Turn:
    """What the steps know of one question so far: each step reads what earlier ones set and
    adds its own part (the reading, the filters, the search result, the sources, the check)."""

    message: Message
    user: Any
    llm: LLM | None
    source_ids: list[int] | None = None  # an MCP ask_<kind> tool's sources (narrows, never widens)
    started: float = field(default_factory=time.perf_counter)
    timings: dict[str, Any] = field(default_factory=dict)
    history: list[tuple[str, str, str]] = field(default_factory=list)
    language: str = "ru"  # the question's: every text the pipeline says is in it
    query: str = ""  # what is searched: the question, standalone, or a tile's reformulation
    reading: Question | None = None
    filters: Filters = field(default_factory=Filters)
    result: SearchResult | None = None
    sources: list[PromptSource] = field(default_factory=list)
    check: Answerability | None = None
    unsupported: list[str] | None = None  # a generated answer's sentences no source supports
    grounding: dict | None = None  # the check of a generated answer (chat.assess.grounding)

    @property
    def question(self) -> str:
        return self.message.question

    def lap(self, name: str, since: float) -> None:
        """Record a step's time in milliseconds."""
        self.timings[name] = round((time.perf_counter() - since) * 1000, 1)


@dataclass(frozen=True)
class Final:
    """How a turn ends: the one thing ``finish`` stores. A step that decides the outcome
    returns one; the others return None and the next step runs."""

    answer: str
    outcome: str
    mode: str = Message.Mode.NONE
    tiles: tuple[dict, ...] = ()
    tile_documents: tuple[int, ...] = ()  # what the tiles came from (who may see the turn)
    notice: str = ""
    llm_model: str = ""
    removed_citations: tuple[int, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
