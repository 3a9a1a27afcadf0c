"""What a reader sees in the browser of a wiki table, a comparison's section list and a diff
answer (issue 41): a table cell's line breaks as line breaks in the answer and in the viewer,
a heading escaped once in the list of changed sections, the comparison linked from the answer.
Screenshots of each."""

from __future__ import annotations

import io
import shutil

import pytest
from django.core.management import call_command

from tests.conftest import ARTIFACTS, CORPUS, PortalServer, login, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TABLE_PAGE = "obshee/alfa-i-beta-testirovanie-alpha-testing-and-beta-testing.md"
# Two neighbouring Terms of Service versions; one changed section is "GitHub's Rights to Content".
TOS_PAIR = ("tos__2023-12-27_dbdfe9c.md", "tos__2024-04-17_e9eda96.md")


@pytest.fixture
def portal(tmp_path, bob):
    wiki = tmp_path / "wiki"
    (wiki / "obshee").mkdir(parents=True)
    shutil.copy(CORPUS / "wiki_qa_bible_ru" / TABLE_PAGE, wiki / TABLE_PAGE)
    call_command("ingest", str(wiki), source="QA Bible", json=True, stdout=io.StringIO())
    tos = tmp_path / "tos"
    tos.mkdir()
    for name in TOS_PAIR:
        shutil.copy(CORPUS / "versions" / "github_tos_en" / name, tos / name)
    (tos / "ORDER.txt").write_text("\n".join(TOS_PAIR) + "\n", encoding="utf-8")
    call_command(
        "ingest", str(tos), "--versions", source="GitHub ToS", json=True, stdout=io.StringIO()
    )
    server = PortalServer()
    yield server
    server.stop()


def _shot(locator, name: str) -> None:
    """The part of the page that shows the change, beside the full page's screenshot."""
    screenshot(locator.page, f"{name}-page")
    # A window taller than the part: the page's sticky header stays out of the picture.
    size = locator.page.viewport_size
    box = locator.bounding_box()
    locator.page.set_viewport_size({"width": size["width"], "height": int(box["height"]) + 300})
    locator.screenshot(path=str(ARTIFACTS / "screenshots" / f"{name}.png"))
    locator.page.set_viewport_size(size)


def _ask(page, question: str):
    page.wait_for_selector("#question")
    page.fill("#question", question)
    page.keyboard.press("Enter")
    answer = page.locator(".turn").last.locator(".bubble.answer[data-outcome]")
    answer.wait_for(timeout=60_000)
    return answer


def test_table_line_breaks_section_list_and_diff_link_in_the_browser(portal, page):
    login(page, portal.url, "bob")

    answer = _ask(page, "Какие критерии начала альфа-тестирования и бета-тестирования?")
    cell = answer.locator("td", has_text="Критерии начала").first
    assert cell.locator("br").count() >= 2, cell.inner_html()
    assert "<br>" not in answer.inner_text()  # nor in the sources' quotes
    _shot(answer, "answer-table-line-breaks")

    answer.locator("a.source-link").first.click()
    page.wait_for_url("**/documents/**")
    cell = page.locator("td", has_text="Критерии начала").first
    cell.wait_for()
    assert cell.locator("br").count() >= 2, cell.inner_html()
    _shot(page.locator("table", has=cell).first, "viewer-table-line-breaks")

    page.goto(portal.url + "/")
    answer = _ask(
        page,
        "What changed in the GitHub Terms of Service between the versions of 2023-12-27 "
        "and 2024-04-17?",
    )
    link = answer.locator(".answer-text p > a", has_text="Open the comparison of the versions")
    assert "/compare/" in link.get_attribute("href")
    _shot(answer, "answer-diff-comparison-link")

    link.click()
    page.wait_for_url("**/compare/**")
    nav = page.locator("nav.diff-nav")
    assert "1.9.1 GitHub's Rights to Content" in nav.locator("a").all_inner_texts()
    assert "&#x27;" not in nav.inner_text()
    _shot(nav, "compare-section-list")
