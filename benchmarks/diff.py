"""Version comparison speed on the 53 GitHub Terms of Service versions.

Two measurements:
1. the engine alone (no database query; Django set up, for the page's words in the interface's
   language): parse, diff (``compare_documents``) and HTML pieces (``render_comparison``) for
   the first against the last version and for two neighbours;
2. the comparison page through the Django test client on its own embedded servers: the 53
   versions registered as ``manage.py ingest --versions`` does, the compared ones ingested, then
   the page rendered cold (diff computed) and warm (diff cached in the process).

Goal: every comparison page under 1 s on this machine. Run: ``.venv/bin/python benchmarks/diff.py
[--quick]`` (``--quick``: one run of each step instead of the best of five).
"""

from __future__ import annotations

import time

from _setup import CORPUS, arguments, setup, teardown

TOS = CORPUS / "versions" / "github_tos_en"
GOAL_S = 1.0
REPEAT = 5


def order() -> list[str]:
    lines = (TOS / "ORDER.txt").read_text(encoding="utf-8").splitlines()
    return [x.strip() for x in lines if x.strip() and not x.startswith("#")]


def pairs(names: list[str]) -> dict[str, tuple[str, str]]:
    return {
        "first -> last": (names[0], names[-1]),
        "neighbours, rewrite (2019-07-02 -> 2019-11-13)": (
            "tos__2019-07-02_8e08df4.md",
            "tos__2019-11-13_7492957.md",
        ),
        "neighbours, last two": (names[-2], names[-1]),
    }


def best(step, repeat: int = 0) -> tuple[float, object]:
    times, result = [], None
    for _ in range(min(repeat, REPEAT) if repeat else REPEAT):
        started = time.perf_counter()
        result = step()
        times.append(time.perf_counter() - started)
    return min(times), result


def engine(names: list[str]) -> None:
    from knowledge.parsing.registry import parse_document
    from knowledge.versions.diff import compare_documents
    from knowledge.versions.render import render_comparison

    print("engine alone (best of", REPEAT, "runs, seconds)")
    print(f"  {'pair':48} {'parse':>7} {'diff':>7} {'render':>7} {'total':>7}  summary")
    for title, (a, b) in pairs(names).items():
        parse_s, (old, new) = best(
            lambda a=a, b=b: tuple(parse_document((TOS / n).read_bytes(), n) for n in (a, b))
        )
        diff_s, diff = best(lambda old=old, new=new: compare_documents(old, new))
        render_s, _ = best(lambda diff=diff: render_comparison(diff))
        total = parse_s + diff_s + render_s
        print(
            f"  {title:48} {parse_s:7.3f} {diff_s:7.3f} {render_s:7.3f} {total:7.3f}  "
            f"{diff.summary.as_text()}"
        )


def pages(names: list[str]) -> None:
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from knowledge.ingest.batch import plan_files, register_planned
    from knowledge.ingest.pipeline import ingest_version
    from knowledge.ingest.registration import get_or_create_source
    from knowledge.models import DocumentVersion
    from knowledge.versions import services

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    source = get_or_create_source("GitHub ToS history")
    started = time.perf_counter()
    for planned in plan_files([TOS], as_versions=True):
        register_planned(source, planned, via="cli", enqueue=False)
    needed = {n for pair in pairs(names).values() for n in pair}
    versions = {v.filename: v for v in DocumentVersion.objects.filter(document__source=source)}
    for name in sorted(needed):
        ingest_version(versions[name].pk)
    print(
        f"\nsetup: 53 versions registered, {len(needed)} ingested in "
        f"{time.perf_counter() - started:.1f} s (not part of the timings)"
    )
    user = get_user_model().objects.create_user("bench-reader", password="x")
    client = Client()
    client.force_login(user)
    document_id = versions[names[0]].document_id
    client.get(reverse("versions"))  # templates compiled once, as in a running server
    print("comparison page through the Django test client (seconds)")
    print(f"  {'pair':48} {'cold':>7} {'warm':>7} {'size KB':>8}  goal < {GOAL_S:.0f} s")
    url = reverse("compare_versions", args=[document_id])
    worst = 0.0
    for title, (a, b) in pairs(names).items():
        query = {"a": versions[a].pk, "b": versions[b].pk}
        services._cache.clear()
        started = time.perf_counter()
        response = client.get(url, query)
        cold = time.perf_counter() - started
        assert response.status_code == 200, response.status_code
        warm, response = best(lambda query=query: client.get(url, query), 3)
        worst = max(worst, cold)
        print(f"  {title:48} {cold:7.3f} {warm:7.3f} {len(response.content) / 1024:8.0f}")
    started = time.perf_counter()
    client.get(reverse("document_versions", args=[document_id]))
    print(f"  {'history page (53 versions, first view)':48} {time.perf_counter() - started:7.3f}")
    verdict = "met" if worst < GOAL_S else "MISSED"
    print(f"slowest comparison page {worst:.3f} s: goal {verdict}")


def main() -> None:
    global REPEAT
    if arguments().quick:
        REPEAT = 1
    names = order()
    # Django first: the renderer names the parts of the page through gettext.
    setup("diff", fresh=True)
    try:
        engine(names)
        pages(names)
    finally:
        teardown()


if __name__ == "__main__":
    main()
