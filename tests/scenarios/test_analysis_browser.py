"""The guided test analysis in a real browser: a pasted description of a change to the demo app's
settings screen, its questions one at a time, then the mind map, its links and its exports."""

from __future__ import annotations

import shutil
import xml.dom.minidom
import xml.etree.ElementTree as ET

import pytest

from knowledge.models import Document
from scenarios.models import Analysis
from tests.conftest import CORPUS, PortalServer, ingest_folder, login, screenshot
from tests.llm_server import LlmTestServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SETTINGS_CHANGE = (
    "Экран настроек приложения: переключатель цветовой темы (светлая и тёмная) и выбор языка "
    "мероприятий переносятся на один экран; выбранные настройки сохраняются в памяти устройства "
    "и применяются при следующем запуске."
)
SPECS = ("ТЗ-Шакруа-Максим-БПИ182.docx", "Программа и методика испытаний.docx",
         "Пояснительная записка.docx")  # fmt: skip


def ingest_specs(tmp_path) -> dict[str, Document]:
    """The demo app's requirements (ТЗ), test programme (ПМИ) and explanatory note (ПЗ)."""
    folder = tmp_path / "specs"
    folder.mkdir()
    for name in SPECS:
        shutil.copy(CORPUS / "specs_hse_app_ru" / name, folder)
    ingest_folder(folder, "HSE app specifications", kind="specs")
    return {
        "ТЗ": Document.objects.get(title__startswith="ТЗ-"),
        "ПМИ": Document.objects.get(title="Программа и методика испытаний"),
        "ПЗ": Document.objects.get(title="Пояснительная записка"),
    }


def _answer(page, tile) -> None:
    with page.expect_navigation(timeout=180_000):
        tile.click()


def test_guided_analysis_asks_one_question_at_a_time_then_shows_a_linked_mind_map(
    tmp_path, bob, page
):
    documents = ingest_specs(tmp_path)
    with LlmTestServer() as llm:
        server = PortalServer(KB_LLM_BASE_URL=llm.base_url)
        try:
            login(page, server.url, "bob")
            page.goto(server.url + "/scenarios/")
            page.fill("#task", SETTINGS_CHANGE)
            with page.expect_navigation(timeout=60_000):
                page.click(".analysis-start button[type=submit]")
            screenshot(page, "analysis-question-1")

            seen_questions = []
            for step, wanted in enumerate(("android", "темы", "change")):
                question = page.locator("section.question")
                assert question.count() == 1  # one question at a time
                assert page.locator(".answered li").count() == step
                text = question.locator("h2").inner_text()
                assert text not in seen_questions
                seen_questions.append(text)
                tiles = question.locator("button.tile")
                assert tiles.count() >= 2
                values = [t.get_attribute("value") for t in tiles.all()]
                choice = next(v for v in values if wanted in v)
                if step == 1:
                    screenshot(page, "analysis-question-2-component-tiles")
                _answer(page, question.locator(f'button.tile[value="{choice}"]'))
            assert len(seen_questions) == 3

            tree = page.locator(".mm-tree")
            tree.wait_for()
            assert page.locator("section.question").count() == 0
            hrefs = [a.get_attribute("href") for a in tree.locator("a.mm-link").all()]
            for name, document in documents.items():
                assert any(h.startswith(f"/documents/{document.pk}/?version=") for h in hrefs), (
                    f"no node links to the {name}: {hrefs}"
                )
            assert tree.locator(".mm-test a.mm-link").count() >= 1  # a test section covers one
            suggestions = tree.locator(".mm-suggestion")
            assert suggestions.count() >= 1
            assert suggestions.first.locator(".mm-badge-suggestion").count() == 1
            assert any("suggest additional checks" in str(r.body).lower() for r in llm.requests)
            screenshot(page, "analysis-mind-map")

            # Collapse and expand: the tree is <details>, the buttons are static/kb/scenarios.js.
            first = tree.locator("details.mm-children").first
            first.locator("> summary").click()
            assert first.get_attribute("open") is None
            screenshot(page, "analysis-mind-map-collapsed")
            page.click("button[data-mindmap=open]")
            closed = tree.locator("details.mm-children:not([open])")
            assert closed.count() == 0
            page.click("button[data-mindmap=close]")
            assert tree.locator("details.mm-children[open]").count() == 0
            page.click("button[data-mindmap=open]")

            analysis = Analysis.objects.get(user=bob)
            _check_exports(page, server.url, analysis.pk, documents["ТЗ"].pk)

            # A node opens its source as a citation does: the viewer at that version, the
            # section's chunk highlighted.
            link = tree.locator(f'a.mm-link[href^="/documents/{documents["ПМИ"].pk}/"]').first
            href = link.get_attribute("href")
            assert "version=" in href and "chunk=" in href
            link.click()
            page.wait_for_url(f"**/documents/{documents['ПМИ'].pk}/**chunk=**")
            page.locator(".highlight").first.wait_for()
            screenshot(page, "analysis-node-opened")

            # The coverage map of the same documents, uncovered requirements first.
            page.goto(
                f"{server.url}/scenarios/coverage/?requirements={documents['ТЗ'].pk}"
                f"&tests={documents['ПМИ'].pk}"
            )
            rows = page.locator(".coverage-table tbody tr")
            assert rows.count() > 10
            assert rows.first.get_attribute("class") == "cov-uncovered"
            assert page.locator("tr.cov-covered a[href*='chunk=']").count() >= 1
            screenshot(page, "coverage-map")
        finally:
            server.stop()


def _check_exports(page, base_url: str, pk: int, tz_id: int) -> None:
    """The OPML and .mm downloads parse, and carry the absolute links of the map."""
    opml = page.request.get(f"{base_url}/scenarios/analyses/{pk}/export.opml")
    assert opml.ok and "attachment" in opml.headers["content-disposition"]
    xml.dom.minidom.parseString(opml.body())
    root = ET.fromstring(opml.body())
    urls = [o.get("url") for o in root.iter("outline") if o.get("url")]
    assert any(u.startswith(f"{base_url}/documents/{tz_id}/?version=") for u in urls), urls
    mm = page.request.get(f"{base_url}/scenarios/analyses/{pk}/export.mm")
    assert mm.ok
    xml.dom.minidom.parseString(mm.body())
    mindmap = ET.fromstring(mm.body())
    assert mindmap.tag == "map" and len(list(mindmap.iter("node"))) == len(
        list(root.iter("outline"))
    )
    markdown = page.request.get(f"{base_url}/scenarios/analyses/{pk}/export.md")
    assert markdown.ok and markdown.text().startswith("# Экран настроек")
