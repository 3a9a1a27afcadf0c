"""Closed tickets as a source, against a real HTTP server speaking the subset of Yandex
Tracker's, Jira's and GitLab's APIs the connector uses (tests/tracker_server.py), with pages of
two tickets and two comments so that every listing is paged."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from knowledge.models import Chunk, Document, DocumentVersion, Source
from tests.conftest import ROOT, subprocess_env
from tests.knowledge.sources.conftest import found_paths
from tests.tracker_server import PROJECT, QUEUE, TrackerTestServer

NAME = "Closed tickets"
START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
EXCEL = "#RESOLVED Увеличили лимит строк выгрузки до 100 000, отчёт выгружается в Excel."
CARD = "#RESOLVED Добавили индекс по номеру договора, карточка клиента открывается за секунду."
FLAVOURS = ["yandex", "jira", "gitlab"]


def day(n: float) -> datetime:
    return START + timedelta(days=n)


@pytest.fixture
def tracker(settings, monkeypatch):
    settings.TRACKER_PAGE_SIZE = 2
    settings.TRACKER_HOSTS = ["127.0.0.1"]  # the test server's host, and no other
    monkeypatch.setenv("KB_TRACKER_TOKEN", "token-1")
    with TrackerTestServer(token="token-1", org="org-1") as server:
        server.ticket(
            1,
            "Отчёт не выгружается в Excel",
            updated=day(3),
            resolved=day(3),
            comments=["Проверили на стенде, воспроизводится на больших отчётах.", EXCEL],
        )
        server.ticket(
            2,
            "Не приходит письмо о сбросе пароля",
            updated=day(4),
            resolved=day(4),
            comments=["Письмо попало в спам, попросили проверить папку."],
        )
        server.ticket(
            3,
            "Падает импорт справочника",
            updated=day(2),
            comments=["#RESOLVED временный обход: перезапустить импорт ночью."],
        )
        server.ticket(
            4,
            "Медленно открывается карточка клиента",
            updated=day(5),
            resolved=day(5),
            comments=["Смотрим планы запросов.", "Нужен индекс?", CARD],
        )
        server.ticket(
            5,
            "Оплата картой отклоняется",
            updated=day(1),
            resolved=day(1),
            comments=["#resolved Обновили сертификат платёжного шлюза."],
        )
        yield server


QUERY = {
    "yandex": f"Queue: {QUEUE}",
    "yandex-filter": json.dumps({"queue": QUEUE}),
    "jira": f"project = {QUEUE}",
    "gitlab": PROJECT,
}


def add(flavour: str, tracker: TrackerTestServer, name: str = NAME) -> Source:
    """``source add NAME --kind tracker`` for the test server in the API ``flavour`` (Yandex
    with a query in its query language, or with a filter object: ``yandex-filter``)."""
    call_command(
        "source",
        "add",
        name,
        "--kind=tracker",
        f"--tracker={flavour.split('-')[0]}",
        f"--url={tracker.base_url}",
        f"--query={QUERY[flavour]}",
        *(["--org=org-1"] if flavour.startswith("yandex") else []),
        stdout=io.StringIO(),
    )
    return Source.objects.get(name=name)


def sync(name: str = NAME) -> dict:
    out = io.StringIO()
    call_command("source", "sync", name, "--json", stdout=out)
    return json.loads(out.getvalue())


def path(flavour: str, iid: int) -> str:
    return f"issues/{iid}" if flavour == "gitlab" else f"{QUEUE}-{iid}"


def live(source: Source) -> set[str]:
    return set(source.documents.filter(removed_at__isnull=True).values_list("path", flat=True))


def searchable_text(source: Source) -> str:
    return "\n".join(
        Chunk.objects.filter(source=source, searchable=True).values_list("text", flat=True)
    )


@pytest.mark.parametrize("flavour", [*FLAVOURS, "yandex-filter"])
def test_a_sync_indexes_only_the_resolution_comments_of_closed_tickets(db, tracker, flavour):
    source = add(flavour, tracker)
    assert (source.kind, source.connector, source.prefer_fresh) == ("tracker", "tracker", True)
    outcome = sync()
    assert outcome["status"] == "ok" and outcome["ready"] == 3, outcome
    # 2: no marked comment; 3: marked, but open.
    assert live(source) == {path(flavour, 1), path(flavour, 4), path(flavour, 5)}
    text = searchable_text(source)
    assert "лимит строк выгрузки" in text and "сертификат платёжного шлюза" in text
    assert "воспроизводится" not in text and "спам" not in text and "Нужен индекс" not in text
    assert "#RESOLVED" not in text.upper()
    assert found_paths("лимит строк выгрузки в Excel", source.pk)[0] == path(flavour, 1)

    document = Document.objects.get(source=source, path=path(flavour, 4))
    key = f"{PROJECT}#4" if flavour == "gitlab" else f"{QUEUE}-4"
    assert document.title == f"{key}: Медленно открывается карточка клиента"
    web = {
        "yandex": f"https://tracker.yandex.ru/{QUEUE}-4",
        "yandex-filter": f"https://tracker.yandex.ru/{QUEUE}-4",
        "jira": f"{tracker.base_url}/browse/{QUEUE}-4",
        "gitlab": f"{tracker.base_url}/{PROJECT}/-/issues/4",
    }
    assert document.url == web[flavour]
    version = document.current_version
    assert version.label_date == day(5).date() and version.created_at == day(5)
    assert tracker.listed_pages == 2  # four resolved tickets, two a page


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_an_incremental_sync_reindexes_only_the_updated_ticket(db, tracker, flavour):
    source = add(flavour, tracker)
    sync()
    cursor = Source.objects.get(pk=source.pk).sync_cursor
    assert datetime.fromisoformat(cursor) == day(5)
    tracker.edit(1, EXCEL, EXCEL.replace("100 000", "1 000 000"), at=day(9))

    outcome = sync()
    assert outcome["changed"] == [path(flavour, 1)], outcome
    assert outcome["added"] == outcome["removed"] == [] and outcome["new_versions"] == 1
    assert "1 000 000" in searchable_text(source)
    assert DocumentVersion.objects.filter(document__path=path(flavour, 1)).count() == 2
    assert datetime.fromisoformat(Source.objects.get(pk=source.pk).sync_cursor) == day(9)
    assert sync()["summary"].startswith("Up to date")


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_ticket_leaves_search_when_its_marker_goes_or_it_is_reopened(db, tracker, flavour):
    source = add(flavour, tracker)
    sync()
    tracker.edit(4, CARD, CARD.replace("#RESOLVED ", ""), at=day(9))
    reopened = tracker.issues[5]
    reopened.resolved, reopened.updated = None, day(9)
    closed = tracker.issues[3]
    closed.resolved, closed.updated = day(10), day(10)

    outcome = sync()
    assert sorted(outcome["removed"]) == [path(flavour, 4), path(flavour, 5)], outcome
    assert outcome["added"] == [path(flavour, 3)]
    assert live(source) == {path(flavour, 1), path(flavour, 3)}
    assert "карточка клиента" not in searchable_text(source)


def changed_after_first_sync(tracker: TrackerTestServer) -> None:
    tracker.edit(1, EXCEL, EXCEL.replace("100 000", "1 000 000"), at=day(9))
    closed = tracker.issues[3]
    closed.resolved, closed.updated = day(10), day(10)


def assert_nothing_kept(source: Source, cursor: str, flavour: str) -> None:
    source.refresh_from_db()
    assert source.last_sync_status == "failed" and source.sync_cursor == cursor
    assert live(source) == {path(flavour, 1), path(flavour, 4), path(flavour, 5)}
    text = searchable_text(source)
    assert "100 000" in text and "1 000 000" not in text and "перезапустить импорт" not in text


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_an_expired_token_mid_sync_is_a_plain_error_and_loses_nothing(
    db, tracker, flavour, monkeypatch
):
    source = add(flavour, tracker)
    sync()
    cursor = Source.objects.get(pk=source.pk).sync_cursor
    changed_after_first_sync(tracker)
    tracker.expire_token_after(1, renewed="token-2")  # the listing's second page is refused
    served = len(tracker.requests)

    with pytest.raises(CommandError) as failure:
        sync()
    error = Source.objects.get(pk=source.pk).last_sync_error
    assert (
        str(failure.value)
        == error
        == (
            "The tracker at 127.0.0.1 refused the token (401): it is missing, wrong or expired. "
            f"Set KB_TRACKER_TOKEN_{source.pk} (or KB_TRACKER_TOKEN) for the workers."
        )
    )
    assert len(tracker.requests) - served == 2  # one page read, the next refused: mid-sync
    assert_nothing_kept(source, cursor, flavour)

    monkeypatch.setenv(f"KB_TRACKER_TOKEN_{source.pk}", "token-2")
    outcome = sync()
    assert outcome["changed"] == [path(flavour, 1)] and outcome["added"] == [path(flavour, 3)]
    assert "1 000 000" in searchable_text(source) and "перезапустить импорт" in searchable_text(
        source
    )
    source.refresh_from_db()
    assert source.last_sync_status == "ok" and source.last_sync_error == ""
    assert datetime.fromisoformat(source.sync_cursor) == day(10)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_server_error_mid_sync_is_a_plain_error_and_loses_nothing(db, tracker, flavour):
    source = add(flavour, tracker)
    sync()
    cursor = Source.objects.get(pk=source.pk).sync_cursor
    changed_after_first_sync(tracker)
    tracker.fail_after(2, 500)  # the listing read, then a comment page fails

    with pytest.raises(CommandError):
        sync()
    assert Source.objects.get(pk=source.pk).last_sync_error == (
        "The tracker at 127.0.0.1 failed with a server error (500); nothing was changed, "
        "the next sync starts again from the same point."
    )
    assert_nothing_kept(source, cursor, flavour)

    outcome = sync()
    assert outcome["changed"] == [path(flavour, 1)] and outcome["added"] == [path(flavour, 3)]
    assert datetime.fromisoformat(Source.objects.get(pk=source.pk).sync_cursor) == day(10)


def test_of_tickets_that_match_equally_the_later_closed_ranks_first(db, tracker):
    """Four tickets with the same summary and fix, closed on two days: the two closed later
    come first, whatever their keys. Without the source's preference for fresh documents the
    scores alone (which the keys and dates move a little) order them otherwise."""
    fix = "#RESOLVED Очистили кэш шаблонов печати, счёт снова печатается."
    closing = {6: day(30), 7: day(31), 8: day(31), 9: day(30)}
    for iid, closed in closing.items():
        tracker.ticket(iid, "Не печатается счёт", updated=closed, resolved=closed, comments=[fix])
    source = add("jira", tracker)
    sync()
    later = {path("jira", 7), path("jira", 8)}
    question = "не печатается счёт, помогла очистка кэша шаблонов печати"
    assert set(found_paths(question, source.pk)[:2]) == later

    Source.objects.filter(pk=source.pk).update(prefer_fresh=False)
    assert set(found_paths(question, source.pk)[:2]) != later  # the rule did the work


def test_adding_a_tracker_source_checks_its_settings(db, tracker):
    def attempt(*args: str) -> str:
        with pytest.raises(CommandError) as failure:
            call_command("source", "add", "T", "--kind=tracker", *args, stdout=io.StringIO())
        return str(failure.value)

    url = f"--url={tracker.base_url}"
    assert "--tracker yandex|jira|gitlab" in attempt(url)
    assert "organisation" in attempt(url, "--tracker=yandex", "--query=Queue: SUP")
    assert "its id or path" in attempt(url, "--tracker=gitlab")
    assert "not valid JSON" in attempt(url, "--tracker=yandex", "--org=1", "--query={queue")
    assert "token does not go in the URL" in attempt(
        "--url=https://me:secret@jira.example.com", "--tracker=jira"
    )
    out = io.StringIO()
    call_command(
        "source", "add", "Закрытые заявки", "--kind=tracker", "--tracker=jira", url,
        "--query=project = SUP AND status = Closed ORDER BY key", "--marker=#РЕШЕНО", stdout=out,
    )  # fmt: skip
    source = Source.objects.get(name="Закрытые заявки")
    assert f"KB_TRACKER_TOKEN_{source.pk} (or KB_TRACKER_TOKEN)" in out.getvalue()
    assert source.sync_url == (
        f"{tracker.base_url}?tracker=jira&query=project = SUP AND status = Closed ORDER BY key"
        "&marker=%23РЕШЕНО"
    )


def test_a_first_listing_without_resolved_tickets_is_an_error_not_an_empty_source(db, tracker):
    for issue in tracker.issues.values():
        issue.resolved = None
    source = add("gitlab", tracker)
    with pytest.raises(CommandError, match="lists no resolved tickets for this query"):
        sync()
    assert Source.objects.get(pk=source.pk).sync_cursor == ""


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_tracker_host_outside_kb_tracker_hosts_never_gets_the_token(
    db, tracker, flavour, settings
):
    """A source's URL is typed by staff; the token is the workers'. "localhost" is the same
    test server under a name KB_TRACKER_HOSTS does not list: a configuration made before the
    list (or edited in the admin) fails with the way out, and nothing is sent."""
    source = add(flavour, tracker)
    Source.objects.filter(pk=source.pk).update(
        sync_url=source.sync_url.replace("127.0.0.1", "localhost")
    )
    with pytest.raises(CommandError) as failure:
        sync()
    assert "The tracker at localhost is not among KB_TRACKER_HOSTS (127.0.0.1)" in str(
        failure.value
    )
    assert "Add it to KB_TRACKER_HOSTS" in Source.objects.get(pk=source.pk).last_sync_error
    assert tracker.requests == [] and tracker.credentials == []
    with pytest.raises(CommandError, match="not among KB_TRACKER_HOSTS"):
        call_command(
            "source", "add", "Elsewhere", "--kind=tracker", f"--tracker={flavour}",
            f"--url={tracker.base_url.replace('127.0.0.1', 'localhost')}",
            f"--query={QUERY[flavour]}", "--org=org-1", stdout=io.StringIO(),
        )  # fmt: skip

    settings.TRACKER_HOSTS = ["127.0.0.1", "localhost"]  # allowed: the same source works
    assert sync()["added"]


def test_kb_tracker_hosts_entries_name_hosts_ports_and_domains(settings):
    from knowledge.sources.tracker import host_allowed

    settings.TRACKER_HOSTS = ["jira.example.com", "gitlab.example.com:8443", "*.atlassian.net"]
    assert host_allowed("jira.example.com", 443) and host_allowed("JIRA.example.com.", 8080)
    assert host_allowed("gitlab.example.com", 8443) and not host_allowed("gitlab.example.com", 443)
    assert host_allowed("acme.atlassian.net", 443) and not host_allowed("atlassian.net.evil", 443)
    assert not host_allowed("evilatlassian.net", 443)
    assert not host_allowed("jira.example.com.evil.org", 443)


def test_a_source_named_like_another_does_not_read_its_token(db, tracker, monkeypatch):
    """Tokens are named by the source's id: "JIRA!" once read KB_TRACKER_TOKEN_JIRA, the token
    of a source named "Jira", and sent it wherever its own URL pointed."""
    monkeypatch.delenv("KB_TRACKER_TOKEN")
    monkeypatch.setenv("KB_TRACKER_TOKEN_JIRA", "token-1")
    source = add("jira", tracker, name="JIRA!")
    with pytest.raises(CommandError) as failure:
        sync("JIRA!")
    assert f"set KB_TRACKER_TOKEN_{source.pk}" in str(failure.value)
    assert "token-1" not in " ".join(tracker.credentials)

    monkeypatch.setenv(f"KB_TRACKER_TOKEN_{source.pk}", "token-1")  # its own: it syncs
    assert sync("JIRA!")["added"]


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_redirect_to_another_host_gets_no_token(db, tracker, flavour):
    with TrackerTestServer(host="127.0.0.2") as elsewhere:
        source = add(flavour, tracker)
        tracker.redirect = elsewhere.base_url
        with pytest.raises(CommandError, match="sent a redirect"):
            sync()
        assert tracker.credentials and elsewhere.requests == []
        assert Source.objects.get(pk=source.pk).sync_cursor == ""


def test_the_default_host_list_names_no_domain_where_anyone_may_own_a_site():
    """Issue 50, row 6: with ``*.atlassian.net`` or ``gitlab.com`` listed by default, a token
    configured for one company's Jira site was sent to any other site or project there."""
    env = {k: v for k, v in subprocess_env().items() if not k.startswith("KB_TRACKER_HOSTS")}
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); "
         "from django.conf import settings; print(','.join(settings.TRACKER_HOSTS))"],
        cwd=ROOT, env={**env, "DJANGO_SETTINGS_MODULE": "portal.settings"},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    defaults = done.stdout.strip().splitlines()[-1].split(",")
    assert defaults == ["api.tracker.yandex.net"]
