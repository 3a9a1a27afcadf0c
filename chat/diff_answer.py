"""Answers to "what changed between these versions": built from the computed diff."""

from __future__ import annotations

from collections.abc import Iterator

from chat import wording
from chat.citations import clean_citations
from chat.events import Event
from chat.guard import refusal_text
from chat.llm import LLM, LlmUnavailable, Usage, temperature_for
from chat.models import Message
from chat.prompting import build_messages
from chat.storing import finish, mark_cited, store_sources
from chat.versions import diff_sources


def answer_from_diff(
    message: Message, comparison, history, llm: LLM | None, timings, started
) -> Iterator[Event]:
    """Answered from the computed diff: [1] the comparison, [2] the older and [3] the newer version."""
    language = wording.language_of(message.question)
    sources = diff_sources(comparison, language=language)
    store_sources(message, sources)
    old, new = comparison.old.display_label, comparison.new.display_label
    footer = "\n\n" + wording.say("diff_footer", language, old=old, new=new)
    if llm is None:
        label = wording.say("diff_label", language)
        answer = f"*{label}*\n\n{sources[0].text}{footer}"
    else:
        messages = build_messages(
            message.question,
            sources[:1],
            history,
            profile=message.conversation.profile,
            refusal=refusal_text(),
        )
        usage = Usage()
        parts: list[str] = []
        try:
            for token in llm.stream(
                messages, temperature=temperature_for(message.conversation.profile), usage=usage
            ):
                parts.append(token)
                yield Event("token", token)
            answer = clean_citations("".join(parts).strip(), 1)[0] + footer
        except LlmUnavailable as exc:
            message.notice = wording.say("llm_down_diff", language, error=exc)
            answer = f"{sources[0].text}{footer}"
    mark_cited(message, answer)
    finish(
        message,
        answer=answer,
        outcome=Message.Outcome.ANSWER,
        mode=Message.Mode.DIFF,
        timings=timings,
        started=started,
        notice=message.notice,
        llm_model=llm.model_id if llm else "",
    )
    yield Event("done")
