"""The answerability check: does the best evidence hold what the question asks for?

Run before any answer, extractive or generated, on the question's reading
(``knowledge.question``) and the best sources' texts. Search already refused when no chunk
passed the minimum score; this looks at what did pass, in this order:

1. **The knowledge base's vocabulary.** The question's focus (the thing asked about) and its
   other content words, named entities aside (a city, a company or the university named in
   the question is not evidence of anything), are looked up in every chunk the user may read.
   A focus no document uses, or a question most of whose words (by weight) no document uses, is
   refused: "Какая температура в Новосибирске" shares a city with the documents and nothing else.
   Then **the meaning**: the best sources' sentences and rows have their second vectors (e5,
   ``knowledge.ingest.second``); when none is as close to the question in e5's space as
   ``KB_MEANING_REFUSE_BELOW`` (set on questions the knowledge base cannot answer and kb_dev's
   answerable ones, ``benchmarks/meaning.py --kb``), the documents do not speak of it: refused.
   Not applied before the second vectors are in, nor to a question naming its document.
2. **Named things** (identifiers, Latin words, abbreviations, quoted names): each one the
   asking sentence names must appear in the evidence, unless many chunks hold it (then a
   paraphrase may say it otherwise); one named only in the sentences before it sets the
   scene ("Наш DBA просит … . Когда проводят нагрузочное тестирование?").
3. **Things compared** ("X или Y", "X vs Y"): a passage must speak of both.
4. **The value asked**: a number, a price, a duration, a size, a date, a year, a version, a
   person, an organisation or a place. A passage about the question's focus must hold a value
   of that kind that the question itself does not already give, and say every thing the
   asking sentence names (those of step 2): "Какова цена лицензии YouTrack?" is not answered
   by another tracker's price in a sentence without YouTrack. (A reason, a way of doing or a
   term's name is asked too, but no pattern can tell it in a text: those are left to the
   reader and the model.)

A passage is a sentence, or a table row read with its header row. A word of the question is
found in a passage by its lemma, or by a neighbour in the navec vectors. Outcomes: ``answer``;
``partial`` (the documents describe the topic but not the fact asked: "В документах описано X,
но не указано Y", with the nearest passages); ``refusal`` (the documents do not speak of it).
The decision and its features go into ``ask --json`` (``answerability``) and the journal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache

import numpy as np

from knowledge.question import Question
from knowledge.question.focus import asking_sentence, is_measure
from knowledge.question.values import checkable, holds_value
from knowledge.retrieval.weights import weights
from knowledge.text import matching, nlp
from knowledge.text.language import has_cyrillic
from knowledge.text.named import PLACEHOLDER

# A word of the question is found in a passage when a lemma there is this close to it in the
# navec vectors (cosine): "недостаток" for "минус", "длительность" for "продолжительность".
NEIGHBOUR = 0.6
# Below this share of the question's word weight known to the knowledge base, it is refused.
KNOWN_SHARE = 0.5
EVIDENCE_CHARS = 12_000  # of the best sources' texts read
WINDOW = 3  # sentences read together when the question points back ("такая сборка")

_ROW = re.compile(r"^\s*\|.*\|\s*$")
_RULE = re.compile(r"^[\s|:-]+$")
_CONNECTIVES = {"или", "либо", "чем", "or", "than", "vs", "vs.", "versus", "против"}
_COMPARATIVE = re.compile(r"\b(?:или|либо|чем|or|than|vs\.?|versus|против)\b", re.I)


@dataclass(frozen=True)
class Answerability:
    decision: str  # "answer" | "partial" | "refusal"
    reason: str
    asked: str = ""  # the kind of fact asked, "" when none
    fact_found: bool | None = None
    named: list[str] = field(default_factory=list)
    named_missing: list[str] = field(default_factory=list)
    focus: list[str] = field(default_factory=list)
    focus_found: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # words no document of the user's uses
    known_share: float | None = None
    best_score: float | None = None
    # The cosine, in e5's space, of the unit of the best sources closest to the question (None:
    # no second vectors yet); below ``Meaning.refuse_below`` nothing found is close enough.
    meaning: float | None = None
    reading: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Passage:
    """A sentence or a table row (with its header) of the evidence, with its lemmas."""

    text: str
    lemmas: frozenset[str]


def check(
    question: Question,
    evidence: Sequence[str],
    *,
    vocabulary: Mapping[str, int],
    best_score: float | None = None,
    common: set[str] | frozenset[str] = frozenset(),
    scoped: bool = False,
    meaning: float | None = None,
) -> Answerability:
    """Decide answer / partial / refusal (see the module docstring).

    ``vocabulary`` maps the question's term lemmas to the number of chunks (of the sources the
    user may read) that hold them; ``common`` are the named things many chunks hold; ``scoped``:
    the evidence is the document the question names ("по ТЗ"), which then describes what it
    lacks (partial), never refuses.
    """
    terms = [t for t in question.key_terms if t.lemma in vocabulary]
    focus = [t.lemma for t in terms if t.focus] or (
        [question.focus.lemma] if question.focus.lemma in vocabulary else []
    )
    result = Answerability(
        decision="answer",
        reason="the evidence holds what the question asks",
        asked=question.kind,
        named=list(question.named),
        focus=focus,
        best_score=best_score,
        meaning=None if meaning is None else round(meaning, 4),
        reading=question.as_dict(),
    )
    result = _vocabulary(question, terms, focus, vocabulary, result)
    if result.decision == "refusal":
        return result
    gate = weights().meaning.refuse_below
    if not scoped and meaning is not None and gate and meaning < gate:
        return replace(
            result,
            decision="refusal",
            reason=f"no passage found is close to the question in meaning ({meaning:.3f})",
        )
    texts = [_split(text) for text in _budgeted(evidence)]
    passages = [p for own in texts for p in own]
    matcher = _Matcher(passages)
    result = replace(result, focus_found=[f for f in focus if matcher.anywhere(f)])
    topic = _topic(question, focus)
    absent = not scoped and bool(topic) and not any(f in result.focus_found for f in topic)
    text = "\n".join(p.text for p in passages)
    asked_names = _asked_names(question, _asking_sentence(question), common)
    named_missing = [n for n in asked_names if not _present(n, text)]
    result = replace(result, named_missing=named_missing)
    if result.named_missing:
        reason = "the documents found do not mention " + ", ".join(result.named_missing)
        return _refusal(result, reason) if absent else _partial(result, reason)
    compared = _compared(question)
    if compared and not any(all(_present(c, p.text) for c in compared) for p in passages):
        return _partial(result, "no passage speaks of " + " and ".join(compared) + " together")
    kinds = [k for k in question.kinds if checkable(k)]
    if kinds:
        # A question that points back ("такая сборка") is read with what it points at; so
        # is the text: a sentence with the sentences before it ("Обычно она занимает час").
        read = windows(texts) if question.focus.anaphoric else passages
        anchors = _anchor_passages(question, focus, terms, vocabulary, read, matcher)
        # The value must be stated of what the asking sentence names: "Какова цена лицензии
        # YouTrack, как у Jira?" is not answered by Jira's price in a sentence without YouTrack.
        anchors = [p for p in anchors if all(_present(n, p.text) for n in asked_names)]
        missing = [
            k
            for k in kinds
            if not any(holds_value(p.text, k, asked=question.text) for p in anchors)
        ]
        result = replace(result, fact_found=not missing)
        if missing:
            result = replace(result, asked=missing[0])
            reason = f"no {missing[0]} stated with the question's words in the documents found"
            return _refusal(result, reason) if absent else _partial(result, reason)
    return result


def _vocabulary(question, terms, focus, vocabulary, result: Answerability) -> Answerability:
    """Refuse a question the knowledge base has no words for (step 1): ``result`` with the
    words no document uses and their share, a refusal when the knowledge base lacks them."""
    # Each word counts once, the focus twice: one word no document uses (a colleague's slang,
    # a typo) does not refuse a question; most of them do.
    weights = {t.lemma: 2.0 if t.focus else 1.0 for t in terms}
    total = sum(weights.values())
    result = replace(result, unknown=[t.lemma for t in terms if not vocabulary[t.lemma]])
    if not total:
        return result
    result = replace(
        result,
        known_share=round(sum(w for lemma, w in weights.items() if vocabulary[lemma]) / total, 3),
    )
    head = question.focus.lemma
    if (
        head
        and head in vocabulary
        and not vocabulary[head]
        and question.focus.head >= 0
        and not question.focus.anaphoric
    ):
        return replace(result, decision="refusal", reason=f"the focus «{head}» is in no document")
    if result.known_share < KNOWN_SHARE and len(result.unknown) >= 2:
        return replace(
            result,
            decision="refusal",
            reason="most of the question's words are in no document: " + ", ".join(result.unknown),
        )
    return result


def _refusal(result: Answerability, reason: str) -> Answerability:
    """Not even the focus of the question is in the evidence: it does not speak of it."""
    return replace(
        result,
        decision="refusal",
        reason=reason + "; nor of " + ", ".join(f"«{f}»" for f in result.focus),
    )


def _partial(result: Answerability, reason: str) -> Answerability:
    return replace(result, decision="partial", reason=reason)


def windows(texts: Sequence[Sequence[Passage]], size: int = WINDOW) -> list[Passage]:
    """Each passage of each text with the ``size - 1`` before it in the same text: what a
    sentence that points back ("она", "такой") speaks of."""
    out = []
    for own in texts:
        for i in range(len(own)):
            group = own[max(0, i - size + 1) : i + 1]
            lemmas = frozenset().union(*(p.lemmas for p in group))
            out.append(Passage(" ".join(p.text for p in group), lemmas))
    return out


def _budgeted(evidence: Sequence[str]) -> list[str]:
    """The evidence texts cut to ``EVIDENCE_CHARS`` in all, best first."""
    out = []
    budget = EVIDENCE_CHARS
    for text in evidence:
        if budget <= 0:
            break
        out.append(text[:budget])
        budget -= len(out[-1])
    return out


def _split(text: str) -> list[Passage]:
    return list(_split_kept(text))


@lru_cache(maxsize=512)
def _split_kept(text: str) -> tuple[Passage, ...]:
    """The passages of an evidence text, kept per process: the best sources of questions about
    one topic are the same sections."""
    out: list[Passage] = []
    header = ""
    for line in text.split("\n"):
        if _ROW.match(line):
            if not header:
                header = line
                out.append(_passage(line))
            elif not _RULE.match(line):
                out.append(_passage(header + "\n" + line))
            continue
        header = ""
        for _, _, sentence in nlp.sentences(line):
            if sentence.strip():
                out.append(_passage(sentence))
    return tuple(out)


def _passage(text: str) -> Passage:
    return Passage(text, matching.text_lemmas(text))


class _Matcher:
    """Finds a question's lemma in the passages: as written, or by a navec neighbour."""

    def __init__(self, passages: list[Passage]) -> None:
        self.passages = passages
        self._lemmas = sorted({lemma for p in passages for lemma in p.lemmas})
        found = [(lemma, nlp.vector(lemma)) for lemma in self._lemmas]
        found = [(lemma, v) for lemma, v in found if v is not None]
        self._words = [lemma for lemma, _ in found]
        self._matrix = np.stack([v for _, v in found]) if found else np.zeros((0, 300), np.float32)
        self._near: dict[str, frozenset[str]] = {}

    def neighbours(self, lemma: str) -> frozenset[str]:
        """The passages' lemmas that stand for ``lemma``: itself, and its navec neighbours."""
        if lemma not in self._near:
            near = {lemma}
            vector = nlp.vector(lemma)
            if vector is not None and len(self._words):
                scores = self._matrix @ vector
                near |= {self._words[i] for i in np.flatnonzero(scores >= NEIGHBOUR)}
            self._near[lemma] = frozenset(near)
        return self._near[lemma]

    def holds(self, passage: Passage, lemma: str) -> bool:
        return bool(passage.lemmas & self.neighbours(lemma))

    def anywhere(self, lemma: str) -> bool:
        return any(self.holds(p, lemma) for p in self.passages)


def _present(thing: str, text: str) -> bool:
    """A named thing is in the text: as written (any case), or word by word by lemma
    (Russian endings: «События» - «событий»)."""
    low = text.casefold()
    if thing.casefold() in low:
        return True
    if not has_cyrillic(thing) and " " in thing:
        # Latin words do not decline: a name of several ("Azure DevOps") stands as written.
        return " ".join(thing.casefold().split()) in " ".join(low.split())
    words = matching.WORD.findall(thing)
    if not words or any(len(w) < 4 for w in words):
        return False
    lemmas = {matching.lemma(w) for w in matching.WORD.findall(text)}
    return all(matching.lemma(w) in lemmas for w in words)


def _asking_sentence(question: Question) -> str:
    """The sentence that asks (the last with a question mark, else the last): the sentences
    before it set the scene ("Наш DBA просит … . Когда проводят нагрузку?")."""
    tokens = question.tokens
    if not tokens:
        return question.text
    sentence = asking_sentence(tokens)
    return question.text[min(t.start for t in tokens if t.sentence == sentence) :]


def _compared(question: Question) -> list[str]:
    """Two or more named things the question sets against each other ("Jenkins или GitLab
    CI", "Playwright быстрее Cypress"): read from "или / or / чем / than / vs" between them."""
    names = [n for n in question.named if not PLACEHOLDER.fullmatch(n)]
    names += [e.text for e in question.entities if e.text not in names and e.text in question.named]
    if len(names) < 2 or not _COMPARATIVE.search(question.text):
        return []
    positions = sorted((question.text.find(n), n) for n in names if question.text.find(n) >= 0)
    for (a, first), (b, second) in zip(positions, positions[1:], strict=False):
        between = question.text[a + len(first) : b].lower().split()
        # "X или Y", "X, чем Y", "X vs Y", "у X или у Y": a connective among a few words.
        if len(between) <= 4 and any(w.strip(",—-") in _CONNECTIVES for w in between):
            return [first, second]
    return []


def _asked_names(question: Question, asking: str, common) -> list[str]:
    """The things the asking sentence names that the evidence must hold: not a redacted
    placeholder (an e-mail or a phone is the asker's, never the documents'), not one many
    chunks hold (``common``: a paraphrase may say it otherwise)."""
    return [
        n
        for n in question.named
        if not PLACEHOLDER.fullmatch(n) and n.casefold() not in common and n in asking
    ]


def _anchor_passages(question, focus, terms, vocabulary, passages, matcher) -> list[Passage]:
    """The passages about what the question asks: the question's words must stand together in
    them, at least two of them (one when it has only one), one of which says the topic: its
    focus (or a navec neighbour), one of its named things, or one of its two rarest words (any
    word, when the focus points back: "такая сборка"). A focus that names the measure itself ("в какой день", "какой срок") says which value, not
    which topic."""
    named = [n for n in question.named if not PLACEHOLDER.fullmatch(n)]
    words = sorted(
        (vocabulary[t.lemma], t.lemma)
        for t in terms
        if vocabulary[t.lemma] and not is_measure(t.lemma)
    )
    measured = [question.focus.topic] if question.focus.topic in vocabulary else []
    # A question that points back says its topic in the words before it, any of them.
    rarest = len(words) if question.focus.anaphoric else 2
    topic = _topic(question, focus) or measured or [lemma for _, lemma in words[:rarest]]
    needed = min(2, len({*topic, *named, *(lemma for _, lemma in words)}))
    anchored = []
    for passage in passages:
        about = {f for f in topic if matcher.holds(passage, f)}
        about |= {n for n in named if _present(n, passage.text)}
        if not about:
            continue
        held = about | {lemma for _, lemma in words if matcher.holds(passage, lemma)}
        if len(held) >= needed:
            anchored.append(passage)
    return anchored


def _topic(question: Question, focus: list[str]) -> list[str]:
    """The focus words that say the topic: not a measure ("срок", "цена": they say which
    value), not a noun a demonstrative points back with ("такая сборка": the question's
    other words say what it is)."""
    pointing = set(question.focus.phrase) if question.focus.anaphoric else set()
    return [f for f in focus if not is_measure(f) and f not in pointing]
