"""The JSON API for tools and agents, authenticated with personal API tokens.

``GET /api/v1/search?q=...&k=...`` runs the same search as the chat, with the permissions of
the token's owner, and answers with the hits (document, version, section, link, score, text).
Optional filters as in ``manage.py search``: ``section``, ``type`` (repeatable); ``explain=1``
adds every candidate with its rank and score at each ranking stage (as ``search --explain``).
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from knowledge.embedding import EmbeddingModelMismatch
from knowledge.models import Chunk
from knowledge.retrieval import Filters, SearchOptions, describe, explained, result_summary, search
from knowledge.retrieval.weights import Hits, weights
from portal.api_auth import api_token_required
from portal.throttle import over_limit

MAX_QUERY_CHARS = 2000
MAX_K = 50


def _error(message: str, status: int = 400) -> JsonResponse:
    # In the interface's language (Accept-Language, else KB_LANGUAGE), readable as it is.
    return JsonResponse(
        {"error": str(message)}, status=status, json_dumps_params={"ensure_ascii": False}
    )


@api_token_required
@require_GET
def search_api(request: HttpRequest) -> JsonResponse:
    limited = over_limit(request, "search", json=True)
    if limited is not None:
        return limited
    query = request.GET.get("q", "").strip()
    if not query:
        return _error(_("The parameter q (the question or search words) is required."))
    if len(query) > MAX_QUERY_CHARS:
        return _error(_("q is longer than %(max)d characters.") % {"max": MAX_QUERY_CHARS})
    try:
        k = int(request.GET.get("k") or weights().hits.k)
    except ValueError:
        return _error(_("k must be a whole number."))
    if not 1 <= k <= MAX_K:
        return _error(_("k must be between 1 and %(max)d.") % {"max": MAX_K})
    types = request.GET.getlist("type")
    unknown = sorted(set(types) - set(Chunk.BlockType.values))
    if unknown:
        return _error(
            _("Unknown type %(types)s; one of %(known)s.")
            % {"types": ", ".join(unknown), "known": ", ".join(Chunk.BlockType.values)}
        )
    filters = Filters(
        sections=[s.strip().rstrip(".") for s in request.GET.getlist("section") if s.strip()],
        block_types=types,
    )
    options = SearchOptions(hits=Hits(k=k))
    try:
        result = search(query, user=request.user, filters=filters, options=options)
    except EmbeddingModelMismatch as exc:
        return _error(str(exc), status=503)
    results = []
    for hit in describe(result.hits):
        row = hit.as_dict()
        row["url"] = request.build_absolute_uri(hit.url)
        results.append(row)
    data = {**result_summary(result), "results": results}
    if request.GET.get("explain", "").lower() in ("1", "true", "yes"):
        # Every candidate's stages as its record holds them, as `search --json --explain`.
        data["candidates"] = explained(result, options.hits.per_document)
    return JsonResponse(data, json_dumps_params={"ensure_ascii": False})
