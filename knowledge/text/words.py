"""Closed word classes: the one stop-word list of the code base, and the other grammatical
classes a reading needs. Each set below is a class of the grammar (or of the portal's own
vocabulary for documents), not words picked from questions.

Russian function words are recognised by their part of speech (the morphological tagger
says ADP, CCONJ, PRON...), so the sets here only cover what the tags leave open; English has
no tagger in the portal, so its closed classes are listed whole.
"""

from __future__ import annotations

# Parts of speech (Universal Dependencies) whose words carry no topic.
FUNCTION_POS = frozenset(
    {"ADP", "CCONJ", "SCONJ", "PART", "PRON", "DET", "AUX", "PUNCT", "SYM", "INTJ"}
)
CONTENT_POS = frozenset({"NOUN", "PROPN", "ADJ", "VERB", "NUM", "ADV", "X"})

# Interrogative pronouns, determiners and adverbs: the words that ask.
INTERROGATIVES_RU = frozenset(
    {"какой", "который", "чей", "каков", "сколько", "кто", "что", "где", "когда", "почему",
     "зачем", "как", "куда", "откуда", "насколько", "отчего", "чем", "ли"}
)  # fmt: skip
INTERROGATIVES_EN = frozenset(
    {"what", "which", "who", "whom", "whose", "where", "when", "why", "how"}
)  # fmt: skip

# Copulas, auxiliaries, modals and light verbs: they hold a sentence together, not its topic.
LIGHT_VERBS_RU = frozenset(
    {"быть", "являться", "есть", "стать", "становиться", "мочь", "можно", "нужно", "надо",
     "нужный", "должный", "следовать", "иметь", "делать", "сделать", "происходить",
     "существовать", "бывать", "получаться", "хотеть"}
)  # fmt: skip
# Verbs of meaning, naming and speech: "что означает X", "как называется X", "что говорит
# документ о X" ask what X is, or what a text says of it.
DENOTATION_VERBS = frozenset(
    {"означать", "значить", "называться", "называть", "обозначать", "говорить", "сказать",
     "утверждать", "упоминать", "рассказывать", "mean", "means", "called", "say"}
)  # fmt: skip
# Demonstrative determiners: a noun they determine points back at what was said before it
# ("такая сборка", "этот подход", "подобная проверка"), it does not name a topic of its own.
DEMONSTRATIVES = frozenset({"такой", "этот", "тот", "подобный", "данный", "указанный"})
# A sentence holding one of these points back at the one before it ("если UI виден с этими
# тремя фильтрами", "Это наиболее выраженные формы"): the demonstratives with the pronoun
# "это" and English's, without "тот" ("тот же", "то есть", "в том числе" point nowhere).
POINTING_BACK = (DEMONSTRATIVES - {"тот"}) | {"это", "this", "these", "such"}
# Indefinite pronouns and adverbs: an interrogative with -то, -нибудь, -либо ("как-то").
_INDEFINITE = ("-то", "-нибудь", "-либо")
# Closed classes of English: articles, pronouns, prepositions, conjunctions, auxiliaries and
# modals, and the commonest light verbs and adverbs of degree.
FUNCTION_WORDS_EN = frozenset(
    [
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "it",
        "its",
        "it's",
        "they",
        "them",
        "their",
        "theirs",
        "we",
        "us",
        "our",
        "ours",
        "you",
        "your",
        "yours",
        "i",
        "me",
        "my",
        "mine",
        "he",
        "him",
        "his",
        "she",
        "her",
        "hers",
        "one",
        "ones",
        "some",
        "any",
        "all",
        "each",
        "every",
        "no",
        "not",
        "nor",
        "none",
        "both",
        "either",
        "neither",
        "other",
        "another",
        "such",
        "own",
        "same",
        "so",
        "than",
        "too",
        "very",
        "just",
        "also",
        "only",
        "even",
        "of",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "about",
        "against",
        "between",
        "into",
        "through",
        "during",
        "before",
        "after",
        "above",
        "below",
        "to",
        "from",
        "up",
        "down",
        "out",
        "off",
        "over",
        "under",
        "again",
        "further",
        "then",
        "once",
        "and",
        "but",
        "or",
        "if",
        "because",
        "as",
        "until",
        "while",
        "although",
        "though",
        "since",
        "unless",
        "whether",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "do",
        "does",
        "did",
        "doing",
        "done",
        "have",
        "has",
        "had",
        "having",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "need",
        "ought",
        "get",
        "gets",
        "got",
        "make",
        "makes",
        "made",
        "let",
        "lets",
        "say",
        "says",
        "said",
        "tell",
        "tells",
        "please",
        "show",
        "give",
        "find",
        "list",
        "describe",
        "explain",
        "many",
        "much",
        "few",
        "more",
        "most",
        "less",
        "least",
    ]
)
# Words that name the documents and their parts: asking "what does the wiki/the ТЗ say"
# says which text to look in, not what the question is about. The GOST 19/34 document types
# are the abbreviations of knowledge.text.matching.
DOCUMENT_WORDS = frozenset(
    {"документ", "документация", "вики", "wiki", "страница", "раздел", "подраздел", "пункт",
     "глава", "статья", "текст", "источник", "материал", "document", "documentation", "page",
     "section", "chapter", "article", "source", "техзадание"}
)  # fmt: skip
# The GOST 19/34 document types spelled out: each names a document, as its abbreviation does.
GOST_NAMES = (
    ("технический", "задание"), ("пояснительный", "записка"), ("программа", "и", "методика"),
    ("текст", "программа"), ("руководство", "программист"), ("руководство", "оператор"),
)  # fmt: skip


# Greetings, thanks, acknowledgements and channel checks ("привет", "ок", "тест", "ping"): a
# message made of these alone is small talk, not a question (feedback.tagging).
SMALL_TALK = frozenset(
    [
        "привет",
        "приветик",
        "здравствуй",
        "здравствуйте",
        "добрый",
        "день",
        "утро",
        "вечер",
        "ку",
        "хай",
        "спасибо",
        "благодарю",
        "ок",
        "окей",
        "ага",
        "угу",
        "да",
        "нет",
        "тест",
        "тестовый",
        "проверка",
        "пинг",
        "алло",
        "эй",
        "hello",
        "hi",
        "hey",
        "yo",
        "thanks",
        "thank",
        "you",
        "ok",
        "okay",
        "yes",
        "no",
        "test",
        "testing",
        "ping",
        "check",
    ]
)
# Words that ask for a list rather than name a topic ("покажи все тест-кейсы раздела 5").
LIST_WORDS = frozenset(
    {"покажи", "показать", "перечисли", "перечислить", "список", "выведи", "вывести", "все",
     "всё", "всех", "найди", "дай", "list", "show", "all", "every", "find", "give"}
)  # fmt: skip
# The question words as PostgreSQL's text-search configurations read them (lexemes, some
# Russian ones stemmed): the lexical side drops them from a question's content words.
QUESTION_LEXEMES = frozenset(
    """сколько почему зачем назовите назови каков какова каково каковы чей чья чье чьё чьи
    чьей чьего чьих который которая которое которые которого которой которому которым
    которых свой своя свое своё свои своей своего своих своим также
    так такое такой такая такие такого означа расскаж объясн опиш
    many much name""".split()  # noqa: SIM905 - a word list reads better as text
)


def is_stop(lemma: str, pos: str = "") -> bool:
    """A word that carries no topic: a function word by its part of speech or its class, a
    question word, a light verb, or a word naming the documents themselves."""
    word = lemma.casefold()
    if pos in FUNCTION_POS:
        return True
    if word.endswith(_INDEFINITE) and word.split("-")[0] in INTERROGATIVES_RU:
        return True
    return (
        word in DENOTATION_VERBS
        or word in INTERROGATIVES_RU
        or word in INTERROGATIVES_EN
        or word in LIGHT_VERBS_RU
        or word in FUNCTION_WORDS_EN
        or word in DOCUMENT_WORDS
    )
