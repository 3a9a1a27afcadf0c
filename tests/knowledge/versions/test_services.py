"""Version services on the real ПМИ and ТЗ histories: order, comparisons, references, names."""

from __future__ import annotations

from datetime import date

import pytest

from knowledge import finder
from knowledge.models import Document, DocumentVersion, Source, VersionChange
from knowledge.question import read
from knowledge.versions import services

from .helpers import HSE, order

pytestmark = pytest.mark.django_db


def _labels(versions):
    return [v.filename for v in versions]


def test_eight_pmi_versions_are_one_document_in_the_order_of_the_order_file(hse):
    assert hse.report["ready"] == 16 and hse.report["failed"] == 0
    pmi = Document.objects.get(pk=hse.pmi_id)
    versions = list(pmi.versions.order_by("number"))
    assert _labels(versions) == order(HSE, "ПМИ")
    assert [v.number for v in versions] == list(range(1, 9))
    assert versions[4].label == "2019-05-14 3cba122" and versions[5].label == "2019-05-14 30e82c5"
    assert pmi.current_version_id == versions[-1].pk
    assert list(
        Document.objects.get(pk=hse.tz_id)
        .versions.order_by("number")
        .values_list("filename", flat=True)
    ) == order(HSE, "TZ")


def test_compare_is_cached_and_its_summary_stored(hse):
    old = hse.version("ПМИ_2019-05-03_cc60019.docx")
    new = hse.version("ПМИ_2019-05-04_aa30d6d.docx")
    first = services.compare(old, new)
    assert services.compare(old, new) is first
    VersionChange.objects.filter(old=old, new=new).delete()
    assert services.summary_between(old, new) == first.summary
    stored = VersionChange.objects.get(old=old, new=new)
    assert stored.engine == services.ENGINE
    assert stored.summary["changed"] == ["Preamble", "1.1 Наименование"]
    assert first.url == f"/documents/{hse.pmi_id}/compare/?a={old.pk}&b={new.pk}"
    VersionChange.objects.filter(pk=stored.pk).update(
        summary={**stored.summary, "changed": ["kept"]}
    )
    assert services.summary_between(old, new).changed == ["kept"]  # read back, not recomputed


def test_versions_of_two_documents_are_not_comparable(hse):
    with pytest.raises(services.NotComparable):
        services.compare(
            hse.version("ПМИ_2019-05-03_cc60019.docx"), hse.version("TZ_2019-05-04_e735602.docx")
        )


def test_changes_as_text_lists_the_renaming_with_both_versions(hse):
    comparison = services.compare(
        hse.version("ПМИ_2019-05-03_cc60019.docx"), hse.version("ПМИ_2019-05-04_aa30d6d.docx")
    )
    text = services.changes_as_text(comparison)
    assert "2019-05-03 cc60019 (#1)" in text and "2019-05-04 aa30d6d (#2)" in text
    assert "**1.1 Наименование**: changed" in text
    assert "«Приложение активности и уведомления ВШЭ»" in text
    assert text.endswith(f"[Open the comparison of the versions]({comparison.url})")
    short = services.changes_as_text(
        services.compare(
            hse.version("ПМИ_2019-05-07_8ef4ea7.docx"), hse.version("ПМИ_2019-05-14_3cba122.docx")
        ),
        max_chars=1200,
    )
    assert len(short) <= 1200
    assert "**1.2 Область применения**: changed" in short
    assert "more changed sections" in short


def test_changes_as_text_says_no_text_changes_for_a_formatting_only_version(hse):
    comparison = services.compare(
        hse.version("TZ_2019-05-15_8bb41a2.docx"), hse.version("TZ_2019-05-15_ec34822.docx")
    )
    assert "No text changes" in services.changes_as_text(comparison)


@pytest.mark.parametrize(
    ("refs", "expected"),
    [
        (
            ["4 мая 2019", "14 мая 2019"],
            ["ПМИ_2019-05-04_aa30d6d.docx", "ПМИ_2019-05-14_30e82c5.docx"],
        ),
        ([date(2019, 5, 14)], ["ПМИ_2019-05-14_30e82c5.docx"]),  # tie: the later in order
        (["3cba122"], ["ПМИ_2019-05-14_3cba122.docx"]),
        (
            ["2019-05-14 3cba122", "latest"],
            ["ПМИ_2019-05-14_3cba122.docx", "ПМИ_2019-05-20_8661a18.docx"],
        ),
        (
            ["предыдущая", "последняя"],
            ["ПМИ_2019-05-15_13d5bd9.docx", "ПМИ_2019-05-20_8661a18.docx"],
        ),
        (["previous", "3cba122"], ["ПМИ_2019-05-07_8ef4ea7.docx", "ПМИ_2019-05-14_3cba122.docx"]),
        (["первая", "#3"], ["ПМИ_2019-05-03_cc60019.docx", "ПМИ_2019-05-05_d8f6d47.docx"]),
        (["10 May 2019"], ["ПМИ_2019-05-07_8ef4ea7.docx"]),  # the version in force that day
        (["14.05"], []),  # not a reference to anything
        (["1 мая 2019"], []),  # before the first version
    ],
)
def test_resolve_versions(hse, refs, expected):
    pmi = Document.objects.get(pk=hse.pmi_id)
    assert _labels(services.resolve_versions(pmi, refs)) == expected


def test_section_changed_in_latest(hse):
    # ПМИ 8661a18 (the latest) changed only the approval table of the title page against 13d5bd9;
    # ТЗ 8661a18 changed its title page (year, name in capitals) and nothing in section 1.
    pmi = Document.objects.get(pk=hse.pmi_id)
    assert services.section_changed_in_latest(pmi, "") is True  # before the first heading
    assert services.section_changed_in_latest(pmi, "1.2") is False
    assert (
        services.section_changed_in_latest(pmi, ["ОБЪЕКТ ИСПЫТАНИЙ", "Область применения"]) is False
    )
    assert services.section_changed_in_latest(pmi, "Область применения") is False
    tz = Document.objects.get(pk=hse.tz_id)
    assert services.section_changed_in_latest(tz, []) is True
    assert services.section_changed_in_latest(tz, "1.1") is False
    assert services.section_changed_in_latest(tz, "99.9") is False  # no such section


def find(question: str, user) -> Document | None:
    """The document a question about versions names, among those ``user`` may read."""
    return finder.find_document(read(question).documents, Document.objects.visible_to(user))


def test_find_document_by_title_words_and_permissions(hse, bob, eve):
    pmi = Document.objects.get(pk=hse.pmi_id)
    question = "Что изменилось в программе и методике испытаний между версиями от 4 и 14 мая 2019?"
    assert find(question, bob) == pmi
    assert find("Что нового в ПМИ?", bob) == pmi
    assert find("Что изменилось в техническом задании?", bob).pk == hse.tz_id
    assert find("Как дела?", bob) is None
    Source.objects.filter(pk=hse.source_id).update(is_public=False)
    Source.objects.get(pk=hse.source_id).readers.add(bob)
    assert find(question, bob) == pmi
    assert find(question, eve) is None


def test_not_ready_version_is_not_comparable(hse):
    version = hse.version("ПМИ_2019-05-20_8661a18.docx")
    DocumentVersion.objects.filter(pk=version.pk).update(status="failed", parsed=None)
    version.refresh_from_db()
    with pytest.raises(services.NotComparable):
        services.compare(hse.version("ПМИ_2019-05-03_cc60019.docx"), version)
    assert services.summary_between(hse.version("ПМИ_2019-05-15_13d5bd9.docx"), version) is None


def test_find_document_reads_names_once_and_again_after_a_change(hse, bob, monkeypatch):
    from django.utils import timezone

    question = "Что изменилось в программе и методике испытаний между версиями от 4 и 14 мая 2019?"
    finder._candidates.clear()
    opened: list[list[int]] = []
    real = finder._openings
    monkeypatch.setattr(finder, "_openings", lambda ids: opened.append(list(ids)) or real(ids))
    assert find(question, bob).pk == hse.pmi_id
    assert len(opened[0]) >= 2  # every document's opening, the first time
    assert find("Что нового в ПМИ?", bob).pk == hse.pmi_id
    assert opened[1] == []  # the second question reads no opening
    # A renamed document is found by its new name at once.
    Document.objects.filter(pk=hse.tz_id).update(title="Регламент обмена расписаниями")
    assert find("Что нового в регламенте обмена расписаниями?", bob).pk == (hse.tz_id)
    # A re-ingested current version has its opening read again.
    pmi = Document.objects.get(pk=hse.pmi_id)
    DocumentVersion.objects.filter(pk=pmi.current_version_id).update(ready_at=timezone.now())
    find(question, bob)
    assert pmi.current_version_id in opened[-1]
