"""The Evaluation pages (staff): runs with their figures, one run's questions, two runs
compared question by question, and the stored regression set."""

from __future__ import annotations

from django.contrib import messages as flash
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET, require_POST

from chat.models import Message
from evaluation import comparison
from evaluation.models import EvalRun, RegressionCase
from evaluation.regression import GROUP_OF_BEHAVIOUR, case_from_message
from feedback.charts import paired_bars
from portal import audit
from portal.params import id_param

HEADLINE_LABELS = {
    "answerable.right": _("Answerable: answered fully, citing a gold document"),
    "answerable.answered": _("Answerable: answered fully"),
    "answerable.false_gap": _("Answerable: false gap (a partial answer)"),
    "answerable.fact_any": _("Answerable: key fact shown (at least one)"),
    "answerable.fact_all": _("Answerable: key facts shown (all)"),
    "answerable.fact_first": _("Answerable: key fact in the answer's opening"),
    "answerable.gold_cited": _("Answerable: gold document cited"),
    "answerable.gold_any": _("Answerable: gold document among the sources"),
    "answerable.recall@1": _("Answerable: first source gold"),
    "answerable.recall@5": _("Answerable: gold in top 5"),
    "trick.refused_or_partial": _("Trick: refused or partial"),
    "out_of_domain.refused": _("Out of domain: refused"),
    "refusal.refused": _("Refusal expected: refused"),
    "clarification.clarified": _("Clarification expected: asked"),
    "version.exact": _("Version: exact pair"),
    "version.other": _("Version: another pair (lower is better)"),
    "citations.valid": _("Citations valid"),
    "judge.correct": _("Judge: correct"),
    "judge.faithful": _("Judge: faithful"),
    "ok": _("All: as expected"),
}
# An evaluated answer's outcome (evaluation.metrics.outcome_of) in the interface's words.
OUTCOME_LABELS = {
    "answered": _("answered"),
    "partial": _("partial"),
    "refused": _("refused"),
    "clarified": _("clarified"),
    "error": _("error"),
}
VERDICT_LABELS = {
    "worse": _("worse"),
    "better": _("better"),
    "changed": _("changed"),
    "only-a": _("only in A"),
    "only-b": _("only in B"),
}


def _staff_only(request: HttpRequest) -> None:
    if not request.user.is_staff:
        raise PermissionDenied(gettext("Evaluation runs are for staff."))


def headline_rows(a: dict, b: dict | None = None) -> list[dict]:
    names = [n for n in HEADLINE_LABELS if n in a or (b and n in b)]
    return [
        {
            "name": name,
            "label": str(HEADLINE_LABELS[name]),
            "a": a.get(name),
            "b": b.get(name) if b else None,
            "delta": round(b[name] - a[name], 4) if b and name in a and name in b else None,
        }
        for name in names
    ]


@require_GET
def runs_page(request: HttpRequest) -> HttpResponse:
    """Every run with its headline figures, newest first; pick two to compare."""
    _staff_only(request)
    page = Paginator(EvalRun.objects.select_related("user"), 30).get_page(request.GET.get("page"))
    return render(
        request,
        "evaluation/runs.html",
        {
            "page": page,
            "runs": [(run, run.metrics.get("headline", {})) for run in page],
            "case_count": RegressionCase.objects.filter(active=True).count(),
        },
    )


@require_GET
def run_page(request: HttpRequest, pk: int) -> HttpResponse:
    """One run: what it was made with, its figures per group, its questions with filters."""
    _staff_only(request)
    run = get_object_or_404(EvalRun.objects.select_related("user"), pk=pk)
    # A run asked as a reader of a restricted source holds its text: each result is shown only
    # to those who may read every source it touches (evaluation.querysets).
    results = run.results.with_access(request.user)
    params = request.GET
    if params.get("group"):
        results = results.filter(group=params["group"])
    if params.get("outcome"):
        results = results.filter(outcome=params["outcome"])
    if params.get("ok") in ("yes", "no"):
        results = results.filter(ok=params["ok"] == "yes")
    if query := (params.get("q") or "").strip():
        results = results.text_contains(query)
    groups = run.metrics.get("groups", {})
    return render(
        request,
        "evaluation/run.html",
        {
            "run": run,
            "headline": headline_rows(run.metrics.get("headline", {})),
            "groups": sorted(groups.items()),
            "group_names": sorted(groups),
            "outcomes": tuple(OUTCOME_LABELS.items()),
            "outcome_labels": OUTCOME_LABELS,
            "page": Paginator(results, 100).get_page(params.get("page")),
            "params": params,
            "others": EvalRun.objects.exclude(pk=run.pk).values_list("pk", "label")[:50],
        },
    )


@require_GET
def compare_page(request: HttpRequest) -> HttpResponse:
    """Two runs: their figures side by side, and the questions that got worse or better."""
    _staff_only(request)
    a = get_object_or_404(EvalRun, pk=id_param(request.GET.get("a")) or 0)
    b = get_object_or_404(EvalRun, pk=id_param(request.GET.get("b")) or 0)
    rows = headline_rows(a.metrics.get("headline", {}), b.metrics.get("headline", {}))
    changes = comparison.compare_runs(a, b, viewer=request.user)
    return render(
        request,
        "evaluation/compare.html",
        {
            "a": a,
            "b": b,
            "headline": rows,
            # Built from escaped parts by feedback.charts (labels are ours, numbers formatted).
            "chart": mark_safe(  # noqa: S308
                paired_bars(
                    [(r["label"], r["a"], r["b"]) for r in rows],
                    gettext("Figures of run %(a)s (A, light) and run %(b)s (B, dark)")
                    % {"a": a.pk, "b": b.pk},
                )
            ),
            "changes": changes,
            "verdict_labels": VERDICT_LABELS,
            "outcome_labels": OUTCOME_LABELS,
        },
    )


@require_GET
def cases_page(request: HttpRequest) -> HttpResponse:
    """The stored regression set: where each case came from, and whether it is run."""
    _staff_only(request)
    cases = RegressionCase.objects.with_access(request.user).select_related(
        "created_by", "rating", "message"
    )
    return render(
        request,
        "evaluation/cases.html",
        {"page": Paginator(cases, 50).get_page(request.GET.get("page"))},
    )


@require_POST
def toggle_case(request: HttpRequest, pk: int) -> HttpResponse:
    _staff_only(request)
    case = get_object_or_404(RegressionCase.objects.readable_by(request.user), pk=pk)
    case.active = not case.active
    case.save(update_fields=["active", "updated_at"])
    audit.record(
        request,
        "regression_case",
        f"{'on' if case.active else 'off'} #{case.pk}",
        sources=case.audit_sources(),
    )
    return redirect(reverse("evaluation_cases"))


@require_POST
def add_message(request: HttpRequest, pk: int) -> HttpResponse:
    """A journal entry into the regression set, with what the portal should have done."""
    _staff_only(request)
    # Only a turn the staff member may read whole: a case shows its question and, once run,
    # the answer (chat.querysets).
    message = get_object_or_404(Message.objects.readable_by(request.user), pk=pk)
    behaviour = request.POST.get("behaviour", "answer")
    if behaviour not in GROUP_OF_BEHAVIOUR:
        flash.error(request, gettext("Choose answer, refusal or clarification."))
        return redirect(reverse("journal_entry", args=[pk]))
    case = case_from_message(
        message,
        user=request.user,
        behaviour=behaviour,
        expected_answer=(request.POST.get("expected_answer") or "")[:5000],
    )
    audit.record(
        request,
        "regression_case",
        f"from message #{pk} -> case #{case.pk}",
        sources=message.audit_sources(),
    )
    flash.success(request, gettext("Added to the regression set as case %(pk)s.") % {"pk": case.pk})
    return redirect(reverse("journal_entry", args=[pk]))
