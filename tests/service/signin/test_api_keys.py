"""Keys and sessions over POST /graphql: integration keys (createApiKey, getApiKeys,
revokeApiKey), currentSession, validateLegacyApiKey; on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import select

from plumbing.db import unit_of_work
from service.models import ApiKey, AuditTrail
from tests.support import DAY_MS, Org, start_live_server, stop_live_server
from tests.timebot.signin_support import account, browser, gql, sign_in

CREATE = "mutation($e: SvcTimestamp) { createApiKey(expire: $e) { key expire { ts } revoked } }"
LIST = "{ getApiKeys { key expire { ts } revoked } }"
REVOKE = "mutation($k: String) { revokeApiKey(key: $k) { key revoked } }"
ME = "{ currentPerson { id } }"


async def _create(gql_: Any, expire: int | None = None) -> str:
    data = await gql_(CREATE, {"e": expire})
    created = data["createApiKey"]
    assert created["revoked"] is False
    return str(created["key"])


async def _rows(org: Org, person_id: str) -> list[ApiKey]:
    async with unit_of_work(org.live.service.sessions) as session:
        return list(await session.scalars(select(ApiKey).where(ApiKey.person_id == person_id)))


async def test_an_integration_key_acts_as_its_person_and_is_shown_once(org: Org) -> None:
    bob = await org.add_member("Bob")
    key = await _create(bob.gql)
    assert key.startswith("tbk_") and len(key) == 44
    as_key = org.gql_for(key)
    assert (await as_key(ME))["currentPerson"]["id"] == bob.id
    # Listed by its hint only; the person's own key is not among them and still answers.
    listed = (await bob.gql(LIST))["getApiKeys"]
    assert listed == [{"key": key[:12] + "…", "expire": None, "revoked": False}]
    assert (await bob.gql(ME))["currentPerson"]["id"] == bob.id
    # Stored as its digest: the key itself is nowhere in the table, nor in the audit trail.
    rows = await _rows(org, bob.id)
    assert {row.kind for row in rows} == {"account", "integration"}
    assert all(key not in (row.key, row.hint) for row in rows)
    digest = next(row.key for row in rows if row.kind == "integration")
    # The stored digest is not a key.
    assert await org.gql_for(digest).error(ME) == "APIKeyError:InvalidKey"
    # Each person sees only their own keys.
    assert (await org.admin.gql(LIST))["getApiKeys"] == []


async def test_a_revoked_key_is_refused_at_once(org: Org) -> None:
    bob = await org.add_member("Bob")
    first, second = await _create(bob.gql), await _create(bob.gql)
    assert (await org.gql_for(first)(ME))["currentPerson"]["id"] == bob.id
    revoked = (await bob.gql(REVOKE, {"k": first}))["revokeApiKey"]
    assert revoked == {"key": first[:12] + "…", "revoked": True}
    assert await org.gql_for(first).error(ME) == "APIKeyError:InvalidKey"
    # The other key still answers; it can be revoked by its listed hint too.
    assert (await org.gql_for(second)(ME))["currentPerson"]["id"] == bob.id
    await bob.gql(REVOKE, {"k": second[:12] + "…"})
    assert await org.gql_for(second).error(ME) == "APIKeyError:InvalidKey"
    listed = (await bob.gql(LIST))["getApiKeys"]
    assert [item["revoked"] for item in listed] == [True, True]
    # Revoking again answers the same; the audit trail never holds the key.
    assert (await bob.gql(REVOKE, {"k": first}))["revokeApiKey"]["revoked"] is True
    async with unit_of_work(org.live.service.sessions) as session:
        trail = list(await session.scalars(select(AuditTrail).where(
            AuditTrail.organisation_id == org.id, AuditTrail.person_id == bob.id)))
    assert {t.operation_name for t in trail} == {"createApiKey", "revokeApiKey"}
    assert all(first not in str(t.arguments) and second not in str(t.arguments) for t in trail)


async def test_expired_keys_are_refused(org: Org) -> None:
    bob = await org.add_member("Bob")
    now = org.live.clock.now_ms()
    key = await _create(bob.gql, now + DAY_MS)
    assert (await org.gql_for(key)(ME))["currentPerson"]["id"] == bob.id
    org.live.clock.advance(DAY_MS)
    assert await org.gql_for(key).error(ME) == "APIKeyError:InvalidKey"
    past = org.live.clock.now_ms() - 1
    assert 'Invalid argument "expire"' in await bob.gql.error(CREATE, {"e": past})


async def test_who_may_revoke_and_make_keys(org: Org) -> None:
    bob = await org.add_member("Bob")
    eve = await org.add_member("Eve", "admin")
    key = await _create(bob.gql)
    # Another person, an administrator included, cannot revoke Bob's key: it is not theirs.
    for other in (eve, org.admin):
        message = await other.gql.error(REVOKE, {"k": key})
        assert message == 'Invalid argument "key": is not one of your keys'
    assert (await org.gql_for(key)(ME))["currentPerson"]["id"] == bob.id
    # An integration key makes no keys and revokes none (a leaked one cannot outlive its
    # revocation by making another).
    as_key = org.gql_for(key)
    assert await as_key.denied(CREATE) == ["Mutation.createApiKey"]
    assert await as_key.denied(REVOKE, {"k": key}) == ["Mutation.revokeApiKey"]
    # The account's own key is reset on the account page, not revoked here.
    assert "account page" in await bob.gql.error(REVOKE, {"k": bob.apikey})
    assert (await bob.gql(ME))["currentPerson"]["id"] == bob.id
    for bad in ("", "x" * 5000, None):
        assert 'Invalid argument "key"' in await bob.gql.error(REVOKE, {"k": bad})


async def test_archived_person_integration_keys_stop_answering(org: Org) -> None:
    bob = await org.add_member("Bob")
    key = await _create(bob.gql)
    await org.admin.gql(f'mutation {{ archivePerson(id: "{bob.id}") {{ id }} }}')
    assert await org.gql_for(key).error(ME) == "APIKeyError:InvalidKey"


async def test_current_session_of_a_browser_and_of_a_key(org: Org) -> None:
    query = "{ currentSession { id csrftoken authenticated date { ts } } }"
    assert (await org.admin.gql(query))["currentSession"] is None
    async with browser(org.live) as client:
        await sign_in(org.live, client, org.admin.email)
        _page, csrf = await account(client)
        body = await gql(client, query, csrf=csrf)
        session = body["data"]["currentSession"]
        assert session["csrftoken"] == csrf and session["authenticated"] is True
        assert session["id"] and session["date"]["ts"]


async def test_validate_legacy_api_key(org: Org) -> None:
    bob = await org.add_member("Bob")
    token = (await bob.gql("mutation { issueLegacyToken }"))["issueLegacyToken"]
    validate = "mutation($k: String!) { validateLegacyApiKey(apiKey: $k) }"
    assert (await org.admin.gql(validate, {"k": token}))["validateLegacyApiKey"] is True
    for wrong in ("nope", "", bob.apikey, "y" * 10_000):
        assert (await org.admin.gql(validate, {"k": wrong}))["validateLegacyApiKey"] is False
    # An archived person's token is no longer valid.
    await org.admin.gql(f'mutation {{ archivePerson(id: "{bob.id}") {{ id }} }}')
    assert (await org.admin.gql(validate, {"k": token}))["validateLegacyApiKey"] is False
    async with unit_of_work(org.live.service.sessions) as session:
        trail = list(await session.scalars(select(AuditTrail).where(
            AuditTrail.organisation_id == org.id,
            AuditTrail.operation_name == "validateLegacyApiKey")))
    assert trail and all(token not in str(t.arguments) for t in trail)


async def test_a_revoked_key_is_refused_by_another_server_on_the_same_database(
    org: Org, tmp_path: Path
) -> None:
    """Two services on one database (two replicas): a key revoked through one is refused by
    the other at its next request (authentication reads the key's row every time)."""
    live = org.live
    data_dir = live.settings.data_dir if live.backend == "sqlite" else tmp_path
    other = await start_live_server(live.backend, data_dir, reuse_databases=live.databases)
    other.databases = []  # the first server drops them
    try:
        bob = await org.add_member("Bob")
        key = await _create(bob.gql)
        there = org.gql_for(key)
        there.url = other.graphql_url
        assert (await there(ME))["currentPerson"]["id"] == bob.id
        assert (await there(ME))["currentPerson"]["id"] == bob.id
        await bob.gql(REVOKE, {"k": key})  # through the first server
        assert await there.error(ME) == "APIKeyError:InvalidKey"
    finally:
        await stop_live_server(other)
