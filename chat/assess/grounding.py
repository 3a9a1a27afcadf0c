"""The check of a generated answer against its sources: is every sentence held by a passage it
cites?

Before a generated answer is shown as an answer (and stored), each of its sentences is read
against the units (sentences, list items, table rows: ``knowledge.units``) of the sources it
cites, or of every source when it cites none:

- **its values and names**: each figure and named thing it states stands in the cited
  passages (a date, a count, "Xamarin", «События»);
- **its words**: at least ``WORDS`` of its content words (lemmas) are in the cited passages;
- **its meaning**: one cited unit is at least ``MEANING`` close to it in e5's space (the second
  vectors; the sentence read as a passage like the units), when the second embedder is on;
- **its polarity**: the closest unit does not deny what it states ("нет"/"не"/"no"/"not"
  in one and not in the other);
- **its reasons**: a reason it gives ("потому что", "так как", "because") is given by a close
  unit too (a small model joins two statements of a page into a reason neither gives).

A sentence too short to state anything ("Да.", a heading) is read with the one after it. An
answer fails the check when it cites nothing, states nothing but citations, when a sentence is
not held, or when a sentence
states what the answerability check found missing (a value of the kind asked, a thing the
documents never name): ``Verdict.reason`` says which. The chat shows such an answer as the
quotes with a notice saying why; the evaluation judge reports the same verdict beside its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from chat.answer.citations import cited_numbers
from knowledge.embedding import get_second_embedder
from knowledge.ingest.second import stored_vectors
from knowledge.question.values import checkable, holds_value
from knowledge.text import matching
from knowledge.text.named import named_things
from knowledge.text.words import is_stop
from knowledge.units import Unit, units

WORDS = 0.5  # share of a sentence's content words the cited passages must hold
MEANING = 0.89  # e5 cosine (passage to passage) of the closest cited unit, at least
SHORT = 3  # content words: a shorter sentence is read with the next one
CANDIDATES = 6  # units per sentence read in e5's space (the ones sharing most words)
_SENTENCE = re.compile(r"(?<=[.!?…])\s+(?=[A-ZА-ЯЁ«\"(\[*\d])|\n+")
_CITATION = re.compile(r"\[\d+(?:\s*[,;]\s*\d+)*\]")
_MARKUP = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)]|#{1,6})\s+|\*\*|__|`")
_NEGATION = re.compile(
    r"(?<![\w-])(?:не|нет|ни|нельзя|no|not|never|cannot|can't|don't|doesn't)(?![\w-])", re.I
)
_FIGURE = re.compile(r"\d+(?:[.,:]\d+)*")
# A reason given: "потому что", "так как", "because"... A small model invents one for a
# question's false premise ("почему X?") from two unrelated sentences of a page.
_CAUSE = re.compile(
    r"(?<![\w-])(?:потому что|так как|поскольку|из-за|благодаря|поэтому|вследствие|"
    r"because|since|due to|therefore|hence)(?![\w-])",
    re.I,
)


@dataclass(frozen=True)
class Sentence:
    text: str
    cited: tuple[int, ...]
    holds: bool
    why: str = ""  # "value", "words", "meaning", "polarity", "reason", "premise": what failed
    meaning: float | None = None


@dataclass(frozen=True)
class Verdict:
    holds: bool
    reason: str  # "" | "no_citation" | "empty" | "unsupported" | "premise"
    sentences: tuple[Sentence, ...] = ()
    repeated: int = 0  # repeated lines cut before the check

    @property
    def unsupported(self) -> list[Sentence]:
        return [s for s in self.sentences if not s.holds]

    def as_dict(self) -> dict:
        return {
            "holds": self.holds,
            "reason": self.reason,
            "repeated_lines_cut": self.repeated,
            "sentences": [
                {"text": s.text, "cited": list(s.cited), "holds": s.holds, "why": s.why,
                 "meaning": None if s.meaning is None else round(s.meaning, 3)}
                for s in self.sentences
            ],
        }  # fmt: skip


@dataclass
class Passages:
    """The sources' texts by number, and their chunks (for the stored second vectors)."""

    texts: Mapping[int, str]
    chunk_ids: Mapping[int, int | None] = field(default_factory=dict)


def cut_repeats(answer: str) -> tuple[str, int]:
    """The answer without a line that repeats an earlier one (a small model looping over a
    list until its token limit); returns the text and how many lines were cut."""
    seen: set[str] = set()
    kept, cut = [], 0
    for line in answer.split("\n"):
        key = " ".join(_MARKUP.sub("", _CITATION.sub("", line)).casefold().split())
        if len(key) >= 12 and key in seen:
            cut += 1
            continue
        seen.add(key)
        kept.append(line)
    return "\n".join(kept).strip(), cut


def check(
    answer: str,
    passages: Passages,
    *,
    missing_kind: str = "",
    missing_names: Sequence[str] = (),
    question: str = "",
) -> Verdict:
    """The verdict on ``answer`` (see the module docstring). ``missing_kind`` and
    ``missing_names``: what the answerability check found missing (a partial decision)."""
    if not cited_numbers(answer) & set(passages.texts):
        return Verdict(False, "no_citation")
    reader = _Reader(passages)
    sentences = []
    for text, cited in _sentences(answer, set(passages.texts)):
        if _claims_missing(text, missing_kind, missing_names, question):
            sentences.append(Sentence(text, cited, False, "premise"))
            continue
        sentences.append(reader.sentence(text, cited or tuple(passages.texts)))
    if not sentences:
        # Nothing stated but citations ("[1]": what the real model wrote when told to cite).
        return Verdict(False, "empty")
    if any(s.why == "premise" for s in sentences):
        return Verdict(False, "premise", tuple(sentences))
    holds = all(s.holds for s in sentences)
    return Verdict(holds, "" if holds else "unsupported", tuple(sentences))


def _sentences(answer: str, numbers: set[int]) -> list[tuple[str, tuple[int, ...]]]:
    """The answer's statements with the sources each cites; a short one joins the next."""
    out: list[tuple[str, tuple[int, ...]]] = []
    pending = ""
    for piece in _SENTENCE.split(answer):
        text = " ".join(piece.split())
        if not text:
            continue
        text = f"{pending} {text}".strip() if pending else text
        words = _content(text)
        # Short: it states nothing alone, unless a word says what its figure is ("Листов 26");
        # a bare figure (a page number a source's text carries) goes with its neighbour.
        if len(words) < SHORT and not (words and _FIGURE.search(_CITATION.sub("", text))):
            pending = text
            continue
        pending = ""
        out.append((text, tuple(sorted(cited_numbers(text) & numbers))))
    if pending and out:  # a short last line ("Источник: [1].") goes with the one before
        text, cited = out[-1]
        merged = f"{text} {pending}"
        out[-1] = (merged, tuple(sorted(set(cited) | (cited_numbers(pending) & numbers))))
    elif pending and (_content(pending) or _FIGURE.search(_CITATION.sub("", pending))):
        # An answer that is only this ("[1] 10"): it states the figure, checked as a claim.
        out.append((pending, tuple(sorted(cited_numbers(pending) & numbers))))
    return out


def _plain(text: str) -> str:
    return _MARKUP.sub("", _CITATION.sub(" ", text))


def _content(text: str) -> frozenset[str]:
    """The sentence's content words (their lemmas), four letters or more."""
    words = [w for w in matching.WORD.findall(_plain(text)) if len(w) >= 4]
    return frozenset(m for m in map(matching.lemma, words) if not is_stop(m))


def _claims(text: str) -> list[str]:
    """The figures and named things a sentence states (citation numbers left out)."""
    bare = _plain(text)
    figures = [f.strip(".,:") for f in _FIGURE.findall(bare)]
    names = [n for n in named_things(bare) if not n.isdigit() and len(n) > 2]
    return [f for f in figures if f] + names


def _claims_missing(text: str, kind: str, names: Sequence[str], question: str) -> bool:
    """The sentence states what the answerability check found the documents do not hold."""
    low = text.casefold()
    if any(name.casefold() in low for name in names):
        return not _NEGATION.search(text)
    return bool(kind) and checkable(kind) and holds_value(_plain(text), kind, asked=question)


class _Reader:
    """Reads sentences against the passages' units; the units' e5 vectors are read from the
    stored second vectors where a passage is its chunk, else made once per answer."""

    def __init__(self, passages: Passages) -> None:
        self.passages = passages
        self.units = {n: units(text) for n, text in passages.texts.items()}
        self.lemmas = {n: matching.text_lemmas(text) for n, text in passages.texts.items()}
        self.low = {n: " ".join(text.casefold().split()) for n, text in passages.texts.items()}
        self.embedder = get_second_embedder()
        self._vectors: dict[str, np.ndarray] = {}
        if self.embedder is not None:
            self._stored()

    def _stored(self) -> None:
        ids = {n: c for n, c in self.passages.chunk_ids.items() if c}
        found = stored_vectors(list(set(ids.values())))
        for number, chunk_id in ids.items():
            vectors = found.get(chunk_id)
            own = self.units.get(number, [])
            if vectors is not None and len(vectors) == len(own):
                for unit, vector in zip(own, vectors, strict=True):
                    if np.any(vector):
                        self._vectors.setdefault(unit.embed_text, vector)

    def sentence(self, text: str, cited: tuple[int, ...]) -> Sentence:
        pool = " ".join(self.low[n] for n in cited)
        lemmas = frozenset().union(*(self.lemmas[n] for n in cited))
        claims = _claims(text)
        if not all(" ".join(c.casefold().split()) in pool for c in claims):
            return Sentence(text, cited, False, "value")
        content = _content(text)
        if content and len(content & lemmas) / len(content) < WORDS:
            return Sentence(text, cited, False, "words")
        candidates = sorted(
            (u for n in cited for u in self.units[n]),
            key=lambda u: -len(content & u.lemmas()),
        )[:CANDIDATES]
        if self.embedder is None or not candidates:
            return Sentence(text, cited, True)
        closeness = self._closeness(_plain(text), candidates)
        best = int(np.argmax(closeness))
        meaning = float(closeness[best])
        if meaning < MEANING:
            return Sentence(text, cited, False, "meaning", meaning)
        if bool(_NEGATION.search(_plain(text))) != bool(_NEGATION.search(candidates[best].text)):
            # The closest unit says the opposite ("не используется" to "используется").
            return Sentence(text, cited, False, "polarity", meaning)
        close = [u for u, c in zip(candidates, closeness, strict=True) if c >= MEANING]
        if _CAUSE.search(_plain(text)) and not any(_CAUSE.search(u.text) for u in close):
            # A reason the close units do not give: joined from two statements of the page.
            return Sentence(text, cited, False, "reason", meaning)
        return Sentence(text, cited, True, meaning=meaning)

    def _closeness(self, text: str, candidates: list[Unit]) -> np.ndarray:
        wanted = [u.embed_text for u in candidates if u.embed_text not in self._vectors]
        fresh = list(dict.fromkeys([text, *wanted]))
        vectors = self.embedder.embed_documents(fresh).dense
        for piece, vector in zip(fresh, vectors, strict=True):
            self._vectors[piece] = vector
        own = self._vectors[text]
        return np.array([float(own @ self._vectors[u.embed_text]) for u in candidates])


def check_message(message) -> Verdict:
    """The check of a stored message's answer against the chunks of its sources (what the
    evaluation judge and the benchmarks read)."""
    sources = list(message.sources.select_related("chunk"))
    passages = Passages(
        {s.number: s.chunk.text for s in sources if s.chunk is not None},
        {s.number: s.chunk_id for s in sources},
    )
    checked = message.answerability or {}
    partial = checked.get("decision") == "partial"
    return check(
        message.answer,
        passages,
        missing_kind=checked.get("asked", "") if partial and not checked.get("fact_found") else "",
        missing_names=checked.get("named_missing", []) if partial else (),
        question=message.question,
    )
