"""Review cards ⇄ the timesheet's Journal in Teams, end to end: a message replying to a review
card becomes a Journal message written as its verified author; Journal messages written
elsewhere are posted into the conversation of the card, as replies to it, once each, and the
Teams author's own message is not echoed back."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.teams.cards_component import cards_of
from tests.bot.teams.harness import TeamsWorld, start_teams_world
from tests.bot.teams.test_review_cards import submitted

MESSAGES = ("query($r: SvcReferenceInput!) { getMessages(of: $r) { content type "
            "author { id } } }")
ADD = ("mutation($c: SvcMessageContent!, $r: SvcReferenceInput!) { addMessage(content: $c, "
       "reference: $r) { id } }")


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                ) -> AsyncIterator[TeamsWorld]:
    started = await start_teams_world(request.param, tmp_path_factory.mktemp("teams-journal"))
    await started.live.app.state.runtime.subscriptions.ensure(started.org.id)
    try:
        yield started
    finally:
        await started.stop()


async def submit_id_of(world: TeamsWorld, conversation_id: str) -> str:
    cards = cards_of(world.live.app.state.runtime)
    assert cards is not None
    rows = [r for r in await cards.outbox.with_ref("approval:")
            if r.conversation_id == conversation_id]
    return str(rows[-1].context["submitId"])


async def journal(world: TeamsWorld, reference: dict[str, str], content: str
                  ) -> list[dict[str, Any]]:
    for _ in range(100):
        found = [m for m in (await world.org.admin.gql(MESSAGES, {"r": reference}))[
            "getMessages"] if m["content"] == content]
        if found:
            return found
        await asyncio.sleep(0.05)
    return []


async def test_a_reply_to_the_card_is_a_journal_message_and_others_come_back(
        world: TeamsWorld) -> None:
    owner, (ann,), (card,) = await submitted(world, approvers=1)
    conversation = ann.teams.conversation_id
    reference = {"id": await submit_id_of(world, conversation), "type": "approvalEvent"}
    asked = world.fake.message(ann.teams, "Why 5 hours on Tuesday?",
                               replyToId=card.activity_id)
    assert (await world.send(asked)).status_code == 202
    answer = (await world.fake.wait_for("send", 3, conversation_id=conversation))[2]
    assert "Added to the timesheet's Journal" in str(answer.body["text"])
    written = await journal(world, reference, "Why 5 hours on Tuesday?")
    assert written and written[0]["author"]["id"] == ann.member.id

    # Sam answers twice elsewhere (the web, an e-mail reply): replies to the card, in order
    for n in range(2):
        await owner.member.gql(ADD, {"c": f"Answer <{n}>", "r": reference})
    posts = (await world.fake.wait_for("send", 5, conversation_id=conversation))[3:]
    assert [p.body.get("replyToId") for p in posts] == [card.activity_id] * 2
    assert "**Sam** wrote in the Journal" in str(posts[0].body["text"])
    assert "Answer \\<0\\>" in str(posts[0].body["text"])  # escaped as Markdown
    assert "Answer \\<1\\>" in str(posts[1].body["text"])
    await asyncio.sleep(0.5)
    sent = world.fake.calls_to("send", conversation)
    assert len(sent) == 5  # once each
    assert not any("Why 5 hours" in str(call.body.get("text")) for call in sent)


async def test_a_message_replying_to_no_card_of_ours_is_quick_entry(world: TeamsWorld) -> None:
    _owner, (ann,), _cards = await submitted(world, approvers=1)
    conversation = ann.teams.conversation_id
    reference = {"id": await submit_id_of(world, conversation), "type": "approvalEvent"}
    other = world.fake.message(ann.teams, "help", replyToId="1:not-ours")
    assert (await world.send(other)).status_code == 202
    answer = (await world.fake.wait_for("send", 3, conversation_id=conversation))[2]
    assert "Journal" not in str(answer.body["text"])
    assert "Write me an entry" in str(answer.body["text"])
    assert await journal(world, reference, "help") == []
