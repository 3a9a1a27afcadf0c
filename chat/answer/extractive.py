"""Extractive answers: the best passages quoted with their links, when no LLM is configured
or the LLM is down. Clearly labelled: nothing here is generated."""

from __future__ import annotations

import re
from dataclasses import dataclass

from chat.answer import wording
from knowledge.question.named import named_words
from knowledge.question.nlp import lemma
from knowledge.tables import markdown_cells

_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")
_WORD = re.compile(r"\w{3,}", re.UNICODE)


@dataclass
class Passage:
    number: int
    title: str
    heading: str
    text: str
    is_table: bool = False


_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|https?://\S+|www\.\S+")
_LINK_HEADINGS = re.compile(
    r"^(?:источники|доп\.? ?материал\w*|дополнительн\w* материал\w*|полезные ссылки|ссылки|"
    r"литература|видео|sources|references|further reading|links|see also)\b",
    re.IGNORECASE,
)


def is_link_only(text: str) -> bool:
    """A block that is mostly links (a list of sources, videos, further reading): searchable,
    never quoted as an answer."""
    links = _LINK.findall(text)
    if not links:
        return False
    words_left = _WORD.findall(_LINK.sub(" ", text))
    words_in_links = sum(len(_WORD.findall(label)) for label in links)
    return len(words_left) <= max(3, words_in_links // 2)


def _quotable(sentence: str) -> bool:
    return len(_WORD.findall(_LINK.sub(" ", sentence))) >= 3


def _stem(word: str) -> str:
    return lemma(word)  # the one lemmatiser (knowledge.question.nlp): enough to rank sentences


def best_quote(question: str, text: str, limit: int = 450) -> str:
    """The sentences of ``text`` sharing most words with the question, in their order."""
    if text.lstrip().startswith("|") or "\n|" in text[:400]:
        return _table_excerpt(text, question, limit)
    wanted = {_stem(w) for w in _WORD.findall(question)}
    sentences = [s.strip() for s in _SENTENCE.split(text) if s.strip()]
    sentences = [s for s in sentences if _quotable(s)] or sentences
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
    # The header row and its separator come first even after a caption above the table.
    table = [line for line in lines if line.startswith("|")]
    header, rows = table[:2], table[2:]
    if rows and _title_row(header[0]):
        # A title row across the table ("| Поля | | |"): the column names are the next row.
        header, rows = [*header, rows[0]], rows[1:]
    wanted = {_stem(w) for w in _WORD.findall(question)}
    # A row labelled with what the question names ("поле Link": the row "| Link | ...") before
    # rows sharing only its words; a name elsewhere in a row ("POST" in "courier | post") is a word.
    names = {n.casefold() for n in named_words(question)}

    def score(row: str) -> int:
        named = len(names & {w.casefold() for w in _WORD.findall(_row_label(row))})
        return 3 * named + len(wanted & {_stem(w) for w in _WORD.findall(row)})

    best = sorted(range(len(rows)), key=lambda i: -score(rows[i]))
    if best and score(rows[best[0]]) >= 3:  # rows labelled with the thing asked about: those
        best = [i for i in best if score(rows[i]) >= 3]
    kept: list[int] = []
    for i in best:
        if sum(len(rows[k]) for k in kept) + len(rows[i]) > limit * 2 and kept:
            break
        kept.append(i)
    caption = [line for line in lines if line.strip() and not line.startswith("|")][:1]
    return "\n".join(caption + header + [rows[i] for i in sorted(kept)])  # in table order


def _row_label(row: str) -> str:
    """A Markdown row's first filled cell: what the row is about (a field, a parameter)."""
    return next((c for c in markdown_cells(row) if c), "")


def _title_row(row: str) -> bool:
    """A Markdown row with one filled cell of three or more (a merged title row)."""
    cells = markdown_cells(row)
    return len(cells) >= 3 and sum(1 for c in cells if c) == 1


def _links_section(passage: Passage) -> bool:
    last_heading = passage.heading.split(" › ")[-1].strip() if passage.heading else ""
    return bool(_LINK_HEADINGS.match(last_heading)) or is_link_only(passage.text)


def section_within(title: str, heading: str) -> str:
    """The heading path below the document's own title: a Markdown page's first heading is its
    title, and "**Кэш (Cache)** — Кэш (Cache)" says the title twice."""
    parts = [p.strip() for p in heading.split(" › ")] if heading else []
    if parts and parts[0] == title.strip():
        parts = parts[1:]
    return " › ".join(p for p in parts if p)


def extractive_answer(
    question: str, passages: list[Passage], *, language: str, notice: str = ""
) -> str:
    """Markdown: a label in the question's language, then up to three quotes each with its
    citation."""
    label = wording.say("extractive", language)
    parts = [f"*{label}*"]
    if notice:
        parts.insert(0, f"**{notice}**")
    # Lists of links ("Источники", "Доп. материал") stay searchable but are not an answer.
    quotable = [p for p in passages if not _links_section(p)] or passages
    for passage in quotable[:3]:
        quote = best_quote(question, passage.text)
        section = section_within(passage.title, passage.heading)
        where = f"**{passage.title}** — {section}" if section else f"**{passage.title}**"
        if quote.lstrip().startswith("|") or "\n|" in quote:
            parts.append(f"{where} [{passage.number}]\n\n{quote}")
        else:
            quoted = "\n".join("> " + line for line in quote.splitlines())
            parts.append(f"{where} [{passage.number}]\n\n{quoted}")
    return "\n\n".join(parts)
