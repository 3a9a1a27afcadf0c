"""A mind map (a tree of node dicts) as a Markdown outline, OPML 2.0 and FreeMind ``.mm``.

A node is ``{"label", "kind", "url", "note", "children"}`` (``scenarios.nodes``). Links are
made absolute with ``base_url`` so an exported map opens its sources from another tool. The XML
formats are built with ElementTree, which escapes every label and link. A low-confidence branch
(``confidence`` "low") is marked in each: its nodes' labels start with their mark ("Low
confidence:"), OPML carries ``_confidence="low"``, FreeMind folds it and adds the attribute. A
tie between the change and a requirement (``closeness``: a statement of the change, the
document's sentence closest to it in meaning) says both sentences and the closeness in its
label in every format, and the closeness as an attribute in OPML (``_closeness``) and
FreeMind.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator

from scenarios.nodes import Node, low_confidence

FORMATS = {
    "md": ("text/markdown; charset=utf-8", "md"),
    "opml": ("text/x-opml; charset=utf-8", "opml"),
    "mm": ("application/x-freemind; charset=utf-8", "mm"),
}


def _absolute(url: str, base_url: str) -> str:
    return base_url.rstrip("/") + url if url.startswith("/") else url


def _label(node: Node) -> str:
    label = " ".join(str(node.get("label", "")).split())
    return f"{node['prefix']} {label}" if node.get("prefix") else label


def walk(node: Node, depth: int = 0) -> Iterator[tuple[int, Node]]:
    """Every node with its depth, the root first."""
    yield depth, node
    for child in node.get("children", []):
        yield from walk(child, depth + 1)


def _md_text(text: str) -> str:
    return text.replace("[", "\\[").replace("]", "\\]")


def to_markdown(root: Node, base_url: str = "") -> str:
    """A heading for the root, then a nested list; a node with a source is a link to it."""
    lines = [f"# {_md_text(_label(root))}", ""]
    for depth, node in walk(root):
        if depth == 0:
            continue
        text = _md_text(_label(node))
        url = node.get("url")
        item = f"[{text}](<{_absolute(url, base_url)}>)" if url else text
        lines.append(f"{'  ' * (depth - 1)}- {item}")
    return "\n".join(lines) + "\n"


def to_opml(root: Node, base_url: str = "") -> str:
    """OPML 2.0: nested ``outline`` elements; links as ``type="link" url=...``."""
    opml = ET.Element("opml", version="2.0")
    head = ET.SubElement(opml, "head")
    ET.SubElement(head, "title").text = _label(root)
    body = ET.SubElement(opml, "body")

    def add(parent: ET.Element, node: Node) -> None:
        outline = ET.SubElement(parent, "outline", text=_label(node))
        if node.get("url"):
            outline.set("type", "link")
            outline.set("url", _absolute(node["url"], base_url))
        if node.get("note"):
            outline.set("_note", node["note"])
        if low_confidence(node):
            outline.set("_confidence", "low")
        if "closeness" in node:
            outline.set("_closeness", f"{node['closeness']:.2f}")
        for child in node.get("children", []):
            add(outline, child)

    add(body, root)
    ET.indent(opml)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(opml, encoding="unicode") + "\n"


def to_freemind(root: Node, base_url: str = "") -> str:
    """FreeMind 1.0 ``.mm``: nested ``node`` elements with ``TEXT`` and ``LINK``; XMind, Freeplane
    and most mind-map tools import it."""
    mindmap = ET.Element("map", version="1.0.1")

    def add(parent: ET.Element, node: Node, depth: int) -> None:
        element = ET.SubElement(parent, "node", TEXT=_label(node))
        if node.get("url"):
            element.set("LINK", _absolute(node["url"], base_url))
        if (depth >= 2 or low_confidence(node)) and node.get("children"):
            element.set("FOLDED", "true")
        if low_confidence(node):
            ET.SubElement(element, "attribute", NAME="confidence", VALUE="low")
        if "closeness" in node:
            ET.SubElement(element, "attribute", NAME="closeness", VALUE=f"{node['closeness']:.2f}")
        for child in node.get("children", []):
            add(element, child, depth + 1)

    add(mindmap, root, 0)
    ET.indent(mindmap)
    return ET.tostring(mindmap, encoding="unicode") + "\n"


def export(root: Node, fmt: str, base_url: str = "") -> str:
    """The map in one of ``FORMATS``."""
    if fmt == "md":
        return to_markdown(root, base_url)
    if fmt == "opml":
        return to_opml(root, base_url)
    if fmt == "mm":
        return to_freemind(root, base_url)
    raise ValueError(f"unknown format {fmt!r}")
