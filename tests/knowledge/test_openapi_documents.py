"""API descriptions end to end: ingested by the command and by upload, then asked about.
"Which parameters does POST /orders take?" is answered with that operation's table."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from chat.models import Conversation
from chat.pipeline import answer_now
from knowledge.models import DocumentVersion
from knowledge.tasks import ingest_version_task
from tests.conftest import CORPUS, ingest_folder

pytestmark = pytest.mark.django_db

SPECS = Path(__file__).resolve().parent / "openapi"
# A wiki page about API testing: it speaks of methods, parameters and responses too.
NEIGHBOUR = CORPUS / "wiki_qa_bible_ru/vidy-metody-urovni-testirovaniya"
NEIGHBOUR /= "testirovanie-api-api-application-programming-interface.md"
PARAMETERS_HEADER = "| Параметр | Где | Тип | Обязательный | Описание |"


@pytest.fixture
def api_kb(tmp_path: Path) -> dict:
    folder = tmp_path / "api"
    folder.mkdir()
    shutil.copy(SPECS / "orders.yaml", folder)
    shutil.copy(SPECS / "petstore_swagger2.json", folder)
    shutil.copy(NEIGHBOUR, folder)
    (folder / "package.json").write_text('{"name": "shop-frontend", "private": true}')
    return ingest_folder(folder, "API", kind="specs")


def ask(question: str) -> dict:
    out = io.StringIO()
    call_command("ask", question, json=True, stdout=out)
    return json.loads(out.getvalue())


def test_the_ingest_command_takes_json_and_yaml_and_says_what_is_no_api(api_kb, tmp_path):
    by_file = {Path(d["file"]).name: d for d in api_kb["documents"]}
    assert by_file["orders.yaml"]["status"] == "ready"
    assert by_file["petstore_swagger2.json"]["status"] == "ready"
    # In a folder, JSON that is no API description (a package.json) is no document.
    assert "package.json" not in by_file and api_kb["failed"] == 0
    version = DocumentVersion.objects.get(pk=by_file["orders.yaml"]["version_id"])
    assert version.format == "openapi"
    assert version.document.title == "API заказов интернет-магазина 2.1.0"
    # Named on its own, it is ingested and told plainly what it is not.
    (tmp_path / "package.json").write_text('{"name": "shop-frontend", "private": true}')
    (alone,) = ingest_folder(tmp_path / "package.json", "API")["documents"]
    assert alone["status"] == "failed"
    assert alone["error"].startswith("The file is JSON but not an OpenAPI (Swagger) description")


def test_which_parameters_does_post_orders_take_is_answered_with_its_table(api_kb):
    result = ask("Какие параметры принимает POST /orders?")
    assert result["refused"] is False
    first = result["sources"][0]
    assert first["document"] == "API заказов интернет-магазина 2.1.0"
    assert first["heading"] == "Заказы › POST /orders — Создать заказ"
    assert first["quote"].startswith(f"Параметры запроса POST /orders\n{PARAMETERS_HEADER}")
    assert "| Idempotency-Key | header | string (uuid) | да |" in first["quote"]
    # The extractive answer quotes the table under the operation's citation.
    assert "Заказы › POST /orders — Создать заказ [1]" in result["answer"]
    assert PARAMETERS_HEADER in result["answer"]


def test_an_english_question_about_the_swagger_2_pet_store(api_kb, bob):
    message = answer_now(
        Conversation.objects.create(user=bob),
        "Which parameters does POST /pet take?",
        user=bob,
        llm=False,
    )
    first = message.sources.order_by("number").first()
    assert first.title == "Swagger Petstore 1.0.7"
    assert first.heading == "pet › POST /pet — Add a new pet to the store"
    assert "| Parameter | In | Type | Required | Description |" in first.quote
    assert "| photoUrls | body | array[string] | yes |" in first.quote


def test_an_upload_is_read_by_content_and_a_broken_description_is_refused_plainly(client, alice):
    client.force_login(alice)
    broken = (SPECS / "orders.yaml").read_bytes().replace(b"  /orders:\n", b"  /orders: [\n", 1)
    files = [
        SimpleUploadedFile("orders-api.yml", (SPECS / "orders.yaml").read_bytes()),
        SimpleUploadedFile("petstore.txt", (SPECS / "petstore_swagger2.json").read_bytes()),
        SimpleUploadedFile("broken.yaml", broken),
    ]
    response = client.post("/documents/upload/", {"files": files, "new_source": "API"})
    assert response.status_code == 302
    for pk in DocumentVersion.objects.filter(status="pending").values_list("pk", flat=True):
        ingest_version_task(pk)  # what the worker does once the upload commits
    versions = {v.document.path: v for v in DocumentVersion.objects.select_related("document")}
    assert (versions["orders-api.yml"].status, versions["orders-api.yml"].format) == (
        "ready",
        "openapi",
    )
    assert versions["petstore.txt"].format == "openapi"  # the content decides, not the name
    assert versions["broken.yaml"].status == "failed"
    assert versions["broken.yaml"].error.startswith("The file is not valid YAML (line")
    page = client.get("/documents/").content.decode()
    assert 'accept=".docx,.pdf,.xlsx,.md,.markdown,.txt,.json,.yaml,.yml,.png,' in page
    # The viewer shows each table under its caption.
    viewer = client.get(reverse("document", args=[versions["orders-api.yml"].document_id]))
    assert "<caption>Параметры запроса POST /orders</caption>" in viewer.content.decode()
