"""The comparison page in a real browser: side by side, inline through HTMX, a deep link to a
changed table row; screenshots of each."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import ARTIFACTS, login, screenshot

from .conftest import ingest_folder
from .helpers import HSE

pytestmark = pytest.mark.browser
PAIR = ("ПМИ_2019-05-03_cc60019.docx", "ПМИ_2019-05-04_aa30d6d.docx")


@pytest.fixture
def renamed_pmi(transactional_db, tmp_path):
    """The ПМИ version that renames the programme and its predecessor, ingested for real."""
    from knowledge.models import Document

    folder = tmp_path / "hse"
    folder.mkdir()
    for name in PAIR:
        shutil.copy(HSE / name, folder / name)
    (folder / "ORDER.txt").write_text("\n".join(PAIR) + "\n", encoding="utf-8")
    report = ingest_folder(folder, "HSE browser")
    assert report["ready"] == 2
    document = Document.objects.get(source__name="HSE browser")
    old, new = document.versions.order_by("number")
    return document, old, new


def test_compare_page_switches_views_and_follows_a_deep_link_to_a_changed_row(
    portal_server, page, bob, renamed_pmi
):
    document, old, new = renamed_pmi
    login(page, portal_server.url, "bob")
    page.click(".nav a:text('Versions')")
    page.wait_for_url(lambda url: url.endswith("/versions/"))
    last_two = f"/documents/{document.pk}/compare/?a={old.pk}&b={new.pk}"
    assert page.locator(f"a[href='{last_two}']").inner_text() == "Compare the last two"
    screenshot(page, "versions-index")
    page.goto(f"{portal_server.url}/documents/{document.pk}/versions/")
    assert page.locator("tr[id^=v-]").count() == 2
    screenshot(page, "versions-history")
    page.click("#compare-picked")
    page.wait_for_url(lambda url: "/compare/" in url)
    assert page.locator("#diff.mode-side").is_visible()
    assert page.locator("#sec-1-1 .diff-row.sbs.st-changed .new ins").first.inner_text() == (
        "Приложение активности и уведомления ВШЭ"
    )
    screenshot(page, "compare-side-by-side")
    page.screenshot(path=str(ARTIFACTS / "screenshots" / "compare-side-by-side-viewport.png"))

    page.click("#view-inline")  # HTMX swaps the diff and pushes the URL
    page.wait_for_selector("#diff.mode-inline")
    assert "view=inline" in page.url
    assert page.locator(".topbar").count() == 1  # a fragment was swapped in, not a page
    inline = page.locator("#sec-1-1 .diff-row.inline.st-changed")
    assert "Кроссплатформенная" in inline.locator("del").first.inner_text()
    screenshot(page, "compare-inline")

    link = page.locator(".diff-nav a[href^='#row-']").first
    target = link.get_attribute("href")
    link.click()
    page.wait_for_url(lambda url: url.endswith(target))  # no wait_for_function: CSP, no eval
    row = page.locator(f"tr{target}")
    assert "row-changed" in row.get_attribute("class")
    assert row.evaluate("el => el.matches(':target')")
    box = row.bounding_box()
    assert box is not None and 0 <= box["y"] < page.viewport_size["height"]
    screenshot(page, "compare-row-deep-link")
    # What the reader sees where the link landed (the full-page shot above shows everything).
    page.screenshot(path=str(ARTIFACTS / "screenshots" / "compare-row-deep-link-viewport.png"))

    page.click("#view-side")
    page.wait_for_selector("#diff.mode-side")
    page.goto(f"{portal_server.url}/documents/{document.pk}/compare/?a={old.pk}&b={new.pk}{target}")
    assert page.locator(f"tr{target}").evaluate("el => el.matches(':target')")
