"""Baselines for the gate: a stored run, or a committed JSON file of headline figures."""

from __future__ import annotations

import json
from pathlib import Path

from evaluation.models import EvalRun


class BaselineError(ValueError):
    pass


def load_baseline(reference: str) -> tuple[str, dict[str, float]]:
    """(description, headline figures) of ``reference``: a run id, or a file written by
    ``eval --save-baseline`` (or ``eval --json``)."""
    if reference.isdigit() and not Path(reference).exists():
        run = EvalRun.objects.filter(pk=int(reference)).first()
        if run is None:
            raise BaselineError(f"no evaluation run {reference}")
        return f"run {run.pk}", dict(run.metrics.get("headline") or {})
    path = Path(reference)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{path}: no such file (and not a run id)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BaselineError(f"{path}: not a baseline ({exc})") from None
    headline = data.get("headline") or (data.get("metrics") or {}).get("headline")
    if not isinstance(headline, dict) or not headline:
        raise BaselineError(f"{path}: no headline figures in it")
    return str(path), {str(k): float(v) for k, v in headline.items()}


def baseline_json(run: EvalRun) -> dict:
    """What ``--save-baseline`` writes: the headline figures and what they were measured with."""
    return {
        "question_set": run.question_set,
        "git_commit": run.git_commit,
        "measured_at": run.finished_at.isoformat() if run.finished_at else "",
        "config": run.config,
        "headline": run.metrics.get("headline", {}),
    }
