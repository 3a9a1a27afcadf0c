"""The language tools behind a reading: razdel (tokens, sentences), natasha's slovnet models
(morphology, dependency syntax, named entities, on the navec word vectors they ship) and
pymorphy3 (lemmas, the one lemmatiser of the code base).

The models load once per process, on first use (about 3 s) or at start-up (``warm_up``), and
share one vocabulary: each slovnet model and navec keep their own copy of the same 250,000
words, four copies where one does (about 90 MB saved per process).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np
from razdel import sentenize
from razdel import tokenize as razdel_tokenize
from threadpoolctl import threadpool_limits

_lock = threading.Lock()


@dataclass(frozen=True)
class Parsed:
    """One token as the tools read it."""

    text: str
    start: int
    stop: int
    lemma: str
    pos: str  # Universal Dependencies part of speech
    feats: tuple[tuple[str, str], ...]
    rel: str  # dependency relation to its head
    head: int  # index of the head token in the text, -1 for a sentence's root
    sentence: int


@dataclass(frozen=True)
class Span:
    """A named entity: PER, ORG or LOC, with the token indexes it covers."""

    kind: str
    text: str
    start: int
    stop: int
    tokens: tuple[int, ...]


class Tools:
    """natasha's pipeline with one shared vocabulary, and pymorphy3."""

    def __init__(self) -> None:
        # The reading's heavy backend: natasha's models and pymorphy3's dictionary, loaded once,
        # on the first question read, not by every process that imports the word tools.
        import pymorphy3
        from natasha import (
            NewsEmbedding,
            NewsMorphTagger,
            NewsNERTagger,
            NewsSyntaxParser,
            Segmenter,
        )

        self.segmenter = Segmenter()
        self.navec = NewsEmbedding()
        self.morph = NewsMorphTagger(self.navec)
        self.syntax = NewsSyntaxParser(self.navec)
        self.ner = NewsNERTagger(self.navec)
        vocabulary = self.morph.infer.encoder.words_vocab
        for model in (self.syntax, self.ner):
            if model.infer.encoder.words_vocab.items == vocabulary.items:
                model.infer.encoder.words_vocab = vocabulary
        if list(self.navec.vocab.words) == vocabulary.items[: len(self.navec.vocab.words)]:
            self.navec.vocab.words = vocabulary.items
            self.navec.vocab.word_ids = vocabulary.item_ids
        self.navec.vocab.counts = None  # word frequencies: never read here
        self.analyzer = pymorphy3.MorphAnalyzer()


@cache
def tools() -> Tools:
    with _lock:
        return Tools()


def warm_up() -> None:
    """Load the models now (a web process at start-up), not in the first question's time."""
    tools()


# Universal Dependencies part of speech -> pymorphy3's (OpenCorpora) classes that fit it.
_POS_FIT = {
    "NOUN": {"NOUN"},
    "PROPN": {"NOUN"},
    "ADJ": {"ADJF", "ADJS", "COMP", "PRTF", "PRTS"},
    "VERB": {"VERB", "INFN", "PRTF", "PRTS", "GRND"},
    "AUX": {"VERB", "INFN"},
    "NUM": {"NUMR", "NUMB"},
    "ADV": {"ADVB", "COMP", "PRED"},
    "PRON": {"NPRO", "ADJF"},
    "DET": {"ADJF", "NPRO"},
}


@lru_cache(maxsize=10_000)
def forms(word: str) -> tuple[str, ...]:
    """Every word form of a Russian lemma (the dictionary's lexeme of the parse whose normal
    form it is: "день" -> "дня", "дней", "днём" ...), lower-cased, ё as е; the word alone when
    it is not a Russian lemma. A text-search stemmer makes different stems of some forms
    ("день", "дней"): looked up by all of them, a lemma is found whichever form a text uses."""
    low = word.casefold()
    if not any("а" <= ch <= "я" or ch == "ё" for ch in low):
        return (low,)
    for parse in tools().analyzer.parse(low):
        if parse.normal_form.replace("ё", "е") == low.replace("ё", "е"):
            return tuple(sorted({f.word.replace("ё", "е") for f in parse.lexeme} | {low}))
    return (low,)


@lru_cache(maxsize=50_000)
def _analyses(low: str) -> tuple[tuple[str, str], ...]:
    """pymorphy3's parses of a lower-cased Russian word: (normal form, ё as е; its class),
    most likely first; read once for ``lemma`` and ``normal_forms`` alike."""
    return tuple(
        (p.normal_form.replace("ё", "е"), str(p.tag.POS)) for p in tools().analyzer.parse(low)
    )


@lru_cache(maxsize=50_000)
def lemma(word: str, pos: str = "") -> str:
    """The word's normal form, lower-cased: pymorphy3's parse that fits the tagger's part of
    speech (``pos``), else its most likely one; a word in Latin letters stays as written."""
    low = word.casefold()
    if not any("а" <= ch <= "я" or ch == "ё" for ch in low):
        return low
    parses = _analyses(low)
    if not parses:
        return low
    wanted = _POS_FIT.get(pos)
    if wanted:
        for normal, word_class in parses:
            if word_class in wanted:
                return normal
    return parses[0][0]


@lru_cache(maxsize=50_000)
def normal_forms(word: str) -> frozenset[str]:
    """Every normal form pymorphy3 gives a word (ё as е) and the word itself, lower-cased: what
    a closed class of words is looked up by, whatever the case and however the dictionary
    guesses a word it does not know ("коммите" -> "коммитя", "коммит"). A word in Latin
    letters is its own normal form."""
    low = word.casefold()
    if not any("а" <= ch <= "я" or ch == "ё" for ch in low):
        return frozenset({low})
    return frozenset({normal for normal, _ in _analyses(low)} | {low})


@lru_cache(maxsize=10_000)
def known_word(word: str) -> bool:
    """Whether pymorphy3's dictionary has ``word`` (a Russian word form), not only a guess."""
    return bool(word) and tools().analyzer.word_is_known(word.casefold())


@lru_cache(maxsize=50_000)
def grammemes(word: str) -> frozenset[str]:
    """pymorphy3's grammemes of the word's most likely parse (Name, Surn, Patr, Geox, Orgn,
    Abbr ...): what its dictionary knows about a proper name."""
    parses = tools().analyzer.parse(word)
    return frozenset(parses[0].tag.grammemes) if parses else frozenset()


def parse(text: str) -> tuple[list[Parsed], list[Span]]:
    """Tokens with lemma, part of speech, features and dependency head; named entities."""
    from natasha import Doc  # the heavy backend (see Tools)

    kit = tools()
    doc = Doc(text)
    doc.segment(kit.segmenter)
    if not doc.tokens:
        return [], []
    # One BLAS thread: the models' matrices are small, and threads waiting for each other while
    # web processes, the worker and PostgreSQL share the cores cost a question hundreds of
    # milliseconds (as for the question's embedding, knowledge.embedding).
    with threadpool_limits(limits=1, user_api="blas"):
        doc.tag_morph(kit.morph)
        doc.parse_syntax(kit.syntax)
        doc.tag_ner(kit.ner)
    index = {token.id: i for i, token in enumerate(doc.tokens)}
    sentence_of = {}
    for number, sentence in enumerate(doc.sents):
        for token in sentence.tokens:
            sentence_of[token.id] = number
    tokens = [
        Parsed(
            text=token.text,
            start=token.start,
            stop=token.stop,
            lemma=lemma(token.text, token.pos or ""),
            pos=token.pos or "X",
            feats=tuple(sorted((token.feats or {}).items())),
            rel=token.rel or "",
            head=index.get(token.head_id, -1),
            sentence=sentence_of.get(token.id, 0),
        )
        for token in doc.tokens
    ]
    spans = [
        Span(
            kind=span.type,
            text=span.text,
            start=span.start,
            stop=span.stop,
            tokens=tuple(i for i, t in enumerate(tokens) if span.start <= t.start < span.stop),
        )
        for span in doc.spans or []
    ]
    return tokens, spans


def tokenize(text: str) -> list[tuple[int, int, str]]:
    """razdel's tokens (start, stop, text), for texts read without the models (English)."""
    return [(t.start, t.stop, t.text) for t in razdel_tokenize(text)]


def sentences(text: str) -> list[tuple[int, int, str]]:
    """razdel's sentences (start, stop, text) of a passage."""
    return [(s.start, s.stop, s.text) for s in sentenize(text)]


@lru_cache(maxsize=8192)
def vector(word: str) -> np.ndarray | None:
    """The navec vector of a lemma (unit length), or None for a word it does not know. Kept
    per process (navec decodes each from its quantised table; an answer's check asks for
    every lemma of its evidence)."""
    kit = tools()
    key = word.casefold()
    if key not in kit.navec.vocab.word_ids:
        return None
    found = np.asarray(kit.navec[key], dtype=np.float32)
    norm = float(np.linalg.norm(found))
    if not norm:
        return None
    found = found / norm
    found.setflags(write=False)  # shared by every caller
    return found


def similarity(a: str, b: str) -> float:
    """Cosine of two lemmas' navec vectors; 0 when either is unknown."""
    if a == b:
        return 1.0
    first, second = vector(a), vector(b)
    if first is None or second is None:
        return 0.0
    return float(np.dot(first, second))
