"""Interactive sign-in over HTTP: the e-mail code (read from the Maildir outbox), the
session cookie, wrong codes, rate limits, unknown addresses, sign-out; GraphQL with the
session (CSRF header), and the 402 that applies to keys only."""

from __future__ import annotations

from pathlib import Path

import httpx

from plumbing.db import unit_of_work
from service.organisation.account_life import set_subscription
from tests.support import Org, new_org, start_live_server, stop_live_server
from tests.timebot.signin_support import (
    browser,
    codes_sent_to,
    csrf_of,
    gql,
    local_browser,
    new_ip,
    request_code,
    sign_in,
    wait_for_code,
)

REQUEST = "mutation($e: SvcEmail!) { requestSignin(email: $e) { expire { ts } debugPin } }"
SIGNIN = "mutation($pin: Int!) { signin(pin: $pin) { person { id name } expire { ts } " \
         "tookOverBy { id } } }"
ME = "{ currentPerson { id } }"


async def test_code_by_mail_opens_a_session_and_the_account_page(org: Org) -> None:
    async with browser(org.live) as client:
        assert (await client.get("/account")).headers["location"] == "/signin"
        page = await client.get("/signin")
        assert page.status_code == 200 and 'name="email"' in page.text
        response = await request_code(client, org.admin.email.upper())
        assert response.status_code == 200
        assert "6-digit code" in response.text and 'name="pin"' in response.text
        assert "debug-pin" not in response.text  # not a --demo server
        code = await wait_for_code(org.live, org.admin.email)
        signed = await client.post("/signin/pin", data={"pin": code})
        assert signed.status_code == 303 and signed.headers["location"] == "/account"
        cookie = signed.headers["set-cookie"]
        assert "timebot_session=" in cookie and "HttpOnly" in cookie
        assert "SameSite=Lax" in cookie and "Secure" not in cookie  # the public URL is http
        page = await client.get("/account")
        assert page.status_code == 200
        assert org.admin.apikey in page.text  # "Your API key": the person's key
        assert "Signed-in browsers" in page.text and "(this browser)" in page.text
        # The code was single use: a second browser cannot use it.
        async with browser(org.live) as other:
            await request_code(other, "nobody@example.com")
            again = await other.post("/signin/pin", data={"pin": code})
            assert again.status_code == 400 and "not valid" in again.text


async def test_graphql_signin_needs_no_key_and_the_session_needs_its_csrf_header(
    org: Org,
) -> None:
    async with browser(org.live) as client:
        body = await gql(client, REQUEST, {"e": org.admin.email})
        assert body["data"]["requestSignin"]["debugPin"] is None
        assert "timebot_pending" in client.cookies
        code = await wait_for_code(org.live, org.admin.email)
        body = await gql(client, SIGNIN, {"pin": int(code)})
        assert body["data"]["signin"]["person"] == {"id": org.admin.id, "name": "Ada Admin"}
        assert body["data"]["signin"]["tookOverBy"] is None
        # The cookie alone authenticates nothing: a cross-site form could send it.
        refused = await gql(client, ME)
        assert refused["data"] is None and "X-Timebot-CSRF" in refused["errors"][0]["message"]
        page = await client.get("/account")
        csrf = csrf_of(page.text)
        assert (await gql(client, ME, csrf=csrf))["data"] == {"currentPerson": {"id": org.admin.id}}
        assert (await gql(client, ME, csrf="0" * 64))["data"] is None
        # Nothing but the sign-in mutations runs without credentials.
        assert (await org.gql_for(None).error("mutation { signout { expire { ts } } }")) == \
            "APIKeyError:InvalidKey"
        signout = await gql(client, "mutation { signout { person { id } } }", csrf=csrf)
        assert signout["data"]["signout"]["person"]["id"] == org.admin.id
        assert (await gql(client, ME, csrf=csrf))["data"] is None


async def test_wrong_codes_are_counted_then_the_code_is_void(org: Org) -> None:
    async with browser(org.live) as client:
        await gql(client, REQUEST, {"e": org.admin.email})
        code = int(await wait_for_code(org.live, org.admin.email))
        wrong = 100_000 if code != 100_000 else 100_001
        for _ in range(5):
            body = await gql(client, SIGNIN, {"pin": wrong})
            assert 'Invalid argument "pin"' in body["errors"][0]["message"]
        body = await gql(client, SIGNIN, {"pin": code})
        assert "void" in body["errors"][0]["message"]
        assert "timebot_session" not in client.cookies


async def test_an_expired_code_is_refused(org: Org) -> None:
    async with browser(org.live) as client:
        await request_code(client, org.admin.email)
        code = await wait_for_code(org.live, org.admin.email)
        org.live.clock.advance(5 * 60_000 + 1_000)
        response = await client.post("/signin/pin", data={"pin": code})
        assert response.status_code == 400 and "expired" in response.text


async def test_rate_limited_per_address_alike_for_unknown_addresses(org: Org) -> None:
    unknown = f"nobody.{org.id}@example.com"
    answers = {}
    for address in (org.admin.email, unknown):
        async with browser(org.live) as client:  # a new client address each time
            first = await gql(client, REQUEST, {"e": address})
            answers[address] = first
            for _ in range(4):
                assert "errors" not in await gql(client, REQUEST, {"e": address})
        async with browser(org.live) as client:
            sixth = await gql(client, REQUEST, {"e": address})
            assert "rate limit" in sixth["errors"][0]["message"]
    # The same answer for an address that names nobody: no way to tell them apart.
    known, other = answers[org.admin.email], answers[unknown]
    assert set(known["data"]["requestSignin"]) == set(other["data"]["requestSignin"])
    assert known["data"]["requestSignin"]["debugPin"] is None
    assert other["data"]["requestSignin"]["debugPin"] is None
    assert codes_sent_to(org.live.settings.outbox_dir, unknown) == []
    # The page says the same for both, too.
    async with browser(org.live) as client:
        page = await request_code(client, f"ghost.{org.id}@example.com")
        assert page.status_code == 200 and "If ghost." in page.text


async def test_rate_limited_per_client_address(org: Org) -> None:
    ip = new_ip()
    for index in range(20):
        async with browser(org.live, ip) as client:
            body = await gql(client, REQUEST, {"e": f"n{index}.{org.id}@example.com"})
            assert "errors" not in body, body
    async with browser(org.live, ip) as client:
        page = await request_code(client, org.admin.email)
        assert page.status_code == 429 and "rate limit" in page.text


async def test_demo_server_answers_the_code_and_https_makes_the_cookie_secure(
    tmp_path: Path,
) -> None:
    live = await start_live_server(
        "sqlite", tmp_path,
        extra_env={"TIMEBOT_DEMO": "1", "TIMEBOT_PUBLIC_URL": "https://timebot.example"},
    )
    try:
        async with httpx.AsyncClient(timeout=30) as plain:
            org = await new_org(live, plain)
        async with local_browser(live) as client:
            requested = await client.post(
                "/graphql", json={"query": REQUEST, "variables": {"e": org.admin.email}}
            )
            pin = requested.json()["data"]["requestSignin"]["debugPin"]
            assert isinstance(pin, int) and 100_000 <= pin <= 999_999
            pending = requested.headers["set-cookie"]
            assert pending.startswith("timebot_pending=") and "; Secure" in pending
            # (httpx keeps Secure cookies for https: sent by hand over the test's http.)
            response = await client.post(
                "/graphql", json={"query": SIGNIN, "variables": {"pin": pin}},
                headers={"cookie": pending.split(";")[0]},
            )
            assert response.json()["data"]["signin"]["person"]["id"] == org.admin.id
            cookie = response.headers["set-cookie"]
            assert "timebot_session=" in cookie and "; Secure" in cookie
            page = await request_code(client, org.admin.email)
            assert 'id="debug-pin"' in page.text
        # The code is the demo's convenience for the person at this machine: a client
        # elsewhere (behind X-Forwarded-For over HTTP, or another peer in the ASGI scope), or
        # another site's page in the local browser, reads it in the mail, as outside the demo.
        remote = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=live.app, client=("203.0.113.5", 40000)),
            base_url=live.base_url, timeout=30,
        )
        rebound = httpx.AsyncClient(base_url=live.base_url, timeout=30,
                                    headers={"host": "rebound.example"})  # DNS rebinding
        for client in (browser(live), remote, rebound):
            async with client:
                member = await org.add_member("Rex Remote", "admin")  # within its rate limit
                body = await gql(client, REQUEST, {"e": member.email})
                assert body["data"]["requestSignin"]["debugPin"] is None, body
                page = await request_code(client, member.email)
                assert page.status_code == 200 and "6-digit code" in page.text
                assert "debug-pin" not in page.text
    finally:
        await stop_live_server(live)


async def test_requests_without_credentials_are_refused_unparsed(org: Org) -> None:
    documents = org.live.service.executor.documents
    before = documents.prepared
    anonymous = org.gql_for(None)
    for query in (
        "{ currentPerson { id name email } }",
        "mutation { signout { expire { ts } } }",  # names sign-in, but needs a session
        "mutation { requestSignin(email: \"a@example.com\") { expire { ts } } " + " " * 3000 + "}",
    ):
        assert await anonymous.error(query) == "APIKeyError:InvalidKey"
    assert documents.prepared <= before + 1  # only the small sign-in-looking one was parsed
    async with browser(org.live) as client:
        bad = await gql(client, REQUEST, {"e": "not an address"})
        assert "$e" in bad["errors"][0]["message"]
        assert "must be an e-mail address" in bad["errors"][0]["message"]
        for pin in ("12345", "abcdef", ""):
            page = await client.post("/signin/pin", data={"pin": pin})
            assert page.status_code == 400 and '"pin"' in page.text
        page = await client.post("/signin/code", data={})
        assert page.status_code == 400 and '"email"' in page.text
        nothing = await gql(client, SIGNIN, {"pin": 123456})
        assert "request a code first" in nothing["errors"][0]["message"]


async def test_inactive_subscription_blocks_keys_not_sessions(org: Org) -> None:
    async with browser(org.live) as client:
        await sign_in(org.live, client, org.admin.email)
        async with unit_of_work(org.live.service.sessions) as session:
            await set_subscription(session, org.id, False)
        keyed = await org.admin.gql.raw(ME)
        assert keyed.status_code == 402
        page = await client.get("/account")
        assert page.status_code == 200
        body = await gql(client, ME, csrf=csrf_of(page.text))
        assert body["data"] == {"currentPerson": {"id": org.admin.id}}


async def test_favicon(org: Org) -> None:
    async with browser(org.live) as client:
        response = await client.get("/favicon.ico")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("image/")


async def test_sessions_and_codes_are_shared_by_processes_and_survive_a_restart(
    tmp_path: Path,
) -> None:
    first = await start_live_server("sqlite", tmp_path)
    second = await start_live_server("sqlite", tmp_path)  # a second process on the same data
    try:
        async with httpx.AsyncClient(timeout=30) as plain:
            org = await new_org(first, plain)
        async with browser(first) as client:
            await request_code(client, org.admin.email)
            code = await wait_for_code(first, org.admin.email)
            assert len(codes_sent_to(first.settings.outbox_dir, org.admin.email)) == 1
            # The code asked for at one process opens the session at the other.
            signed = await client.post(f"{second.base_url}/signin/pin", data={"pin": code})
            assert signed.status_code == 303, signed.text
            assert (await client.get("/account")).status_code == 200
        await stop_live_server(second)
        await stop_live_server(first)
        restarted = await start_live_server("sqlite", tmp_path)
        try:
            async with browser(restarted) as again:
                again.cookies = client.cookies
                page = await again.get("/account")
                assert page.status_code == 200 and org.admin.apikey in page.text
        finally:
            await stop_live_server(restarted)
    finally:
        for live in (first, second):
            if not live.task.done():
                await stop_live_server(live)
