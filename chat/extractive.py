"""Extractive answers: the best passages quoted with their links, when no LLM is configured
or the LLM is down. Clearly labelled: nothing here is generated."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")
_WORD = re.compile(r"\w{3,}", re.UNICODE)

EXTRACTIVE_LABEL_RU = (
    "Ответ составлен из цитат документов (без языковой модели): самые подходящие фрагменты."
)
EXTRACTIVE_LABEL_EN = (
    "Extractive answer (no language model): the passages that best match the question."
)


@dataclass
class Passage:
    number: int
    title: str
    heading: str
    text: str
    is_table: bool = False


def _stem(word: str) -> str:
    return word.lower()[:6]  # crude, language-agnostic: enough to rank sentences


def best_quote(question: str, text: str, limit: int = 450) -> str:
    """The sentences of ``text`` sharing most words with the question, in their order."""
    if text.lstrip().startswith("|") or "\n|" in text[:400]:
        return _table_excerpt(text, question, limit)
    wanted = {_stem(w) for w in _WORD.findall(question)}
    sentences = [s.strip() for s in _SENTENCE.split(text) if s.strip()]
    if not sentences:
        return text[:limit]
    scored = sorted(
        range(len(sentences)),
        key=lambda i: -len(wanted & {_stem(w) for w in _WORD.findall(sentences[i])}),
    )
    chosen: list[int] = []
    used = 0
    for i in scored:
        if used + len(sentences[i]) > limit and chosen:
            break
        chosen.append(i)
        used += len(sentences[i]) + 1
    quote = " ".join(sentences[i] for i in sorted(chosen))
    return quote if len(quote) <= limit + 200 else quote[:limit].rsplit(" ", 1)[0] + " …"


def _table_excerpt(text: str, question: str, limit: int) -> str:
    lines = text.splitlines()
    header = [line for line in lines[:2] if line.startswith("|")]
    rows = [line for line in lines[2:] if line.startswith("|")]
    wanted = {_stem(w) for w in _WORD.findall(question)}
    rows.sort(key=lambda r: -len(wanted & {_stem(w) for w in _WORD.findall(r)}))
    kept: list[str] = []
    for row in rows:
        if sum(len(r) for r in kept) + len(row) > limit * 2 and kept:
            break
        kept.append(row)
    caption = [line for line in lines if line.strip() and not line.startswith("|")][:1]
    return "\n".join(caption + header + kept)


def extractive_answer(
    question: str, passages: list[Passage], *, russian: bool, notice: str = ""
) -> str:
    """Markdown: a label, then up to three quotes each with its citation."""
    label = EXTRACTIVE_LABEL_RU if russian else EXTRACTIVE_LABEL_EN
    parts = [f"*{label}*"]
    if notice:
        parts.insert(0, f"**{notice}**")
    for passage in passages[:3]:
        quote = best_quote(question, passage.text)
        where = (
            f"**{passage.title}** — {passage.heading}"
            if passage.heading
            else f"**{passage.title}**"
        )
        if quote.lstrip().startswith("|") or "\n|" in quote:
            parts.append(f"{where} [{passage.number}]\n\n{quote}")
        else:
            quoted = "\n".join("> " + line for line in quote.splitlines())
            parts.append(f"{where} [{passage.number}]\n\n{quoted}")
    return "\n\n".join(parts)
