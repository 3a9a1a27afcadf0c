"""Version pages: the documents with versions, a document's history, the comparison of two
versions, and the staff actions (label and date, order, removal)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from functools import wraps

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.middleware import HtmxDetails

from knowledge.models import Document, DocumentVersion
from knowledge.versions import actions, history, services
from portal import audit
from portal.params import id_param


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


VIEWS = ("side", "inline")


def staff_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """403 for a signed-in reader (the login middleware has sent anonymous users away)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_staff:
            raise PermissionDenied("Staff only")
        return view(request, *args, **kwargs)

    return wrapped


def _document(request: HttpRequest, pk: int) -> Document:
    return get_object_or_404(
        Document.objects.visible_to(request.user).select_related("source"), pk=pk
    )


def _version(document: Document, vid: int) -> DocumentVersion:
    return get_object_or_404(document.versions.defer("parsed"), pk=vid)


@require_GET
def versions_index(request: HtmxHttpRequest) -> HttpResponse:
    """Documents with more than one version, the newest change first."""
    return render(
        request, "versions/index.html", {"rows": history.versioned_documents(request.user)}
    )


@require_GET
def document_versions(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Every version of a document with its change summary; pick two to compare."""
    document = _document(request, pk)
    rows = history.history(document)
    context = {
        "document": document,
        "rows": rows,
        "count": len(rows),
        "pick_a": rows[1].version.pk if len(rows) > 1 else None,
        "pick_b": rows[0].version.pk if rows else None,
        "events": history.events(document) if request.user.is_staff else [],
    }
    return render(request, "versions/history.html", context)


@require_GET
def version_change(request: HtmxHttpRequest, pk: int, vid: int) -> HttpResponse:
    """One history row's change summary, computed now (a deferred cell of the history page)."""
    document = _document(request, pk)
    row = history.history_row(document, _version(document, vid))
    return render(request, "versions/history.html#change", {"document": document, "r": row})


@require_GET
@vary_on_headers("HX-Request")
def compare_versions(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Two versions aligned by section, side by side or inline (switched with HTMX)."""
    document = _document(request, pk)
    old, new = _pair(request, document)
    mode = request.GET.get("view") if request.GET.get("view") in VIEWS else "side"
    context = {
        "document": document,
        "old": old,
        "new": new,
        "mode": mode,
        "versions": document.versions.defer("parsed").order_by("-number"),
    }
    try:
        comparison = services.compare(old, new)
    except services.NotComparable as exc:
        return render(request, "versions/compare.html", {**context, "problem": str(exc)})
    context.update(
        comparison=comparison,
        view=comparison.view,
        summary=comparison.summary,
        base_query=f"a={old.pk}&b={new.pk}",
    )
    if request.htmx:
        return render(request, "versions/compare.html#diff", context)
    return render(request, "versions/compare.html", context)


def _pair(request: HttpRequest, document: Document) -> tuple[DocumentVersion, DocumentVersion]:
    """The versions ?a= and ?b= name, older first; by default the last two."""
    versions = document.versions.defer("parsed")
    picked = [request.GET.get("a", ""), request.GET.get("b", "")]
    ids = [id_param(v) for v in picked]
    if all(ids):
        a = get_object_or_404(versions, pk=ids[0])
        b = get_object_or_404(versions, pk=ids[1])
    else:
        latest = list(versions.order_by("-number")[:2])
        if len(latest) < 2:
            raise Http404(_("This document has only one version"))
        b, a = latest
    return (a, b) if a.number <= b.number else (b, a)


@staff_required
@require_http_methods(["GET", "POST"])
def edit_version(request: HtmxHttpRequest, pk: int, vid: int) -> HttpResponse:
    """Staff: a version's label and date."""
    document = _document(request, pk)
    version = _version(document, vid)
    error = ""
    if request.method == "POST":
        label = request.POST.get("label", "")
        raw_date = request.POST.get("label_date", "").strip()
        try:
            label_date = date.fromisoformat(raw_date) if raw_date else None
        except ValueError:
            error = _("The date must look like 2021-03-17.")
        else:
            actions.relabel_version(version, label=label, label_date=label_date, user=request.user)
            audit.record(
                request,
                "version-edit",
                version,
                sources=[document.source_id],
                label=label,
                date=str(label_date or ""),
            )
            messages.success(
                request,
                _("Version #%(number)s is now “%(label)s”.")
                % {"number": version.number, "label": version.display_label},
            )
            return redirect("document_versions", pk=document.pk)
    return render(
        request, "versions/edit.html", {"document": document, "version": version, "error": error}
    )


@staff_required
@require_POST
def move_version(request: HtmxHttpRequest, pk: int, vid: int) -> HttpResponse:
    """Staff: move a version one place older or newer, or to a position (1 = oldest)."""
    document = _document(request, pk)
    version = _version(document, vid)
    order = list(document.versions.order_by("number").values_list("pk", flat=True))
    current = order.index(version.pk) + 1
    direction = request.POST.get("direction", "")
    position = request.POST.get("position", "")
    if direction in ("older", "newer"):
        target = current - 1 if direction == "older" else current + 1
    elif id_param(position):
        target = id_param(position)
    else:
        messages.error(request, _("Say where to move the version."))
        return redirect("document_versions", pk=document.pk)
    actions.move_version(version, target, user=request.user)
    audit.record(request, "version-move", version, sources=[document.source_id], to=target)
    return redirect(reverse("document_versions", args=[document.pk]) + f"#v-{version.pk}")


@staff_required
@require_http_methods(["GET", "POST"])
def remove_version(request: HtmxHttpRequest, pk: int, vid: int) -> HttpResponse:
    """Staff: GET asks for confirmation, POST (with CSRF and the confirmation) removes."""
    document = _document(request, pk)
    version = _version(document, vid)
    error = ""
    if request.method == "POST":
        if request.POST.get("confirm") != "yes":
            error = _("Tick the box to confirm the removal.")
        else:
            try:
                removal = actions.remove_version(version, user=request.user)
                audit.record(request, "version-remove", version, sources=[document.source_id])
            except actions.VersionActionError as exc:
                error = str(exc)
            else:
                text = _("Version “%(label)s” was removed.") % {"label": removal.label}
                if removal.file_kept:
                    text += " " + _("Its file is kept: another version has the same bytes.")
                messages.success(request, text)
                return redirect("document_versions", pk=document.pk)
    shared = DocumentVersion.objects.filter(sha256=version.sha256).exclude(pk=version.pk).exists()
    context = {"document": document, "version": version, "error": error, "shared": shared}
    return render(request, "versions/remove.html", context, status=400 if error else 200)
