"""Schemas of an API description as people read them: local ``$ref``s resolved, types in a
word ("array[Order]", "string (date-time)", "string: new | paid"), object fields flattened to
dotted names ("items[].product_id") down to a depth limit.

Only local references ("#/components/schemas/Order", "#/definitions/Order") are followed; a
reference to another file or a URL is named, never fetched. A chain of references that comes
back to itself without ever reaching a schema is an error; a schema that contains itself
(a category with subcategories) is legitimate and is simply not expanded a second time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from knowledge.parsing.base import ParseError

MAX_DEPTH = 3  # nested objects expanded below a field: items[].options.color, no deeper
MAX_FIELDS = 60  # rows of one fields table
MAX_ENUM = 12  # enum values shown in a type


@dataclass
class FieldRow:
    name: str
    type: str
    required: bool
    description: str


@dataclass
class Resolver:
    """Follows local references in ``root``; collects warnings about the ones it cannot."""

    root: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    def resolve(self, node: Any) -> tuple[Any, str]:
        """The node a (chain of) ``$ref`` points at, and the last reference's name."""
        name, chain = "", []
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            if ref in chain:
                loop = " → ".join([*chain, ref])
                raise ParseError(f"The API description has a $ref loop: {loop}")
            chain.append(ref)
            name = ref.rstrip("/").rsplit("/", 1)[-1]
            node = self._target(ref)
        return node, unquote(name)

    def _target(self, ref: str) -> Any:
        if not ref.startswith("#"):
            return {"description": f"(external reference {ref}, not read)"}
        node: Any = self.root
        for part in ref[1:].split("/")[1:]:
            key = unquote(part).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                message = f"The reference {ref} points at nothing in the description"
                if message not in self.warnings:
                    self.warnings.append(message)
                return {}
        return node

    # --- types ----------------------------------------------------------------------------

    def type_of(self, schema: Any, depth: int = 0) -> str:
        """A schema's type in a few words."""
        schema, name = self.resolve(schema)
        if not isinstance(schema, dict):
            return name
        if depth > MAX_DEPTH:
            return name or str(schema.get("type") or "object")
        for key, joiner in (("oneOf", " | "), ("anyOf", " | ")):
            if isinstance(schema.get(key), list):
                return name or joiner.join(self.type_of(s, depth + 1) for s in schema[key])
        kind = schema.get("type")
        if isinstance(kind, list):  # OpenAPI 3.1: ["string", "null"]
            kind = " | ".join(str(k) for k in kind)
        if kind == "array" or (not kind and "items" in schema):
            return f"array[{self.type_of(schema.get('items', {}), depth + 1)}]"
        text = str(kind or ("object" if "properties" in schema or "allOf" in schema else ""))
        if schema.get("format"):
            text = f"{text} ({schema['format']})".strip()
        text = name or text  # a named schema by its name ("Order"), but an enum's values shown
        if isinstance(schema.get("enum"), list):
            values = [str(v) for v in schema["enum"][:MAX_ENUM]]
            more = " | …" if len(schema["enum"]) > MAX_ENUM else ""
            text = f"{text}: {' | '.join(values)}{more}".strip(": ")
        return text or "any"

    # --- fields ---------------------------------------------------------------------------

    def fields(self, schema: Any, max_depth: int = MAX_DEPTH, *, named: str = "") -> list[FieldRow]:
        """The fields of an object schema (or of an array's items), flattened down to
        ``max_depth`` levels of nesting (0: its own fields only), at most MAX_FIELDS; [] for a
        schema without properties. With ``named`` (the schema's own name, for a list of the
        named schemas), fields of other named schemas are not expanded: they have their own."""
        rows: list[FieldRow] = []
        walk = _Walk(rows, min(max_depth, MAX_DEPTH), expand_named=not named)
        self._fields(schema, "", walk, depth=0, stack=(named,) if named else ())
        return rows[:MAX_FIELDS]

    def _fields(self, schema: Any, prefix: str, walk: _Walk, depth: int, stack) -> None:
        schema, name = self.resolve(schema)
        if not isinstance(schema, dict) or depth > walk.max_depth or len(walk.rows) >= MAX_FIELDS:
            return
        if name and name in stack:  # a schema inside itself: named, not expanded again
            return
        stack = (*stack, name) if name else stack
        if schema.get("type") == "array" or ("items" in schema and "properties" not in schema):
            self._fields(schema.get("items", {}), f"{prefix}[]", walk, depth, stack)
            return
        properties, required = self.properties(schema)
        for key, child in properties.items():
            resolved, _ = self.resolve(child)
            described = resolved if isinstance(resolved, dict) else {}
            own = child if isinstance(child, dict) else {}
            path = f"{prefix}.{key}" if prefix else key
            walk.rows.append(
                FieldRow(
                    name=path,
                    type=self.type_of(child),
                    required=key in required,
                    description=describe(own) or describe(described),
                )
            )
            if walk.expand_named or not _named(own):
                self._fields(child, path, walk, depth + 1, stack)

    def properties(self, schema: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
        """Properties and required names of an object schema, its allOf parts merged in."""
        properties: dict[str, Any] = {}
        required: set[str] = set()
        for part in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
            resolved, _ = self.resolve(part)
            if isinstance(resolved, dict):
                more, needed = self.properties(resolved)
                properties.update(more)
                required |= needed
        if isinstance(schema.get("properties"), dict):
            properties.update({str(k): v for k, v in schema["properties"].items()})
        if isinstance(schema.get("required"), list):
            required |= {str(r) for r in schema["required"]}
        return properties, required


@dataclass
class _Walk:
    rows: list[FieldRow]
    max_depth: int
    expand_named: bool


def _named(node: dict[str, Any]) -> bool:
    """A reference to a schema (or an array of them), rather than a schema written inline."""
    items = node.get("items")
    return "$ref" in node or (isinstance(items, dict) and "$ref" in items)


def describe(node: dict[str, Any]) -> str:
    """A node's description (or title), with its default value when it has one."""
    text = str(node.get("description") or node.get("title") or "").strip()
    if "default" in node and not isinstance(node["default"], dict | list):
        text = f"{text} (default: {node['default']})".strip()
    return " ".join(text.split())
