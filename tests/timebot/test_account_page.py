"""GET /account over HTTP: the API key (Reset revokes the old one), the legacy token, the
sessions list (Revoke), notification preferences, "Sign in as ..." recorded in the audit
trail under the administrator, the account's deletion; every form refused without its CSRF
token or from another origin."""

from __future__ import annotations

import re

from tests.support import Org
from tests.timebot.signin_support import account, browser, gql, sign_in

ME = "{ currentPerson { id } }"
AUDIT = """query($ops: [String]) { getAuditTrails(operations: $ops) {
  operationName person { id } arguments { name value } } }"""


def _key_on(page: str) -> str:
    match = re.search(r'id="apikey" class="secret" type="text" readonly value="([0-9a-f]+)"', page)
    assert match, "no API key on the page"
    return match.group(1)


async def test_reset_key_revokes_the_old_one_and_forms_need_csrf_and_origin(org: Org) -> None:
    async with browser(org.live) as client:
        await sign_in(org.live, client, org.admin.email)
        page, csrf = await account(client)
        old = _key_on(page)
        assert old == org.admin.apikey
        # Without the token, with a wrong one, or from another origin: nothing changes.
        for data, headers in [
            ({}, {}),
            ({"csrf": "0" * 64}, {}),
            ({"csrf": csrf}, {"origin": "http://evil.example"}),
        ]:
            refused = await client.post("/account/api-key/reset", data=data, headers=headers)
            assert refused.status_code == 403, refused.text
            assert "nothing was changed" in refused.text
        assert (await org.admin.gql(ME))["currentPerson"]["id"] == org.admin.id
        done = await client.post(
            "/account/api-key/reset", data={"csrf": csrf}, headers={"origin": org.live.base_url}
        )
        assert done.status_code == 303 and done.headers["location"] == "/account?done=key"
        page, _ = await account(client)
        new = _key_on(page)
        assert new != old
        assert await org.admin.gql.error(ME) == "APIKeyError:InvalidKey"
        assert (await org.gql_for(new)(ME))["currentPerson"]["id"] == org.admin.id


async def test_legacy_token_get_a_new_one(org: Org) -> None:
    async with browser(org.live) as client:
        await sign_in(org.live, client, org.admin.email)
        page, csrf = await account(client)
        shown = re.search(
            r'id="legacy-token" class="secret" type="text" readonly value="(\w+)"', page
        )
        assert shown
        old = shown.group(1)
        assert (await org.admin.gql("{ legacyToken }"))["legacyToken"] == old
        done = await client.post("/account/legacy-token/reset", data={"csrf": csrf})
        assert done.status_code == 303
        page, _ = await account(client)
        new = (await org.admin.gql("{ legacyToken }"))["legacyToken"]
        assert new != old and new in page and old not in page
        refused = await client.post(
            "/api/v2", json={"service": "company.list"}, auth=(old, "x")
        )
        assert refused.status_code == 401


async def test_sessions_are_listed_and_revocable(org: Org) -> None:
    async with browser(org.live) as first, browser(org.live) as second:
        await sign_in(org.live, first, org.admin.email)
        await sign_in(org.live, second, org.admin.email)
        page, csrf = await account(first)
        ids = re.findall(r'<tr data-session="(\w+)">', page)
        assert len(ids) == 2
        current = re.search(r'<tr data-session="(\w+)">\s*<td>[^<]*<strong>\(this browser\)', page)
        assert current
        other = next(value for value in ids if value != current.group(1))
        done = await first.post(
            "/account/sessions/revoke", data={"csrf": csrf, "session_id": other}
        )
        assert done.status_code == 303
        assert (await second.get("/account")).headers["location"] == "/signin"
        assert (await first.get("/account")).status_code == 200
        # Someone else's session id is not found (and changes nothing).
        bad = await first.post("/account/sessions/revoke",
                               data={"csrf": csrf, "session_id": "f" * 24})
        assert bad.status_code == 400 and "sessionId" in bad.text


async def test_takeover_is_recorded_under_the_admin_and_stop_ends_it(org: Org) -> None:
    bob = await org.add_member("Bob Builder")
    await org.add_member("Carol Cook")
    async with browser(org.live) as client:
        await sign_in(org.live, client, org.admin.email)
        page, csrf = await account(client)
        assert "Sign in as…" in page
        found = await client.get("/account", params={"q": "bob"})
        assert "Bob Builder" in found.text and "Carol Cook" not in found.text
        done = await client.post("/account/takeover", data={"csrf": csrf, "target_id": bob.id})
        assert done.status_code == 303, done.text
        page, csrf = await account(client)
        assert "you are signed in as <strong>Bob Builder</strong>" in page
        assert org.admin.apikey not in page and bob.apikey not in page
        body = await gql(client, "{ currentPerson { id } }", csrf=csrf)
        assert body["data"]["currentPerson"]["id"] == bob.id
        # Still the administrator who acts: a takeover from a takeover is theirs too.
        again = await gql(client, "mutation($t: SvcId!) { startTakeover(targetId: $t) "
                          "{ person { id } tookOverBy { id name } } }", {"t": bob.id}, csrf=csrf)
        assert again["data"]["startTakeover"]["tookOverBy"]["id"] == org.admin.id
        stop = await client.post("/account/takeover/stop", data={"csrf": csrf})
        assert stop.status_code == 303
        page, csrf = await account(client)
        assert "you are signed in as" not in page and org.admin.apikey in page
    trail = (await org.admin.gql(AUDIT, {"ops": ["startTakeover", "stopTakeover"]}))
    entries = trail["getAuditTrails"]
    assert {entry["operationName"] for entry in entries} == {"startTakeover", "stopTakeover"}
    assert all(entry["person"]["id"] == org.admin.id for entry in entries)
    started = next(e for e in entries if e["operationName"] == "startTakeover")
    assert {"name": "targetId", "value": bob.id} in started["arguments"]


async def test_only_admins_take_over_and_see_admin_panels(org: Org) -> None:
    bob = await org.add_member("Bob Builder")
    async with browser(org.live) as client:
        await sign_in(org.live, client, bob.email)
        page, csrf = await account(client)
        assert "Sign in as…" not in page and "Delete the account" not in page
        refused = await client.post(
            "/account/takeover", data={"csrf": csrf, "target_id": org.admin.id}
        )
        assert refused.status_code == 400 and "not allowed" in refused.text
        assert (await gql(client, ME, csrf=csrf))["data"]["currentPerson"]["id"] == bob.id


async def test_notification_preferences_and_deletion(org: Org) -> None:
    async with browser(org.live) as client:
        await sign_in(org.live, client, org.admin.email)
        page, csrf = await account(client)
        assert 'value="instant" checked' in page
        bad = await client.post("/account/notifications", data={"csrf": csrf, "mail": "hourly"})
        assert bad.status_code == 400 and '"mail"' in bad.text
        done = await client.post("/account/notifications", data={"csrf": csrf, "mail": "digest"})
        assert done.status_code == 303
        page, csrf = await account(client)
        assert 'value="digest" checked' in page
        scheduled = await client.post("/account/deletion",
                                      data={"csrf": csrf, "action": "schedule"})
        assert scheduled.status_code == 303
        page, csrf = await account(client)
        assert "Cancel the deletion" in page
        data = await org.admin.gql("{ currentOrganisation { scheduledDeletion { by { id } } } }")
        assert data["currentOrganisation"]["scheduledDeletion"]["by"]["id"] == org.admin.id
        kept = await client.post("/account/deletion", data={"csrf": csrf, "action": "cancel"})
        assert kept.status_code == 303
        data = await org.admin.gql("{ currentOrganisation { scheduledDeletion { at } } }")
        assert data["currentOrganisation"]["scheduledDeletion"] is None
