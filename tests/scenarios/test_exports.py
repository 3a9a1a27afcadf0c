"""Mind-map exports: Markdown outline, OPML and FreeMind .mm, the XML ones read back by parsers."""

from __future__ import annotations

import xml.dom.minidom
import xml.etree.ElementTree as ET

from scenarios import exports
from scenarios.requirement_nodes import tie_node

TREE = {
    "label": "Экран настроек & <тема>",
    "kind": "root",
    "url": "",
    "note": "",
    "children": [
        {
            "label": "Requirements",
            "kind": "group",
            "url": "",
            "children": [
                {
                    "label": 'ТЗ · 4.2 Требования к интерфейсу "android"',
                    "kind": "requirement",
                    "url": "/documents/3/?version=7#b-113",
                    "note": "version v2",
                    "children": [
                        {
                            "label": "ПМИ · 6.2 Испытание [интерфейса]",
                            "kind": "test",
                            "url": "/documents/2/?version=5#b-146",
                            "children": [],
                        }
                    ],
                }
            ],
        },
        {
            "label": "Проверить переключение темы",
            "kind": "suggestion",
            "prefix": "Suggestion:",
            "url": "",
            "children": [],
        },
    ],
}


def _outlines(element: ET.Element) -> list[tuple[int, str, str]]:
    found = []

    def walk(node: ET.Element, depth: int) -> None:
        for child in node.findall("outline"):
            found.append((depth, child.get("text"), child.get("url", "")))
            walk(child, depth + 1)

    walk(element, 0)
    return found


def test_opml_is_well_formed_and_keeps_the_tree_labels_and_absolute_links():
    text = exports.to_opml(TREE, "https://kb.example.com/")
    xml.dom.minidom.parseString(text.encode())  # a second, independent parser
    root = ET.fromstring(text.encode())
    assert root.tag == "opml" and root.get("version") == "2.0"
    assert root.findtext("head/title") == "Экран настроек & <тема>"
    assert _outlines(root.find("body")) == [
        (0, "Экран настроек & <тема>", ""),
        (1, "Requirements", ""),
        (2, 'ТЗ · 4.2 Требования к интерфейсу "android"',
         "https://kb.example.com/documents/3/?version=7#b-113"),
        (3, "ПМИ · 6.2 Испытание [интерфейса]", "https://kb.example.com/documents/2/?version=5#b-146"),
        (1, "Suggestion: Проверить переключение темы", ""),
    ]  # fmt: skip


def test_freemind_map_is_well_formed_with_nested_nodes_and_links():
    text = exports.to_freemind(TREE, "https://kb.example.com")
    xml.dom.minidom.parseString(text.encode())
    root = ET.fromstring(text.encode())
    assert root.tag == "map"
    top = root.find("node")
    assert top.get("TEXT") == "Экран настроек & <тема>"
    requirement = top.find("node").find("node")
    assert requirement.get("LINK") == "https://kb.example.com/documents/3/?version=7#b-113"
    assert requirement.find("node").get("TEXT") == "ПМИ · 6.2 Испытание [интерфейса]"
    assert [n.get("TEXT") for n in root.iter("node")][
        -1
    ] == "Suggestion: Проверить переключение темы"


def test_markdown_outline_nests_items_and_links_them():
    text = exports.to_markdown(TREE, "https://kb.example.com")
    assert text.splitlines() == [
        "# Экран настроек & <тема>",
        "",
        "- Requirements",
        '  - [ТЗ · 4.2 Требования к интерфейсу "android"]'
        "(<https://kb.example.com/documents/3/?version=7#b-113>)",
        "    - [ПМИ · 6.2 Испытание \\[интерфейса\\]]"
        "(<https://kb.example.com/documents/2/?version=5#b-146>)",
        "- Suggestion: Проверить переключение темы",
    ]


FOLDED = {
    "label": "Экран оплаты",
    "kind": "root",
    "url": "",
    "children": [
        {
            "label": "Less likely (low confidence, folded)",
            "kind": "group",
            "branch": "folded",
            "confidence": "low",
            "url": "",
            "children": [
                {
                    "label": "ТЗ · 4.3 Требования к надежности",
                    "kind": "requirement",
                    "confidence": "low",
                    "prefix": "Low confidence:",
                    "url": "/documents/3/?version=7#b-120",
                    "children": [
                        {"label": "«Запрос повторяется»", "kind": "statement", "children": []}
                    ],
                }
            ],
        }
    ],
}


def test_a_low_confidence_branch_is_marked_in_every_export_and_folded_in_freemind():
    markdown = exports.to_markdown(FOLDED)
    assert "  - [Low confidence: ТЗ · 4.3 Требования к надежности]" in markdown
    assert "    - «Запрос повторяется»" in markdown  # folded, not dropped
    opml = ET.fromstring(exports.to_opml(FOLDED).encode())
    marked = [o.get("text") for o in opml.iter("outline") if o.get("_confidence") == "low"]
    assert marked == [
        "Less likely (low confidence, folded)",
        "Low confidence: ТЗ · 4.3 Требования к надежности",
    ]
    freemind = ET.fromstring(exports.to_freemind(FOLDED).encode())
    group = freemind.find("node").find("node")
    assert group.get("FOLDED") == "true"
    assert group.find("attribute").get("VALUE") == "low"
    assert group.find("node").find("node").get("TEXT") == "«Запрос повторяется»"


def _tied_tree() -> dict:
    tie = tie_node(
        {
            "change": "Чек после покупки приходит на e-mail.",
            "sentence": "Квитанция об оплате отправляется на почту",
            "closeness": 0.886,
            "kind": "requirement",
            "where": "4.2",
        }
    )
    requirement = {"label": "ТЗ · 4.2 Квитанции", "kind": "requirement", "url": "",
                   "children": [tie]}  # fmt: skip
    return {"label": "Чек на почту", "kind": "root", "url": "", "children": [requirement]}


def test_a_tie_says_both_sentences_and_the_closeness_in_every_export():
    said = "«Чек после покупки приходит на e-mail.» ≈ «Квитанция об оплате отправляется на почту»"
    markdown = exports.to_markdown(_tied_tree())
    assert f"  - Close in meaning: {said} (0.89)" in markdown.splitlines()
    opml = ET.fromstring(exports.to_opml(_tied_tree()).encode())
    tied = [o for o in opml.iter("outline") if o.get("_closeness")]
    assert [(o.get("_closeness"), said in o.get("text")) for o in tied] == [("0.89", True)]
    assert "closest to it" in tied[0].get("_note")
    freemind = ET.fromstring(exports.to_freemind(_tied_tree()).encode())
    node = next(n for n in freemind.iter("node") if said in n.get("TEXT"))
    assert (node.find("attribute").get("NAME"), node.find("attribute").get("VALUE")) == (
        "closeness",
        "0.89",
    )
