"""Sign in with Google and with Microsoft, end to end against a real OpenID provider (the
`oidc-provider-mock` package, started by the test) standing in for both: the deployment's
clients are configured by TIMEBOT_GOOGLE_* / TIMEBOT_MICROSOFT_* with the issuers pointed at
it. The /signin page offers only configured providers; the provider's verified address must
equal an active person's; linked domains create users on first login; a refusal says
nothing about which addresses exist; a callback not started in the browser is refused."""

from __future__ import annotations

import asyncio
import html
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from oidc_provider_mock import run_server_in_thread

from tests.support import LiveServer, Org, new_org, start_live_server, stop_live_server
from tests.timebot.signin_support import account, browser, gql
from timebot.config import load_settings
from timebot.errors import ConfigError

AUDIT = "{ getAuditTrails { operationName person { id } arguments { name value } } }"
LINK = """mutation($g: SvcGoogleSSOInput!) { editGoogleSSO(google: $g) { id } }"""
CUSTOM = """mutation($c: SvcCustomSSOInput) { editCustomSSO(customSSO: $c) { id } }"""


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    with run_server_in_thread() as server:
        yield f"http://localhost:{server.server_port}"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def idp_live(request: pytest.FixtureRequest, provider: str,
                   tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LiveServer]:
    server = await start_live_server(
        request.param, tmp_path_factory.mktemp(f"idp-{request.param}"),
        extra_env={
            "TIMEBOT_GOOGLE_CLIENT_ID": "timebot-google",
            "TIMEBOT_GOOGLE_CLIENT_SECRET": "g-secret",
            "TIMEBOT_GOOGLE_ISSUER": provider,
            "TIMEBOT_MICROSOFT_CLIENT_ID": "timebot-microsoft",
            "TIMEBOT_MICROSOFT_CLIENT_SECRET": "m-secret", "TIMEBOT_MICROSOFT_ISSUER": provider,
        },
    )
    try:
        yield server
    finally:
        await stop_live_server(server)


@pytest.fixture
async def idp_org(idp_live: LiveServer, http: httpx.AsyncClient) -> Org:
    return await new_org(idp_live, http)


async def _user(provider: str, email: str, **claims: object) -> None:
    """The provider's account `email` (its subject) with these claims."""
    async with httpx.AsyncClient(timeout=30) as idp:
        answer = await idp.put(f"{provider}/users/{email}", json={"email": email, **claims})
        assert answer.status_code == 204, answer.text


async def _via(live: LiveServer, client: httpx.AsyncClient, name: str, email: str,
               query: str = "") -> httpx.Response:
    """Initiate with `name`, answer the provider's form as `email`, follow to the callback."""
    started = await client.get(f"/sso/{name}/initiate{query}")
    assert started.status_code == 303, started.text
    authorize = started.headers["location"]
    sent = parse_qs(urlsplit(authorize).query)
    assert sent["client_id"] == [f"timebot-{name}"] and sent["code_challenge_method"] == ["S256"]
    assert sent["redirect_uri"] == [f"{live.base_url}/sso/{name}/callback"] and sent["nonce"]
    async with httpx.AsyncClient(timeout=30) as idp:
        answered = await idp.post(authorize, data={"sub": email})
    assert answered.status_code in (302, 303), answered.text
    back = answered.headers["location"]
    assert back.startswith(f"{live.base_url}/sso/{name}/callback?")
    return await client.get(back.removeprefix(live.base_url))


async def test_signin_page_offers_only_configured_providers(idp_live: LiveServer,
                                                            live: LiveServer) -> None:
    async with browser(idp_live) as client:
        page = (await client.get("/signin")).text
        assert 'href="/sso/google/initiate"' in page and "Sign in with Google" in page
        assert 'href="/sso/microsoft/initiate"' in page and "Sign in with Microsoft" in page
    async with browser(live) as client:  # the tests' usual server configures neither
        page = (await client.get("/signin")).text
        assert "Sign in with Google" not in page and "/sso/microsoft" not in page
        assert (await client.get("/sso/google/initiate")).status_code == 404


@pytest.mark.parametrize("name", ["google", "microsoft"])
async def test_sign_in_with_a_provider(idp_org: Org, provider: str, name: str) -> None:
    org = idp_org
    await _user(provider, org.admin.email, email_verified=True, name="Ada")
    async with browser(org.live) as client:
        response = await _via(org.live, client, name, org.admin.email)
        assert response.status_code == 303 and response.headers["location"] == "/account"
        page, _csrf = await account(client)
        assert org.admin.apikey in page
        assert "g-secret" not in page and "m-secret" not in page
    trail = (await org.admin.gql(AUDIT))["getAuditTrails"]
    assert any(e["operationName"] == "signin" and e["person"]["id"] == org.admin.id
               and {"name": "method", "value": name} in e["arguments"] for e in trail)


async def test_an_unverified_address_is_refused(idp_org: Org, provider: str) -> None:
    org = idp_org
    member = await org.add_member("Una")
    await _user(provider, member.email)  # no email_verified claim
    async with browser(org.live) as client:
        for name in ("google", "microsoft"):
            refused = await _via(org.live, client, name, member.email)
            assert refused.status_code == 403 and "did not confirm" in refused.text
        assert "timebot_session" not in client.cookies
    # Microsoft's own claim for a verified domain owner (xms_edov) is enough there.
    await _user(provider, member.email, xms_edov=True)
    async with browser(org.live) as client:
        assert (await _via(org.live, client, "microsoft", member.email)).status_code == 303
        assert (await _via(org.live, client, "google", member.email)).status_code == 403


async def test_refusals_do_not_tell_which_addresses_exist(idp_org: Org, provider: str) -> None:
    org = idp_org
    archived = await org.add_member("Arch")
    await org.admin.gql("mutation($id: SvcId!) { archivePerson(id: $id) { id } }",
                        {"id": archived.id})
    stranger = f"stranger.{org.id}@nowhere.example"
    texts = {}
    for address in (archived.email, stranger):
        await _user(provider, address, email_verified=True)
        async with browser(org.live) as client:
            refused = await _via(org.live, client, "google", address)
            assert refused.status_code == 403
            assert "timebot_session" not in client.cookies
            texts[address] = refused.text.replace(address, "ADDRESS")
    assert texts[archived.email] == texts[stranger]
    assert "ask your administrator to add you" in texts[stranger]


async def test_linked_domain_creates_the_user_on_first_login(idp_org: Org,
                                                             provider: str) -> None:
    org = idp_org
    domain = f"acme-{org.id}.example"
    newcomer = f"new.{org.id}@{domain}"
    await _user(provider, newcomer, email_verified=True, name="Nina Newcomer")
    async with browser(org.live) as client:
        assert (await _via(org.live, client, "google", newcomer)).status_code == 403
    await org.admin.gql(LINK, {"g": {"domains": [domain], "autoUser": True}})
    async with browser(org.live) as client:
        created = await _via(org.live, client, "google", newcomer,
                             f"?account={org.id}")
        assert created.status_code == 303, created.text
        page, _ = await account(client)
        assert newcomer in page and "Employee" in page
    async with browser(org.live) as client:  # the second time, the same person
        assert (await _via(org.live, client, "microsoft", newcomer)).status_code == 303
    people = (await org.admin.gql("{ getPersons { name email } }"))["getPersons"]
    assert [p for p in people if p["email"] == newcomer] == [
        {"name": "Nina Newcomer", "email": newcomer}
    ]


async def test_custom_sso_only_takes_the_public_providers_away(idp_org: Org,
                                                               provider: str) -> None:
    org = idp_org
    await _user(provider, org.admin.email, email_verified=True)
    await org.admin.gql(CUSTOM, {"c": {"issuer": provider, "clientId": "own",
                                       "clientSecret": "own-secret", "ssoOnly": True}})
    async with browser(org.live) as client:
        refused = await _via(org.live, client, "google", org.admin.email)
        assert refused.status_code == 403 and "no timebot account lets it" in refused.text


async def test_a_callback_not_started_in_this_browser_is_refused(idp_org: Org,
                                                                 provider: str) -> None:
    org = idp_org
    await _user(provider, org.admin.email, email_verified=True)
    async with browser(org.live) as victim, browser(org.live) as attacker:
        started = await attacker.get("/sso/google/initiate")
        async with httpx.AsyncClient(timeout=30) as idp:
            answered = await idp.post(started.headers["location"],
                                      data={"sub": org.admin.email})
        back = answered.headers["location"].removeprefix(org.live.base_url)
        forced = await victim.get(back)
        assert forced.status_code == 403 and "not started in this browser" in forced.text
        # A flow started for Google does not complete at Microsoft's callback.
        crossed = await attacker.get(back.replace("/google/", "/microsoft/"))
        assert crossed.status_code == 403
        assert "timebot_session" not in victim.cookies
        assert "timebot_session" not in attacker.cookies
        bad = await victim.get("/sso/google/initiate?account=../../x")
        assert bad.status_code == 400 and '"account"' in html.unescape(bad.text)
        body = await gql(victim, "{ currentPerson { id } }")
        assert "data" not in body or not body.get("data")


def test_a_client_id_without_its_secret_is_refused(tmp_path: Path) -> None:
    base = {"TIMEBOT_DATA_DIR": str(tmp_path),
            "TIMEBOT_SECRET_KEY": "tests-only-9fK2mQ7vX4pL8sR1wN6bZ3yT5cH0dGjA"}
    with pytest.raises(ConfigError, match="TIMEBOT_MICROSOFT_CLIENT_SECRET"):
        load_settings({**base, "TIMEBOT_MICROSOFT_CLIENT_ID": "x"})
    with pytest.raises(ConfigError, match="TIMEBOT_GOOGLE_CLIENT_ID"):
        load_settings({**base, "TIMEBOT_GOOGLE_CLIENT_SECRET": "x"})
    settings = load_settings({**base, "TIMEBOT_MICROSOFT_CLIENT_ID": "x",
                              "TIMEBOT_MICROSOFT_CLIENT_SECRET": "y",
                              "TIMEBOT_MICROSOFT_TENANT": "contoso.example"})
    [microsoft] = settings.identity_providers
    assert microsoft.issuer == "https://login.microsoftonline.com/contoso.example/v2.0"
    assert load_settings(base).identity_providers == ()


@pytest.mark.parametrize("name", ["google", "microsoft"])
async def test_a_callback_is_taken_once(idp_org: Org, provider: str, name: str) -> None:
    """Two callbacks with the same state and code at once (a double submit, a replay): one
    session opens; a later one is refused too."""
    org = idp_org
    await _user(provider, org.admin.email, email_verified=True)
    async with browser(org.live) as client:
        started = await client.get(f"/sso/{name}/initiate")
        cookie = {"cookie": f"timebot_sso={started.cookies['timebot_sso']}"}
        async with httpx.AsyncClient(timeout=30) as idp:
            answered = await idp.post(started.headers["location"],
                                      data={"sub": org.admin.email})
        back = answered.headers["location"].removeprefix(org.live.base_url)
    async with browser(org.live) as one, browser(org.live) as two:
        answers = await asyncio.gather(one.get(back, headers=cookie),
                                       two.get(back, headers=cookie))
    assert sorted(answer.status_code for answer in answers) == [303, 403]
    refused = next(answer for answer in answers if answer.status_code == 403)
    assert "already used" in refused.text and "timebot_session" not in refused.cookies
    async with browser(org.live) as later:
        again = await later.get(back, headers=cookie)
        assert again.status_code == 403 and "already used" in again.text
