"""API descriptions (OpenAPI 3.x and Swagger 2.0, JSON or YAML) as documents.

The title is the API's ``info.title`` and version. Every tag is a section (level 1) and every
operation a section under its first tag (level 2, or level 1 when it has no tag), headed
"POST /orders — Создать заказ": its description as text, then its parameters (path-level and
operation parameters, and the request body's fields, with ``in`` "body") and its responses as
tables with a header row, each captioned with the operation's name, so that "which parameters
does POST /orders take?" finds that table. The data schemas follow as sections of their own.
Labels are in the description's language (Russian, else English). Loading, and refusing hostile
files, is ``openapi_load``'s; ``$ref``s and schemas are ``openapi_schema``'s.
"""

from __future__ import annotations

from typing import Any

from knowledge.parsing.base import Block, HeadingTracker, ParsedDocument, Table, check_time_budget
from knowledge.parsing.base import detect_language as language_of
from knowledge.parsing.openapi_load import load_spec
from knowledge.parsing.openapi_schema import Resolver, describe

METHODS = ("get", "put", "post", "patch", "delete", "head", "options", "trace")

LABELS = {
    "ru": {
        "parameters": ["Параметр", "Где", "Тип", "Обязательный", "Описание"],
        "responses": ["Код", "Описание", "Поля ответа"],
        "fields": ["Поле", "Тип", "Обязательное", "Описание"],
        "yes": "да",
        "no": "нет",
        "parameters_of": "Параметры запроса {operation}",
        "responses_of": "Ответы {operation}",
        "fields_of": "Поля схемы {name}",
        "schemas": "Схемы данных",
        "version": "Версия API: {version}",
        "servers": "Серверы: {servers}",
        "body": "Тело запроса ({media}): {description}",
        "deprecated": "Операция устарела (deprecated).",
    },
    "en": {
        "parameters": ["Parameter", "In", "Type", "Required", "Description"],
        "responses": ["Status", "Description", "Response fields"],
        "fields": ["Field", "Type", "Required", "Description"],
        "yes": "yes",
        "no": "no",
        "parameters_of": "Parameters of {operation}",
        "responses_of": "Responses of {operation}",
        "fields_of": "Fields of the schema {name}",
        "schemas": "Schemas",
        "version": "API version: {version}",
        "servers": "Servers: {servers}",
        "body": "Request body ({media}): {description}",
        "deprecated": "The operation is deprecated.",
    },
}


class OpenApiParser:
    """Parser for OpenAPI 3.x / Swagger 2.0 descriptions in JSON or YAML."""

    def parse(self, data: bytes, *, filename: str) -> ParsedDocument:
        spec = load_spec(data)
        resolver = Resolver(spec)
        language = _language(spec)
        writer = _Writer(spec, resolver, "ru" if language == "russian" else "en")
        blocks = writer.blocks()
        info = spec.get("info") if isinstance(spec.get("info"), dict) else {}
        title = " ".join(str(info.get("title") or "").split())
        version = str(info.get("version") or "").strip()
        return ParsedDocument(
            title=f"{title} {version}".strip() if title else "",
            blocks=blocks,
            language=language,
            metadata={
                "filename": filename,
                "api": "swagger" if "swagger" in spec else "openapi",
                "api_version": str(spec.get("openapi") or spec.get("swagger")),
                "operations": writer.operations,
            },
            warnings=resolver.warnings,
        )


def _language(spec: dict[str, Any]) -> str:
    """The text-search language of the description's own words (titles, summaries,
    descriptions), not of its keys and types, which are English in every description."""
    words: list[str] = []
    stack: list[Any] = [spec.get("info"), spec.get("tags"), spec.get("paths")]
    while stack and len(words) < 2000:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("title", "summary", "description") and isinstance(value, str):
                    words.append(value)
                elif isinstance(value, dict | list):
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return language_of(" ".join(words))


class _Writer:
    """Turns the description into blocks, section by section."""

    def __init__(self, spec: dict[str, Any], resolver: Resolver, language: str) -> None:
        self.spec, self.resolver = spec, resolver
        self.labels = LABELS[language]
        self.tracker = HeadingTracker()
        self.out: list[Block] = []
        self.operations = 0

    def blocks(self) -> list[Block]:
        self._introduction()
        tagged, untagged = self._operations()
        tags = _tag_descriptions(self.spec)
        for name, operations in tagged.items():
            self._heading(1, name)
            if tags.get(name):
                self._text(tags[name])
            for operation in operations:
                self._operation(2, *operation)
        for operation in untagged:
            self._operation(1, *operation)
        self._schemas()
        return self.out

    # --- structure ------------------------------------------------------------------------

    def _heading(self, level: int, title: str) -> None:
        section, path = self.tracker.open(level, title)
        self.out.append(Block("heading", title, list(path), section, level=level))

    def _text(self, text: str) -> None:
        text = text.strip()
        if text:
            self.out.append(Block("text", text, self.tracker.path, self.tracker.section))

    def _table(self, caption: str, header: list[str], rows: list[list[str]]) -> None:
        """A table whose caption names its operation: the chunker puts it above the table in
        every piece, so a piece read alone says whose parameters these are."""
        if not rows:
            return
        table = Table(header=header, rows=rows)
        block = Block("table", table.to_markdown(), self.tracker.path, self.tracker.section)
        block.table, block.meta = table, {"caption": caption}
        self.out.append(block)

    def _introduction(self) -> None:
        info = self.spec.get("info") if isinstance(self.spec.get("info"), dict) else {}
        lines = [describe(info)] if describe(info) else []
        if info.get("version"):
            lines.append(self.labels["version"].format(version=info["version"]))
        servers = _servers(self.spec)
        if servers:
            lines.append(self.labels["servers"].format(servers=", ".join(servers)))
        self._text("\n".join(lines))

    def _operations(self) -> tuple[dict[str, list[tuple]], list[tuple]]:
        """Operations grouped by their first tag (tags in the order the description lists
        them), and those without a tag; each as (method, path, path item, operation)."""
        tagged: dict[str, list[tuple]] = {name: [] for name in _tag_descriptions(self.spec)}
        untagged: list[tuple] = []
        for path, item in self.spec["paths"].items():
            item, _ = self.resolver.resolve(item)
            if not isinstance(item, dict):
                continue
            for method, operation in item.items():  # in the description's order
                if str(method).lower() not in METHODS or not isinstance(operation, dict):
                    continue
                entry = (str(method).upper(), str(path), item, operation)
                tags = operation.get("tags")
                if isinstance(tags, list) and tags:
                    tagged.setdefault(str(tags[0]), []).append(entry)
                else:
                    untagged.append(entry)
        return {k: v for k, v in tagged.items() if v}, untagged

    def _operation(self, level: int, method: str, path: str, item: dict, operation: dict) -> None:
        self.operations += 1
        check_time_budget()  # a description of many operations stops at the ingest's time limit
        name = f"{method} {path}"
        summary = " ".join(str(operation.get("summary") or "").split())
        self._heading(level, f"{name} — {summary}" if summary else name)
        lines = [describe(operation)] if operation.get("description") else []
        if operation.get("deprecated"):
            lines.append(self.labels["deprecated"])
        body = self._body(item, operation)
        if body is not None and describe(body[0]):
            lines.append(self.labels["body"].format(media=body[1], description=describe(body[0])))
        self._text("\n".join(lines))
        rows = self._parameter_rows(item, operation, body)
        self._table(
            self.labels["parameters_of"].format(operation=name), self.labels["parameters"], rows
        )
        self._table(
            self.labels["responses_of"].format(operation=name),
            self.labels["responses"],
            self._response_rows(operation),
        )

    # --- tables ---------------------------------------------------------------------------

    def _parameter_rows(self, item: dict, operation: dict, body) -> list[list[str]]:
        merged: dict[tuple[str, str], dict] = {}
        for source in (item.get("parameters"), operation.get("parameters")):
            for parameter in source if isinstance(source, list) else []:
                parameter, _ = self.resolver.resolve(parameter)
                if isinstance(parameter, dict) and parameter.get("name"):
                    merged[(str(parameter["name"]), str(parameter.get("in", "")))] = parameter
        rows = []
        for (name, where), parameter in merged.items():
            if where == "body":  # Swagger 2's request body: see _body
                continue
            schema = _parameter_schema(parameter)
            resolved, _ = self.resolver.resolve(schema)
            if isinstance(resolved, dict) and "default" in resolved and "default" not in parameter:
                parameter = {
                    **parameter,
                    "default": resolved["default"],
                }  # OpenAPI 3 keeps it there
            rows.append(
                [
                    name,
                    where,
                    self.resolver.type_of(schema),
                    self._yes(bool(parameter.get("required")) or where == "path"),
                    describe(parameter),
                ]
            )
        if body is not None:
            rows += self._field_rows(body[2], "body", body[0])
        return rows

    def _field_rows(self, schema: Any, where: str, holder: dict) -> list[list[str]]:
        fields = self.resolver.fields(schema)
        if not fields:  # a body that is no object: one row for the whole of it
            required = bool(holder.get("required"))
            return [[where, where, self.resolver.type_of(schema), self._yes(required), ""]]
        return [[f.name, where, f.type, self._yes(f.required), f.description] for f in fields]

    def _body(self, item: dict, operation: dict) -> tuple[dict, str, Any] | None:
        """The request body: (the body, its media type, its schema). OpenAPI 3 has it in
        ``requestBody``, Swagger 2 as the parameter ``in: body``."""
        body, _ = self.resolver.resolve(operation.get("requestBody"))
        if isinstance(body, dict) and body:
            media, schema = _media_schema(body.get("content"))
            return body, media, schema
        for source in (operation.get("parameters"), item.get("parameters")):
            for parameter in source if isinstance(source, list) else []:
                parameter, _ = self.resolver.resolve(parameter)
                if isinstance(parameter, dict) and parameter.get("in") == "body":
                    consumes = operation.get("consumes") or self.spec.get("consumes")
                    media = str(consumes[0]) if isinstance(consumes, list) and consumes else ""
                    return parameter, media or "application/json", parameter.get("schema")
        return None

    def _response_rows(self, operation: dict) -> list[list[str]]:
        responses = operation.get("responses")
        rows = []
        for status, response in responses.items() if isinstance(responses, dict) else []:
            response, name = self.resolver.resolve(response)
            if not isinstance(response, dict):
                continue
            schema = response.get("schema")  # Swagger 2
            if schema is None:
                _, schema = _media_schema(response.get("content"))
            rows.append([str(status), describe(response) or name, self._fields_cell(schema)])
        return rows

    def _fields_cell(self, schema: Any) -> str:
        if schema is None or schema == {}:
            return ""
        kind = self.resolver.type_of(schema)
        fields = self.resolver.fields(schema, max_depth=0)  # the schema's own, in full below
        listed = "; ".join(f"{f.name}: {f.type}" for f in fields[:25])
        more = "; …" if len(fields) > 25 else ""
        return f"{kind} — {listed}{more}" if listed else kind

    def _schemas(self) -> None:
        components = self.spec.get("components")
        schemas = components.get("schemas") if isinstance(components, dict) else None
        if schemas is None:
            schemas = self.spec.get("definitions")  # Swagger 2
        if not isinstance(schemas, dict) or not schemas:
            return
        self._heading(1, self.labels["schemas"])
        for name, schema in schemas.items():
            self._heading(2, str(name))
            resolved, _ = self.resolver.resolve(schema)
            if isinstance(resolved, dict):
                self._text(describe(resolved))
            rows = [
                [f.name, f.type, self._yes(f.required), f.description]
                for f in self.resolver.fields(schema, named=str(name))
            ]
            self._table(self.labels["fields_of"].format(name=name), self.labels["fields"], rows)

    def _yes(self, value: bool) -> str:
        return self.labels["yes" if value else "no"]


def _parameter_schema(parameter: dict) -> Any:
    """OpenAPI 3 keeps a parameter's type in ``schema`` (or ``content``); Swagger 2 on it."""
    if "schema" in parameter:
        return parameter["schema"]
    if "content" in parameter:
        return _media_schema(parameter["content"])[1]
    return {k: v for k, v in parameter.items() if k in ("type", "format", "items", "enum")}


def _media_schema(content: Any) -> tuple[str, Any]:
    """The JSON media type's schema when there is one, else the first media type's."""
    if not isinstance(content, dict) or not content:
        return "", None
    media = next((m for m in content if "json" in str(m)), next(iter(content)))
    entry = content[media] if isinstance(content[media], dict) else {}
    return str(media), entry.get("schema")


def _tag_descriptions(spec: dict[str, Any]) -> dict[str, str]:
    tags = spec.get("tags") if isinstance(spec.get("tags"), list) else []
    return {str(t["name"]): describe(t) for t in tags if isinstance(t, dict) and t.get("name")}


def _servers(spec: dict[str, Any]) -> list[str]:
    if isinstance(spec.get("servers"), list):
        return [str(s["url"]) for s in spec["servers"] if isinstance(s, dict) and s.get("url")]
    if spec.get("host"):  # Swagger 2
        schemes = spec.get("schemes") or ["https"]
        return [f"{schemes[0]}://{spec['host']}{spec.get('basePath', '')}"]
    return []
