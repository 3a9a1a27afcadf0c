"""Headers of private pages and downloads."""

from __future__ import annotations

import pytest

from knowledge.ingest.registration import register_file
from knowledge.models import Source
from portal.api_auth import create_token

pytestmark = pytest.mark.django_db


def test_pages_and_api_answers_of_a_signed_in_user_are_never_cached(client, bob):
    client.force_login(bob)
    for url in ("/", "/documents/", "/versions/"):
        cache = client.get(url)["Cache-Control"]
        assert "no-store" in cache and "private" in cache, url
    _, token = create_token(bob, "agent")
    response = client.get("/api/v1/search", {"q": "x"}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert "no-store" in response["Cache-Control"]


def test_an_uploaded_svg_or_html_is_downloaded_as_bytes_never_rendered(client, bob):
    source = Source.objects.create(name="Uploads")
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    version = register_file(source, "logo.svg", svg, enqueue=False).version
    client.force_login(bob)
    response = client.get(f"/versions/{version.pk}/download/")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Disposition"].startswith("attachment")
    assert response["X-Content-Type-Options"] == "nosniff"
