"""Every GraphQL document the fronts send (timebot/, bot/, mail/) is one a hosted service
answers: it validates against the hosted service's schema, except the documents named
`…_EXTENSION`, which use the embedded service's extensions and are sent only where the service
offers them (`ServiceClient.offers`, one introspection per type)."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest
from graphql import GraphQLSchema, OperationDefinitionNode, build_schema, parse, validate

from service.graphql.schema import build_schema as build_embedded_schema
from tests.service.spec_tables import REFERENCE
from tests.support import LiveServer, new_org
from timebot.client import ServiceClient

ROOT = Path(__file__).resolve().parents[1]
FRONTS = ("shell", "timebot", "bot", "mail", "web")


def _operation(text: str) -> bool:
    stripped = text.strip()
    # (a format placeholder such as "{tenantid}" parses as a document too: ours have spaces)
    if not stripped.startswith(("query", "mutation", "{")) or " " not in stripped:
        return False
    try:
        document = parse(stripped)
    except Exception:
        return False
    return any(isinstance(d, OperationDefinitionNode) for d in document.definitions)


def _literals() -> dict[str, tuple[bool, str]]:
    """{where: (is an extension, text)} of every string literal that is an operation."""
    found: dict[str, tuple[bool, str]] = {}
    for package in FRONTS:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            extensions: set[int] = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id.endswith("_EXTENSION") for t in node.targets
                ):
                    extensions |= {id(n) for n in ast.walk(node.value)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    if _operation(node.value):
                        where = f"{path.relative_to(ROOT)}:{node.lineno}"
                        found[where] = (id(node) in extensions, node.value)
    return found


def _module_constants() -> dict[str, tuple[bool, str]]:
    """Operations built at import time (joined strings, f-strings) as module constants."""
    found: dict[str, tuple[bool, str]] = {}
    for package in FRONTS:
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, f"{package}."):
            if ".migrations" in info.name:
                continue
            module = importlib.import_module(info.name)
            for name, value in vars(module).items():
                if isinstance(value, str) and _operation(value):
                    found[f"{info.name}.{name}"] = (name.endswith("_EXTENSION"), value)
    return found


DOCUMENTS = {**_literals(), **_module_constants()}
STANDARD = {where: text for where, (extension, text) in DOCUMENTS.items() if not extension}


def _errors(schema: GraphQLSchema, text: str) -> list[str]:
    return [error.message for error in validate(schema, parse(text))]


def test_the_documents_were_found() -> None:
    assert len(DOCUMENTS) >= 40, sorted(DOCUMENTS)
    assert any(extension for extension, _ in DOCUMENTS.values())


def test_every_document_validates_against_the_embedded_service() -> None:
    schema = build_embedded_schema()
    invalid = {where: _errors(schema, text) for where, (_, text) in DOCUMENTS.items()}
    assert {where: errors for where, errors in invalid.items() if errors} == {}


@pytest.mark.skipif(
    not REFERENCE.exists(),
    reason=f"the hosted service's schema is not beside the checkout ({REFERENCE} is absent)",
)
def test_every_standard_document_validates_against_the_hosted_schema() -> None:
    schema = build_schema(REFERENCE.read_text(encoding="utf-8"))
    invalid = {where: _errors(schema, text) for where, text in STANDARD.items()}
    assert {where: errors for where, errors in invalid.items() if errors} == {}


async def test_the_client_asks_the_service_what_it_offers(live: LiveServer) -> None:
    import httpx

    async with httpx.AsyncClient(timeout=30) as http:
        org = await new_org(live, http)
    client = ServiceClient(live.graphql_url)
    try:
        key = org.admin.apikey
        assert await client.offers("SvcTimeSettings", "autoSubmit", apikey=key)
        assert await client.offers("SvcPerson", "scheduledDays", apikey=key)
        assert not await client.offers("SvcPerson", "noSuchField", apikey=key)
        assert not await client.offers("SvcNoSuchType", "id", apikey=key)
    finally:
        await client.close()
