"""Version references as people say them, read into ``Question.versions``: one test per kind
of reference, in Russian and English, in any order and case of the words. The documents and
dates are made up for these tests (an on-call duty policy edited three times on 9 March 2022)."""

from __future__ import annotations

from datetime import date

import pytest

from knowledge.question import read
from knowledge.question.refs import FIRST, LATEST, NEXT, PREVIOUS, VersionRef

DAY = date(2022, 3, 9)


def refs(question: str) -> list[VersionRef]:
    return [m.ref for m in read(question).versions]


@pytest.mark.parametrize(
    ("question", "ordinals"),
    [
        ("Чем третья редакция регламента дежурств от 9 марта 2022 отличается от второй?", [3, 2]),
        ("Сравни третью редакцию регламента от 9 марта 2022 года со второй", [3, 2]),
        ("Что поменялось между второй и третьей правками от 09.03.2022?", [2, 3]),
        ("Что внесла 9 марта 2022 года вторая правка регламента?", [2]),
        ("What changed between the second and the third revision of March 9, 2022?", [2, 3]),
        ("How does 2022-03-09's third version differ from the first one?", [3, 1]),
        ("What did the 2nd commit of 2022-03-09 change?", [2]),
        ("Compare the first and the last on-call policy versions of 2022-03-09", [1, -1]),
        ("Чем третья по счёту правка от 9 марта 2022 отличается от первой?", [3, 1]),
        ("Что изменила последняя правка регламента от 9 марта 2022?", [-1]),
        ("Что изменила самая свежая правка от 9 марта 2022?", [-1]),
        ("What changed in the earliest version of 2022-03-09?", [1]),
    ],
)
def test_an_ordinal_counts_the_versions_of_the_day_its_phrase_names(question, ordinals):
    assert refs(question) == [VersionRef(day=DAY, ordinal=n) for n in ordinals]


def test_the_same_day_points_back_at_the_date_named_before():
    assert refs("Чем версия от 9 марта 2022 отличается от третьей правки того же дня?") == [
        VersionRef(day=DAY),
        VersionRef(day=DAY, ordinal=3),
    ]
    assert refs(
        "What changed between the version of 2022-03-09 and the third commit of that day?"
    ) == [
        VersionRef(day=DAY),
        VersionRef(day=DAY, ordinal=3),
    ]


def test_the_same_day_as_a_commit_is_left_to_the_resolution():
    assert refs("Чем коммит 1a2b3c4 отличается от третьей правки того же дня?") == [
        VersionRef(label="1a2b3c4"),
        VersionRef(ordinal=3, same_day=True),
    ]


@pytest.mark.parametrize(
    "question",
    [
        "9 марта 2022 года в регламент внесли три правки. Чем вторая из них отличается от третьей?",
        "9 марта 2022 года в регламенте было три коммита. Что изменилось между вторым и третьим?",
        "On 9 March 2022 the policy got three commits. What changed between the second and the "
        "third of them?",
    ],
)
def test_a_day_set_in_an_earlier_sentence_is_the_day_of_the_ordinals_after_it(question):
    assert refs(question) == [VersionRef(day=DAY, ordinal=2), VersionRef(day=DAY, ordinal=3)]


@pytest.mark.parametrize(
    ("question", "found"),
    [
        (
            "Что изменилось в редакции, следующей сразу за редакцией от 20 января 2022?",
            [VersionRef(day=date(2022, 1, 20), step=1)],
        ),
        (
            "Что изменилось в версии сразу после 20.01.2022?",
            [VersionRef(day=date(2022, 1, 20), step=1)],
        ),
        (
            "What changed in the version that came right after the one of 2022-01-20?",
            [VersionRef(day=date(2022, 1, 20), step=1)],
        ),
        ("What changed in the policy right after 1a2b3c4?", [VersionRef(label="1a2b3c4", step=1)]),
        ("Покажи версию перед коммитом 6f7a8b9", [VersionRef(label="6f7a8b9", step=-1)]),
        (
            "Чем редакция от 14 июля 2022 отличается от предыдущей?",
            [VersionRef(day=date(2022, 7, 14)), VersionRef(relative=PREVIOUS)],
        ),
        (
            "Compare 1a2b3c4 with the one right before it",
            [VersionRef(label="1a2b3c4"), VersionRef(relative=PREVIOUS)],
        ),
        (
            "Чем коммит 1a2b3c4 отличается от следующего?",
            [VersionRef(label="1a2b3c4"), VersionRef(relative=NEXT)],
        ),
    ],
)
def test_a_neighbour_of_a_named_version(question, found):
    assert refs(question) == found


@pytest.mark.parametrize(
    ("question", "found"),
    [
        ("Сравни самую первую и самую свежую редакции регламента", [FIRST, LATEST]),
        ("Чем исходная версия регламента отличается от текущей?", [FIRST, LATEST]),
        (
            "How does the original version of the on-call policy differ from the latest one?",
            [FIRST, LATEST],
        ),
        (
            "Что изменилось в последней версии регламента по сравнению с предыдущей?",
            [LATEST, PREVIOUS],
        ),
    ],
)
def test_the_ends_of_the_history(question, found):
    assert refs(question) == [VersionRef(relative=r) for r in found]


def test_an_ordinal_without_a_day_counts_the_whole_history():
    assert refs("Чем вторая версия регламента отличается от четвёртой?") == [
        VersionRef(ordinal=2),
        VersionRef(ordinal=4),
    ]


def test_commit_ids_and_labels_name_their_versions():
    assert refs("Что изменилось в регламенте между 0b1c2d3 и версией 2.4?") == [
        VersionRef(label="0b1c2d3"),
        VersionRef(label="2.4"),
    ]


@pytest.mark.parametrize(
    "question",
    [
        "Какой первый шаг дежурного инженера?",
        "Что проверяют на последнем этапе приёмки?",
        "Где лежит исходный код сервиса уведомлений?",
        "What is the last step of the on-call handover?",
        "When was the on-call rotation first introduced?",
        "Отчёт режут на пять частей и печатают третью из них отдельно. С какой версии так можно?",
        "What are the original and the alternative layouts called in a split test?",
    ],
)
def test_a_word_that_counts_something_else_is_no_version_reference(question):
    assert refs(question) == []
