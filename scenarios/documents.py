"""Finding documents by title for the scenarios, as the user may read them."""

from __future__ import annotations

from django.utils.translation import gettext as _

from knowledge.models import Document


class DocumentLookupError(LookupError):
    """No document, or several, answer to a title; the message says which, in plain words."""


def readable_documents(user):
    """The live documents ``user`` may read (every live document for None: the command line)."""
    documents = Document.objects.live().select_related("source")
    return documents if user is None else documents.visible_to(user)


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
