"""Unicode's look-alikes (UTS #39) as one module: source names, moderation and the fence read
the same data (issue 50, row 5). Pure functions: no database."""

from __future__ import annotations

import pytest

from knowledge.text.confusables import fold_word, letter_view, look_alike


@pytest.mark.parametrize(
    "name",
    [
        "Secret \u0391",  # GREEK CAPITAL LETTER ALPHA, a word of its own
        "Secret \u13aa",  # CHEROKEE LETTER GO
        "Secret A.",
        "Secret-A",
        "secret\u00a0a",
        "\u0405ecret A",  # CYRILLIC CAPITAL LETTER DZE
    ],
)
def test_a_name_that_only_looks_different_is_the_same_name(name):
    assert look_alike(name, "Secret A")


@pytest.mark.parametrize("name", ["Secret B", "Secret AB", "SecretA", "Secret A 2"])
def test_a_different_name_is_not_taken_for_it(name):
    assert not look_alike(name, "Secret A")


def test_the_alphabets_twins_come_from_unicodes_data():
    assert fold_word("p\u0430ssw\u043erd") == "password"  # Cyrillic а, о in a Latin word
    assert fold_word("c\u0443\u043aa", alphabet="cyrillic") == "сука"  # Latin c, a; Cyrillic у, к
    assert letter_view("</sourc\u0435s>") == "</sources>"
    assert len(letter_view("Ѕecret Ꭺ")) == len("Ѕecret Ꭺ")  # one character for one
