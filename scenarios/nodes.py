"""The mind map's nodes: plain dicts, so a map is stored as JSON and exported as it is.

A node is ``{"label", "kind", "url", "note", "prefix", "children"}``; a group (a branch of the
root) has ``branch``; a node standing for a section of a document has ``source`` (document,
path, version, section, title); a requirement has ``confidence`` ("high", or "low" when it is
shown folded) and ``rank``, ``why``; a branch with ``confidence`` "low" is folded in the page
and marked so in the exports.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy

from scenarios.units import VersionSections

Node = dict[str, Any]

TEST_KINDS = {
    "method": gettext_lazy("test method"),
    "declared": gettext_lazy("declared for checking, no method"),
    "environment": gettext_lazy("test environment"),
}


def node(label: str, kind: str, *, url: str = "", note: str = "", prefix: str = "") -> Node:
    return {"label": label, "kind": kind, "url": url, "note": note, "prefix": prefix,
            "children": []}  # fmt: skip


def group(label: str, branch: str) -> Node:
    found = node(label, "group")
    found["branch"] = branch
    return found


def source_node(loaded: VersionSections, section, kind: str, *, note: str = "") -> Node:
    """A node standing for a section of a document, linked and described."""
    described = loaded.describe(section)
    found = node(
        f"{described['document']} · {section.label}".strip(" ·"),
        kind,
        url=str(described["url"]),
        note=note,
    )
    found["source"] = {
        "document": described["document"],
        "document_id": described["document_id"],
        "path": loaded.document.path,
        "version": described["version"],
        "section": section.number,
        "title": section.title,
    }
    return found


def low_confidence(found: Node) -> bool:
    """Is the node, or the branch it heads, of low confidence (folded)?"""
    return found.get("confidence") == "low"
