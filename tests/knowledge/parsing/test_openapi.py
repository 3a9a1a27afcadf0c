"""API descriptions: an OpenAPI 3 orders API (YAML, Russian) and the Swagger 2 pet store (JSON,
English) from tests/knowledge/openapi/, and hostile or broken variations made from them here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from knowledge.chunking import Chunker
from knowledge.parsing.base import Block, ParsedDocument, ParseError
from knowledge.parsing.detect import detect_format
from knowledge.parsing.openapi_load import MAX_ALIASES
from knowledge.parsing.registry import parse_document

SPECS = Path(__file__).resolve().parents[1] / "openapi"
ORDERS = (SPECS / "orders.yaml").read_bytes()
PETSTORE = (SPECS / "petstore_swagger2.json").read_bytes()


def section(doc: ParsedDocument, heading: str) -> list[Block]:
    """The blocks under the operation (or schema) heading ``heading``."""
    return [b for b in doc.blocks if b.kind != "heading" and b.heading_path[-1:] == [heading]]


def table(doc: ParsedDocument, heading: str, caption_start: str) -> Block:
    return next(
        b
        for b in section(doc, heading)
        if b.table is not None and b.meta["caption"].startswith(caption_start)
    )


def rows_by_name(block: Block) -> dict[str, list[str]]:
    return {row[0]: row for row in block.table.rows}


def test_title_is_the_api_title_and_version_and_tags_hold_their_operations():
    doc = parse_document(ORDERS, "api/orders.yaml")
    assert doc.title == "API заказов интернет-магазина 2.1.0"
    assert (doc.metadata["format"], doc.metadata["api"], doc.language) == (
        "openapi",
        "openapi",
        "russian",
    )
    headings = [(b.level, b.section, b.text) for b in doc.blocks if b.kind == "heading"]
    assert headings[:6] == [
        (1, "1", "Заказы"),
        (2, "1.1", "GET /orders — Список заказов"),
        (2, "1.2", "POST /orders — Создать заказ"),
        (2, "1.3", "GET /orders/{order_id} — Заказ по номеру"),
        (2, "1.4", "DELETE /orders/{order_id} — Отменить заказ"),
        (1, "2", "Оплата"),
    ]
    assert (1, "5", "Схемы данных") in headings and doc.metadata["operations"] == 9
    intro = doc.blocks[0]
    assert intro.section == "" and "Серверы: https://api.shop.example/v2" in intro.text


def test_an_operation_is_its_description_then_its_parameters_and_responses_tables():
    doc = parse_document(ORDERS, "orders.yaml")
    heading = "POST /orders — Создать заказ"
    kinds = [b.kind for b in section(doc, heading)]
    assert kinds == ["text", "table", "table"]
    text = section(doc, heading)[0].text
    assert text.startswith("Создаёт заказ из переданных позиций.")
    assert "Тело запроса (application/json): Позиции заказа, способ доставки и промокод." in text
    parameters = table(doc, heading, "Параметры")
    assert parameters.meta["caption"] == "Параметры запроса POST /orders"
    assert parameters.table.header == ["Параметр", "Где", "Тип", "Обязательный", "Описание"]
    rows = rows_by_name(parameters)
    assert rows["Idempotency-Key"][1:4] == ["header", "string (uuid)", "да"]
    # The body's fields, its $refs resolved, nested objects as dotted names.
    assert rows["items"][1:4] == ["body", "array[OrderItem]", "да"]
    assert rows["items[].product_id"][2:] == ["string", "да", "Артикул товара из каталога."]
    assert rows["delivery.method"][2] == "string: courier | pickup | post"
    assert rows["delivery.address.city"][3] == "да" and rows["promo_code"][3] == "нет"
    responses = table(doc, heading, "Ответы")
    assert responses.table.header == ["Код", "Описание", "Поля ответа"]
    by_status = rows_by_name(responses)
    assert by_status["201"][2].startswith("Order — items: array[OrderItem]; delivery: object")
    assert by_status["401"][1] == "Нет токена партнёра или токен истёк."  # a $ref'd response
    assert list(by_status) == ["201", "400", "401", "409"]


def test_shared_parameters_come_from_components_and_from_the_path():
    doc = parse_document(ORDERS, "orders.yaml")
    listing = rows_by_name(table(doc, "GET /orders — Список заказов", "Параметры"))
    assert listing["per_page"] == [
        "per_page",
        "query",
        "integer",
        "нет",
        "Заказов на странице, не больше 100. (default: 20)",
    ]
    assert listing["status"][2].startswith("OrderStatus: awaiting_payment | paid")
    cancel = rows_by_name(table(doc, "DELETE /orders/{order_id} — Отменить заказ", "Параметры"))
    assert list(cancel) == ["order_id", "reason"]
    assert cancel["order_id"][1:4] == ["path", "string", "да"]


def test_a_schema_that_contains_itself_is_listed_once_and_named_schemas_are_not_repeated():
    doc = parse_document(ORDERS, "orders.yaml")
    category = rows_by_name(table(doc, "Category", "Поля схемы Category"))
    assert list(category) == ["id", "name", "children"]
    assert category["children"][1] == "array[Category]"
    order = rows_by_name(table(doc, "Order", "Поля схемы Order"))
    # allOf merged; Address is a schema of its own, so only inline objects are expanded.
    assert {"items", "delivery.method", "id", "status", "created_at"} <= set(order)
    assert "delivery.address.city" not in order and order["id"][2] == "да"


def test_swagger_2_body_form_and_path_parameters_with_english_labels():
    doc = parse_document(PETSTORE, "petstore.json")
    assert doc.title == "Swagger Petstore 1.0.7" and doc.language == "english"
    assert doc.metadata["api"] == "swagger"
    assert "Servers: https://petstore.swagger.io/v2" in doc.blocks[0].text
    heading = "POST /pet — Add a new pet to the store"
    assert section(doc, heading)[0].text == (
        "Request body (application/json): Pet object that needs to be added to the store"
    )
    parameters = table(doc, heading, "Parameters of POST /pet")
    assert parameters.table.header == ["Parameter", "In", "Type", "Required", "Description"]
    rows = rows_by_name(parameters)
    assert rows["name"][1:4] == ["body", "string", "yes"]
    assert rows["tags[].name"][1:3] == ["body", "string"]
    form = rows_by_name(
        table(doc, "POST /pet/{petId} — Updates a pet in the store with form data", "Param")
    )
    assert form["petId"][1:4] == ["path", "integer (int64)", "yes"]
    assert form["status"][1] == "formData"
    found = rows_by_name(table(doc, "GET /pet/findByStatus — Finds Pets by status", "Responses"))
    assert found["200"][2].startswith("array[Pet] — [].id: integer (int64);")


def test_every_table_piece_reads_alone_with_its_operation_named():
    doc = parse_document(ORDERS, "orders.yaml")
    chunks = Chunker().chunk(doc)
    piece = next(c for c in chunks if c.text.startswith("Параметры запроса POST /orders\n"))
    assert piece.heading_path == ["Заказы", "POST /orders — Создать заказ"]
    assert "| Параметр | Где | Тип | Обязательный | Описание |" in piece.text
    assert "| Idempotency-Key | header |" in piece.text


def test_detected_by_content_not_by_name():
    assert detect_format(ORDERS, "orders.yaml").format == "openapi"
    assert detect_format(PETSTORE, "petstore.json").format == "openapi"
    misnamed = detect_format(ORDERS, "orders.txt")
    assert misnamed.format == "openapi" and "'.txt'" in misnamed.warning
    # A wiki page quoting a YAML example is still a page.
    page = b"# API\n\nExample:\n\nopenapi: 3.0.0\npaths:\n  /x: {}\n\nMore *text* [here].\n- a\n"
    assert detect_format(page, "api.md").format == "markdown"
    assert detect_format(b'{"name": "app", "version": "1.0"}', "package.txt").format == "text"


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("bad.json", PETSTORE[:-40], "The file is not valid JSON (line"),
        ("bad.yaml", ORDERS.replace(b"  /orders:\n", b"  /orders: [\n", 1), "not valid YAML (line"),
        ("package.json", b'{"name": "app", "dependencies": {}}', "not an OpenAPI (Swagger)"),
        ("list.yaml", b"- openapi\n- paths\n", "The file is YAML but not an OpenAPI"),
        ("settings.yml", b"debug: true\npaths:\n  - /tmp\n", "not an OpenAPI"),
        ("evil.yaml", b"openapi: 3.0.0\npaths: !!python/object/apply:os.system ['true']\n", "YAML"),
        ("latin1.json", '{"openapi": "3.0.0", "paths": {}, "x": "é"}'.encode("latin-1"), "UTF-8"),
    ],
)
def test_broken_or_foreign_files_get_a_plain_error(name, data, message):
    with pytest.raises(ParseError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_document(data, name)


def test_a_ref_loop_is_an_error_naming_the_loop():
    spec = json.loads(PETSTORE)
    spec["definitions"]["Pet"] = {"$ref": "#/definitions/Animal"}
    spec["definitions"]["Animal"] = {"$ref": "#/definitions/Pet"}
    with pytest.raises(ParseError, match=r"\$ref loop: #/definitions/Pet → #/definitions/Animal"):
        parse_document(json.dumps(spec).encode(), "petstore.json")


def test_a_missing_or_external_ref_is_a_warning_not_an_error():
    spec = yaml.safe_load(ORDERS)
    operation = spec["paths"]["/delivery/options"]["get"]
    operation["parameters"].append({"$ref": "#/components/parameters/Missing"})
    operation["responses"]["200"]["content"]["application/json"]["schema"] = {
        "$ref": "common.yaml#/components/schemas/DeliveryOptions"
    }
    doc = parse_document(yaml.safe_dump(spec, allow_unicode=True).encode(), "orders.yaml")
    assert doc.warnings == [
        "The reference #/components/parameters/Missing points at nothing in the description"
    ]
    responses = table(doc, "GET /delivery/options — Способы доставки", "Ответы")
    assert responses.table.rows[0][2] == "DeliveryOptions"


def test_a_yaml_alias_bomb_is_refused_before_it_expands():
    levels = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i, name in enumerate("bcdefghi"):
        previous = "abcdefghi"[i]
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
    bomb = "openapi: 3.0.0\ninfo: {title: x, version: '1'}\n" + "\n".join(levels) + "\npaths: {}\n"
    assert len(bomb) < 1000
    with pytest.raises(ParseError, match="alias bomb"):
        parse_document(bomb.encode(), "bomb.yaml")
    many = (
        "openapi: 3.0.0\nx: &x 1\nys: [" + ", ".join(["*x"] * (MAX_ALIASES + 1)) + "]\npaths: {}\n"
    )
    with pytest.raises(ParseError, match=f"more than {MAX_ALIASES} aliases"):
        parse_document(many.encode(), "many.yaml")
    looped = "openapi: 3.0.0\nx: &x [*x]\npaths: {}\n"  # an alias inside itself
    with pytest.raises(ParseError, match="alias bomb"):
        parse_document(looped.encode(), "loop.yaml")


def test_a_file_over_the_size_limit_is_refused_unread(monkeypatch):
    monkeypatch.setattr("knowledge.parsing.openapi_load.MAX_BYTES", 1000)
    with pytest.raises(ParseError, match="MB are read"):
        parse_document(ORDERS, "orders.yaml")
