"""Passkeys in headless Chromium with its virtual authenticator (CDP WebAuthn): enabled once
from the account page (offered only while none is registered), then a sign-in without a code;
the ceremonies refuse a request without the CSRF header or from another origin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support import Org
from tests.timebot.signin_support import browser as http_browser
from tests.timebot.signin_support import codes_sent_to, sign_in, wait_for_code
from tests.timebot.test_graphql_ide import browser

__all__ = ["browser"]

pytestmark = pytest.mark.parametrize("live", ["sqlite"], indirect=True)
AUDIT = "{ getAuditTrails { operationName person { id } } }"


async def test_enable_a_passkey_then_sign_in_with_it(
    org: Org, browser: Any, tmp_path: Path
) -> None:
    # WebAuthn needs a host name as relying party (not an IP address): localhost.
    base = org.live.base_url.replace("127.0.0.1", "localhost")
    context = await browser.new_context()
    page = await context.new_page()
    cdp = await context.new_cdp_session(page)
    await cdp.send("WebAuthn.enable")
    await cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True,
        "hasUserVerification": True, "isUserVerified": True,
        "automaticPresenceSimulation": True,
    }})
    await page.goto(f"{base}/signin")
    before = codes_sent_to(org.live.settings.outbox_dir, org.admin.email)
    await page.get_by_label("E-mail address").fill(org.admin.email)
    await page.get_by_role("button", name="Send me a code").click()
    code = await wait_for_code(org.live, org.admin.email, before)
    await page.get_by_label("6-digit code from the e-mail").fill(code)
    await page.get_by_role("button", name="Sign in").click()
    await page.get_by_role("heading", name="Your account").wait_for()

    await page.get_by_role("button", name="Enable passkey").click()
    await page.get_by_text("Passkey enabled.").wait_for(timeout=20_000)
    await page.reload()
    assert await page.get_by_text("Passkey added").count() == 1
    assert await page.get_by_role("button", name="Enable passkey").count() == 0  # one is enough

    await page.get_by_role("button", name="Sign out").click()
    await page.get_by_role("heading", name="Sign in").wait_for()
    await page.get_by_role("button", name="Sign in with a passkey").click()
    await page.get_by_role("heading", name="Your account").wait_for(timeout=20_000)
    assert page.url == f"{base}/account"
    assert org.admin.apikey in await page.content()
    await page.screenshot(path=str(tmp_path / "account-passkey.png"), full_page=True)
    # "Disable interactive sign-in" for the custom OpenID provider blocks passkeys too.
    await org.admin.gql(
        "mutation($c: SvcCustomSSOInput) { editCustomSSO(customSSO: $c) { id } }",
        {"c": {"issuer": "https://idp.example", "clientId": "timebot", "clientSecret": "x",
               "ssoOnly": True}},
    )
    await page.get_by_role("button", name="Sign out").click()
    await page.get_by_role("button", name="Sign in with a passkey").click()
    await page.get_by_text("single sign-on only").wait_for(timeout=20_000)
    assert page.url == f"{base}/signin"
    trail = (await org.admin.gql(AUDIT))["getAuditTrails"]
    names = [entry["operationName"] for entry in trail]
    assert "registerPasskey" in names and names.count("signin") == 2  # the code, the passkey
    await context.close()


async def test_passkey_ceremonies_refuse_cross_site_requests(org: Org) -> None:
    async with http_browser(org.live) as client:
        await sign_in(org.live, client, org.admin.email)
        no_header = await client.post("/account/passkey/options")
        assert no_header.status_code == 403 and "X-Timebot-CSRF" in no_header.json()["error"]
        foreign = await client.post(
            "/signin/passkey/options", headers={"origin": "http://evil.example"}
        )
        assert foreign.status_code == 403
        bad = await client.post("/signin/passkey", content=b"{not json")
        assert bad.status_code == 400 and '"credential"' in bad.json()["error"]
        stale = await client.post("/signin/passkey", json={"rawId": "abc"})
        assert stale.status_code == 400 and "expired" in stale.json()["error"]
