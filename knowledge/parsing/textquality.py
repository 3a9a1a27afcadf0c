"""Is a page's text layer text, or garbage that only looks like text?

A PDF's text layer can be present and useless: a font without a Unicode map gives replacement
characters or glyph numbers, Cyrillic in an old 8-bit encoding read as Latin-1 gives "Ïðîãðàììà",
a bad OCR layer of a scanner gives words nobody wrote. Such a page is recognised again from its
image (knowledge.parsing.scan). Four measures over the page's text, each cheap:

- **bad**: the share of replacement (U+FFFD), private-use, control and unassigned characters
  among the visible characters;
- **foreign**: the share of letters outside basic Latin and Cyrillic (mojibake is made of
  "Ã", "Ð", "ò"; a German or French page has a few per cent of them);
- **plausible**: the share of words (two letters or more) shaped like a word of one script:
  one alphabet, a vowel (or an abbreviation in capitals), no run of six consonants, no case
  flipping inside the word;
- **known**: the share of words among the commonest Russian and English words (a small
  dictionary of function words: a real page of either language has a tenth to a half of them);
- **junk**: the share of space-separated tokens that are neither a word (letters, with inner
  hyphens or apostrophes) nor a number ("$63,355", "(10)", "12.5%"), surrounding punctuation
  aside: glyph soup such as "3G (8 #k Q9x" is made of them;
- **upper**: the share of capitals among the letters (glyph codes shifted into "7KH TXLFN"
  come out in capitals).

The text is garbage when it is long enough to judge and a measure is far off: more than 5 %
bad characters, more than 30 % foreign letters, fewer than half plausible words, more than half
junk tokens, or, with 20 words or more, fewer than 3 % known words while fewer than 80 % are
plausible or more than 70 % of the letters are capitals (a page of names, identifiers or code
is plausible but knows few words; a page typed in the wrong keyboard layout is neither).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

MIN_CHARACTERS = 20  # shorter texts are too little evidence either way
MAX_BAD = 0.05
MAX_FOREIGN = 0.30
MIN_PLAUSIBLE = 0.5
MIN_KNOWN = 0.03
MAX_JUNK = 0.5
KNOWN_CHECK_WORDS = 20
KNOWN_CHECK_PLAUSIBLE = 0.8
KNOWN_CHECK_UPPER = 0.7

_WORD = re.compile(r"[^\W\d_]+")
_EDGES = "()[]{}\"'«»“”‘’,.:;!?…"
_WORD_TOKEN = re.compile(r"^[^\W\d_]+(?:[-'’][^\W\d_]+)*$")
_NUMBER_TOKEN = re.compile(r"^[-–—+$€£₽#№]?\(?[$€£₽]?\d[\d,.\s]*%?\)?%?$")
_LATIN = re.compile(r"[A-Za-z]")
_CYRILLIC = re.compile(r"[А-Яа-яЁё]")
_VOWELS = set("aeiouyAEIOUYаеёиоуыэюяАЕЁИОУЫЭЮЯ")
_CASE_PARTS = re.compile(r"[A-ZА-ЯЁ]+(?![a-zа-яё])|[A-ZА-ЯЁ]?[a-zа-яё]+")
_CONSONANT_RUN = re.compile(r"[^aeiouyаеёиоуыэюяьъй\W\d_]{6,}", re.I)

# The commonest words of each language (function words, a few verbs): not a dictionary of the
# language, a test that the text is in one. Lower case, ё written е.
_KNOWN = """
    a about above after again against all also an and any are as at be because been before being
    below between both but by can could did do does each for from further had has have he her
    here his how i if in into is it its may more most must no nor not of on once only or other
    our out over per same she should so some such than that the their them then there these they
    this those through to under until up upon very was we were what when where which while who
    whom why will with within would you your shall each new net total three six nine months
    ended year years number used use including see page
    и в во не на я что он с со как а то все она так его но да ты к у же вы за бы по только ее
    мне было вот от меня еще нет о из ему теперь когда даже ну вдруг ли если уже или ни быть был
    него до вас нибудь опять уж вам ведь там потом себя ничего ей может они тут где есть надо ней
    для мы тебя их чем была сам чтоб без будто чего раз тоже себе под будет ж тогда кто этот того
    потому этого какой совсем ним здесь этом один почти мой тем чтобы нее сейчас были куда зачем
    всех никогда можно при наконец два об другой хоть после над больше тот через эти нас про всего
    них какая много разве три эту моя впрочем хорошо свою этой перед иногда лучше чуть том нельзя
    такой им более всегда конечно всю между это также является должен должна должны которые
    который которая которое а также либо согласно данный данные при этом следует система
    требования пользователь приложения приложение функции
"""
KNOWN_WORDS = frozenset(_KNOWN.split())


@dataclass(frozen=True)
class TextQuality:
    characters: int  # visible (non-space) characters
    words: int  # words of two letters or more
    bad: float
    foreign: float
    plausible: float
    known: float
    junk: float = 0.0
    tokens: int = 0
    upper: float = 0.0

    @property
    def garbage(self) -> bool:
        """Whether the text is too broken to index (see the module docstring)."""
        if self.characters < MIN_CHARACTERS:
            return False
        if self.bad > MAX_BAD or self.foreign > MAX_FOREIGN:
            return True
        if self.words >= 8 and self.plausible < MIN_PLAUSIBLE:
            return True
        if self.tokens >= 8 and self.junk > MAX_JUNK:
            return True
        return (
            self.words >= KNOWN_CHECK_WORDS
            and self.known < MIN_KNOWN
            and (self.plausible < KNOWN_CHECK_PLAUSIBLE or self.upper > KNOWN_CHECK_UPPER)
        )


def text_quality(text: str) -> TextQuality:
    """The four measures of ``text`` (see the module docstring)."""
    visible = [ch for ch in text if not ch.isspace()]
    bad = sum(1 for ch in visible if _is_bad(ch))
    letters = [ch for ch in visible if ch.isalpha()]
    foreign = sum(1 for ch in letters if not (_LATIN.match(ch) or _CYRILLIC.match(ch)))
    words = [w for w in _WORD.findall(text) if len(w) >= 2]
    plausible = sum(1 for w in words if plausible_word(w))
    known = sum(1 for w in words if w.lower().replace("ё", "е") in KNOWN_WORDS)
    tokens = [t.strip(_EDGES) for t in text.split()]
    tokens = [t for t in tokens if t]
    junk = sum(1 for t in tokens if not (_WORD_TOKEN.match(t) or _NUMBER_TOKEN.match(t)))
    upper = sum(1 for ch in letters if ch.isupper())
    return TextQuality(
        characters=len(visible),
        words=len(words),
        bad=bad / max(1, len(visible)),
        foreign=foreign / max(1, len(letters)),
        plausible=plausible / max(1, len(words)),
        known=known / max(1, len(words)),
        junk=junk / max(1, len(tokens)),
        tokens=len(tokens),
        upper=upper / max(1, len(letters)),
    )


def is_garbage(text: str) -> bool:
    return text_quality(text).garbage


def plausible_word(word: str) -> bool:
    """Shaped like a word of one script: see the module docstring."""
    latin = len(_LATIN.findall(word))
    cyrillic = len(_CYRILLIC.findall(word))
    if latin + cyrillic != len(word) or (latin and cyrillic):
        return False
    if word.isupper() and len(word) <= 6:
        return True  # an abbreviation: ГОСТ, SQL, ТЗ
    if not any(ch in _VOWELS for ch in word) or _CONSONANT_RUN.search(word):
        return False
    # Case changes only at the start of a part: iPhone, JavaScript, getUserById, macOS; not
    # "tHiSiS", which parts into "t", "Hi", "Si", "S".
    parts = _CASE_PARTS.findall(word)
    return all(len(part) >= 2 for part in parts[1:])


def _is_bad(ch: str) -> bool:
    if ch == "\ufffd":
        return True
    return unicodedata.category(ch) in ("Co", "Cc", "Cn", "Cs")
