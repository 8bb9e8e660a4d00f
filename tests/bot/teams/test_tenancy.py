"""Tenants and users: an organisation connects its Microsoft 365 tenant from /account (admin
consent), one tenant serves one organisation, a user is matched inside their tenant's
organisation only, and a user who removed the bot is sent nothing more."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.teams.component import teams_of
from tests.bot.teams.harness import TeamsWorld, start_teams_world
from tests.support import new_org, start_live_server, stop_live_server
from tests.timebot.signin_support import browser, sign_in


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def world(request: pytest.FixtureRequest,
                tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[TeamsWorld]:
    started = await start_teams_world(request.param,
                                      tmp_path_factory.mktemp(f"teams-{request.param}"))
    try:
        yield started
    finally:
        await started.stop()


async def test_the_account_page_offers_the_connection_to_administrators_only(
        world: TeamsWorld) -> None:
    employee = await world.org.add_member("Eve Employee")
    async with browser(world.live) as admin, browser(world.live) as other:
        await sign_in(world.live, admin, world.org.admin.email)
        page = (await admin.get("/account")).text
        link = re.search(r'href="(/teams/connect\?[^"]+)"', page)
        assert link is not None and world.tenant_id in page
        assert "The Microsoft 365 tenant is connected" in (
            await admin.get("/account?done=teams")).text
        await sign_in(world.live, other, employee.email)
        assert "/teams/connect" not in (await other.get("/account")).text
        refused = await other.get(link.group(1).replace("&amp;", "&"))
        assert refused.status_code == 403


async def test_a_state_of_another_session_forged_or_missing_connects_nothing(
        world: TeamsWorld) -> None:
    other_org = await new_org(world.live, world.http, "Other")
    world.fake.consent_tenant = str(uuid.uuid4())
    async with browser(world.live) as admin, browser(world.live) as thief:
        await sign_in(world.live, admin, other_org.admin.email)
        started = await admin.get(f"/teams/connect?organisation={other_org.id}")
        back = (await world.http.get(started.headers["location"])).headers["location"]
        path = back.removeprefix(world.live.settings.public_url)
        await sign_in(world.live, thief, world.org.admin.email)
        assert (await thief.get(path)).status_code == 401
        forged = re.sub(r"state=[^&]+", "state=eyJvIjoiYSJ9.00", path)
        assert (await admin.get(forged)).status_code == 401
        assert (await admin.get(path.split("&state=")[0])).status_code == 401
    front = teams_of(world.live.app.state.runtime)
    assert front is not None
    assert await front.tenants.tenant(world.fake.consent_tenant) is None


async def test_a_tenant_serves_one_organisation(world: TeamsWorld) -> None:
    other_org = await new_org(world.live, world.http, "Beta")
    taken = await world.connect(other_org, world.tenant_id)
    assert taken.status_code == 409
    # The organisation already connected cannot take a second tenant either.
    assert (await world.connect(world.org, str(uuid.uuid4()))).status_code == 409
    # A user of Beta's own tenant, whose e-mail is a person of the first organisation, is not
    # that person: matched in Beta only.
    beta_tenant = str(uuid.uuid4())
    assert (await world.connect(other_org, beta_tenant)).headers["location"] == \
        "/account?done=teams"
    person = await world.org.add_member("Ann Acme")
    lookalike = world.fake.add_member(beta_tenant, person.email, "Ann Acme")
    assert (await world.send(world.fake.message(lookalike, "1h @x"))).status_code == 202
    sent = await world.fake.wait_for("send", conversation_id=lookalike.conversation_id)
    assert "don't know" in str(sent[0].body["text"])
    front = teams_of(world.live.app.state.runtime)
    assert front is not None
    assert await front.tenants.user(beta_tenant, lookalike.aad_object_id) is None


async def test_removing_the_bot_stops_sending_to_that_user(world: TeamsWorld) -> None:
    member = await world.member("Rob Remove")
    assert (await world.send(world.fake.message(member.teams, "help"))).status_code == 202
    await world.fake.wait_for("send", conversation_id=member.teams.conversation_id)
    front = teams_of(world.live.app.state.runtime)
    assert front is not None
    linked = await front.tenants.user_of_person(world.org.id, member.member.id)
    assert linked is not None and linked.conversation_id == member.teams.conversation_id
    uninstall = {**world.fake.message(member.teams, ""), "type": "installationUpdate",
                 "action": "remove"}
    uninstall.pop("text")
    assert (await world.send(uninstall)).status_code == 202
    for _ in range(100):
        if await front.tenants.user_of_person(world.org.id, member.member.id) is None:
            break
        await asyncio.sleep(0.05)
    assert await front.tenants.user_of_person(world.org.id, member.member.id) is None
    # Written to again (installed again): matched again.
    assert (await world.send(world.fake.message(member.teams, "help"))).status_code == 202
    await world.fake.wait_for("send", 2, member.teams.conversation_id)
    assert await front.tenants.user_of_person(world.org.id, member.member.id) is not None


async def test_without_teams_app_id_there_is_no_teams_endpoint(tmp_path: Path) -> None:
    live = await start_live_server("sqlite", tmp_path)
    try:
        async with browser(live) as client:
            answer = await client.post("/teams/messages", json={"type": "message"})
            assert answer.status_code == 404
            assert (await client.get("/teams/connect?organisation=x")).status_code == 404
    finally:
        await stop_live_server(live)


async def test_hostile_consent_callbacks_are_answered_without_a_5xx(world: TeamsWorld) -> None:
    async with browser(world.live) as admin:
        await sign_in(world.live, admin, world.org.admin.email)
        for state in ("", "\U0001f642.\u202e", "a.b.c", "%00", "x" * 5000, "e30.00"):
            for tenant in ("", "\x00", "../..", "t" * 500, world.tenant_id):
                answer = await admin.get("/teams/consent", params={
                    "state": state, "tenant": tenant, "admin_consent": "True"})
                assert answer.status_code in (200, 401), (state[:20], tenant[:20])
