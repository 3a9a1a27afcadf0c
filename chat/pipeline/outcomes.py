"""The pipeline's fixed answers: the canonical refusal in the question's language, the
partial notice, and "no such version" with the versions it could mean as tiles."""

from __future__ import annotations

from chat.answer import wording
from chat.assess import policy
from chat.assess.answerability import Answerability
from chat.assess.evidence import words_in_no_document
from chat.models import Message
from chat.pipeline.turn import Final

__all__ = ["no_such_version", "partial_notice", "refusal_check"]


def refusal_check(result, reading=None) -> Answerability:
    """The answerability record of a refusal decided by the minimum score; with the question's
    reading, also the words of it no document uses (what the journal shows as the why)."""
    best = result.near_misses[0].score if result.near_misses else None
    reason, unknown, read = "no passage passed the minimum score", [], {}
    if reading is not None:
        unknown, focus = words_in_no_document(reading, result)
        read = reading.as_dict()
        if focus:
            reason += f"; the focus «{focus}» is in no document"
    return Answerability(
        decision="refusal", reason=reason, best_score=best, unknown=unknown, reading=read
    )


def partial_notice(language: str, sources, check: Answerability) -> str:
    """ "В документах описано «title» (section), но не указано …" for the best source, in
    ``language`` (the question's, read once: ``Turn.language``)."""
    first = sources[0]
    section = first.heading.split(" › ")[-1] if first.heading else ""
    topic = f"«{first.title}»" + (f" ({section})" if section and section != first.title else "")
    return wording.partial_notice(language, topic, check.named_missing, check.asked)


def no_such_version(language: str, intent) -> Final:
    """A reference that names no version, or several equally: say so, with the versions it
    could mean as tiles (the day's versions, the nearest ones, the ones it names), else the
    newest versions."""
    document = intent.document
    offered = intent.candidates or intent.available[-8:][::-1]
    more = not intent.candidates and len(intent.available) > 8
    labels = ", ".join(v.display_label for v in offered[:8]) + (" …" if more else "")
    quoted = ", ".join(f"«{m}»" for m in intent.missing or intent.several)
    key = "several_versions"
    if intent.missing:
        key = "no_version_nearest" if intent.candidates else "no_version"
    text = wording.say(
        key,
        language,
        document=document.title,
        missing=quoted,
        several=quoted,
        available=labels or "—",
    )
    tiles = tuple(
        policy.Tile(
            label=v.display_label,
            kind="ask",
            query=wording.say(
                "ask_version", language, document=document.title, label=v.display_label
            ),
        ).as_dict()
        for v in offered[:5]
    )
    return Final(text, Message.Outcome.CLARIFICATION, tiles=tiles, tile_documents=(document.pk,))
