"""Loading an API description (JSON or YAML) into a mapping, refusing hostile files.

Hostile input is refused before it costs much: at most MAX_BYTES, YAML aliases at most
MAX_ALIASES and the loaded tree at most MAX_NODES values counted as if every alias were copied
out (a "billion laughs" file expands exponentially from a few hundred bytes, and an alias can
even contain itself). YAML is read with PyYAML's safe loader: no Python objects, no tags that
run code.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from knowledge.parsing.base import ParseError

MAX_BYTES = 10 * 1024 * 1024
MAX_ALIASES = 100
MAX_NODES = 2_000_000
NOT_OPENAPI = (
    "The file is {kind} but not an OpenAPI (Swagger) description (no 'openapi' or 'swagger' "
    "key beside 'paths'); only API descriptions are indexed from JSON and YAML files"
)


def load_spec(data: bytes) -> dict[str, Any]:
    """The description as a mapping; ParseError for anything else, in plain words."""
    if len(data) > MAX_BYTES:
        raise ParseError(
            f"The API description is {len(data) / 1024 / 1024:.0f} MB; "
            f"at most {MAX_BYTES // 1024 // 1024} MB are read"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ParseError("The API description is not UTF-8 text") from None
    kind = "JSON" if text.lstrip().startswith(("{", "[")) else "YAML"
    spec = _load_json(text) if kind == "JSON" else _load_yaml(text)
    if not isinstance(spec, dict):
        raise ParseError(NOT_OPENAPI.format(kind=kind))
    spec = {str(k): v for k, v in spec.items()}
    if not ("openapi" in spec or "swagger" in spec) or not isinstance(spec.get("paths"), dict):
        raise ParseError(NOT_OPENAPI.format(kind=kind))
    return spec


def _load_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(
            f"The file is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise ParseError("The JSON is nested too deeply to be read") from None


class _GuardedLoader(yaml.SafeLoader):
    """PyYAML's safe loader (no Python objects) that stops after MAX_ALIASES aliases."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.aliases = 0

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise ParseError(
                    f"The YAML uses more than {MAX_ALIASES} aliases (*name); "
                    "it may be an alias bomb and was not read"
                )
        return super().compose_node(parent, index)


def _load_yaml(text: str) -> Any:
    loader = _GuardedLoader(text)
    try:
        spec = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise ParseError(f"The file is not valid YAML{where}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise ParseError(f"The file is not valid YAML: {exc}") from None
    except RecursionError:
        raise ParseError("The YAML is nested too deeply to be read") from None
    finally:
        loader.dispose()
    _check_size(spec)
    return spec


def _check_size(spec: Any) -> None:
    """Count the values of the loaded tree as if every alias were copied out, up to a limit."""
    stack, seen = [spec], 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > MAX_NODES:
            raise ParseError(
                f"The YAML expands to more than {MAX_NODES:,} values through its aliases; "
                "it looks like an alias bomb and was not read"
            )
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
