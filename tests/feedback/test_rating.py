"""Rating buttons: one rating per user and answer, changeable; only the asker may rate; CSRF and
login enforced by the same middleware as every other form."""

from __future__ import annotations

from django.db import connection
from django.template import Context, Template
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from feedback.models import Rating
from tests.feedback.conftest import make_answer, rate

HX = {"HTTP_HX_REQUEST": "true"}


def test_thumbs_up_records_a_rating_and_shows_it_pressed(client, bob):
    message = make_answer(bob)
    client.force_login(bob)
    response = client.post(reverse("rate", args=[message.pk]), {"value": "up"}, **HX)
    assert response.status_code == 200
    rating = Rating.objects.get(message=message, user=bob)
    assert rating.value == "up"
    html = response.content.decode()
    assert 'class="thumb thumb-up" aria-pressed="true"' in html
    assert 'class="thumb thumb-down" aria-pressed="false"' in html
    assert "rating-form" not in html
    assert response["Vary"] and "HX-Request" in response["Vary"]


def test_thumbs_down_opens_the_reason_form_and_the_form_saves_reasons_and_comment(client, bob):
    message = make_answer(bob)
    client.force_login(bob)
    url = reverse("rate", args=[message.pk])
    first = client.post(url, {"value": "down"}, **HX).content.decode()
    assert "rating-form" in first and 'name="reasons" value="outdated"' in first
    response = client.post(
        url,
        {
            "value": "down",
            "details": "1",
            "reasons": ["outdated", "wrong_source", "not-a-reason"],
            "comment": "  Это правило изменилось в версии 2.  ",
        },
        **HX,
    )
    rating = Rating.objects.get(message=message, user=bob)
    assert (rating.value, rating.reasons) == ("down", ["wrong_source", "outdated"])
    assert rating.comment == "Это правило изменилось в версии 2."
    html = response.content.decode()
    assert "rating-form" not in html  # the summary replaces the form
    assert "Wrong source" in html and "Это правило изменилось" in html
    editing = client.get(url, **HX).content.decode()  # "Edit" opens the form, filled in
    assert 'value="outdated" checked' in editing and 'value="wrong" checked' not in editing
    assert "Это правило изменилось в версии 2.</textarea>" in editing


def test_changing_the_rating_keeps_one_row_per_user_and_answer(client, bob):
    message = make_answer(bob)
    client.force_login(bob)
    url = reverse("rate", args=[message.pk])
    client.post(url, {"value": "down", "details": "1", "reasons": ["wrong"], "comment": "нет"})
    client.post(url, {"value": "down"})  # the thumb again keeps the reasons already given
    rating = Rating.objects.get(message=message, user=bob)
    assert rating.reasons == ["wrong"] and rating.comment == "нет"
    client.post(url, {"value": "up"})
    assert Rating.objects.filter(message=message).count() == 1
    rating.refresh_from_db()
    assert (rating.value, rating.reasons, rating.comment) == ("up", [], "")


def test_a_plain_post_redirects_back_to_the_answer(client, bob):
    message = make_answer(bob)
    client.force_login(bob)
    response = client.post(reverse("rate", args=[message.pk]), {"value": "up"})
    assert response.status_code == 302
    assert response["Location"].endswith(f"/chat/{message.conversation_id}/#answer-{message.pk}")


def test_an_unknown_value_is_rejected(client, bob):
    message = make_answer(bob)
    client.force_login(bob)
    response = client.post(reverse("rate", args=[message.pk]), {"value": "meh"}, **HX)
    assert response.status_code == 400
    assert not Rating.objects.exists()


def test_anonymous_rating_is_sent_to_the_login_page(client, bob):
    message = make_answer(bob)
    response = client.post(reverse("rate", args=[message.pk]), {"value": "down"}, **HX)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
    assert not Rating.objects.exists()


def test_a_post_without_the_csrf_token_is_refused(bob):
    message = make_answer(bob)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(bob)
    url = reverse("rate", args=[message.pk])
    refused = browser.post(url, {"value": "down"}, **HX)
    assert refused.status_code == 403
    assert not Rating.objects.exists()
    # The same request with the token htmx sends from <body hx-headers> is accepted.
    page = browser.get(reverse("conversation", args=[message.conversation_id]))
    token = page.context["csrf_token"]
    accepted = browser.post(url, {"value": "down"}, HTTP_X_CSRFTOKEN=str(token), **HX)
    assert accepted.status_code == 200
    assert Rating.objects.get().value == "down"


def test_a_user_cannot_rate_another_users_answer(client, bob, eve, alice):
    message = make_answer(bob)
    for intruder in (eve, alice):  # staff included: a rating is the asker's own verdict
        client.force_login(intruder)
        response = client.post(reverse("rate", args=[message.pk]), {"value": "down"}, **HX)
        # 404, as for a message that does not exist: ids of others' messages are not told.
        assert response.status_code == 404
        assert client.get(reverse("rate", args=[message.pk]), **HX).status_code == 404
    assert client.post(reverse("rate", args=[10**9]), {"value": "down"}, **HX).status_code == 404
    assert not Rating.objects.exists()


def test_an_error_message_cannot_be_rated(client, bob):
    message = make_answer(bob, outcome="error", answer="Чат временно отключён.")
    client.force_login(bob)
    response = client.post(reverse("rate", args=[message.pk]), {"value": "up"}, **HX)
    assert response.status_code == 404


def test_the_chat_page_shows_the_current_rating_under_each_answer(client, bob):
    first = make_answer(bob, "Что такое дефект?")
    second = make_answer(bob, "Что такое баг?", conversation=first.conversation)
    rate(first, bob, "down", ["incomplete"], "мало")
    client.force_login(bob)
    html = client.get(reverse("conversation", args=[first.conversation_id])).content.decode()
    assert f'id="rating-{first.pk}" data-rating="down"' in html
    assert f'id="rating-{second.pk}" data-rating=""' in html
    assert "Incomplete" in html and "“мало”" in html


def test_the_slot_reads_a_conversations_ratings_in_one_query(bob):
    first = make_answer(bob)
    others = [make_answer(bob, f"Вопрос {i}", conversation=first.conversation) for i in range(5)]
    for message in [first, *others]:
        rate(message, bob, "up")
    request = RequestFactory().get("/")
    request.user = bob
    slot = Template(
        '{% for m in messages %}{% include "chat/_rating_slot.html" with message=m %}{% endfor %}'
    )
    with CaptureQueriesContext(connection) as queries:
        html = slot.render(Context({"messages": [first, *others], "request": request}))
    assert html.count('data-rating="up"') == 6
    assert len(queries) == 1
