"""Garbage text layers: what ``textquality`` calls garbage (recognised again) and what not."""

from __future__ import annotations

import pytest

from knowledge.parsing.textquality import is_garbage, plausible_word, text_quality

RUSSIAN = (
    "Программа и методика испытаний определяет порядок проверки приложения. Испытания "
    "проводятся на стенде заказчика, результаты заносятся в протокол, который подписывают "
    "обе стороны."
)
ENGLISH = (
    "The Company designs, manufactures and markets smartphones, personal computers, tablets, "
    "wearables and accessories, and sells a variety of related services. The fiscal year ends "
    "on the last Saturday of September."
)
TABLE = (
    "Net sales: Products $ 63,355 $ 63,948 $ 245,241 $ 232,309 Services 19,604 17,486 58,941 "
    "50,148 Total net sales 82,959 81,434 304,182 282,457 Cost of sales: Products 41,485 40,899 "
    "155,084 149,476 Gross margin 35,885 35,255 132,687 117,662"
)
CODE = (
    "def get_user_by_id(user_id): return session.query(User).filter(User.id == user_id).first() "
    "if user_id else None; class UserRepository: pass"
)
GERMAN = (
    "Die Prüfung der Anwendung erfolgt auf dem Prüfstand des Auftraggebers; die Ergebnisse "
    "werden in einem Protokoll festgehalten, das beide Seiten unterschreiben."
)


@pytest.mark.parametrize("text", [RUSSIAN, ENGLISH, TABLE, CODE, GERMAN, "Стр. 5", ""])
def test_real_text_of_either_language_tables_and_code_are_not_garbage(text):
    assert not is_garbage(text), text_quality(text)


def test_cyrillic_in_an_old_encoding_read_as_latin_1_is_garbage():
    mojibake = RUSSIAN.encode("cp1251").decode("latin-1")  # "Ïðîãðàììà è ìåòîäèêà ..."
    quality = text_quality(mojibake)
    assert quality.foreign > 0.9 and quality.garbage


def test_replacement_and_private_use_characters_are_garbage():
    # A font without a Unicode map: MuPDF gives U+FFFD, some writers private-use code points.
    assert is_garbage("\ufffd\ufffd\ufffd\ufffd \ufffd\ufffd\ufffd " * 5 + ENGLISH[:40])
    assert is_garbage("".join(chr(0xE000 + i % 50) for i in range(60)) + " the end of it")


def test_text_typed_in_the_wrong_keyboard_layout_is_garbage():
    wrong_layout = (
        "Ghjuhfvvf b vtnjlbrf bcgsnfybq jghtltkztn gjhzljr ghjdthrb ghbkj;tybz. Bcgsnfybz "
        "ghjdjlzncz yf cntylt pfrfpxbrf"
    )
    quality = text_quality(wrong_layout)
    assert quality.known == 0 and quality.garbage


def test_glyph_numbers_without_words_are_garbage():
    glyphs = " ".join(["3G", "(8", "#k", "Q9x", "§2", "—w", "7Zq", "{r"] * 6)
    assert is_garbage(glyphs)


@pytest.mark.parametrize(
    ("word", "plausible"),
    [
        ("iPhone", True),
        ("JavaScript", True),
        ("getUserById", True),
        ("ГОСТ", True),
        ("бодрствовать", True),
        ("tHiSiS", False),
        ("Ntcnbhjdfybt", False),
        ("Тecт", False),  # Cyrillic and Latin letters in one word
    ],
)
def test_a_word_is_plausible_when_shaped_like_a_word_of_one_script(word, plausible):
    assert plausible_word(word) is plausible


def test_glyph_codes_shifted_into_capitals_are_garbage():
    # A subset font whose codes are glyph numbers: "The quick brown fox" comes out "7KH TXLFN".
    shifted = "".join(chr(ord(ch) - 29) if ch.isalpha() else ch for ch in ENGLISH)
    quality = text_quality(shifted)
    assert quality.upper > 0.7 and quality.garbage
