"""Approvers who never wrote to the bot get their cards (#42), end to end: a running timebot with
the Teams front, the fake Teams (signed activities, a Bot Connector, Microsoft Graph with tenant
tokens and proactive installation). An approver of the connected tenant with no Teams user yet
has the app installed for them through Graph (found by their e-mail, never a display name), the
chat it opens becomes theirs and the card (or a staff reminder) goes there; recorded, so it
happens once (a retry, a concurrent fan-out, another process's 409 included). A tenant without
the permission (403): no card, the review mail as before, one log line, one refused call.
SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
import structlog

from bot.teams.cards_component import cards_of
from bot.teams.component import teams_of
from bot.teams.connector import Credentials
from bot.teams.graph import GraphClient
from bot.teams.installs import TeamsInstaller
from tests.bot.teams.harness import APP_ID, PASSWORD, TeamsMember, TeamsWorld, start_teams_world
from tests.bot.teams.test_review_cards import card_of, linked, text_of
from tests.mail.reviews_support import outbox_rows, wait_for
from tests.service.test_approvals_support import add_record, submit
from tests.support import new_org
from timebot.notify.periods import week_of
from timebot.process.notifications import jobs_of


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                ) -> AsyncIterator[TeamsWorld]:
    started = await start_teams_world(request.param, tmp_path_factory.mktemp("teams-installs"),
                                      subscribed=True)
    try:
        yield started
    finally:
        await started.stop()


def installer_of(world: TeamsWorld) -> TeamsInstaller:
    cards = cards_of(world.runtime)
    assert cards is not None
    return cards.installer


def another_process(world: TeamsWorld) -> TeamsInstaller:
    """An installer as another timebot process has it (nothing remembered in memory)."""
    front = teams_of(world.runtime)
    assert front is not None
    return TeamsInstaller(front.tenants, world.runtime.directory, front.graph,
                          front.connector, front.app_id)


def calls(world: TeamsWorld, kind: str, member: TeamsMember) -> int:
    return len(world.fake.calls_to(kind, member.teams.aad_object_id))


async def submit_to(world: TeamsWorld, approvers: list[TeamsMember]) -> TeamsMember:
    owner = await world.member("Sam")
    await world.org.admin.gql(
        "mutation($id: SvcId!, $s: [SvcApprovalStageInput]) { editPersonApprovalStages("
        "id: $id, stages: $s) { id } }",
        {"id": owner.member.id, "s": [{"type": "person", "personIds": [
            a.member.id for a in approvers], "quorum": "any"}]})
    await add_record(owner.member, owner.member, day=0, hours=3)
    await submit(owner.member, owner.member)
    return owner


async def review_mail(world: TeamsWorld, member: TeamsMember) -> None:
    async def arrived() -> bool:
        return bool(await outbox_rows(world.runtime, member.member.email, "review"))

    await wait_for(arrived, what=f"the review mail to {member.member.name}")


async def test_an_approver_who_never_wrote_gets_the_card(world: TeamsWorld) -> None:
    fake = world.fake
    ann = await linked(world, "Ann")  # the tenant's connector is known from her
    bob = await world.member("Bob")  # in the tenant, never wrote to the bot
    await submit_to(world, [ann, bob])
    [card] = await fake.wait_for("send", conversation_id=bob.teams.conversation_id)
    assert card_of(card)["refresh"]["userIds"] == [bob.teams.user_id]
    assert calls(world, "install", bob) == 1
    # found by his e-mail in his own tenant, then by the object id Graph answered
    assert [c.conversation_id for c in fake.calls_to("user")][-1] == bob.member.email.lower()
    front = teams_of(world.runtime)
    assert front is not None
    user = await front.tenants.user_of_person(world.org.id, bob.member.id)
    assert user is not None and user.conversation_id == bob.teams.conversation_id
    assert user.aad_object_id == bob.teams.aad_object_id
    await review_mail(world, bob)  # the mail goes as before

    # recorded: the next card needs no Graph call
    assert await installer_of(world).reach(world.org.id, bob.member.id) == user
    assert await another_process(world).reach(world.org.id, bob.member.id) == user
    assert calls(world, "install", bob) == 1


async def test_a_fan_out_never_waits_for_the_installation(world: TeamsWorld) -> None:
    """Graph holds its answers: the linked approver's card and everyone's review mail go
    meanwhile; the card of the one who never wrote follows once Graph answers."""
    fake = world.fake
    ola = await linked(world, "Ola")
    pat = await world.member("Pat")
    fake.graph_open.clear()
    try:
        await submit_to(world, [ola, pat])
        await fake.wait_for("send", 2, conversation_id=ola.teams.conversation_id)
        await review_mail(world, pat)
        await fake.wait_for("user", conversation_id=pat.member.email.lower())
        assert fake.calls_to("send", pat.teams.conversation_id) == []
    finally:
        fake.graph_open.set()
    await fake.wait_for("send", conversation_id=pat.teams.conversation_id)
    assert calls(world, "install", pat) == 1


async def test_concurrent_fan_outs_and_another_process_install_once(world: TeamsWorld) -> None:
    fake = world.fake
    await linked(world, "Cat")
    dan, eve = await world.member("Dan"), await world.member("Eve")
    # one process, two fan-outs at once: one installation
    first, second = await asyncio.gather(*(installer_of(world).reach(world.org.id, dan.member.id)
                                           for _ in range(2)))
    assert first is not None and first == second
    assert calls(world, "install", dan) == 1
    # another process installed for Eve already: its 409 is as good, her chat found
    fake.installed.add(eve.teams.aad_object_id)
    user = await another_process(world).reach(world.org.id, eve.member.id)
    assert user is not None and user.conversation_id == eve.teams.conversation_id
    assert calls(world, "install", eve) == 1
    assert user.teams_user_id == eve.teams.user_id


async def test_without_the_permission_no_card_the_mail_goes_one_log_line(
        world: TeamsWorld) -> None:
    """Another organisation whose tenant did not grant the installation permission."""
    fake = world.fake
    installer = installer_of(world)
    beta = await new_org(world.live, world.http, "Beta")
    tenant = str(uuid.uuid4())
    assert (await world.connect(beta, tenant)).headers["location"] == "/account?done=teams"
    await world.runtime.subscriptions.ensure(beta.id)

    async def in_beta(name: str) -> TeamsMember:
        person = await beta.add_member(name)
        return TeamsMember(person, fake.add_member(tenant, person.email, name))

    kim, ian, joe = await in_beta("Kim"), await in_beta("Ian"), await in_beta("Joe")
    assert (await world.send(fake.message(kim.teams, "help"))).status_code == 202
    await fake.wait_for("send", conversation_id=kim.teams.conversation_id)
    fake.fail("install", 403)
    try:
        with structlog.testing.capture_logs() as logs:
            owner = await in_beta("Sam")
            await beta.admin.gql(
                "mutation($id: SvcId!, $s: [SvcApprovalStageInput]) { "
                "editPersonApprovalStages(id: $id, stages: $s) { id } }",
                {"id": owner.member.id, "s": [{"type": "person", "personIds": [
                    a.member.id for a in (kim, ian, joe)], "quorum": "any"}]})
            await add_record(owner.member, owner.member, day=0, hours=3)
            await submit(owner.member, owner.member)
            await fake.wait_for("send", 2, conversation_id=kim.teams.conversation_id)
            await review_mail(world, ian)
            await review_mail(world, joe)
            await installer.settled()
            # a later card (a reminder, the next request): the tenant is quiet, not asked
            assert await installer.reach(beta.id, ian.member.id) is None
            assert await installer.reach(beta.id, joe.member.id) is None
        refused = [e for e in logs if e["event"] == "teams_install_refused"]
        assert len(refused) == 1 and refused[0]["status"] == 403
        assert calls(world, "install", ian) + calls(world, "install", joe) == 1
        assert fake.calls_to("send", ian.teams.conversation_id) == []
        assert fake.calls_to("send", joe.teams.conversation_id) == []
    finally:
        fake.failures = [f for f in fake.failures if f[0] != "install"]


async def test_only_the_tenant_serving_the_organisation_is_asked(world: TeamsWorld) -> None:
    """A person whose e-mail is an account of another tenant only: Graph of this tenant does
    not know them (404), nothing is installed anywhere; a person who removed the bot is never
    installed for again."""
    await linked(world, "Lou")
    person = await world.org.add_member("Max")
    elsewhere = world.fake.add_member(str(uuid.uuid4()), person.email, "Max")
    installer = another_process(world)
    assert await installer.reach(world.org.id, person.id) is None
    assert world.fake.calls_to("install", elsewhere.aad_object_id) == []

    ned = await linked(world, "Ned")
    front = teams_of(world.runtime)
    assert front is not None
    await front.tenants.remove_user(world.tenant_id, ned.teams.aad_object_id)
    assert await installer.reach(world.org.id, ned.member.id) is None
    assert calls(world, "install", ned) == 0


async def test_a_staff_reminder_reaches_someone_who_never_wrote(world: TeamsWorld) -> None:
    scheduler = jobs_of(world.runtime).scheduler
    await scheduler.period_reminders(world.org.id)  # timebot serves the organisation from now
    await linked(world, "Pia")
    rita = await world.member("Rita")
    start, end = week_of(world.live.clock.now_ms())
    await rita.member.gql(
        "mutation($s: SvcTimestamp!, $p: SvcId!) { addTimeRecord(startTime: $s, "
        "duration: 7200000, personId: $p) { id } }", {"s": start + 9 * 3_600_000,
                                                       "p": rita.member.id})
    clock = world.live.clock
    frozen, offset = clock.frozen_ms, clock.offset_ms
    try:
        clock.frozen_ms = end + 86_400_000 + 10 * 3_600_000  # the Tuesday after the week
        await scheduler.period_reminders(world.org.id)
        [reminded] = await world.fake.wait_for("send", 1, rita.teams.conversation_id)
        assert "is not submitted yet" in text_of(card_of(reminded))
        assert calls(world, "install", rita) == 1
    finally:
        clock.frozen_ms, clock.offset_ms = frozen, offset


async def test_graph_timing_out_quiets_the_tenant_a_moment(world: TeamsWorld) -> None:
    """Graph too slow: the installation gives up (one log line), and the tenant's next
    people are not asked meanwhile (a fan-out is not one timeout per person)."""
    fake = world.fake
    front = teams_of(world.runtime)
    assert front is not None
    await linked(world, "Quin")
    ray, sue = await world.member("Ray"), await world.member("Sue")
    async with httpx.AsyncClient() as http:
        slow = GraphClient(http, front.endpoints, Credentials(APP_ID, PASSWORD),
                           timeout=httpx.Timeout(0.5))
        installer = TeamsInstaller(front.tenants, world.runtime.directory, slow,
                                   front.connector, front.app_id)
        fake.graph_open.clear()
        try:
            with structlog.testing.capture_logs() as logs:
                assert await installer.reach(world.org.id, ray.member.id) is None
                assert await installer.reach(world.org.id, sue.member.id) is None
        finally:
            fake.graph_open.set()
    assert [e["status"] for e in logs if e["event"] == "teams_install_failed"] == [0]
    assert fake.calls_to("user", sue.member.email.lower()) == []
