"""Run a question set through the chat's answering service and store the run.

Each question is asked in a conversation of its own as ``manage.py ask`` asks it
(``chat.pipeline.answer_now``), so a run measures exactly what people get. Results are stored
as they finish: an interrupted run (Ctrl-C) keeps its finished questions and their figures.
"""

from __future__ import annotations

import hashlib
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from chat.answer import prompts
from chat.assess.grounding import check_message
from chat.models import Conversation, Message
from chat.pipeline import answer_now
from chat.present.serialize import message_json
from evaluation import judge as judging
from evaluation import metrics
from evaluation.cases import Case
from evaluation.models import EvalResult, EvalRun
from knowledge.demo import DEMO_SOURCES
from knowledge.embedding import get_embedder
from knowledge.models import Document, DocumentVersion
from knowledge.retrieval import get_reranker
from knowledge.retrieval.weights import weights
from portal.llm import get_llm

# The ranking's weights a run records (``knowledge.retrieval.weights``), by their variables'
# names without "KB_" ("search_min_score"), as runs have always been compared.
SEARCH_SETTINGS = (
    "KB_SEARCH_RESULTS",
    "KB_SEARCH_CANDIDATES",
    "KB_SEARCH_PER_DOCUMENT",
    "KB_SEARCH_SPREAD",
    "KB_SEARCH_FUSION",
    "KB_SEARCH_DENSE_WEIGHT",
    "KB_SEARCH_DOCUMENT_WEIGHT",
    "KB_SEARCH_SYNONYM_WEIGHT",
    "KB_SEARCH_MIN_SCORE",
    "KB_SEARCH_MIN_SCORE_KNOWN",
    "KB_SEARCH_KNOWN_SHARE",
    "KB_SEARCH_CASCADE",
    "KB_RERANK_CANDIDATES",
    "KB_RERANK_MIN_SCORE",
)


def git_commit() -> str:
    """The portal checkout's commit, or "" outside a git checkout."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=settings.BASE_DIR,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def prompt_version() -> str:
    """A short hash of the answering prompts (every text constant of ``chat.answer.prompts``): two
    runs with the same value were answered with the same instructions."""
    texts = sorted(
        (name, value)
        for name, value in vars(prompts).items()
        if name.isupper() and isinstance(value, str)
    )
    return "answer-" + hashlib.sha256(repr(texts).encode()).hexdigest()[:10]


def run_config(*, profile, llm, judge) -> dict:
    """What the run was made with, stored on it."""
    reranker = get_reranker()
    ranking = weights().by_variable()
    return {
        "embedder": get_embedder().model_id,
        "reranker": reranker.model_id if reranker is not None else None,
        "llm": llm.model_id if llm is not None else None,
        "judge": judge.model_id if judge is not None else None,
        "profile": profile.name if profile is not None else None,
        "search": {name.removeprefix("KB_").lower(): ranking[name] for name in SEARCH_SETTINGS},
        "prompts": {
            "answer": prompt_version(),
            "judge": judging.PROMPT_VERSION if judge is not None else None,
        },
    }


class KeyIndex:
    """The names a gold entry may give a document or a version by.

    A document answers to its path, "<source name>/<path>" (export_eval), and
    "<folder>/<path>" for the demo sources (kb_dev's paths are relative to the corpus); a
    version to its file name and "<history folder>/<file name>". A gold entry also matches when
    it ends in "/<path>", so a set written against another root folder still counts.
    """

    def __init__(self) -> None:
        folders = {d.name: (d.folder, d.history) for d in DEMO_SOURCES}
        self.documents: dict[int, frozenset[str]] = {}
        self.paths: dict[int, str] = {}
        for pk, path, source, root in Document.objects.values_list(
            "pk", "path", "source__name", "source__root_path"
        ):
            keys = {path, f"{source}/{path}"}
            folder = folders.get(source, ("", ""))[0] or (Path(root).name if root else "")
            if folder:
                keys.add(f"{folder}/{path}")
            self.documents[pk] = frozenset(keys)
            self.paths[pk] = path
        self.versions: dict[int, frozenset[str]] = {}
        for pk, filename, source in DocumentVersion.objects.values_list(
            "pk", "filename", "document__source__name"
        ):
            history = folders.get(source, ("", ""))[1]
            keys = {filename} | ({f"{history}/{filename}"} if history else set())
            self.versions[pk] = frozenset(keys)

    def document_keys(self, pk: int | None, gold: Sequence[str]) -> frozenset[str]:
        keys = self.documents.get(pk, frozenset())
        path = self.paths.get(pk)
        extra = {g for g in gold if path and g.endswith("/" + path)}
        return keys | extra

    def version_keys(self, pk: int | None, gold: Sequence[str]) -> frozenset[str]:
        keys = self.versions.get(pk, frozenset())
        extra = {g for g in gold if any(g.endswith("/" + k) for k in keys)}
        return keys | extra


def measure(case: Case, payload: dict, keys: KeyIndex) -> dict:
    """One answer measured against its case (the fields of an EvalResult but the judge)."""
    gold = list(case.gold)
    sources = payload["sources"]
    outcome = metrics.outcome_of(payload)
    rank = metrics.gold_rank([keys.document_keys(s["document_id"], gold) for s in sources], gold)
    # What the user reads: a gold document counts among the sources the answer cites.
    cited = [keys.document_keys(s["document_id"], gold) for s in sources if s.get("cited")]
    cited_rank = metrics.gold_rank(cited, gold)
    pair = (
        metrics.version_pair(
            payload["mode"],
            [keys.version_keys(s["version_id"], gold) for s in sources],
            gold,
            said_missing=any(t.get("kind") == "ask" for t in payload.get("clarification") or []),
        )
        if case.group == "version"
        else ""
    )
    return {
        "group": case.group,
        "gold": gold,
        "outcome": outcome,
        "mode": payload["mode"],
        "answer": payload["answer"],
        "sources": [
            {
                k: s[k]
                for k in (
                    "number",
                    "document",
                    "document_id",
                    "version",
                    "version_id",
                    "section",
                    "heading",
                    "quote",
                    "url",
                    "score",
                    "cited",
                )
            }
            for s in sources
        ],  # fmt: skip
        "gold_rank": rank,
        "gold_cited": cited_rank is not None,
        "facts": list(case.facts),
        "facts_shown": metrics.facts_shown(payload["answer"], case.facts),
        "fact_first": metrics.fact_first(payload["answer"], case.facts),
        "pair": pair,
        "citations_valid": metrics.citations_valid(
            payload["answer"], [s["number"] for s in sources]
        ),
        "ok": metrics.is_ok(
            case.group, outcome, gold_rank=cited_rank, has_gold=bool(gold), pair=pair
        ),
    }


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run: the run, marked interrupted with the figures of what finished."""

    def __init__(self, run: EvalRun) -> None:
        super().__init__(f"run {run.pk} interrupted")
        self.run = run


def run_cases(
    cases: Sequence[Case],
    *,
    user,
    question_set: str,
    label: str = "",
    profile=None,
    llm=True,
    judge=None,
    progress: Callable[[EvalResult], None] | None = None,
) -> EvalRun:
    """Answer every case, store each result as it finishes, then the run's figures.

    ``llm``: True for the configured LLM (none configured: extractive answers), None or False
    for extractive answers, or an LLM. ``judge``: an LLM that grades answered questions
    with a reference answer, or None. A KeyboardInterrupt marks the run interrupted, stores the
    figures of what finished and propagates as RunInterrupted, which carries the run.
    """
    answering_llm = get_llm() if llm is True else (llm or None)
    run = EvalRun.objects.create(
        label=label,
        question_set=question_set[:500],
        user=user,
        git_commit=git_commit(),
        config=run_config(profile=profile, llm=answering_llm, judge=judge),
        judge_model=judge.model_id if judge is not None else "",
        judge_prompt_version=judging.PROMPT_VERSION if judge is not None else "",
        question_count=len(cases),
    )
    keys = KeyIndex()
    try:
        for position, case in enumerate(cases, 1):
            started = time.perf_counter()
            conversation = Conversation.objects.create(
                user=user, profile=profile, title=f"eval {run.pk}: {case.question[:100]}"
            )
            message = answer_now(conversation, case.question, user=user, llm=answering_llm)
            latency = (time.perf_counter() - started) * 1000
            payload = message_json(message)
            measured = measure(case, payload, keys)
            grade = {}
            if (
                judge is not None
                and case.reference
                and measured["outcome"] in ("answered", "partial")
            ):
                grade = judging.grade_answer(
                    judge,
                    question=case.question,
                    reference=case.reference,
                    answer=measured["answer"],
                    sources=measured["sources"],
                ).as_json()
                checked = (message.answerability or {}).get("grounding")
                if message.mode == Message.Mode.LLM:
                    # Beside the judge's verdict, the portal's own check of every sentence
                    # against the sources it cites (what decides whether it is shown).
                    verdict = check_message(message)
                    grade["grounded"] = verdict.holds
                    grade["grounding"] = verdict.reason
                elif checked:
                    # The LLM's answer failed that check and the quotes were shown instead.
                    grade["grounded"] = bool(checked.get("holds"))
                    grade["grounding"] = checked.get("reason", "")
            result = EvalResult.objects.create(
                run=run,
                position=position,
                case_id=case.id[:100],
                style=case.style[:50],
                question=case.question,
                reference=case.reference,
                latency_ms=round(latency, 1),
                timings=payload["timings"] or {},
                judge=grade,
                message=message,
                **measured,
            )
            if progress is not None:
                progress(result)
    except KeyboardInterrupt as exc:
        raise RunInterrupted(finish_run(run, EvalRun.Status.INTERRUPTED)) from exc
    return finish_run(run, EvalRun.Status.DONE)


def finish_run(run: EvalRun, status: str) -> EvalRun:
    """Compute and store the run's figures from its stored results."""
    rows = list(
        run.results.values("group", "outcome", "gold", "gold_rank", "gold_cited", "facts",
                           "facts_shown", "fact_first", "pair", "citations_valid", "ok", "judge", "latency_ms")
    )  # fmt: skip
    run.metrics = metrics.summarize(rows)
    latencies = sorted(r["latency_ms"] for r in rows)
    if latencies:
        run.metrics["latency_ms"] = {
            "p50": latencies[len(latencies) // 2],
            "p95": latencies[min(len(latencies) - 1, round(0.95 * (len(latencies) - 1)))],
        }
    run.status = status
    run.finished_at = timezone.now()
    run.save(update_fields=["metrics", "status", "finished_at"])
    return run
