"""Version references read from words, resolved against a version list; document names."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import pytest

from knowledge.question import documents as naming
from knowledge.question import refs, resolving


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2019-05-14", refs.VersionRef(day=date(2019, 5, 14))),
        ("14.05.2019", refs.VersionRef(day=date(2019, 5, 14))),
        ("14 мая 2019 г.", refs.VersionRef(day=date(2019, 5, 14))),
        ("4 May 2019", refs.VersionRef(day=date(2019, 5, 4))),
        ("May 4, 2019", refs.VersionRef(day=date(2019, 5, 4))),
        ("4 марта", refs.VersionRef(month_day=(3, 4))),
        ("#3", refs.VersionRef(number=3)),
        ("версия 2.3", refs.VersionRef(label="2.3")),
        ("предыдущая", refs.VersionRef(relative=refs.PREVIOUS)),
        ("the latest", refs.VersionRef(relative=refs.LATEST)),
        ("the previous version", refs.VersionRef(relative=refs.PREVIOUS)),
        ("последняя версия", refs.VersionRef(relative=refs.LATEST)),
        ("first", refs.VersionRef(relative=refs.FIRST)),
        ("31 февраля 2019", refs.VersionRef(label="31 февраля 2019")),  # no such day
    ],
)
def test_parse_ref(text, expected):
    assert refs.parse_ref(text) == expected


@dataclass(frozen=True)
class V:
    number: int
    label: str
    label_date: date | None


VERSIONS = [
    V(1, "2019-05-04 aa30d6d", date(2019, 5, 4)),
    V(2, "2019-05-14 3cba122", date(2019, 5, 14)),
    V(3, "2019-05-14 30e82c5", date(2019, 5, 14)),
    V(4, "v2.3", None),
]


@pytest.mark.parametrize(
    ("words", "numbers"),
    [
        (["14 мая 2019"], [3]),  # two versions that day: the later in the order
        (["3cba122", "v2.3"], [2, 4]),
        (["2.3"], [4]),
        (["previous"], [3]),  # before the latest
        (["previous", "3cba122"], [1, 2]),  # before the other version named
        (["latest", "latest"], [4]),
        (["2019-05-10"], [1]),  # in force that day
        (["2019-05-01"], []),
        (["nothing like it"], []),
    ],
)
def test_resolve(words, numbers):
    found = resolving.resolve([refs.parse_ref(w) for w in words], VERSIONS)
    assert [v.number for v in found] == numbers


# A made-up history: three versions on 2022-03-09, the same month-day in two years.
HISTORY = [
    V(1, "2022-01-20 0b1c2d3", date(2022, 1, 20)),
    V(2, "2022-03-09 1a2b3c4", date(2022, 3, 9)),
    V(3, "2022-03-09 2b3c4d5", date(2022, 3, 9)),
    V(4, "2022-03-09 3c4d5e6", date(2022, 3, 9)),
    V(5, "2022-07-14 4d5e6f7", date(2022, 7, 14)),
    V(6, "2023-07-14 5e6f7a8", date(2023, 7, 14)),
    V(7, "2023-10-02 6f7a8b9", date(2023, 10, 2)),
]
DAY = date(2022, 3, 9)
R = refs.VersionRef


@pytest.mark.parametrize(
    ("found", "numbers"),
    [
        ([R(day=DAY, ordinal=2), R(day=DAY, ordinal=-1)], [3, 4]),  # the n-th of a day
        ([R(label="2b3c4d5"), R(ordinal=3, same_day=True)], [3, 4]),  # of that commit's day
        ([R(day=date(2022, 7, 14), step=1)], [6]),  # right after the version of a day
        ([R(label="1a2b3c4", step=-1)], [1]),  # right before a commit
        ([R(label="1a2b3c4"), R(relative=refs.NEXT)], [2, 3]),  # the next after another
        ([R(relative=refs.PREVIOUS)], [6]),  # alone: before the latest
        ([R(ordinal=2), R(ordinal=-2)], [2, 6]),  # the n-th of the whole history
        ([R(relative=refs.FIRST), R(relative=refs.LATEST)], [1, 7]),
        ([R(month_day=(3, 9), ordinal=2)], [3]),  # a date without its year, one year has it
    ],
)
def test_references_resolve_against_each_other(found, numbers):
    assert [v.number for v in resolving.resolve(found, HISTORY)] == numbers


def test_a_reference_that_names_no_version_offers_the_versions_it_could_mean():
    past_the_day, missing_day, past_the_end = resolving.resolve_each(
        [R(day=DAY, ordinal=4), R(day=date(2022, 5, 1)), R(label="6f7a8b9", step=1)],
        HISTORY,
        exact=True,
    )
    assert past_the_day.version is None and not past_the_day.several
    assert [v.number for v in past_the_day.candidates] == [2, 3, 4]  # that day's versions
    assert [v.number for v in missing_day.candidates] == [3, 4, 5, 6]  # the nearest ones
    assert past_the_end.version is None and [v.number for v in past_the_end.candidates] == [7]


def test_a_reference_that_names_several_versions_equally_offers_them():
    (month_day,) = resolving.resolve_each([R(month_day=(7, 14))], HISTORY)
    assert month_day.version is None and month_day.several
    assert [v.number for v in month_day.candidates] == [5, 6]
    labelled = [V(1, "v1.0 beta", None), V(2, "v1.0 final", None)]
    (label,) = resolving.resolve_each([refs.parse_ref("v1.0")], labelled)
    assert label.several and [v.number for v in label.candidates] == [1, 2]


def test_a_version_is_named_back_by_its_day_and_its_place_in_it():
    assert resolving.place(HISTORY[2], HISTORY) == resolving.Place(
        day=DAY, ordinal=2, tag="2b3c4d5", latest=False, first=False
    )
    assert resolving.place(HISTORY[6], HISTORY) == resolving.Place(
        day=date(2023, 10, 2), ordinal=0, tag="6f7a8b9", latest=True, first=False
    )
    labelled = V(1, "v2.4", None)
    assert resolving.place(labelled, [labelled]).tag == "v2.4"


CANDIDATES = [
    naming.Candidate(1, "ПМИ_2019-05-20_8661a18 ПМИ.docx", "Программа и методика испытаний"),
    naming.Candidate(2, "TZ_2019-05-20 TZ.docx", "ТЕХНИЧЕСКОЕ ЗАДАНИЕ на разработку"),
    naming.Candidate(3, "GitHub Terms of Service tos.md", "Thank you for using GitHub!"),
]


@pytest.mark.parametrize(
    ("question", "key"),
    [
        ("Что изменилось в программе и методике испытаний между версиями от 4 и 14 мая?", 1),
        ("Что нового в ПМИ?", 1),
        ("Что изменилось в техническом задании?", 2),
        ("What changed in the GitHub terms of service last year?", 3),
        ("What changed in the latest version?", None),  # names no document
        ("Как дела?", None),
    ],
)
def test_best_candidate(question, key):
    assert naming.best_candidate(naming.document_names(question), CANDIDATES) == key


TITLES = [
    "ПМИ_2019-05-20 ПМИ.docx",
    "Программа и методика испытаний.docx",
    "ТЗ-Шакруа.docx",
    "Техническое Задание v2.docx",
    "Пояснительная записка.docx",
    "ПЗ.docx",
    "Руководство оператора.pdf",
    "Руководство программиста.pdf",
    "РС сервера.docx",
    "РО приложения.pdf",
    "Текст программы.docx",
    "Лист утверждения ЛУ.docx",
    "GitHub Terms of Service.md",
    "tos.md",
    "техзадание на доработку.docx",
    "Отчёт о тестировании.md",
    "Методика расчёта нагрузки.md",
]


@pytest.mark.parametrize("short", sorted(naming.ABBREVIATIONS))
def test_name_patterns_keep_every_document_an_abbreviation_can_name(short):
    # The database reads only the documents holding a pattern: every document the question's
    # abbreviation names must hold one, or it could no longer be named.
    question = f"Что сказано в {short.upper()} о сроках?"
    candidates = [naming.Candidate(i, title, "") for i, title in enumerate(TITLES)]
    names = naming.document_names(question)
    named = naming.named_by_abbreviation(names, candidates)
    patterns = naming.name_patterns(names)
    assert patterns
    kept = [c for c in candidates if any(p in c.title.lower().replace("ё", "е") for p in patterns)]
    assert named, short
    assert {c.key for c in named} <= {c.key for c in kept}
    assert len(kept) < len(candidates)  # and it does filter
