"""Finding documents by title for the scenarios, as the user may read them."""

from __future__ import annotations

import re

from django.utils.translation import gettext as _

from knowledge.models import Document


class DocumentLookupError(LookupError):
    """No document, or several, answer to a title; the message says which, in plain words."""


def readable_documents(user):
    """The live documents ``user`` may read (every live document for None: the command line)."""
    documents = Document.objects.live().select_related("source")
    return documents if user is None else documents.visible_to(user)


_DOCUMENT_LINK = re.compile(r"^/documents/(\d+)/")


def readable_tree(tree: dict, user) -> tuple[dict, int]:
    """The mind map as ``user`` may read it now (checked on every view and export, as the chat
    checks an old answer): a node linking a document they may no longer read goes, with
    everything under it (the sections and checks drawn from it). Returns (tree, how many
    nodes went)."""
    linked = {int(m[1]) for url in _links(tree) if (m := _DOCUMENT_LINK.match(url))}
    allowed = set(
        Document.objects.visible_to(user).filter(pk__in=linked).values_list("pk", flat=True)
    )

    def keep(node: dict) -> tuple[dict | None, int]:
        match = _DOCUMENT_LINK.match(str(node.get("url") or ""))
        if match and int(match[1]) not in allowed:
            return None, _count(node)
        children, dropped = [], 0
        for child in node.get("children", []):
            kept, gone = keep(child)
            dropped += gone
            if kept is not None:
                children.append(kept)
        return {**node, "children": children}, dropped

    kept, dropped = keep(tree)
    return kept or {**tree, "children": []}, dropped


def _links(node: dict) -> list[str]:
    found = [str(node["url"])] if node.get("url") else []
    for child in node.get("children", []):
        found += _links(child)
    return found


def _count(node: dict) -> int:
    return 1 + sum(_count(child) for child in node.get("children", []))


def find_document(title: str, user=None) -> Document:
    """The document titled ``title``: exact title, then case-insensitive, then an alias, then
    the one title containing it. Raises DocumentLookupError when none or several match."""
    documents = readable_documents(user)
    wanted = " ".join(title.split())
    for lookup in ({"title": wanted}, {"title__iexact": wanted}):
        found = list(documents.filter(**lookup)[:2])
        if len(found) == 1:
            return found[0]
    aliased = [
        d for d in documents.exclude(aliases="") if wanted.lower() in map(str.lower, d.alias_list)
    ]
    if len(aliased) == 1:
        return aliased[0]
    found = list(documents.filter(title__icontains=wanted)[:6])
    if len(found) == 1:
        return found[0]
    if not found:
        raise DocumentLookupError(_("No document titled “%(title)s”.") % {"title": wanted})
    titles = "; ".join(d.title for d in found[:5])
    raise DocumentLookupError(
        _("Several documents match “%(title)s”: %(titles)s.") % {"title": wanted, "titles": titles}
    )
