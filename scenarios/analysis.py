"""The guided test analysis scenario: a task in, at most three questions, a mind map out.

start_analysis(user, text)    a tracker task key or a pasted description -> Analysis (asking)
answer_question(analysis, v)  the current question's tile (or "" to skip); the last answer
                              builds the map (scenarios.mindmap), with an LLM's suggested
                              checks when one is configured -> Analysis (ready)
"""

from __future__ import annotations

import re

from django.utils.translation import gettext as _

from knowledge.models import Chunk, Document, Source
from portal.llm import LLM, get_llm
from scenarios import mindmap, questions
from scenarios.corpus import corpus_for
from scenarios.documents import readable_documents
from scenarios.models import Analysis
from scenarios.suggest import add_suggestions

TASK_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]*-\d+$")
MAX_DESCRIPTION = 20_000


class AnalysisInputError(ValueError):
    """The input cannot start an analysis; the message is shown as is."""


def task_document(key: str, user) -> Document | None:
    """The closed ticket ``key`` among the tracker documents the user reads ("KEY: summary")."""
    return (
        readable_documents(user)
        .filter(source__kind=Source.Kind.TRACKER, title__istartswith=f"{key}:")
        .first()
    )


def _from_task(key: str, user) -> tuple[str, str, str]:
    """(title, description, link) of the tracker task ``key``."""
    if not Source.objects.filter(kind=Source.Kind.TRACKER).exists():
        raise AnalysisInputError(
            _("There is no tracker source: paste the task's description instead.")
        )
    document = task_document(key, user)
    if document is None:
        raise AnalysisInputError(
            _("No task %(key)s among the tracker's tickets you may read.") % {"key": key}
        )
    texts = Chunk.objects.filter(document=document, searchable=True).order_by("position")
    body = "\n".join(texts.values_list("text", flat=True)) or document.title
    return document.title, body, document.url


def start_analysis(user, text: str) -> Analysis:
    """A new analysis of ``text`` (a task key or a description), with its questions planned."""
    text = text.strip()[:MAX_DESCRIPTION]
    if not text:
        raise AnalysisInputError(_("Describe the change, or give a tracker task key."))
    key, url = "", ""
    if TASK_KEY.match(text):
        key = text.upper()
        title, description, url = _from_task(key, user)
    else:
        description = text
        title = _title(description)
    planned, known = questions.plan(description, component_tiles(description, user))
    return Analysis.objects.create(
        user=user,
        title=title,
        task_key=key,
        description=description,
        questions=planned,
        answers=known,
        task_url=url,
    )


def answer_question(analysis: Analysis, value: str, *, llm: LLM | None | bool = True) -> Analysis:
    """Records the answer to the current question (a tile's value, or "" to skip); builds the
    map once every question is answered. ``llm`` True: the configured one (None: without)."""
    question = analysis.current_question
    if question is not None:
        allowed = {t["value"] for t in question["tiles"]}
        analysis.answers[question["key"]] = value if value in allowed else ""
    if analysis.current_question is None and analysis.status == Analysis.Status.ASKING:
        build(analysis, llm=get_llm() if llm is True else llm or None)
    analysis.save()
    return analysis


def component_tiles(description: str, user) -> list[dict[str, str]]:
    """The product's functional areas as tiles: the requirement sections the change touches,
    then the others of the requirements documents, in their order ("document id:number")."""
    corpus = corpus_for(user)
    _change, ranking = mindmap.read_change(description, corpus)
    keys = [t.key for t in ranking.touched] + [r.key for r in corpus.requirements]
    titles = {r.key: r.statement.section.label for r in corpus.requirements}
    return [{"value": f"{doc}:{number}", "label": titles[(doc, number)]}
            for doc, number in dict.fromkeys(keys)]  # fmt: skip


def _context(analysis: Analysis) -> list[str]:
    """The answers in words, for the map's root."""
    context = []
    for question, label in analysis.answered:
        if label:
            context.append(f"{question['text']} {label}")
    for key in ("platform", "change"):
        if key in analysis.answers and key not in {q["key"] for q in analysis.questions}:
            context.append(f"{key}: {analysis.answers[key]}")
    return context


def analyse(description: str, user=None, *, title: str = "", component: str = "") -> dict:
    """The mind map of a described change without questions (``manage.py analyse``, the
    benchmark): the same builder as the page's. ``user`` None reads every document."""
    description = description.strip()[:MAX_DESCRIPTION]
    if not description:
        raise AnalysisInputError(_("Describe the change, or give a tracker task key."))
    return mindmap.build_map(
        title or _title(description), description, user, context=[], component=component
    )


def _title(description: str) -> str:
    first = description.splitlines()[0].strip()
    return first if len(first) <= 120 else first[:117] + "…"


def build(analysis: Analysis, *, llm: LLM | None) -> None:
    """Builds (or rebuilds) the analysis's mind map as its author may read the documents."""
    tree = mindmap.build_map(
        analysis.title,
        analysis.description,
        analysis.user,
        task_url=analysis.task_url,
        context=_context(analysis),
        component=analysis.answers.get("component", ""),
    )
    analysis.llm_model = ""
    if llm is not None:
        notice = add_suggestions(tree, analysis.description, llm)
        analysis.llm_model = "" if notice else llm.model_id
        if notice:
            tree["notice"] = notice  # shown above the map
    analysis.tree = tree
    analysis.status = Analysis.Status.READY
