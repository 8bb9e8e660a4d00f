"""Away approvers noticed where Teams tells it (#42), end to end: a running timebot with the
Teams front, the fake Teams (signed activities, a Bot Connector, Microsoft Graph with tenant
tokens). A review card queued for an approver has their automatic replies read from Graph in the
background (the card never waits for it); out of office is recorded as Slack's away status is,
and the escalation pass asks the other approver with the reason. Graph's failures (403, 404,
429 with Retry-After, a timeout) are "not known away", one call per tenant while refused or
throttled. SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta

import httpx
import pytest
import structlog
from sqlalchemy import select

from bot.teams.away_status import TeamsAwayStatus
from bot.teams.cards_component import TeamsCards, cards_of
from bot.teams.component import teams_of
from bot.teams.connector import Credentials
from bot.teams.graph import GraphClient
from bot.teams.graph_away import graph_away
from bot.teams.tenants import LinkedUser
from shell.demo_teams import FakeTeams
from shell.demo_teams_page import DemoTeams
from tests.bot.teams.harness import APP_ID, PASSWORD, TeamsMember, TeamsWorld, start_teams_world
from tests.bot.teams.test_review_cards import card_of, linked, submitted, text_of
from tests.mail.reviews_support import wait_for
from timebot.process.notifications import jobs_of
from timebot.state.away import ApproverAbsence


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                ) -> AsyncIterator[TeamsWorld]:
    started = await start_teams_world(request.param, tmp_path_factory.mktemp("teams-away"),
                                      subscribed=True)
    try:
        yield started
    finally:
        await started.stop()


def installed(world: TeamsWorld) -> TeamsCards:
    cards = cards_of(world.runtime)
    assert cards is not None
    return cards


async def recorded(world: TeamsWorld, member: TeamsMember) -> list[ApproverAbsence]:
    async with world.runtime.state_sessions() as session:
        return list(await session.scalars(select(ApproverAbsence).where(
            ApproverAbsence.approver_id == member.member.id)))


async def user_of(world: TeamsWorld, member: TeamsMember) -> LinkedUser:
    front = teams_of(world.runtime)
    assert front is not None
    user = await front.tenants.user_of_person(world.org.id, member.member.id)
    assert user is not None
    return user


def graph_calls(world: TeamsWorld, member: TeamsMember, kind: str) -> int:
    return len(world.fake.calls_to(kind, member.teams.aad_object_id))


def tenant_users(world: TeamsWorld, count: int) -> list[LinkedUser]:
    """Users of the tenant as Graph knows them, linked to people of no record (their absence
    is only ever cleared: nothing is written for them)."""
    fake = world.fake
    return [LinkedUser(world.tenant_id, member.aad_object_id, world.org.id,
                       uuid.uuid4().hex[:24], member.user_id, member.conversation_id,
                       fake.service_url)
            for member in (fake.add_member(world.tenant_id, f"{uuid.uuid4().hex[:8]}@example.com")
                           for _ in range(count))]


def today_utc(world: TeamsWorld) -> date:
    return datetime.fromtimestamp(world.live.clock.now_ms() / 1000, UTC).date()


async def test_an_out_of_office_approver_is_noticed_and_the_other_is_asked(
        world: TeamsWorld) -> None:
    fake = world.fake
    today = today_utc(world)

    def ann_out_of_office(approvers: list[TeamsMember]) -> None:
        fake.out_of_office(approvers[0].teams, "scheduled",
                           f"{today - timedelta(days=1)}T08:00:00",
                           f"{today + timedelta(days=5)}T00:00:00", "UTC")

    _owner, (ann, bob), _sent = await submitted(world, before=ann_out_of_office)
    away = installed(world).away
    await fake.wait_for("replies", conversation_id=bob.teams.aad_object_id)
    await away.settled()
    [absence] = await recorded(world, ann)
    # ends at midnight: the day before is the last day away (the approver's zone: UTC here)
    assert absence.source == "teams-status" and absence.until == today + timedelta(days=4)
    assert await recorded(world, bob) == []
    # the replies were read: not the presence (only when they cannot be)
    assert graph_calls(world, ann, "presence") == graph_calls(world, bob, "presence") == 0

    await jobs_of(world.runtime).escalator.run(world.org.id)
    asked = (await fake.wait_for("send", 3, conversation_id=bob.teams.conversation_id))[2]
    assert f"Appr0 is away until {absence.until:%a %d %b %Y}" in text_of(card_of(asked))
    assert "you are asked too" in text_of(card_of(asked))
    assert len(fake.calls_to("send", ann.teams.conversation_id)) == 2  # help + her card

    # the nudges' tick watches them again: cached, no second read of Graph
    before = len(fake.calls_to("replies")) + len(fake.calls_to("presence"))
    await installed(world).nudges.tick()
    await away.settled()
    assert len(fake.calls_to("replies")) + len(fake.calls_to("presence")) == before

    # back: the replies turned off clear the absence (a check now, past the cache)
    fake.out_of_office(ann.teams, "disabled")
    assert await away.check(await user_of(world, ann)) == "cleared"
    assert await recorded(world, ann) == []


async def test_a_card_never_waits_for_graph(world: TeamsWorld) -> None:
    """Graph hangs: both review cards go out while the first read of Graph is still waiting
    for its answer (it then times out, or answers: either way after the cards)."""
    fake = world.fake
    fake.graph_open.clear()
    try:
        _owner, deciders, sent = await submitted(world)
        assert len(sent) == 2
        ids = {d.teams.aad_object_id for d in deciders}

        async def asked() -> bool:
            return any(call.conversation_id in ids for call in fake.calls_to("replies"))

        await wait_for(asked, what="Graph asked")  # and not answered: the gate is closed
    finally:
        fake.graph_open.set()
    await installed(world).away.settled()


async def test_presence_alone_when_the_mailbox_permission_is_missing(world: TeamsWorld) -> None:
    """403 on the automatic replies (MailboxSettings.Read not granted): the presence still
    tells it, return date unknown; the tenant's replies are not asked again meanwhile."""
    front = teams_of(world.runtime)
    assert front is not None
    checker = TeamsAwayStatus(world.runtime, front.graph)
    cat, dan = await linked(world, "Cat"), await linked(world, "Dan")
    world.fake.presences[cat.teams.aad_object_id] = {"availability": "Offline",
                                                     "activity": "OutOfOffice"}
    world.fake.fail("replies", 403)
    with structlog.testing.capture_logs() as logs:
        assert await checker.check(await user_of(world, cat)) == "away until unknown"
        assert await checker.check(await user_of(world, dan)) == "not away"
    assert [entry["status"] for entry in logs if entry["event"] == "teams_away_not_known"] \
        == [403]
    assert graph_calls(world, dan, "replies") == 0 and graph_calls(world, dan, "presence") == 1
    [absence] = await recorded(world, cat)
    assert absence.source == "teams-status" and absence.until is None


async def test_throttled_unknown_and_slow_graph_are_not_known_away(world: TeamsWorld) -> None:
    runtime = world.runtime
    front = teams_of(runtime)
    assert front is not None
    eve, fay = await linked(world, "Eve"), await linked(world, "Fay")
    world.fake.out_of_office(eve.teams, "alwaysEnabled")
    # 429 with Retry-After: nothing recorded; the tenant's endpoint quiet for that long
    checker = TeamsAwayStatus(runtime, front.graph)
    world.fake.fail("replies", 429, eve.teams.aad_object_id)
    world.fake.fail("presence", 429, eve.teams.aad_object_id)
    assert await checker.check(await user_of(world, eve)) == "not known"
    assert await checker.check(await user_of(world, fay)) == "not known"
    assert graph_calls(world, fay, "replies") == 0 and graph_calls(world, fay, "presence") == 0
    assert await recorded(world, eve) == []
    # a user Graph does not know (404): not known
    ghost = LinkedUser(world.tenant_id, str(uuid.uuid4()), world.org.id, eve.member.id,
                       "29:ghost", None, None)
    assert await TeamsAwayStatus(runtime, front.graph).check(ghost) == "not known"
    # Graph too slow: the read gives up, not known
    async with httpx.AsyncClient() as http:
        slow = GraphClient(http, front.endpoints, Credentials(APP_ID, PASSWORD),
                           timeout=httpx.Timeout(0.5))
        world.fake.graph_open.clear()
        try:
            assert await TeamsAwayStatus(runtime, slow).check(
                await user_of(world, eve)) == "not known"
        finally:
            world.fake.graph_open.set()
    assert await recorded(world, eve) == []
    # and Graph answering again: away, return unknown
    assert await TeamsAwayStatus(runtime, front.graph).check(
        await user_of(world, eve)) == "away until unknown"


async def test_another_tenants_token_reads_nobody_here(world: TeamsWorld) -> None:
    """A Graph token is its tenant's: a user of this tenant asked with another tenant's token
    is 404 (the fake answers as Graph does), never their status."""
    runtime = world.runtime
    front = teams_of(runtime)
    assert front is not None
    gus = await linked(world, "Gus")
    world.fake.out_of_office(gus.teams, "alwaysEnabled")
    user = await user_of(world, gus)
    elsewhere = LinkedUser(str(uuid.uuid4()), user.aad_object_id, world.org.id,
                           gus.member.id, user.teams_user_id, None, None)
    assert await TeamsAwayStatus(runtime, front.graph).check(elsewhere) == "not known"
    assert await recorded(world, gus) == []


async def test_the_demo_page_sets_a_persons_automatic_replies() -> None:
    """`timebot serve --demo`'s fake Teams page: out of office for a week, then back."""
    fake = FakeTeams(APP_ID, PASSWORD)
    ann = fake.add_member(str(uuid.uuid4()), "ann@example.com", "Ann")
    demo = DemoTeams(fake, [ann], "http://127.0.0.1:1")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(demo.app()),
                                 base_url="http://127.0.0.1") as page:
        assert "Out of office for a week" in (await page.get("/")).text
        answer = await page.post("/away", data={"user": ann.user_id, "away": "on"})
        assert answer.status_code == 303
        replies = fake.auto_replies[ann.aad_object_id]
        assert replies["status"] == "scheduled"
        assert graph_away(replies, None, int(datetime.now(UTC).timestamp() * 1000) + 60_000) \
            == (True, (datetime.now(UTC) + timedelta(days=7)).date())
        await page.post("/away", data={"user": ann.user_id, "away": "off"})
        assert fake.auto_replies[ann.aad_object_id]["status"] == "disabled"


async def test_a_fan_out_asks_graph_once_per_approver_and_a_refusing_tenant_once(
        world: TeamsWorld) -> None:
    """300 approvers of the tenant watched as a review card's fan-out does, then again as the
    nudges' tick does: one read of each (their automatic replies), none the second time. A
    tenant that granted neither permission: one refused call per endpoint."""
    runtime = world.runtime
    front = teams_of(runtime)
    assert front is not None
    fake, count = world.fake, 300
    users = tenant_users(world, count)
    checker = TeamsAwayStatus(runtime, front.graph)
    before = len(fake.calls_to("replies")) + len(fake.calls_to("presence"))
    assert sum(checker.watch(user) for user in users) == count
    await checker.settled()
    assert len(fake.calls_to("replies")) + len(fake.calls_to("presence")) - before == count
    assert sum(checker.watch(user) for user in users) == 0  # the tick: cached
    await checker.settled()
    assert len(fake.calls_to("replies")) + len(fake.calls_to("presence")) - before == count

    refused = TeamsAwayStatus(runtime, front.graph)
    fake.fail("replies", 403)
    fake.fail("presence", 403)
    before = len(fake.calls_to("replies")) + len(fake.calls_to("presence"))
    with structlog.testing.capture_logs() as logs:
        for user in users:
            refused.watch(user)
        await refused.settled()
    assert len(fake.calls_to("replies")) + len(fake.calls_to("presence")) - before == 2
    assert len([e for e in logs if e["event"] == "teams_away_not_known"]) == 2


async def test_one_users_refusal_does_not_quiet_the_tenant(world: TeamsWorld) -> None:
    """Once the tenant's replies answered, a 403 is that user's (an access policy): the
    others are still read; two refusals in a row (the consent withdrawn) quiet the tenant."""
    front = teams_of(world.runtime)
    assert front is not None
    fake = world.fake
    checker = TeamsAwayStatus(world.runtime, front.graph)
    first, barred, other, d, e, f = tenant_users(world, 6)
    assert await checker.check(first) == "not away"
    fake.fail("replies", 403, barred.aad_object_id)
    assert await checker.check(barred) == "not away"  # from the presence
    assert await checker.check(other) == "not away"
    assert len(fake.calls_to("replies", other.aad_object_id)) == 1
    fake.fail("replies", 403, times=2)
    fake.fail("presence", 403, times=2)
    assert await checker.check(d) == "not known"
    assert await checker.check(e) == "not known"
    assert await checker.check(f) == "not known"
    assert fake.calls_to("replies", f.aad_object_id) == []
