"""No message ever goes into another organisation's tenant, end to end: two organisations, each
with its own tenant connected and approvers linked in both. A submission in one sends cards into
its own tenant only (every call the fake Bot Connector records is to a conversation of that
tenant); a card value of one organisation's request, carried by a verified activity of the other
tenant's approver, decides nothing; a tenant serving one organisation cannot be connected to the
other; an approver who never wrote has the app installed in their own organisation's tenant only."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from bot.chat.approvals import APPROVE
from tests.bot.teams.harness import TeamsMember, TeamsWorld, start_teams_world
from tests.bot.teams.test_review_cards import action, card_of, click, decisions, text_of
from tests.service.test_approvals_support import add_record, state, submit
from tests.support import Org, new_org


@dataclass
class Side:
    org: Org
    tenant_id: str


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                ) -> AsyncIterator[TeamsWorld]:
    started = await start_teams_world(request.param, tmp_path_factory.mktemp("teams-isolation"))
    await started.live.app.state.runtime.subscriptions.ensure(started.org.id)
    try:
        yield started
    finally:
        await started.stop()


async def other_side(world: TeamsWorld) -> Side:
    org = await new_org(world.live, world.http, "Beta")
    tenant = str(uuid.uuid4())
    answer = await world.connect(org, tenant)
    assert answer.headers["location"] == "/account?done=teams", answer.text
    await world.live.app.state.runtime.subscriptions.ensure(org.id)
    return Side(org, tenant)


async def linked(world: TeamsWorld, side: Side, name: str) -> TeamsMember:
    person = await side.org.add_member(name)
    member = TeamsMember(person, world.fake.add_member(side.tenant_id, person.email, name))
    assert (await world.send(world.fake.message(member.teams, "help"))).status_code == 202
    await world.fake.wait_for("send", conversation_id=member.teams.conversation_id)
    return member


async def submitted_in(world: TeamsWorld, side: Side, approver: TeamsMember) -> TeamsMember:
    owner = await linked(world, side, "Sam")
    await side.org.admin.gql(
        "mutation($id: SvcId!, $s: [SvcApprovalStageInput]) { editPersonApprovalStages("
        "id: $id, stages: $s) { id } }",
        {"id": owner.member.id, "s": [{"type": "person", "personIds": [approver.member.id],
                                       "quorum": "any"}]})
    await add_record(owner.member, owner.member, day=0, hours=3)
    await submit(owner.member, owner.member)
    return owner


def tenants_written_to(world: TeamsWorld, since: int) -> set[str]:
    by_conversation = {m.conversation_id: m.tenant_id for m in world.fake.members.values()}
    return {by_conversation.get(call.conversation_id, f"unknown:{call.conversation_id}")
            for call in world.fake.calls[since:] if call.kind in ("send", "update")}


async def test_a_submission_writes_into_its_own_tenant_only(world: TeamsWorld) -> None:
    home = Side(world.org, world.tenant_id)
    beta = await other_side(world)
    ann = await linked(world, home, "Ann")
    bea = await linked(world, beta, "Bea")
    before = len(world.fake.calls)
    owner = await submitted_in(world, home, ann)
    cards = await world.fake.wait_for("send", 2, conversation_id=ann.teams.conversation_id)
    assert "submitted the timesheet" in text_of(card_of(cards[1]))
    assert tenants_written_to(world, before) == {world.tenant_id}
    assert len(world.fake.calls_to("send", bea.teams.conversation_id)) == 1  # her help answer

    # Bea, verified in Beta's tenant, clicks with the card's own value (even naming Ann): refused
    data = action(card_of(cards[1]), APPROVE)["data"]
    for forged in (data, {**data, "approverId": ann.member.id}):
        answer = await click(world, bea, APPROVE, forged)
        assert answer.status_code == 200
        # Beta's key cannot read Ann's request: to Bea it is waiting for nothing
        assert "no longer waiting for approval" in text_of(answer.json()["value"])
    assert (await state(world.org.admin, owner.member))["status"] == "s"
    assert await decisions(world, owner) == []
    assert tenants_written_to(world, before) <= {world.tenant_id, beta.tenant_id}
    assert not [c for c in world.fake.calls[before:] if c.kind == "update"
                and c.conversation_id == bea.teams.conversation_id]

    # Beta's tenant cannot be connected to the first organisation, nor taken back by it
    assert (await world.connect(world.org, beta.tenant_id)).status_code == 409
    assert (await world.connect(beta.org, world.tenant_id)).status_code == 409


async def test_each_organisations_submission_stays_in_its_tenant(world: TeamsWorld) -> None:
    beta = await other_side(world)
    bea = await linked(world, beta, "Bea")
    before = len(world.fake.calls)
    owner = await submitted_in(world, beta, bea)
    await world.fake.wait_for("send", 2, conversation_id=bea.teams.conversation_id)
    assert tenants_written_to(world, before) == {beta.tenant_id}
    assert (await state(beta.org.admin, owner.member))["status"] == "s"


async def test_an_approver_who_never_wrote_is_installed_for_in_their_tenant_only(
        world: TeamsWorld) -> None:
    """Cid of Beta never wrote to the bot; an account with his e-mail exists in the first
    organisation's tenant too. Graph is asked with Beta's token only, the app installed for
    his account there, his card written into Beta's tenant only."""
    fake = world.fake
    beta = await other_side(world)
    await linked(world, beta, "Bea")  # Beta's connector known
    cid = await beta.org.add_member("Cid")
    cid_beta = fake.add_member(beta.tenant_id, cid.email, "Cid")
    cid_home = fake.add_member(world.tenant_id, cid.email, "Cid")
    before = len(fake.calls)
    await submitted_in(world, beta, TeamsMember(cid, cid_beta))
    await fake.wait_for("send", conversation_id=cid_beta.conversation_id)
    graph = [c for c in fake.calls[before:]
             if c.kind in ("user", "catalog", "install", "installed", "chat")]
    assert graph and {fake.graph_tokens[c.token] for c in graph} == {beta.tenant_id}
    assert cid_beta.aad_object_id in fake.installed
    assert cid_home.aad_object_id not in fake.installed
    assert tenants_written_to(world, before) == {beta.tenant_id}
