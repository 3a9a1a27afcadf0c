"""Version questions in the words people use, through ``manage.py ask --json``: each kind of
reference is answered from the diff of exactly the pair it names, and the answer says which
pair it took; a reference that names no version, or several, asks back with the versions it
could mean. The document and its history are made up here: an on-call duty policy with three
versions on 9 March 2022 and versions on the same month-day of two years."""

from __future__ import annotations

import pytest

from chat.models import Message
from chat.pipeline import answer_now
from tests.chat.test_answering import ask_json
from tests.conftest import ingest_folder
from tests.knowledge.versions.conftest import remove_source

pytestmark = pytest.mark.django_db

SOURCE = "Duty policies"
NAME = "Регламент дежурств (on-call duty policy)"
HISTORY = [  # oldest first, as ORDER.txt lists them
    "2022-01-20_0b1c2d3",
    "2022-03-09_1a2b3c4",
    "2022-03-09_2b3c4d5",
    "2022-03-09_3c4d5e6",
    "2022-07-14_4d5e6f7",
    "2023-07-14_5e6f7a8",
    "2023-10-02_6f7a8b9",
]
RULES = [
    "Дежурный инженер принимает смену в 9:00.",
    "Смена длится семь дней.",
    "Передача смены идёт письменно, в канале дежурств.",
    "Инцидент первого уровня разбирается в течение часа.",
    "Дежурному оплачивается каждый ночной вызов.",
    "Замену дежурного согласует руководитель группы.",
    "Отчёт о смене пишется в последний день дежурства.",
]


def label(tail: str) -> str:
    return tail.replace("_", " ")


@pytest.fixture(scope="module")
def policy(django_db_setup, django_db_blocker, tmp_path_factory):
    """The policy's seven versions, each adding a rule, ingested once for this module."""
    from knowledge.models import Source

    folder = tmp_path_factory.mktemp("duty-policy")
    names = []
    for number, tail in enumerate(HISTORY, start=1):
        name = f"{NAME}_{tail}.md"
        rules = "\n".join(f"- {rule}" for rule in RULES[:number])
        (folder / name).write_text(f"# {NAME}\n\n## Правила\n\n{rules}\n", encoding="utf-8")
        names.append(name)
    (folder / "ORDER.txt").write_text("\n".join(names) + "\n", encoding="utf-8")
    with django_db_blocker.unblock():
        ingest_folder(folder, SOURCE, versions=True)
        source = Source.objects.get(name=SOURCE)
        yield source
        remove_source(source.pk)


def compared(result: dict) -> list[str]:
    assert result["mode"] == "diff", result["answer"]
    return [s["version"] for s in result["sources"][1:3]]


def test_the_n_th_version_of_a_day_and_one_standing_alone(policy):
    result = ask_json("Чем третья правка регламента дежурств от 9 марта 2022 отличается от второй?")
    assert compared(result) == [label(HISTORY[2]), label(HISTORY[3])]
    assert (
        "Сравниваю вторую версию от 09.03.2022 (2b3c4d5) и третью версию от 09.03.2022 (3c4d5e6)."
        in result["answer"]
    )


def test_ordinals_of_a_day_set_in_an_earlier_sentence(policy):
    result = ask_json(
        "9 марта 2022 года в регламент дежурств внесли три правки. "
        "Что изменилось между первой и последней из них?"
    )
    assert compared(result) == [label(HISTORY[1]), label(HISTORY[3])]


def test_the_same_day_as_a_commit(policy):
    result = ask_json(
        "Чем коммит 1a2b3c4 регламента дежурств отличается от третьей правки того же дня?"
    )
    assert compared(result) == [label(HISTORY[1]), label(HISTORY[3])]


def test_the_version_right_after_the_one_of_a_day_in_english(policy):
    result = ask_json(
        "What changed in the on-call duty policy in the version that came right after the one "
        "of 2022-01-20?"
    )
    assert compared(result) == [label(HISTORY[0]), label(HISTORY[1])]
    assert (
        "Comparing the version of 2022-01-20 (0b1c2d3, the first) and the first version of "
        "2022-03-09 (1a2b3c4)." in result["answer"]
    )


def test_the_one_before_a_commit(policy):
    result = ask_json("Чем коммит 4d5e6f7 регламента дежурств отличается от предыдущего?")
    assert compared(result) == [label(HISTORY[3]), label(HISTORY[4])]


def test_the_first_and_the_latest_of_the_history(policy):
    result = ask_json("Сравни самую первую и самую свежую редакции регламента дежурств")
    assert compared(result) == [label(HISTORY[0]), label(HISTORY[-1])]
    assert "(0b1c2d3, первую) и версию от 02.10.2023 (6f7a8b9, последнюю)." in result["answer"]


def test_commit_ids(policy):
    result = ask_json("Что изменилось в регламенте дежурств между 2b3c4d5 и 5e6f7a8?")
    assert compared(result) == [label(HISTORY[2]), label(HISTORY[5])]


def test_an_ordinal_past_the_days_versions_asks_back_with_that_days_versions(policy):
    result = ask_json("Чем пятая правка регламента дежурств от 9 марта 2022 отличается от первой?")
    assert result["outcome"] == "clarification" and not result["sources"]
    assert "нет версии «пятая правка регламента дежурств от 9 марта 2022»" in result["answer"]
    assert [t["label"] for t in result["clarification"]] == [label(t) for t in HISTORY[1:4]]


def test_a_date_two_years_share_asks_back_with_both(policy):
    result = ask_json("Что изменилось в регламенте дежурств в версии от 14 июля?")
    assert result["outcome"] == "clarification" and not result["sources"]
    assert "«14 июля» — это несколько версий" in result["answer"]
    assert [t["label"] for t in result["clarification"]] == [label(t) for t in HISTORY[4:6]]


def test_a_generated_diff_answer_opens_with_the_pair_too(policy, conversation, llm, llm_server):
    llm_server.script("Добавлено правило о ночных вызовах [1].")
    question = "Что изменилось в регламенте дежурств между 3c4d5e6 и 4d5e6f7?"
    message = answer_now(conversation, question, user=conversation.user, llm=llm)
    assert message.mode == Message.Mode.DIFF
    assert message.answer.startswith(
        "Сравниваю третью версию от 09.03.2022 (3c4d5e6) и версию от 14.07.2022 (4d5e6f7).\n\n"
        "Добавлено правило о ночных вызовах [1]."
    )
