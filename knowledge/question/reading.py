"""The reading of a question (see the package docstring)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from knowledge.question.documents import DocumentNames, document_names
from knowledge.question.focus import (
    Focus,
    find_focus,
    find_focus_english,
    other_kinds,
    unit_kinds,
)
from knowledge.question.mentions import Mention, Word, asks_changes, find_refs, names_version
from knowledge.text import language, nlp
from knowledge.text.named import PLACEHOLDER, named_things
from knowledge.text.persons import english_persons
from knowledge.text.words import CONTENT_POS, FUNCTION_WORDS_EN, GOST_NAMES, is_stop

# GOST 19/34 document-type abbreviations: they name the documents, not a fact inside them
# (the full list, with what each stands for, is knowledge.text.matching.ABBREVIATIONS).
GOST_TYPES = frozenset({"тз", "пз", "пми", "тп", "рп", "ро", "рс", "лу", "гост"})
_ENTITY_KINDS = {"PER": "person", "ORG": "organisation", "LOC": "place"}
# pymorphy3's dictionary grammemes of proper names, for names the NER model leaves out.
_GRAMMEME_KINDS = {"Name": "person", "Surn": "person", "Patr": "person", "Geox": "place",
                   "Orgn": "organisation"}  # fmt: skip


@dataclass(frozen=True)
class Entity:
    kind: str  # person | organisation | place
    text: str
    start: int
    stop: int


@dataclass(frozen=True)
class Term:
    """A content word of the question: what the evidence must speak of."""

    lemma: str
    text: str
    pos: str
    entity: str = ""  # the kind of named entity it belongs to, "" for a common word
    focus: bool = False  # the focus or one of its modifiers


@dataclass(frozen=True)
class Question:
    text: str
    language: str  # ru | en
    tokens: tuple[nlp.Parsed, ...] = ()
    entities: tuple[Entity, ...] = ()
    named: tuple[str, ...] = ()  # identifiers, Latin words, abbreviations, quoted names, figures
    versions: tuple[Mention, ...] = ()
    focus: Focus = field(default_factory=Focus)
    terms: tuple[Term, ...] = ()

    kinds: tuple[str, ...] = ()  # every kind of fact the question asks, the focus's first
    documents: DocumentNames = field(default_factory=DocumentNames)  # how it names documents
    asks_changes: bool = False  # what changed, what differs, what is new (a comparison)
    names_version: bool = False  # says "version", "revision" or "commit"

    @property
    def kind(self) -> str:
        """The kind of fact asked (number, price, date, person, reason ...), "" for none."""
        return self.focus.kind

    @property
    def key_terms(self) -> tuple[Term, ...]:
        """The content words that are not named entities: a city, a company or the
        university named in a question is not what the evidence must speak of."""
        return tuple(t for t in self.terms if not t.entity)

    def persons(self) -> list[Entity]:
        return [e for e in self.entities if e.kind == "person"]

    def as_dict(self) -> dict:
        """What the journal and ``ask --json`` show of the reading."""
        return {
            "language": self.language,
            "focus": self.focus.as_dict(),
            "terms": [t.lemma for t in self.key_terms],
            "entities": [{"kind": e.kind, "text": e.text} for e in self.entities],
            "named": list(self.named),
            "versions": [m.text for m in self.versions if m.text],
        }


@lru_cache(maxsize=256)
def read(text: str) -> Question:
    """Read a question once: language, words, parse, entities, focus (cached by its text:
    the guard's reading and the answer's are one when nothing was redacted)."""
    text = text.strip()
    lang = language.detect(text)
    named = tuple(named_things(text, document_words=GOST_TYPES))
    documents = document_names(text)
    changes = asks_changes(text)
    if lang == "ru":
        tokens, spans = nlp.parse(text)
        words = [Word(t.start, t.stop, t.text, t.lemma, t.pos) for t in tokens]
        versions, version_word = tuple(find_refs(text, words)), names_version(words)
        entities = _entities(tokens, spans)
        focus = find_focus(tokens)
        terms = _terms(tokens, entities, focus)
        asked = (focus.kind, *other_kinds(tokens, focus), *unit_kinds(tokens))
        kinds = tuple(dict.fromkeys(k for k in asked if k))
        return Question(
            text, lang, tuple(tokens), entities, named, versions, focus, terms, kinds, documents,
            asks_changes=changes, names_version=version_word,
        )  # fmt: skip
    spans = nlp.tokenize(text)
    read_words = [Word(start, stop, w, w.casefold()) for start, stop, w in spans]
    versions, version_word = tuple(find_refs(text, read_words)), names_version(read_words)
    words = [w for _, _, w in spans]
    focus = find_focus_english(words)
    entities = tuple(Entity("person", name, a, b) for a, b, name in english_persons(text))
    in_names = {w for e in entities for w in e.text.split()}
    terms = tuple(
        Term(w.casefold(), w, "X", "person" if w in in_names else "", w.casefold() in focus.phrase)
        for w in words
        if any(ch.isalpha() for ch in w) and w.casefold() not in FUNCTION_WORDS_EN
        and not is_stop(w.casefold()) and not PLACEHOLDER.fullmatch(w)
    )  # fmt: skip
    kinds = (focus.kind,) if focus.kind else ()
    return Question(
        text, lang, (), entities, named, versions, focus, _dedupe(terms), kinds, documents,
        asks_changes=changes, names_version=version_word,
    )  # fmt: skip


def _entities(tokens: list[nlp.Parsed], spans: list[nlp.Span]) -> tuple[Entity, ...]:
    found = [Entity(_ENTITY_KINDS.get(s.kind, "organisation"), s.text, s.start, s.stop)
             for s in spans]  # fmt: skip
    covered = {i for s in spans for i in s.tokens}
    for i, token in enumerate(tokens):
        if i in covered or token.pos not in ("NOUN", "PROPN"):
            continue
        kinds = [k for g, k in _GRAMMEME_KINDS.items() if g in nlp.grammemes(token.text)]
        if token.text.isupper():  # an abbreviation ("ИНН", "ВШЭ") is never a person's name
            kinds = [k for k in kinds if k != "person"]
        # A capitalised word inside the sentence, or an abbreviation, that the dictionary
        # knows as a name, a place or an organisation.
        if kinds and (token.text[:1].isupper() and (i > 0 or token.text.isupper())):
            found.append(Entity(kinds[0], token.text, token.start, token.stop))
    return tuple(sorted(found, key=lambda e: e.start))


def _document_names(tokens: list[nlp.Parsed]) -> set[int]:
    """Indexes of the tokens that spell out a GOST document type ("пояснительной записке")."""
    lemmas = [t.lemma for t in tokens]
    found: set[int] = set()
    for name in GOST_NAMES:
        for start in range(len(lemmas) - len(name) + 1):
            if tuple(lemmas[start : start + len(name)]) == name:
                found.update(range(start, start + len(name)))
    return found


def _terms(tokens: list[nlp.Parsed], entities: tuple[Entity, ...], focus: Focus) -> tuple:
    terms = []
    naming = _document_names(tokens)
    for i, token in enumerate(tokens):
        if i in naming:
            continue
        if token.pos not in CONTENT_POS or token.pos == "NUM" or is_stop(token.lemma, token.pos):
            continue
        if is_stop(token.text):  # a word whose lemma hides its class ("вики" -> "вика")
            continue
        if "Apro" in nlp.grammemes(token.text.casefold()):  # a pronoun as adjective: "сам", "весь"
            continue
        if not any(ch.isalpha() for ch in token.text) or PLACEHOLDER.fullmatch(token.text):
            continue
        entity = next((e.kind for e in entities if e.start <= token.start < e.stop), "")
        in_focus = i == focus.head or (token.lemma in focus.phrase and tokens[i].head == focus.head)
        terms.append(Term(token.lemma, token.text, token.pos, entity, in_focus))
    return _dedupe(tuple(terms))


def _dedupe(terms: tuple[Term, ...]) -> tuple[Term, ...]:
    seen: set[str] = set()
    out = []
    for term in terms:
        if term.lemma not in seen:
            seen.add(term.lemma)
            out.append(term)
    return tuple(out)
