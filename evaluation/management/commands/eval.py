"""``manage.py eval FILE... [--set regression] [--judge] [--baseline RUN|FILE --fail-on-worse]``:
answer a question set through the chat's service, store the run, print its figures, and (as a
gate) fail when a figure is worse than the baseline's by more than the tolerance."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from chat.models import AssistantProfile
from evaluation import metrics
from evaluation.baseline import BaselineError, baseline_json, load_baseline
from evaluation.cases import CaseError, read_files, regression_cases
from evaluation.judge import get_judge
from evaluation.models import EvalRun
from evaluation.runner import RunInterrupted, run_cases
from knowledge.demo import ingest_demo_now
from portal.accounts import command_user

GROUP_ORDER = ("answerable", "trick", "out_of_domain", "version", "refusal", "clarification")


class Command(BaseCommand):
    help = (
        "Run question sets (kb_dev JSON Lines or export_eval's) through the answering service, "
        "store the run and print its figures; with --baseline and --fail-on-worse, a gate."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("files", nargs="*", type=Path)
        parser.add_argument("--set", dest="stored", choices=["regression"], help="run a stored set")
        parser.add_argument("--judge", action="store_true", help="grade answers (KB_JUDGE_*)")
        parser.add_argument("--profile", default="", help="assistant profile name")
        parser.add_argument("--label", default="", help="a name for the run")
        parser.add_argument("--user", default="", help="answer as this user; default a staff view")
        parser.add_argument("--json", action="store_true", help="print the run as JSON")
        parser.add_argument("--baseline", help="a run id or a baseline file to compare with")
        parser.add_argument(
            "--fail-on-worse",
            action="store_true",
            help="exit 1 when a figure is worse than the baseline by more than the tolerance",
        )
        parser.add_argument(
            "--tolerance",
            type=float,
            default=None,
            help="allowed drop of a share (default KB_EVAL_TOLERANCE, 0.03)",
        )
        parser.add_argument("--save-baseline", type=Path, help="write the figures to this file")
        parser.add_argument(
            "--demo",
            action="store_true",
            help="an empty knowledge base first gets the demo documents (ingested here)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        files: list[Path] = options["files"]
        if not files and not options["stored"]:
            raise CommandError("give question files, or --set regression")
        try:
            cases = read_files(files)
        except CaseError as exc:
            raise CommandError(str(exc)) from None
        if options["stored"] == "regression":
            cases += regression_cases()
        if not cases:
            raise CommandError("the question set is empty (no active regression cases?)")
        baseline = None
        if options["baseline"]:
            try:
                baseline = load_baseline(options["baseline"])
            except BaselineError as exc:
                raise CommandError(str(exc)) from None
        elif options["fail_on_worse"]:
            raise CommandError("--fail-on-worse needs --baseline")
        judge = None
        if options["judge"]:
            judge = get_judge()
            if judge is None:
                raise CommandError("--judge needs KB_JUDGE_BASE_URL (and KB_JUDGE_MODEL)")
        profile = self._profile(options["profile"])
        if options["demo"]:
            self._demo()

        names = [str(f) for f in files] + (["regression set"] if options["stored"] else [])
        bar = tqdm(total=len(cases), unit="question", file=self.stderr._out, dynamic_ncols=True)
        try:
            run = run_cases(
                cases,
                user=self._user(options["user"]),
                question_set=", ".join(names),
                label=options["label"],
                profile=profile,
                judge=judge,
                progress=lambda result: bar.update(1),
            )
        except RunInterrupted as stopped:
            bar.close()
            raise CommandError(
                f"interrupted: run {stopped.run.pk} keeps the {stopped.run.results.count()} "
                f"questions that finished, of {len(cases)}",
                returncode=130,
            ) from None
        bar.close()

        worse: list[metrics.Change] = []
        better: list[metrics.Change] = []
        tolerance = (
            settings.EVAL_TOLERANCE if options["tolerance"] is None else options["tolerance"]
        )
        if baseline is not None:
            worse, better = metrics.compare(
                run.metrics["headline"], baseline[1], tolerance=tolerance
            )
        if options["save_baseline"]:
            options["save_baseline"].write_text(
                json.dumps(baseline_json(run), ensure_ascii=False, indent=2) + "\n",
                encoding="utf-8",
            )
        if options["json"]:
            self.stdout.write(json.dumps(self._payload(run, baseline, worse, better, tolerance),
                                         ensure_ascii=False, indent=2))  # fmt: skip
        else:
            self._print(run, baseline, worse, better, tolerance)
        if worse and options["fail_on_worse"]:
            raise CommandError(
                f"{len(worse)} figure{'s' if len(worse) != 1 else ''} worse than {baseline[0]} "
                f"by more than {tolerance:.3f}: " + "; ".join(str(c) for c in worse)
            )

    # ------------------------------------------------------------------------------------------

    def _demo(self) -> None:
        bar = tqdm(unit="file", file=self.stderr._out, dynamic_ncols=True, desc="demo documents")

        def step(name: str, done: int, total: int) -> None:
            bar.total = total
            bar.update(1)

        try:
            ingest_demo_now(progress=step)
        finally:
            bar.close()

    def _profile(self, name: str) -> AssistantProfile | None:
        if not name:
            return None
        profile = AssistantProfile.objects.filter(name__iexact=name).first()
        if profile is None:
            names = ", ".join(AssistantProfile.objects.values_list("name", flat=True))
            raise CommandError(f"no profile {name!r}; profiles: {names}")
        return profile

    def _user(self, username: str):
        try:
            return command_user(username)
        except LookupError as exc:
            raise CommandError(str(exc)) from None

    def _payload(self, run: EvalRun, baseline, worse, better, tolerance: float) -> dict:
        return {
            "run": run.pk,
            "label": run.label,
            "status": run.status,
            "question_set": run.question_set,
            "git_commit": run.git_commit,
            "config": run.config,
            "judge": {"model": run.judge_model, "prompt_version": run.judge_prompt_version}
            if run.judge_model
            else None,
            "metrics": run.metrics,
            "baseline": None
            if baseline is None
            else {
                "from": baseline[0],
                "tolerance": tolerance,
                "worse": [c.__dict__ | {"delta": c.delta} for c in worse],
                "better": [c.__dict__ | {"delta": c.delta} for c in better],
            },
        }

    def _print(self, run: EvalRun, baseline, worse, better, tolerance: float) -> None:
        out = self.stdout.write
        m = run.metrics
        out(f"Run {run.pk}{' · ' + run.label if run.label else ''}: {m['questions']} questions")
        out(
            f"{'group':<15}{'n':>5}{'answered':>10}{'partial':>9}{'refused':>9}{'clarified':>11}{'ok':>7}"
        )
        groups = m.get("groups", {})
        for group in sorted(groups, key=lambda g: GROUP_ORDER.index(g) if g in GROUP_ORDER else 99):
            shares = groups[group]["shares"]
            out(
                f"{group:<15}{groups[group]['n']:>5}"
                + "".join(f"{shares[k]:>10.1%}" for k in ("answered", "partial", "refused"))
                + f"{shares['clarified']:>11.1%}{shares['ok']:>7.1%}"
            )
        for name, value in m.get("headline", {}).items():
            out(f"  {name:<28} {value:.3f}")
        if m.get("latency_ms"):
            out(
                f"  latency p50 {m['latency_ms']['p50']:.0f} ms, p95 {m['latency_ms']['p95']:.0f} ms"
            )
        if baseline is not None:
            out(f"Against {baseline[0]} (tolerance {tolerance:.3f}):")
            for change in worse:
                out(self.style.ERROR(f"  worse  {change}"))
            for change in better:
                out(self.style.SUCCESS(f"  better {change}"))
            if not worse and not better:
                out("  no figure moved beyond the tolerance")
