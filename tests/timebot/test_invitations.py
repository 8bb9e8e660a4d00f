"""Inviting people over GraphQL (invitePersons, getInvitation, join) on SQLite and PostgreSQL:
the invitation mail reaches the Maildir outbox with a link; following it joins as the
invited person (GraphQL and the page); reuse, an expired or replaced link, the wrong role
and the rate limits are refused; 1,000 people are invited in one call. Also the accounts of
an address (getAccounts, lookupEmail, checkEmailExists)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, update

from plumbing.db import unit_of_work
from service.models import Person, Role
from service.organisation.account_models import ServiceMail
from service.organisation.provisioning import new_person
from service.people.invitations import INVITATION_COOKIE, INVITATION_VALID_MS
from service.rate_limit import INVITING_PEOPLE
from tests.support import Org, new_org
from tests.timebot.joining_support import (
    GET_INVITATION,
    INVITE,
    JOIN,
    invitation_link,
    maildir_files,
    wait_for_mail,
)
from tests.timebot.signin_support import account, browser, gql
from tests.timebot.test_signin import ME

ADD_PERSON = ("mutation($n: SvcName!, $e: SvcEmail!, $r: SvcId!) { "
              "addPerson(name: $n, email: $e, roleId: $r) { id email } }")
TRAILS = ('query($o: [String]) { getAuditTrails(operations: $o) { operationName '
          'person { id } arguments { name value } } }')
SUBJECT = "invites you to"


async def _role(org: Org, name: str) -> str:
    roles = (await org.admin.gql("{ getRoles { id name } }"))["getRoles"]
    return next(r["id"] for r in roles if r["name"] == name)


async def _add(org: Org, name: str, role: str = "Employee") -> dict[str, Any]:
    email = f"{name.lower()}.{org.id}@example.com"
    data = await org.admin.gql(ADD_PERSON, {"n": name, "e": email, "r": await _role(org, role)})
    person: dict[str, Any] = data["addPerson"]
    return person


async def test_the_mail_link_joins_once_as_the_invited_person(org: Org) -> None:
    live = org.live
    live.clock.set(live.clock.now_ms())
    bob = await _add(org, "Bob")
    nomail = await _add(org, "Nomail")
    async with unit_of_work(live.service.sessions) as session:  # e.g. an imported person
        await session.execute(update(Person).where(Person.id == nomail["id"]).values(email=""))
    result = (await org.admin.gql(INVITE, {"ids": [bob["id"], org.admin.id, nomail["id"]]})
              )["invitePersons"]
    assert [i["email"] for i in result["invited"]] == [bob["email"]]
    assert result["invited"][0]["organisation"] == {"id": org.id}
    assert result["invited"][0]["expiration"]["ts"] == live.clock.now_ms() + INVITATION_VALID_MS
    assert result["alreadyInOrg"] == [{"id": org.admin.id}]
    assert result["noEmail"] == [{"id": nomail["id"]}]
    text = await wait_for_mail(live, bob["email"], SUBJECT)
    assert "Ada Admin invites you to track your time with Acme" in text
    path, invitation_id, token = invitation_link(text)
    assert invitation_id == result["invited"][0]["id"]
    assert text.startswith("Hello Bob,") and f"{live.base_url}/join/" in text

    async with browser(live) as client:
        # Without the link's cookie nothing joins (the id alone is no secret).
        refused = await gql(client, JOIN, {"o": org.id, "i": invitation_id})
        assert "open the link of the invitation e-mail" in refused["errors"][0]["message"]
        page = await client.get(path)
        assert page.status_code == 200 and "Join Acme" in page.text and bob["email"] in page.text
        assert INVITATION_COOKIE in client.cookies
        # Another organisation's id with this invitation: not valid.
        wrong = await gql(client, JOIN, {"o": "0" * 24, "i": invitation_id})
        assert "not valid" in wrong["errors"][0]["message"]
        joined = (await gql(client, JOIN, {"o": org.id, "i": invitation_id}))["data"]["join"]
        assert joined["person"] == {"id": bob["id"], "name": "Bob"}
        assert joined["organisation"] == {"id": org.id} and joined["tookOverBy"] is None
        _html, csrf = await account(client)
        assert (await gql(client, ME, csrf=csrf))["data"] == {"currentPerson": {"id": bob["id"]}}
    # Used: the link's page says so, and joining again with its token is refused.
    async with browser(live) as other:
        again = await other.get(path)
        assert again.status_code == 410 and "used already" in again.text
        other.cookies.set(INVITATION_COOKIE, token)
        reused = await gql(other, JOIN, {"o": org.id, "i": invitation_id})
        assert reused["data"] is None and "used already" in reused["errors"][0]["message"]
    # Bob is in now; both operations are in the audit trail, the join under Bob.
    again_result = (await org.admin.gql(INVITE, {"ids": [bob["id"]]}))["invitePersons"]
    assert again_result["invited"] == [] and again_result["alreadyInOrg"] == [{"id": bob["id"]}]
    trail = (await org.admin.gql(TRAILS, {"o": ["invitePersons", "join"]}))["getAuditTrails"]
    assert {(t["operationName"], t["person"]["id"]) for t in trail} >= {
        ("invitePersons", org.admin.id), ("join", bob["id"])}
    assert all(token not in str(t["arguments"]) for t in trail)


async def test_the_page_joins_and_expired_or_replaced_links_are_refused(org: Org) -> None:
    live = org.live
    carol, dan = await _add(org, "Carol"), await _add(org, "Dan")
    await org.admin.gql(INVITE, {"ids": [carol["id"], dan["id"]]})
    path, _id, _token = invitation_link(await wait_for_mail(live, carol["email"], SUBJECT))
    async with browser(live) as client:
        page = await client.get(path)
        form_action = path.split("?")[0]
        posted = await client.post(form_action, data={"organisationId": org.id},
                                   headers={"origin": live.base_url})
        assert posted.status_code == 303 and posted.headers["location"] == "/account"
        html, _csrf = await account(client)
        assert "Carol" in html
        assert page.status_code == 200
    async with browser(live) as client:  # a form posted from another site
        await client.get(path)
        cross = await client.post(form_action, data={"organisationId": org.id},
                                  headers={"origin": "https://evil.example"})
        assert cross.status_code == 403

    first = await wait_for_mail(live, dan["email"], SUBJECT)
    _old, old_id, old_token = invitation_link(first)
    await org.admin.gql(INVITE, {"ids": [dan["id"]]})  # a new invitation voids the first
    new_path, new_id, new_token = invitation_link(
        await wait_for_mail(live, dan["email"], SUBJECT, frozenset({first})))
    async with browser(live) as client:
        client.cookies.set(INVITATION_COOKIE, old_token)
        replaced = await gql(client, JOIN, {"o": org.id, "i": old_id})
        assert "replaced by a newer one" in replaced["errors"][0]["message"]
    live.clock.advance(INVITATION_VALID_MS + 60_000)
    async with browser(live) as client:
        assert (await client.get(new_path)).status_code == 410
        client.cookies.set(INVITATION_COOKIE, new_token)
        expired = await gql(client, JOIN, {"o": org.id, "i": new_id})
        assert expired["data"] is None and "expired" in expired["errors"][0]["message"]
    async with browser(live) as client:  # a made-up token
        assert (await client.get(f"/join/{new_id}?token=forged")).status_code == 404


async def test_the_wrong_role_is_refused(org: Org) -> None:
    bob_member = await org.add_member("Bob")
    bob = {"id": bob_member.id}
    eve = await org.add_member("Eve", role="employee")
    mona = await org.add_member("Mona", role="manager")
    for member in (eve, mona):
        assert await member.gql.denied(INVITE, {"ids": [bob["id"]]}) == ["Mutation.invitePersons"]
    # The people permission invites people, but not an administrator.
    grants = [{"name": "people", "view": ["all"], "manage": ["all"]}]
    role = (await org.admin.gql(
        "mutation($a: [SvcAuthorisationInput]!) { addRole(name: \"HR\", authorisations: $a) "
        "{ id } }", {"a": grants}))["addRole"]["id"]
    pia = await org.add_member("Pia")
    await org.admin.gql("mutation($id: SvcId!, $r: SvcId!) { editPersonRole(id: $id, "
                        "roleId: $r) { id } }", {"id": pia.id, "r": role})
    assert await pia.gql.denied(INVITE, {"ids": [org.admin.id]}) == ["Mutation.invitePersons"]
    invited = (await pia.gql(INVITE, {"ids": [bob["id"]]}))["invitePersons"]["invited"]
    # getInvitation: the inviters and the invited person; not another employee.
    invitation = invited[0]["id"]
    assert (await org.admin.gql(GET_INVITATION, {"id": invitation}))["getInvitation"]["id"] \
        == invitation
    mine = (await bob_member.gql(GET_INVITATION, {"id": invitation}))["getInvitation"]
    assert mine["email"] == bob_member.email
    assert await eve.gql.denied(GET_INVITATION, {"id": invitation}) == ["Query.getInvitation"]
    # A non-admin with the people permission sees the invitations of the organisation too.
    assert (await pia.gql(GET_INVITATION, {"id": invitation}))["getInvitation"]["id"] \
        == invitation
    assert 'Invalid argument "id"' in await org.admin.gql.error(
        GET_INVITATION, {"id": "0" * 24})
    # Hostile lists: named by their index, nothing sent.
    assert 'Invalid argument "ids[1]"' in await org.admin.gql.error(
        INVITE, {"ids": [bob["id"], bob["id"]]})
    assert 'Invalid argument "ids[0]"' in await org.admin.gql.error(INVITE, {"ids": [None]})
    other = await org.admin.gql.error(INVITE, {"ids": ["f" * 24]})
    assert 'Invalid argument "ids[0]": no person' in other


async def test_rate_limits_name_the_limit_and_1000_people_are_invited_in_one_call(
    org: Org,
) -> None:
    live = org.live
    bob = await _add(org, "Bob")
    for _ in range(3):  # three invitations a day per person
        await org.admin.gql(INVITE, {"ids": [bob["id"]]})
    refused = await org.admin.gql.error(INVITE, {"ids": [bob["id"]]})
    assert refused.startswith("Rate limit: inviting people is allowed at most 3 invitations "
                              "a day per invited person")

    # A large organisation: 1,001 people (the operator's import), 1,000 invited at once
    # (an hour later: Bob's three count in the hour's 1,000).
    live.clock.advance(3_600_000 + 1000)
    now = live.clock.now_ms()
    employee = await _role(org, "Employee")
    async with unit_of_work(live.service.sessions) as session:
        role = await session.get(Role, employee)
        assert role is not None
        people = [new_person(org.id, f"Person {index:04d}", f"p{index}.{org.id}@example.com",
                             role, now) for index in range(1001)]
        session.add_all(people)
        await session.flush()
        ids = [p.id for p in people]
    started = time.perf_counter()
    result = (await org.admin.gql(INVITE, {"ids": ids[:1000]}))["invitePersons"]
    call_seconds = time.perf_counter() - started
    assert len(result["invited"]) == 1000
    over = await org.admin.gql.error(INVITE, {"ids": ids[1000:]})
    assert over == (f"Rate limit: inviting people is allowed at most {INVITING_PEOPLE.per_person} "
                    "invitations an hour per person; try again later")
    # Every mail is handed to timebot's outbox and delivered (here: to the Maildir).
    handed = 0
    for _ in range(1200):
        async with live.service.sessions() as session:
            handed = int(await session.scalar(select(func.count()).select_from(ServiceMail)
                         .where(ServiceMail.organisation_id == org.id,
                                ServiceMail.handed_ms.is_not(None))) or 0)
        if handed >= 1003:
            break
        await asyncio.sleep(0.05)
    handed_seconds = time.perf_counter() - started
    assert handed == 1003
    text = await wait_for_mail(live, f"p999.{org.id}@example.com", SUBJECT)
    assert "/join/" in text
    outbox = live.settings.outbox_dir
    delivered: list[Path] = []
    for _ in range(1200):
        delivered = maildir_files(outbox, f".{org.id}@example.com")
        if len(delivered) >= 1003:
            break
        await asyncio.sleep(0.1)
    delivered_seconds = time.perf_counter() - started
    assert len(delivered) == 1003
    for path in delivered:  # the session's other tests read this Maildir: keep it small
        path.unlink()
    print(f"\n[{live.backend}] invitePersons(1000): {call_seconds:.2f} s; the 1,000 mails in "
          f"timebot's outbox after {handed_seconds:.2f} s, delivered after "
          f"{delivered_seconds:.2f} s")
    # An hour later the limit has room again.
    live.clock.advance(3_600_000 + 1000)
    assert len((await org.admin.gql(INVITE, {"ids": ids[1000:]}))["invitePersons"]["invited"]) == 1


async def test_the_accounts_of_an_address(org: Org) -> None:
    eve = await org.add_member("Eve", role="employee")
    accounts = "query($e: SvcEmail!) { getAccounts(email: $e) { id email organisationName " \
               "organisationId timestamp { ts } hasPasskey } }"
    mine = (await eve.gql(accounts, {"e": eve.email.upper()}))["getAccounts"]
    assert [(a["organisationId"], a["email"], a["hasPasskey"]) for a in mine] == [
        (org.id, eve.email, False)]
    # Another address's organisations are nobody else's business, an admin's included.
    assert await org.admin.gql.denied(accounts, {"e": eve.email}) == ["Query.getAccounts"]
    lookup = "query($e: SvcEmail!) { lookupEmail(email: $e, checkExternal: true) { " \
             "accounts { organisationId } redirectUrl } }"
    assert (await eve.gql(lookup, {"e": eve.email}))["lookupEmail"] == {
        "accounts": [{"organisationId": org.id}], "redirectUrl": None}
    assert await eve.gql.denied(lookup, {"e": org.admin.email}) == ["Query.lookupEmail"]
    exists = "query($e: SvcEmail!) { checkEmailExists(email: $e) }"
    assert (await eve.gql(exists, {"e": org.admin.email}))["checkEmailExists"] is True
    assert (await eve.gql(exists, {"e": f"nobody.{org.id}@example.com"}))[
        "checkEmailExists"] is False
    elsewhere = await new_org(org.live, org.http, "Globex")
    assert (await eve.gql(exists, {"e": elsewhere.admin.email}))["checkEmailExists"] is False
    assert (await elsewhere.admin.gql(exists, {"e": elsewhere.admin.email}))[
        "checkEmailExists"] is True
