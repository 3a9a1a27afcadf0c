"""Pages of the knowledge base: documents with live ingest progress, the document viewer,
staff upload and reindex buttons, file download."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRefresh

from knowledge import services
from knowledge.models import Document, DocumentVersion, Source
from knowledge.roles import Role
from knowledge.sources import schedule
from knowledge.viewer import PAGE_IMAGE_WIDTHS, build_view, page_image
from portal import audit
from portal.capacity import claim_download, too_many_downloads
from portal.downloads import send_file
from portal.params import id_param


def staff_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Staff only: anonymous users go to the login page, signed-in readers get 403 (not the
    admin's login page, which would drop what they posted)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not request.user.is_staff:
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapped


@require_GET
@vary_on_headers("HX-Request")
def documents(request: HttpRequest) -> HttpResponse:
    """Every document the user may read, with source, current version, status and progress."""
    if request.htmx and request.htmx.target == "sources":
        return _sources_card(request, polled=True)
    source_id = request.GET.get("source") or ""
    query = request.GET.get("q", "").strip()
    rows = services.document_rows(request.user, source_id=source_id, query=query)
    meaning = services.second_vectors(request.user)
    context = {
        "rows": rows,
        "second_vectors": meaning,
        "active": any(r.version and r.version.is_active or r.pending for r in rows)
        or bool(meaning and not meaning.complete),
        "sources": Source.objects.visible_to(request.user),
        "source_id": source_id,
        "query": query,
        "counts": services.status_counts(rows),
        **services.synced_sources(request.user),
    }
    if request.htmx:
        return render(request, "knowledge/documents.html#table", context)
    return render(request, "knowledge/documents.html", context)


def _sources_card(request: HttpRequest, *, polled: bool = False) -> HttpResponse:
    """The synced sources' card; polled while a sync is queued or running. When the last one
    ends, the whole page reloads: the documents it brought are in the table then."""
    context = services.synced_sources(request.user)
    if polled and not context["syncing"]:
        return HttpResponseClientRefresh()
    return render(request, "knowledge/documents.html#sources", context)


@staff_required
@require_POST
def sync_now(request: HttpRequest, pk: int) -> HttpResponse:
    """Queue a sync of one source (git, folder) on the workers."""
    source = get_object_or_404(Source.objects.visible_to(request.user).exclude(connector=""), pk=pk)
    queued = schedule.request_sync(source)
    audit.record(request, "source-sync", source.name, sources=[source.pk], queued=queued)
    if request.htmx:
        return _sources_card(request)
    if queued:
        messages.success(request, _("Syncing %(source)s.") % {"source": source.name})
    else:
        messages.info(
            request, _("A sync of %(source)s is already under way.") % {"source": source.name}
        )
    return redirect("documents")


@require_GET
def document_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The parsed document as a reader sees it: sections, tables, an anchor on each chunk."""
    document = get_object_or_404(
        Document.objects.visible_to(request.user).select_related("source"), pk=pk
    )
    version = services.version_for_view(document, request.GET.get("version"))
    highlight = request.GET.get("chunk")
    view = build_view(version, highlight_chunk=id_param(highlight))
    return render(
        request,
        "knowledge/document.html",
        {
            "document": document,
            "version": version,
            "view": view,
            "versions": document.versions.order_by("-number"),
            "page_url": services.page_url(document),
            "roles": Role.choices,
        },
    )


@staff_required
@require_POST
def set_role(request: HttpRequest, pk: int) -> HttpResponse:
    """Staff set what the document is for testing (its role), or give it back to the one its
    source sets or its content shows."""
    document = get_object_or_404(
        Document.objects.visible_to(request.user).select_related("source"), pk=pk
    )
    role = request.POST.get("role", "")
    if services.set_role(document, role):
        audit.record(
            request,
            "document-role",
            document.title,
            sources=[document.source_id],
            role=role or "read",
        )
        messages.success(
            request,
            _("Role of %(title)s: %(role)s.")
            % {"title": document.title, "role": Role(document.effective_role).label},
        )
    else:
        messages.error(request, _("Unknown role."))
    return redirect("document", pk=document.pk)


@require_GET
def download(request: HttpRequest, pk: int) -> HttpResponse:
    """A version's file, as bytes to save (``portal.downloads``): nginx sends it when
    configured; otherwise this process, at most ``KB_DOWNLOADS_PER_USER`` of a user's at once."""
    # The cap first: a user's refused downloads cost no query of the version.
    if not settings.DOWNLOAD_ACCEL and not claim_download(request, request.user.pk):
        return too_many_downloads()
    version = get_object_or_404(DocumentVersion.objects.visible_to(request.user), pk=pk)
    try:
        return send_file(request, version.file, version.filename)
    except OSError:
        raise Http404(_("The stored file is missing")) from None


@require_GET
def version_page(request: HttpRequest, pk: int, page: int) -> HttpResponse:
    """A recognised page of a version as an image (the viewer shows it beside its text)."""
    version = get_object_or_404(DocumentVersion.objects.visible_to(request.user), pk=pk)
    if page not in version.recognised_pages:
        raise Http404(_("This page was not recognised from an image"))
    width = PAGE_IMAGE_WIDTHS[0] if request.GET.get("size") == "small" else PAGE_IMAGE_WIDTHS[1]
    try:
        png = page_image(version, page, width)
    except (OSError, LookupError):
        raise Http404(_("The stored file is missing")) from None
    return HttpResponse(png, content_type="image/png")


@staff_required
@require_POST
def upload(request: HttpRequest) -> HttpResponse:
    """Staff upload of several files at once into a source (existing or new)."""
    new_name = request.POST.get("new_source", "")
    source = services.source_for_upload(request.POST.get("source"), new_name, request.user)
    if source is None:
        if new_name.strip() or request.POST.get("source"):
            messages.error(request, _("You may not add documents to that source."))
        else:
            messages.error(request, _("Choose a source or name a new one."))
        return redirect("documents")
    outcome = services.register_uploads(
        source,
        request.FILES.getlist("files"),
        request.user,
        refused=getattr(request, "refused_uploads", []),
    )
    for level, text in outcome.messages():
        messages.add_message(request, level, text)
    audit.record(
        request,
        "upload",
        source.name,
        sources=[source.pk],
        new=outcome.new,
        unchanged=outcome.unchanged,
        refused=outcome.refused,
    )
    return redirect(f"{_documents_url()}?source={source.pk}")


def _sources_of(scope: str, pk: int | None) -> list[int]:
    """The source a reindex of ``scope`` is about (for the audit log); none for everything."""
    if scope == "document":
        return list(Document.objects.filter(pk=pk).values_list("source_id", flat=True))
    return [pk] if scope == "source" and pk else []


@staff_required
@require_POST
def reindex(request: HttpRequest, scope: str, pk: int | None = None) -> HttpResponse:
    """Reindex one document, one source, or everything (forced re-ingest, on the worker)."""
    if scope not in ("document", "source", "all"):
        raise PermissionDenied
    count = services.reindex(scope, pk, request.user)
    if count is None:
        raise Http404(_("No such document or source of yours to reindex."))
    audit.record(
        request,
        "reindex",
        f"{scope} {pk or ''}".strip(),
        sources=_sources_of(scope, pk),
        versions=count,
    )
    messages.success(
        request,
        ngettext("Reindexing %(count)d version.", "Reindexing %(count)d versions.", count)
        % {"count": count},
    )
    if request.htmx:
        return HttpResponseClientRefresh()
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = "documents"  # never off the portal (an open redirect)
    return redirect(target or "documents")


def _documents_url() -> str:
    return reverse("documents")
