"""The controls under Teams approver nudges and digests, end to end (a running timebot with the
Teams front, the fake Teams signing the activities): Snooze 1 hour, Until tomorrow and Turn
nudges off under every nudge and digest card, a click answered with the same card saying what
was chosen in the clicker's language, for the user the token names only; the nudge loop
honours them (snoozed: nothing until the snooze ends, then what fell due; off: nothing until
`timesheet nudges on`); the same invoke twice gives the same answer; a stale card's control
works."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from bot.chat.approvals import APPROVE
from bot.chat.approve_all import APPROVE_ALL
from bot.chat.nudges import NUDGES_OFF, SNOOZE
from bot.teams.cards_component import cards_of
from bot.teams.nudges import TeamsNudges
from tests.bot.teams.harness import TeamsMember, TeamsWorld, start_teams_world
from tests.bot.teams.test_review_cards import (
    action,
    card_of,
    frozen_days_later,
    linked,
    submitted,
    text_of,
)
from tests.service.test_approvals_support import add_record, submit
from timebot.notify.approvals import DIGEST, set_preference

HOUR = 3_600_000
CARD = "application/vnd.microsoft.card.adaptive"
TOMORROW = f"{SNOOZE}_tomorrow"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                ) -> AsyncIterator[TeamsWorld]:
    started = await start_teams_world(request.param, tmp_path_factory.mktemp("teams-nudge"))
    runtime = started.live.app.state.runtime
    await runtime.subscriptions.ensure(started.org.id)
    # The tests tick the nudges themselves: the loop, on the clock the tests move, would too.
    await nudges_of(started).stop()
    clock = started.live.clock
    frozen, offset = clock.frozen_ms, clock.offset_ms
    try:
        yield started
    finally:
        clock.frozen_ms, clock.offset_ms = frozen, offset
        await started.stop()


def nudges_of(world: TeamsWorld) -> TeamsNudges:
    cards = cards_of(world.live.app.state.runtime)
    assert cards is not None
    return cards.nudges


def invoke(world: TeamsWorld, who: TeamsMember, verb: str, data: dict[str, Any]
           ) -> dict[str, Any]:
    """An Action.Execute invoke as Teams sends it from `who`'s personal chat (sent with
    `world.send`, signed each time: Teams' retry is the same activity again)."""
    activity = world.fake.message(who.teams, "")
    activity.pop("text")
    activity.update({"type": "invoke", "name": "adaptiveCard/action",
                     "id": uuid.uuid4().hex[:16], "value": {
                         "action": {"type": "Action.Execute", "verb": verb, "data": data},
                         "trigger": "manual"}})
    return activity


async def answered(world: TeamsWorld, activity: dict[str, Any]) -> dict[str, Any]:
    response: httpx.Response = await world.send(activity)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def controlled(card: dict[str, Any]) -> bool:
    return any(node.get("verb") == SNOOZE for block in card.get("body") or []
               for node in block.get("actions") or [])


async def nudged(world: TeamsWorld, who: TeamsMember) -> list[dict[str, Any]]:
    """The nudge and digest cards (those with the controls) sent to `who` so far, once the
    proactive sender sent what was queued."""
    outbox = cards_of(world.live.app.state.runtime).outbox  # type: ignore[union-attr]
    for _ in range(600):
        if await outbox.pending() == 0:
            break
        await asyncio.sleep(0.05)
    return [card_of(call) for call in world.fake.calls_to("send", who.teams.conversation_id)
            if call.body.get("attachments") and controlled(card_of(call))]


async def typed(world: TeamsWorld, who: TeamsMember, text: str) -> str:
    """What the bot answers `text` written to it in `who`'s personal chat."""
    before = len(world.fake.calls_to("send", who.teams.conversation_id))
    assert (await world.send(world.fake.message(who.teams, text))).status_code == 202
    calls = await world.fake.wait_for("send", before + 1,
                                      conversation_id=who.teams.conversation_id)
    return str(calls[before].body.get("text"))


def at(world: TeamsWorld, ms: int) -> None:
    world.live.clock.frozen_ms = ms


async def test_snooze_waits_off_holds_until_nudges_on_and_nobody_else_changes_them(
        world: TeamsWorld) -> None:
    nudges = nudges_of(world)
    _owner, (bob,), _sent = await submitted(world, approvers=1)
    eve = await linked(world, "Eve")  # same organisation, another person
    frozen_days_later(world, 3)
    first_at = world.live.clock.now_ms()
    await nudges.tick()
    [nudge] = await nudged(world, bob)
    assert text_of(nudge).startswith("Reminder: the timesheet of Sam for ")
    assert [action(nudge, verb)["title"] for verb in (SNOOZE, TOMORROW, NUDGES_OFF)] == [
        "Snooze 1 hour", "Until tomorrow", "Turn nudges off"]
    assert action(nudge, APPROVE)  # still the nudge it was

    # Eve clicks Bob's card (a forged or forwarded invoke): nothing changes for Bob
    refused = await answered(world, invoke(world, eve, NUDGES_OFF,
                                           action(nudge, NUDGES_OFF)["data"]))
    assert refused["type"] == "application/vnd.microsoft.activity.message"
    assert "sent to someone else: nothing changed" in refused["value"]

    # a day later the second nudge is due; Bob snoozes from the first card (stale by a day)
    second_due = first_at + 24 * HOUR
    at(world, second_due)
    snooze = invoke(world, bob, SNOOZE, action(nudge, SNOOZE)["data"])
    answer = await answered(world, snooze)
    assert answer["type"] == CARD
    shown = answer["value"]
    assert text_of(shown).startswith("Reminder: the timesheet of Sam for ")
    assert "Nudges snoozed until" in text_of(shown) and action(shown, APPROVE)
    at(world, second_due + 10 * 60_000)
    assert await answered(world, snooze) == answer  # Teams' retry: the same, nothing moved
    await nudges.tick()
    at(world, second_due + HOUR - 1)
    await nudges.tick()
    assert len(await nudged(world, bob)) == 1  # snoozed: nothing
    at(world, second_due + HOUR)
    await nudges.tick()  # the snooze ended (and Eve's click turned nothing off): it goes
    [_first, second] = await nudged(world, bob)
    assert text_of(second).startswith("Reminder: the timesheet of Sam for ")

    # off: nothing however long it waits, until `timesheet nudges on`
    off = invoke(world, bob, NUDGES_OFF, action(second, NUDGES_OFF)["data"])
    answer = await answered(world, off)
    assert ("Approval nudges are off; `/timesheet nudges on` to resume."
            in text_of(answer["value"]))
    assert await answered(world, off) == answer
    at(world, second_due + 10 * 24 * HOUR)
    await nudges.tick()
    assert len(await nudged(world, bob)) == 2
    assert await typed(world, bob, "timesheet nudges on") == "Approval nudges are on."
    await nudges.tick()
    [_first, _second, third] = await nudged(world, bob)
    assert text_of(third).startswith("Reminder: the timesheet of Sam")

    # decided from the nudge, its control still works: the outcome, and what was chosen
    decided = await answered(world, invoke(world, bob, APPROVE, action(third, APPROVE)["data"]))
    assert "Approved by Appr0" in text_of(decided["value"])
    late = await answered(world, invoke(world, bob, SNOOZE, action(third, SNOOZE)["data"]))
    assert "Approved by Appr0" in text_of(late["value"])
    assert "Nudges snoozed until" in text_of(late["value"])


async def test_the_digest_carries_them_in_the_readers_language(world: TeamsWorld) -> None:
    runtime = world.live.app.state.runtime
    nudges = nudges_of(world)
    fanny = await world.member("Fanny French", "manager")
    await world.org.admin.gql(
        "mutation($id: SvcId!) { editPersonLang(id: $id, lang: \"fr\") { id } }",
        {"id": fanny.member.id})
    await world.send(world.fake.message(fanny.teams, "aide"))
    await world.fake.wait_for("send", conversation_id=fanny.teams.conversation_id)
    await set_preference(runtime, world.org.id, fanny.member.id, DIGEST)
    for n in range(2):
        owner = await world.member(f"Digest Owner{n}")
        await world.org.admin.gql(
            "mutation($id: SvcId!, $s: [SvcApprovalStageInput]) { editPersonApprovalStages("
            "id: $id, stages: $s) { id } }",
            {"id": owner.member.id, "s": [{"type": "person",
                                           "personIds": [fanny.member.id]}]})
        await add_record(owner.member, owner.member, day=0, hours=2)
        await submit(owner.member, owner.member)
    await world.fake.wait_for("send", 3, conversation_id=fanny.teams.conversation_id)
    frozen_days_later(world, 3)
    digest_day = world.live.clock.now_ms()
    await nudges.tick()
    [digest] = await nudged(world, fanny)
    assert action(digest, APPROVE_ALL)
    assert [action(digest, verb)["title"] for verb in (SNOOZE, TOMORROW, NUDGES_OFF)] == [
        "Reporter d\u2019une heure", "Jusqu\u2019\u00e0 demain", "Désactiver les relances"]
    answer = await answered(world, invoke(world, fanny, TOMORROW,
                                          action(digest, TOMORROW)["data"]))
    assert "Relances reportées jusqu'à " in text_of(answer["value"])
    assert action(answer["value"], APPROVE_ALL)  # the digest as it was, and what was chosen
    off = await answered(world, invoke(world, fanny, NUDGES_OFF,
                                       action(digest, NUDGES_OFF)["data"]))
    said = text_of(off["value"])
    assert "Les relances d'approbation sont désactivées ; `/timesheet nudges on`" in said
    assert "Relances reportées" not in said  # one line: the last choice
    at(world, digest_day + 24 * HOUR)
    await nudges.tick()
    assert await nudged(world, fanny) == [digest]  # off: no digest the next day
    assert await typed(world, fanny, "/timesheet nudges on") == (
        "Les relances d'approbation sont activées.")
    await nudges.tick()
    [_digest, today] = await nudged(world, fanny)
    assert action(today, APPROVE_ALL)  # the day's digest goes


async def test_a_control_timebot_did_not_write_is_refused(world: TeamsWorld) -> None:
    ann = await linked(world, "Ann Odd")
    for data in ({"value": "forever"}, {"value": '["1h", 7]'}, {}):
        answer = await answered(world, invoke(world, ann, SNOOZE, data))
        assert answer["statusCode"] == 400
