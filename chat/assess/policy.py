"""The answer policy: refuse honestly, ask back when the question is ambiguous, name the gap.

- Refusal without the LLM: no chunk passes the minimum score (the search says so).
- Every generated answer is classified answer / partial / refusal by rules first, and by a
  short second LLM call only when the rules cannot tell; a refusal in the model's own words is
  replaced by the one canonical sentence, so refusals can be counted.
- Clarification: the best chunks come from different documents that talk about different
  things, with scores too close to choose: a short question back with up to five tiles.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

import numpy as np

from chat.answer.citations import cited_numbers
from chat.answer.prompts import CLASSIFY_SYSTEM, REFORMULATE_SYSTEM
from knowledge.models import Chunk
from knowledge.question import Question
from knowledge.retrieval import Candidate, SearchResult
from knowledge.retrieval.weights import weights
from knowledge.text import matching
from knowledge.text.named import is_identifier, latin_names
from portal.llm import LLM, LlmUnavailable

_REFUSAL = re.compile(
    r"(нет (?:ответа|информации|сведений|данных)|не (?:содерж|упомина|описан|указан\w* ответ)|"
    r"не удалось найти|не могу (?:ответить|найти)|к сожалению|ничего не (?:сказано|найдено)|"
    r"no (?:information|answer|mention)|do(?:es)? not (?:contain|mention|cover|say)|"
    r"cannot (?:answer|find)|could not find|not (?:found|mentioned) in the (?:sources|documents)|"
    r"unfortunately)",
    re.IGNORECASE,
)
_PARTIAL = re.compile(
    r"(частично|не указан|не описан|не приводится|нет данных о|нет сведений о|"
    r"документы не (?:содержат|описывают|указывают)|остальн\w+ .{0,40}не|"
    r"partial|not (?:specified|stated|described|covered)|do(?:es)? not (?:say|specify|cover))",
    re.IGNORECASE,
)


def leaks_instruction(answer: str, system: str, *, run: int = 80) -> bool:
    """True when the answer repeats ``run`` or more characters of the system instruction."""
    a, b = " ".join(answer.lower().split()), " ".join(system.lower().split())
    if len(a) < run:
        return False
    match = SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b))
    return match.size >= run


def looks_like_refusal(text: str) -> bool:
    return bool(_REFUSAL.search(text))


def classify(answer: str, *, refusal: str, llm: LLM | None) -> str:
    """ "answer", "partial" or "refusal": rules first, a short LLM call only when unclear."""
    text = answer.strip()
    if not text or text == refusal:
        return "refusal"
    has_citations = bool(cited_numbers(text))
    refusing = bool(_REFUSAL.search(text))
    partial = bool(_PARTIAL.search(text))
    if has_citations and not refusing and not partial:
        return "answer"
    if has_citations and (partial or refusing):
        return "partial"
    if refusing and not has_citations:
        return "refusal"
    if llm is None:
        return "answer" if len(text) > 40 else "refusal"
    try:
        verdict = llm.complete(
            [{"role": "system", "content": CLASSIFY_SYSTEM}, {"role": "user", "content": text}],
            max_tokens=5,
        ).lower()
    except LlmUnavailable:
        return "answer"
    for word in ("refusal", "partial", "answer"):
        if word in verdict:
            return word
    return "answer"


@dataclass
class Tile:
    label: str
    # "clarify" (restrict to a document), "reformulate" (search with other words) or "ask"
    # (ask this question instead: a version that exists)
    kind: str
    query: str = ""
    document_id: int | None = None
    section: str = ""

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v not in (None, "")}


def clarification_tiles(result: SearchResult, question: Question) -> list[Tile]:
    """Tiles when the best candidates split across documents about different things."""
    words = question.text.split()
    clarify = weights().clarify
    if result.browse or len(result.hits) < 2 or len(words) > clarify.max_words:
        return []
    if not question.focus.asks and "?" not in question.text:
        return []  # keywords ("тест-кейс", "Gherkin синтаксис") are searched, not asked back
    best_per_document: dict[int, Candidate] = {}
    for hit in result.hits:
        best_per_document.setdefault(hit.document_id, hit)
    leaders = sorted(best_per_document.values(), key=lambda c: -c.score)
    top = leaders[0].score
    close = [c for c in leaders if c.score >= top * clarify.ratio][:5]
    if len(close) < 2:
        return []
    chunks = {
        c.pk: c
        for c in Chunk.objects.filter(pk__in=[c.chunk_id for c in close]).for_reading(
            "document", keep=("embedding",)
        )
    }
    if _one_meaning(question, [chunks[c.chunk_id] for c in close if c.chunk_id in chunks]):
        return []
    vectors = [
        np.asarray(chunks[c.chunk_id].embedding, dtype=np.float32)
        for c in close
        if c.chunk_id in chunks
    ]
    if len(vectors) < 2:
        return []
    # Different topics: the leading chunks are not about the same thing as each other.
    similarity = float(
        np.dot(vectors[0], vectors[1])
        / (np.linalg.norm(vectors[0]) * np.linalg.norm(vectors[1]) + 1e-9)
    )
    if similarity >= clarify.max_similarity:
        return []
    tiles = []
    for candidate in close:
        chunk = chunks.get(candidate.chunk_id)
        if chunk is None:
            continue
        heading = " › ".join(chunk.heading_path[-2:])
        label = (
            chunk.document.title
            if not heading or heading == chunk.document.title
            else f"{chunk.document.title} — {heading}"
        )
        tiles.append(
            Tile(
                label=label[:140],
                kind="clarify",
                document_id=chunk.document_id,
                section=chunk.section,
            )
        )
    return tiles


def _one_meaning(question: Question, leaders: list) -> bool:
    """The candidates do not mean different things when an identifier of the question, or every
    name it gives, is in the best chunk, or only one leading document has the question's term
    in its title (the page that defines it)."""
    if not leaders:
        return True
    best = leaders[0].text.casefold()
    identifiers = [w for w in question.named if is_identifier(w)]
    if any(i.casefold() in best for i in identifiers):
        return True
    # Every name a Russian question gives in Latin letters ("метод Save класса Order") is in the
    # best chunk: it is about that thing, whatever else scores alike. (A capitalised Russian
    # word, "Протокол", may be a common noun: it does not count here.)
    names = [w for w in latin_names(question.text) if len(w) >= 3]
    if names and all(name.casefold() in best for name in names):
        return True
    terms = {t.lemma for t in question.terms if len(t.lemma) >= 4}
    titled = {c.document_id for c in leaders if terms & _title_words(c.document.title)}
    return len(titled) == 1 and leaders[0].document_id in titled


def _title_words(title: str) -> set[str]:
    return {matching.lemma(w) for w in re.findall(r"[^\W\d_]{4,}", title)}


def reformulation_tiles(question: str, result: SearchResult, llm: LLM | None) -> list[Tile]:
    """Up to three other ways to ask: from the LLM, or from the headings of near misses."""
    suggestions: list[str] = []
    if llm is not None:
        try:
            reply = llm.complete(
                [
                    {"role": "system", "content": REFORMULATE_SYSTEM},
                    {"role": "user", "content": question},
                ],
                temperature=0.3,
                max_tokens=150,
            )
            suggestions = [
                line.strip(" -•\t") for line in reply.splitlines() if line.strip(" -•\t")
            ]
        except LlmUnavailable:
            suggestions = []
    if not suggestions and result is not None:
        suggestions = _near_miss_headings(result)
    seen: set[str] = {question.strip().lower()}
    tiles = []
    for text in suggestions:
        if text.lower() not in seen and len(text) > 3:
            seen.add(text.lower())
            tiles.append(Tile(label=text[:140], kind="reformulate", query=text[:300]))
    return tiles[:3]


def _near_miss_headings(result: SearchResult) -> list[str]:
    ids = [c.chunk_id for c in result.near_misses[:8]]
    headings = []
    for chunk in Chunk.objects.filter(pk__in=ids).for_reading("document"):
        path = [p for p in chunk.heading_path if p] or [chunk.document.title]
        headings.append(path[-1])
    return list(dict.fromkeys(headings))
