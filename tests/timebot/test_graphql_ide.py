"""GET /graphql: the offline GraphQL IDE (GraphiQL), driven in headless Chromium; introspection."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from service.graphql.http import IDE_DIR
from tests.support import LiveServer, Org
from tests.timebot.chromium import chromium

ROOT = Path(__file__).resolve().parents[2]
INTROSPECTION = (
    '{ __schema { queryType { name fields { name } } } __type(name: "SvcPerson") { name } }'
)


def _require_ide_built() -> None:
    if not (IDE_DIR / "index.html").is_file():
        pytest.fail("the GraphQL IDE is not built: run `make ide` (make test does it first)")


async def test_get_graphql_serves_the_ide_with_local_assets(live: LiveServer) -> None:
    _require_ide_built()
    async with httpx.AsyncClient(base_url=live.base_url, timeout=30) as http:
        page = await http.get("/graphql")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert "/graphql-ide/graphiql.js" in page.text
        # Offline: nothing is loaded from another origin.
        assert "https://" not in page.text and "http://" not in page.text
        for asset, kind in [
            ("graphiql.js", "javascript"),
            ("graphiql.css", "text/css"),
            ("graphql.worker.js", "javascript"),
        ]:
            response = await http.get(f"/graphql-ide/{asset}")
            assert response.status_code == 200, asset
            assert kind in response.headers["content-type"], asset


async def test_introspection_needs_a_key(org: Org) -> None:
    data = await org.admin.gql(INTROSPECTION)
    assert data["__schema"]["queryType"]["name"] == "Query"
    assert "currentPerson" in {field["name"] for field in data["__schema"]["queryType"]["fields"]}
    assert data["__type"] == {"name": "SvcPerson"}
    assert await org.gql_for(None).error(INTROSPECTION) == "APIKeyError:InvalidKey"


async def test_ide_build_is_quick_when_built_and_says_when_npm_is_missing() -> None:
    _require_ide_built()

    async def ide_build(*args: str, path: str) -> tuple[int, str]:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "service.graphql.ide_build", *args,
            env={"PATH": path}, cwd=str(ROOT),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await asyncio.wait_for(process.communicate(), timeout=60)
        assert process.returncode is not None
        return process.returncode, out.decode()

    code, out = await ide_build(path="/nonexistent")  # up to date: npm is not even looked for
    assert code == 0 and "up to date" in out, out
    code, out = await ide_build("--force", path="/nonexistent")
    assert code != 0
    assert "FAILED" in out and "npm" in out, out
    assert (IDE_DIR / "index.html").is_file()  # a failed build leaves the built IDE alone


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    async with chromium() as launched:
        yield launched


async def _replace_editor_text(page: Any, editor: Any, text: str) -> None:
    """Replace a Monaco editor's whole content, as a person pasting would."""
    await editor.locator(".monaco-editor").first.click()
    await page.keyboard.press("Control+A")
    await page.keyboard.press("Delete")
    await page.keyboard.insert_text(text)


@pytest.mark.parametrize("live", ["sqlite"], indirect=True)
async def test_ide_runs_current_person_with_the_apikey_header(
    org: Org, browser: Any, tmp_path: Path
) -> None:
    _require_ide_built()
    origin = urlsplit(org.live.base_url).netloc
    foreign: list[str] = []
    posted_headers: list[dict[str, str]] = []

    context = await browser.new_context(viewport={"width": 1400, "height": 900})
    page = await context.new_page()

    async def only_local(route: Any) -> None:
        url = urlsplit(route.request.url)
        if url.scheme in ("http", "https") and url.netloc != origin:
            foreign.append(route.request.url)
            await route.abort()
            return
        if route.request.method == "POST" and url.path == "/graphql":
            posted_headers.append(await route.request.all_headers())
        await route.continue_()

    await page.route("**/*", only_local)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    await page.goto(f"{org.live.base_url}/graphql")
    query_editor = page.locator(".graphiql-query-editor")
    await query_editor.locator(".monaco-editor").wait_for(timeout=30_000)

    # The headers editor: open its tab and put the admin's key in it.
    await page.get_by_role("button", name="Headers", exact=True).click()
    headers_editor = page.locator(".graphiql-editor-tool .graphiql-editor:not(.hidden)")
    await headers_editor.locator(".monaco-editor").wait_for()
    await _replace_editor_text(page, headers_editor, json.dumps({"apikey": org.admin.apikey}))

    await _replace_editor_text(page, query_editor, "{ currentPerson { name } }")
    await page.get_by_role("button", name="Execute query (Ctrl-Enter)").click()

    result = page.locator(".result-window")
    await result.get_by_text(org.admin.name).wait_for(timeout=20_000)
    assert '"currentPerson"' in await result.inner_text()
    assert any(headers.get("apikey") == org.admin.apikey for headers in posted_headers)
    # Nothing was sent before the key was there (the first load used to answer InvalidKey).
    assert all(headers.get("apikey") for headers in posted_headers), posted_headers

    # The schema explorer (docs) reads the schema by introspection with the same key, fetched
    # again as soon as the key was entered (no manual re-fetch).
    await page.get_by_role("button", name="Show Documentation Explorer").click()
    docs = page.locator(".graphiql-doc-explorer")
    await docs.get_by_text("Query", exact=True).first.click()
    await docs.get_by_text("currentPerson").first.wait_for()

    await page.screenshot(path=str(tmp_path / "graphql-ide.png"))
    assert not foreign, f"the IDE reached outside the server: {foreign}"
    assert not errors, errors
    await context.close()
