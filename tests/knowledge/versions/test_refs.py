"""Version references read from words, resolved against a version list; document names."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import pytest

from knowledge.question import documents as naming
from knowledge.question import refs


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
    found = refs.resolve([refs.parse_ref(w) for w in words], VERSIONS)
    assert [v.number for v in found] == numbers


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
