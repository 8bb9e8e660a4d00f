"""Single sign-on end to end against a real OpenID provider (the `oidc-provider-mock`
package, started by the test on localhost): the account page's panel (Initiate and Callback
URIs, settings through editCustomSSO / editGoogleSSO), sign-in through the provider, users
created on first login for a linked domain, "Disable interactive sign-in" blocking the e-mail
code and passkeys, and a callback that does not belong to the browser refused."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from oidc_provider_mock import run_server_in_thread

from tests.support import Org
from tests.timebot.signin_support import account, browser, codes_sent_to, gql, sign_in

EDIT = """mutation($c: SvcCustomSSOInput) { editCustomSSO(customSSO: $c) { id } }"""
LINK = """mutation($g: SvcGoogleSSOInput!) { editGoogleSSO(google: $g) { id } }"""
AUDIT = "{ getAuditTrails { operationName person { id } arguments { name value } } }"


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    with run_server_in_thread() as server:
        yield f"http://localhost:{server.server_port}"


@pytest.fixture
async def configured(org: Org, provider: str) -> AsyncIterator[Org]:
    await org.admin.gql(EDIT, {"c": {"issuer": provider, "clientId": "timebot",
                                     "clientSecret": "s3cret"}})
    yield org


async def _via_provider(org: Org, client: httpx.AsyncClient, email: str) -> httpx.Response:
    """Initiate, answer the provider's form as `email`, follow back to the callback."""
    started = await client.get(f"/sso/{org.id}/custom/initiate")
    assert started.status_code == 303, started.text
    authorize = started.headers["location"]
    query = parse_qs(urlsplit(authorize).query)
    assert query["code_challenge_method"] == ["S256"] and query["nonce"]
    assert query["redirect_uri"] == [f"{org.live.base_url}/sso/{org.id}/custom/callback"]
    async with httpx.AsyncClient(timeout=30) as idp:
        answered = await idp.post(authorize, data={"sub": email})
    assert answered.status_code in (302, 303), answered.text
    back = answered.headers["location"]
    assert back.startswith(f"{org.live.base_url}/sso/{org.id}/custom/callback?")
    return await client.get(back.removeprefix(org.live.base_url))


async def test_sign_in_with_the_custom_provider(configured: Org) -> None:
    org = configured
    async with browser(org.live) as client:
        response = await _via_provider(org, client, org.admin.email)
        assert response.status_code == 303 and response.headers["location"] == "/account"
        page, _csrf = await account(client)
        assert org.admin.apikey in page
        # The panel shows the addresses to enter in the provider, and never the secret.
        assert f"{org.live.base_url}/sso/{org.id}/custom/initiate" in page
        assert f"{org.live.base_url}/sso/{org.id}/custom/callback" in page
        assert "s3cret" not in page
    trail = (await org.admin.gql(AUDIT))["getAuditTrails"]
    assert any(e["operationName"] == "signin" and e["person"]["id"] == org.admin.id
               and {"name": "method", "value": "sso"} in e["arguments"] for e in trail)


async def test_unknown_address_refused_unless_its_domain_is_linked(configured: Org) -> None:
    org = configured
    newcomer = f"newcomer.{org.id}@acme-{org.id}.example"
    async with browser(org.live) as client:
        refused = await _via_provider(org, client, newcomer)
        assert refused.status_code == 403 and "Nobody in" in refused.text
        assert "timebot_session" not in client.cookies
    await org.admin.gql(LINK, {"g": {"domains": [f"acme-{org.id}.example"], "autoUser": True}})
    async with browser(org.live) as client:
        created = await _via_provider(org, client, newcomer)
        assert created.status_code == 303
        page, _ = await account(client)
        assert newcomer in page and "Employee" in page
    people = await org.admin.gql("{ getPersons { email role { name } } }")
    assert {"email": newcomer, "role": {"name": "Employee"}} in people["getPersons"]


async def test_disable_interactive_sign_in_blocks_the_email_code(configured: Org,
                                                                 provider: str) -> None:
    org = configured
    async with browser(org.live) as client:  # the admin sets it on the account page
        await sign_in(org.live, client, org.admin.email)
        _page, csrf = await account(client)
        saved = await client.post("/account/sso", data={
            "csrf": csrf, "issuer": provider, "client_id": "timebot", "client_secret": "",
            "sso_only": "on", "domains": "",
        })
        assert saved.status_code == 303, saved.text
    stored = await org.admin.gql("{ currentOrganisation { customSSO { ssoOnly clientSecret } } }")
    assert stored["currentOrganisation"]["customSSO"] == {"ssoOnly": True,
                                                         "clientSecret": "********"}
    outbox = org.live.settings.outbox_dir
    before = len(codes_sent_to(outbox, org.admin.email))
    async with browser(org.live) as client:
        body = await gql(client, "mutation($e: SvcEmail!) { requestSignin(email: $e) "
                                 "{ expire { ts } debugPin } }", {"e": org.admin.email})
        assert "errors" not in body  # the same answer as ever: nothing leaks
        for _ in range(100):  # the pointer to single sign-on arrives instead of a code
            if any(f"/sso/{org.id}/custom/initiate" in text
                   for text in _bodies_to(outbox, org.admin.email)):
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("no single sign-on mail")
        assert len(codes_sent_to(outbox, org.admin.email)) == before
        # Single sign-on itself still works.
        signed = await _via_provider(org, client, org.admin.email)
        assert signed.status_code == 303


def _bodies_to(outbox: object, address: str) -> list[str]:
    import mailbox
    from pathlib import Path

    path = Path(str(outbox))
    if not path.exists():
        return []
    found = []
    for _key, message in mailbox.Maildir(str(path), create=False).iteritems():
        if address in str(message.get("To", "")):
            payload = message.get_payload(decode=True)
            if isinstance(payload, bytes):
                found.append(payload.decode("utf-8", "replace"))
            else:
                found.extend(str(part.get_payload(decode=True)) for part in message.walk())
    return found


async def test_a_callback_not_started_in_this_browser_is_refused(configured: Org) -> None:
    org = configured
    async with browser(org.live) as victim, browser(org.live) as attacker:
        started = await attacker.get(f"/sso/{org.id}/custom/initiate")
        authorize = started.headers["location"]
        async with httpx.AsyncClient(timeout=30) as idp:
            answered = await idp.post(authorize, data={"sub": org.admin.email})
        back = answered.headers["location"].removeprefix(org.live.base_url)
        forced = await victim.get(back)  # login CSRF: the attacker's code in the victim's browser
        assert forced.status_code == 403 and "not started in this browser" in forced.text
        tampered = await attacker.get(re.sub(r"state=[^&]+", "state=forged", back))
        assert tampered.status_code == 403
        assert "timebot_session" not in victim.cookies
        unknown = await victim.get("/sso/ffffffffffffffffffffffff/custom/initiate")
        assert unknown.status_code == 404
        for malformed in ("%00", "x" * 3000, org.id.upper() + "%00"):  # PostgreSQL's 500 once
            answered = await victim.get(f"/sso/{malformed}/custom/initiate")
            assert answered.status_code == 404, (malformed, answered.status_code)


async def test_a_completed_callback_cannot_be_replayed(configured: Org) -> None:
    org = configured
    async with browser(org.live) as client:
        started = await client.get(f"/sso/{org.id}/custom/initiate")
        flow_cookie = started.cookies["timebot_sso"]
        async with httpx.AsyncClient(timeout=30) as idp:
            answered = await idp.post(started.headers["location"],
                                      data={"sub": org.admin.email})
        back = answered.headers["location"].removeprefix(org.live.base_url)
        first = await client.get(back)
        assert first.status_code == 303 and first.headers["location"] == "/account"
    # The same callback URL with the same flow cookie (a replay, the Back button): refused.
    async with browser(org.live) as replay:
        again = await replay.get(back, headers={"cookie": f"timebot_sso={flow_cookie}"})
        assert again.status_code == 403, again.text
        assert "already used" in again.text
        assert "timebot_session" not in again.cookies
