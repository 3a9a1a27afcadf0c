"""Answers to "what changed between these versions": built from the computed diff."""

from __future__ import annotations

from collections.abc import Generator

from chat.answer import wording
from chat.answer.citations import clean_citations
from chat.answer.prompting import build_messages
from chat.models import Message
from chat.pipeline.events import Event
from chat.pipeline.storing import mark_cited, store_sources
from chat.pipeline.turn import Final, Turn
from chat.pipeline.versions import diff_sources, resolution
from portal.llm import LlmUnavailable, Usage, temperature_for


def answer_from_diff(turn: Turn, comparison) -> Generator[Event, None, Final]:
    """Answered from the computed diff: which two versions are compared, first; then [1] the
    comparison, [2] the older and [3] the newer version; the LLM (when there is one) writes
    from the comparison, streamed."""
    language, llm = turn.language, turn.llm
    sources = diff_sources(comparison, language=language)
    store_sources(turn.message, sources)
    old, new = comparison.old.display_label, comparison.new.display_label
    footer = "\n\n" + wording.say("diff_footer", language, old=old, new=new)
    compared = resolution(comparison, language) + "\n\n"
    notice = ""
    if llm is None:
        label = wording.say("diff_label", language)
        answer = f"*{label}*\n\n{compared}{sources[0].text}{footer}"
    else:
        profile = turn.message.conversation.profile
        messages = build_messages(
            turn.question,
            sources[:1],
            turn.history,
            profile=profile,
            refusal=wording.refusal_text(),
        )
        usage = Usage()
        parts: list[str] = []
        yield Event("token", compared)
        try:
            for token in llm.stream(messages, temperature=temperature_for(profile), usage=usage):
                if not token:  # the model still reads the comparison
                    yield Event("status", wording.say("comparing", language))
                    continue
                parts.append(token)
                yield Event("token", token)
            answer = compared + clean_citations("".join(parts).strip(), 1)[0] + footer
        except LlmUnavailable as exc:
            notice = wording.say("llm_down_diff", language, error=exc)
            answer = f"{compared}{sources[0].text}{footer}"
    mark_cited(turn.message, answer)
    return Final(
        answer,
        Message.Outcome.ANSWER,
        Message.Mode.DIFF,
        notice=notice,
        llm_model=llm.model_id if llm else "",
    )
