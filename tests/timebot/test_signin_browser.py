"""Sign-in and the account page in headless Chromium: the e-mail code through the pages,
Copy and Reset of the API key, the GraphQL IDE on the session (schema and first query without
a key), a form on another origin that changes nothing, and the favicon. Screenshots of
/signin and /account are written to the test's tmp dir."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route

from tests.net import free_port, started
from tests.support import Org
from tests.timebot.signin_support import codes_sent_to, wait_for_code
from tests.timebot.test_graphql_ide import _require_ide_built, browser

__all__ = ["browser"]

pytestmark = pytest.mark.parametrize("live", ["sqlite"], indirect=True)
SHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"


async def _sign_in(org: Org, page: Any, tmp_path: Path) -> None:
    await page.goto(f"{org.live.base_url}/account")
    assert page.url.endswith("/signin")
    await page.screenshot(path=str(tmp_path / "signin.png"), full_page=True)
    before = codes_sent_to(org.live.settings.outbox_dir, org.admin.email)
    await page.get_by_label("E-mail address").fill(org.admin.email)
    await page.get_by_role("button", name="Send me a code").click()
    code = await wait_for_code(org.live, org.admin.email, before)
    await page.get_by_label("6-digit code from the e-mail").fill(code)
    await page.get_by_role("button", name="Sign in").click()
    await page.get_by_role("heading", name="Your account").wait_for()
    assert page.url.endswith("/account")


async def test_sign_in_copy_and_reset_the_key(org: Org, browser: Any, tmp_path: Path) -> None:
    context = await browser.new_context(viewport={"width": 1100, "height": 900})
    await context.grant_permissions(["clipboard-read", "clipboard-write"],
                                    origin=org.live.base_url)
    page = await context.new_page()
    await _sign_in(org, page, tmp_path)
    await page.screenshot(path=str(tmp_path / "account.png"), full_page=True)
    SHOTS.mkdir(parents=True, exist_ok=True)
    for name in ("signin.png", "account.png"):
        (SHOTS / name).write_bytes((tmp_path / name).read_bytes())
    key = await page.get_by_role("textbox", name="API key").input_value()
    assert key == org.admin.apikey
    await page.locator('button[data-copy="apikey"]').click()
    assert await page.evaluate("navigator.clipboard.readText()") == key
    await page.get_by_role("button", name="Reset").click()
    await page.get_by_text("Your API key was reset").wait_for()
    new = await page.get_by_role("textbox", name="API key").input_value()
    assert new != key
    assert await org.admin.gql.error("{ currentPerson { id } }") == "APIKeyError:InvalidKey"
    assert (await org.gql_for(new)("{ currentPerson { id } }"))["currentPerson"]["id"] == \
        org.admin.id
    await context.close()


async def test_ide_uses_the_session_and_serves_a_favicon(
    org: Org, browser: Any, tmp_path: Path
) -> None:
    _require_ide_built()
    context = await browser.new_context(viewport={"width": 1400, "height": 900})
    page = await context.new_page()
    await _sign_in(org, page, tmp_path)
    bodies: list[str] = []

    async def on_response(response: Any) -> None:
        if response.url.endswith("/graphql") and response.request.method == "POST":
            bodies.append(await response.text())

    page.on("response", on_response)
    await page.goto(f"{org.live.base_url}/graphql")
    await page.locator(".graphiql-query-editor .monaco-editor").wait_for(timeout=30_000)
    # The schema was fetched with the session on the first load: the docs show it.
    await page.get_by_role("button", name="Show Documentation Explorer").click()
    docs = page.locator(".graphiql-doc-explorer")
    await docs.get_by_text("Query", exact=True).first.click()
    await docs.get_by_text("currentPerson").first.wait_for(timeout=20_000)
    # The default query runs as the signed-in person.
    await page.get_by_role("button", name="Execute query (Ctrl-Enter)").click()
    await page.locator(".result-window").get_by_text(org.admin.id).wait_for(timeout=20_000)
    assert not any("InvalidKey" in body for body in bodies), bodies
    await page.screenshot(path=str(tmp_path / "ide.png"))
    # Headless Chromium fetches no favicon by itself: the page's icon link is followed here.
    icon = await page.evaluate(
        "fetch(document.querySelector('link[rel=icon]').href)"
        ".then(r => [r.url, r.status, r.headers.get('content-type')])"
    )
    assert icon[0] == f"{org.live.base_url}/favicon.ico" and icon[1] == 200, icon
    assert icon[2].startswith("image/")
    await context.close()


@pytest.fixture
async def other_origin() -> AsyncIterator[tuple[str, dict[str, str]]]:
    """A server on another port of 127.0.0.1: another origin, but the same site, so that
    SameSite=Lax still sends the session cookie with its form posts."""
    pages: dict[str, str] = {}

    async def serve(request: Any) -> HTMLResponse:
        return HTMLResponse(pages.get(request.path_params["name"], ""))

    port = free_port()
    app = Starlette(routes=[Route("/{name}", serve)])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    task = await started(server, "the page server")
    try:
        yield f"http://127.0.0.1:{port}", pages
    finally:
        server.should_exit = True
        await task


async def test_a_form_on_another_origin_changes_nothing(
    org: Org, browser: Any, tmp_path: Path, other_origin: tuple[str, dict[str, str]]
) -> None:
    base, pages = other_origin
    context = await browser.new_context()
    page = await context.new_page()
    await _sign_in(org, page, tmp_path)
    token_before = (await org.admin.gql("mutation { issueLegacyToken }"))["issueLegacyToken"]
    target = org.live.base_url
    # A text/plain form whose body is JSON: the cookie goes along, the CSRF header cannot.
    name = json.dumps({"query": "mutation { resetLegacyToken }", "x": ""})[:-2]
    pages["graphql"] = (
        f'<form method="post" action="{target}/graphql" enctype="text/plain">'
        f"<input type=hidden name='{name}' value='\"}}'>"
        '<button id="go">go</button></form>'
    )
    pages["reset"] = (
        f'<form method="post" action="{target}/account/api-key/reset">'
        '<input type=hidden name="csrf" value="guess"><button id="go">go</button></form>'
    )
    await page.goto(f"{base}/graphql")
    async with page.expect_navigation():
        await page.click("#go")
    answer = await page.locator("body").inner_text()
    assert "X-Timebot-CSRF" in answer, answer
    await page.goto(f"{base}/reset")
    async with page.expect_navigation():
        await page.click("#go")
    assert "nothing was changed" in await page.locator("body").inner_text()
    assert (await org.admin.gql("{ legacyToken }"))["legacyToken"] == token_before
    assert (await org.admin.gql("{ currentPerson { id } }"))["currentPerson"]["id"] == \
        org.admin.id
    await context.close()
