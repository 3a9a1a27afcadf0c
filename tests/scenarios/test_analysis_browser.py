"""The guided test analysis in a real browser: a pasted description of a change to the demo app's
settings screen, its questions one at a time (the component tiles are the ТЗ's sections), then
the mind map with its four branches (requirements and their tests, gaps, the knowledge base's
checks, the program text), its links, and its exports carrying the same nodes."""

from __future__ import annotations

import re
import shutil
import xml.dom.minidom
import xml.etree.ElementTree as ET

import pytest

from knowledge.models import Document
from scenarios.exports import walk
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
WIKI = (
    "mobilnoe-testirovanie/testirovanie-trebovanii-k-mobilnym-prilozheniyam.md",
    "mobilnoe-testirovanie/osnovnye-proverki-pri-testirovanii-mobilnogo-prilozheniya.md",
    "vidy-metody-urovni-testirovaniya/testirovanie-lokalizacii-globalizacii-i-"
    "internacionalizacii-localization-globalization-internatio.md",
    "seti-i-okolo-nikh/http.md",
)
BRANCHES = ("requirements", "gaps", "knowledge", "code")


def ingest_specs(tmp_path, *, program_text: bool = False) -> dict[str, Document]:
    """The demo app's requirements (ТЗ), test programme (ПМИ) and explanatory note (ПЗ), and
    its program text (ТП) when asked."""
    folder = tmp_path / "specs"
    folder.mkdir()
    for name in SPECS + (("Текст программы.docx",) if program_text else ()):
        shutil.copy(CORPUS / "specs_hse_app_ru" / name, folder)
    ingest_folder(folder, "HSE app specifications", kind="specs")
    return {
        "ТЗ": Document.objects.get(title__startswith="ТЗ-"),
        "ПМИ": Document.objects.get(title="Программа и методика испытаний"),
        "ПЗ": Document.objects.get(title="Пояснительная записка"),
    }


def ingest_wiki(tmp_path) -> None:
    """A few pages of the QA wiki, in a source of the kind "wiki"."""
    folder = tmp_path / "wiki"
    for path in WIKI:
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / "wiki_qa_bible_ru" / path, target)
    ingest_folder(folder, "QA wiki", kind="wiki")


def _answer(page, tile) -> None:
    with page.expect_navigation(timeout=180_000):
        tile.click()


def test_guided_analysis_asks_one_question_at_a_time_then_shows_the_four_branches(
    tmp_path, bob, page
):
    documents = ingest_specs(tmp_path, program_text=True)
    ingest_wiki(tmp_path)
    with LlmTestServer() as llm:
        server = PortalServer(KB_LLM_BASE_URL=llm.base_url)
        try:
            login(page, server.url, "bob")
            page.goto(server.url + "/scenarios/")
            page.fill("#task", SETTINGS_CHANGE)
            with page.expect_navigation(timeout=60_000):
                page.click(".analysis-start button[type=submit]")
            screenshot(page, "analysis-question-1")
            _answer_the_questions(page, documents["ТЗ"].pk)

            tree = page.locator(".mm-tree")
            tree.wait_for()
            assert page.locator("section.question").count() == 0
            for branch in BRANCHES:
                assert tree.locator(f'li[data-branch="{branch}"]').count() == 1, branch
            requirements = tree.locator('li[data-branch="requirements"]')
            hrefs = [a.get_attribute("href") for a in requirements.locator("a.mm-link").all()]
            assert any(h.startswith(f"/documents/{documents['ТЗ'].pk}/?version=") for h in hrefs)
            assert not any(f"/documents/{documents['ПЗ'].pk}/" in h for h in hrefs)
            assert requirements.locator(".mm-test a.mm-link").count() >= 1  # a test covers one
            assert requirements.locator(".mm-statement").count() >= 1  # statements quoted
            knowledge = tree.locator('li[data-branch="knowledge"]')
            assert knowledge.locator(".mm-wiki a.mm-link").count() >= 1
            assert knowledge.locator(".mm-check").count() >= 1
            assert tree.locator('li[data-branch="code"] .mm-code a.mm-link').count() >= 1
            suggestions = tree.locator(".mm-suggestion")
            assert suggestions.count() >= 1
            assert suggestions.first.locator(".mm-badge-suggestion").count() == 1
            assert any("suggest additional test cases" in str(r.body).lower() for r in llm.requests)
            screenshot(page, "analysis-mind-map")
            tree.locator('li[data-branch="knowledge"]').scroll_into_view_if_needed()
            screenshot(page, "analysis-mind-map-knowledge")

            # Collapse and expand: the tree is <details>, the buttons are static/kb/scenarios.js.
            first = tree.locator("details.mm-children").first
            first.locator("> summary").click()
            assert first.get_attribute("open") is None
            screenshot(page, "analysis-mind-map-collapsed")
            page.click("button[data-mindmap=open]")
            assert tree.locator("details.mm-children:not([open])").count() == 0
            page.click("button[data-mindmap=close]")
            assert tree.locator("details.mm-children[open]").count() == 0
            page.click("button[data-mindmap=open]")

            analysis = Analysis.objects.get(user=bob)
            shown = page.locator(".mm-tree li.mm-node").count()
            _check_exports(page, server.url, analysis, shown, documents["ТЗ"].pk)

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


def _answer_the_questions(page, tz_id: int) -> None:
    """Platform, component, kind of change: one at a time, each answered with a tile; the
    component tiles are the ТЗ's sections (its functional areas)."""
    seen_questions = []
    for step, wanted in enumerate(("android", f"{tz_id}:", "change")):
        question = page.locator("section.question")
        assert question.count() == 1  # one question at a time
        assert page.locator(".answered li").count() == step
        text = question.locator("h2").inner_text()
        assert text not in seen_questions
        seen_questions.append(text)
        tiles = question.locator("button.tile")
        assert tiles.count() >= 2
        values = [t.get_attribute("value") for t in tiles.all()]
        if step == 1:
            assert all(v.startswith(f"{tz_id}:") for v in values), values
            labels = [t.inner_text() for t in tiles.all()]
            assert all(re.match(r"\d+(\.\d+)* ", label) for label in labels), labels
            screenshot(page, "analysis-question-2-component-tiles")
        choice = next(v for v in values if wanted in v)
        _answer(page, question.locator(f'button.tile[value="{choice}"]'))
    assert len(seen_questions) == 3


def _labels(tree: dict) -> list[str]:
    found = []
    for _, node in walk(tree):
        label = " ".join(str(node["label"]).split())
        found.append(f"{node['prefix']} {label}" if node.get("prefix") else label)
    return found


def _check_exports(page, base_url: str, analysis: Analysis, shown: int, tz_id: int) -> None:
    """The Markdown, OPML and .mm downloads carry the nodes the page shows, with absolute
    links; the XML ones parse."""
    labels = _labels(analysis.tree)
    assert len(labels) == shown  # the page's tree shows every node, the root first
    opml = page.request.get(f"{base_url}/scenarios/analyses/{analysis.pk}/export.opml")
    assert opml.ok and "attachment" in opml.headers["content-disposition"]
    xml.dom.minidom.parseString(opml.body())
    outline = ET.fromstring(opml.body())
    assert [o.get("text") for o in outline.iter("outline")] == labels
    urls = [o.get("url") for o in outline.iter("outline") if o.get("url")]
    assert any(u.startswith(f"{base_url}/documents/{tz_id}/?version=") for u in urls), urls
    mm = page.request.get(f"{base_url}/scenarios/analyses/{analysis.pk}/export.mm")
    assert mm.ok
    xml.dom.minidom.parseString(mm.body())
    mindmap = ET.fromstring(mm.body())
    assert mindmap.tag == "map"
    assert [n.get("TEXT") for n in mindmap.iter("node")] == labels
    markdown = page.request.get(f"{base_url}/scenarios/analyses/{analysis.pk}/export.md")
    assert markdown.ok and markdown.text().startswith("# Экран настроек")
    items = re.findall(r"^\s*- (.*)$", markdown.text(), re.M)
    assert len(items) == len(labels) - 1
    for label in labels[1:]:
        escaped = label.replace("[", "\\[").replace("]", "\\]")
        assert any(escaped in item for item in items), label
