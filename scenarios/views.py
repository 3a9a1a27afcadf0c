"""Scenario pages: the guided test analysis (questions, then the mind map, its exports) and the
coverage map of a requirements document by a test programme."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from knowledge.roles import Role
from scenarios import exports
from scenarios.analysis import AnalysisInputError, answer_question, start_analysis
from scenarios.coverage import CoverageError, build_coverage, reasons_text
from scenarios.documents import readable_documents, readable_tree
from scenarios.models import Analysis


@login_required
@require_http_methods(["GET", "POST"])
def scenarios_home(request: HttpRequest) -> HttpResponse:
    """The guided analysis's start: a description or a task key; the user's earlier analyses."""
    text = ""
    if request.method == "POST":
        text = request.POST.get("task", "")
        try:
            analysis = start_analysis(request.user, text)
        except AnalysisInputError as exc:
            messages.error(request, str(exc))
        else:
            return redirect("analysis", pk=analysis.pk)
    analyses = Analysis.objects.owned_by(request.user)[:30]
    return render(request, "scenarios/home.html", {"analyses": analyses, "text": text})


@login_required
@require_GET
def analysis_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The current question with its tiles, or the mind map with its exports."""
    analysis = get_object_or_404(Analysis.objects.owned_by(request.user), pk=pk)
    tree, left_out = readable_tree(analysis.tree, request.user) if analysis.tree else (None, 0)
    return render(
        request,
        "scenarios/analysis.html",
        {
            "analysis": analysis,
            "question": analysis.current_question,
            "tree": tree,
            "left_out": left_out,
        },
    )


@login_required
@require_POST
def analysis_answer(request: HttpRequest, pk: int) -> HttpResponse:
    """A tile chosen (or the question skipped): the next question, or the map once built."""
    analysis = get_object_or_404(Analysis.objects.owned_by(request.user), pk=pk)
    answer_question(analysis, request.POST.get("answer", ""))
    return redirect("analysis", pk=analysis.pk)


@login_required
@require_GET
def analysis_export(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    """The map as a download: Markdown outline, OPML or FreeMind .mm."""
    analysis = get_object_or_404(Analysis.objects.owned_by(request.user), pk=pk)
    if fmt not in exports.FORMATS or not analysis.tree:
        raise Http404
    content_type, extension = exports.FORMATS[fmt]
    tree, _ = readable_tree(analysis.tree, request.user)
    body = exports.export(tree, fmt, request.build_absolute_uri("/"))
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="analysis-{analysis.pk}.{extension}"'
    return response


@login_required
@require_GET
def coverage_page(request: HttpRequest) -> HttpResponse:
    """Pick a requirements document and a test document; the table of requirements and the test
    sections that check them, uncovered first."""
    documents = list(readable_documents(request.user).order_by("title"))
    by_id = {str(d.pk): d for d in documents}
    tests = [d for d in documents if d.effective_role in (Role.TESTS, Role.CHECKLIST)]
    specified = [d for d in documents if d.effective_role == Role.REQUIREMENTS]
    chosen_req = by_id.get(request.GET.get("requirements", ""))
    chosen_tests = by_id.get(request.GET.get("tests", ""))
    result, error = None, ""
    if chosen_req and chosen_tests:
        try:
            result = build_coverage(chosen_req, chosen_tests, user=request.user)
        except CoverageError as exc:
            error = str(exc)
    return render(
        request,
        "scenarios/coverage.html",
        {
            "documents": specified or [d for d in documents if d not in tests] or documents,
            "test_documents": tests or documents,
            "chosen_req": chosen_req,
            "chosen_tests": chosen_tests,
            "result": result,
            "rows": _rows(result) if result else [],
            "error": error,
        },
    )


def _rows(result) -> list[dict]:
    """The coverage rows for the table, each covering section's reasons in words."""
    rows = [row.as_dict() for row in result.rows]
    for row in rows:
        for cover in row["covered_by"]:
            cover["reasons_text"] = reasons_text(cover["reasons"])
    return rows
