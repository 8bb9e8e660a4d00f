"""Review requests are decided once per event and rendered by every channel: the approver gets
the e-mail and the Slack DM from one read of the approval state and one summary; a channel
that fails does not stop the other, the event is retried, and the retry sends nothing twice;
a workflow restart asks again in a new round without ending its own new DMs."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest

from mail.channel import MailChannel
from tests.bot.slack.harness import SlackHarness, SlackMember
from tests.bot.slack.test_approvals import submitted, text_of
from tests.mail.reviews_support import outbox_rows, wait_for
from timebot.events import APPROVAL_UPDATE, ServiceEvent
from timebot.notify.approvals import APPROVAL_STATE
from timebot.notify.decisions import ReviewRequest
from timebot.notify.install import jobs_of
from timebot.notify.review_reads import STATE_AND_SUMMARY
from timebot.runtime import Runtime
from timebot.state.away import record_absence
from timebot.state.models import ReceivedEvent
from timebot.summary import SUMMARY_QUERY


def runtime_of(h: SlackHarness) -> Runtime:
    return h.live.app.state.runtime  # type: ignore[no-any-return]


async def events_of(runtime: Runtime, submit_id: str) -> list[ReceivedEvent]:
    return [row for row in await runtime.events.all() if row.data.get("submitId") == submit_id]


async def all_dispatched(runtime: Runtime, submit_id: str) -> None:
    async def done() -> bool:
        rows = await events_of(runtime, submit_id)
        return bool(rows) and all(row.status == "done" for row in rows)

    await wait_for(done, what="the submission's events dispatched")


async def quiet(h: SlackHarness) -> None:
    """Until the Slack queue is empty: whatever was queued has been called."""
    await wait_for(lambda: _empty(h), what="the Slack queue drained")


async def _empty(h: SlackHarness) -> bool:
    return await h.bot.deps.sender.pending() == 0


def posts_to(h: SlackHarness, member: SlackMember) -> int:
    return len([c for c in h.fake.calls_to("chat.postMessage")
                if c.args.get("channel") == member.slack_id])


def updates_to(h: SlackHarness, member: SlackMember) -> list[str]:
    im = "D" + member.slack_id[1:]
    return [text_of(c) for c in h.fake.calls_to("chat.update") if c.args.get("channel") == im]


async def test_one_decision_per_event_serves_mail_and_slack(
    h: SlackHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = runtime_of(h)
    reads: Counter[tuple[str, str]] = Counter()
    execute = runtime.client.execute

    async def counting(query: Any, variables: Mapping[str, Any] | None = None,
                       **kwargs: Any) -> Any:
        names = {id(APPROVAL_STATE): ("state",), id(SUMMARY_QUERY): ("summary",),
                 id(STATE_AND_SUMMARY): ("state", "summary")}
        for name in names.get(id(query), ()) if variables else ():
            reads[(name, str(variables.get("p") or variables.get("person")))] += 1
        return await execute(query, variables, **kwargs)

    monkeypatch.setattr(runtime.client, "execute", counting)
    owner, approvers, event, dms = await submitted(h, approvers=2)
    assert len(dms) == 2
    for approver in approvers:
        assert len(await outbox_rows(runtime, approver.member.email, "review")) == 1
    await all_dispatched(runtime, event["id"])
    # Both approvers, both channels: one state read and one summary, not one per channel.
    assert reads[("state", owner.id)] == 1
    assert reads[("summary", owner.id)] == 1

    # A redelivery finds every request sent on every channel: nothing read, nothing sent.
    for row in await events_of(runtime, event["id"]):
        await runtime.bus.dispatch(ServiceEvent(row.delivery_id, row.event, row.organisation_id,
                                                row.timestamp_ms, dict(row.data)))
    await quiet(h)
    assert reads[("state", owner.id)] == 1
    assert [posts_to(h, a) for a in approvers] == [1, 1]
    for approver in approvers:
        assert len(await outbox_rows(runtime, approver.member.email, "review")) == 1


async def test_a_failing_channel_stops_no_other_and_the_retry_sends_nothing_twice(
    h: SlackHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = runtime_of(h)
    [mail] = [c for c in jobs_of(runtime).reviews.channels if isinstance(c, MailChannel)]
    render = mail.review_request
    refused: list[ReviewRequest] = []

    async def fails_once(request: ReviewRequest) -> bool:
        if not refused:
            refused.append(request)
            raise ConnectionError("the outbox is unreachable")
        return await render(request)

    monkeypatch.setattr(mail, "review_request", fails_once)
    _owner, (ann,), event, dms = await submitted(h, approvers=1)
    assert len(dms) == 1 and refused  # the DM went although the e-mail failed first
    await wait_for(lambda: outbox_rows(runtime, ann.member.email, "review"),
                   what="the e-mail on the retry")
    await all_dispatched(runtime, event["id"])
    [first] = [row for row in await events_of(runtime, event["id"])
               if row.data.get("action") == "submitted"]
    assert first.attempts == 2
    await quiet(h)
    assert posts_to(h, ann) == 1
    assert len(await outbox_rows(runtime, ann.member.email, "review")) == 1


async def test_a_restart_asks_again_in_a_new_round_and_a_retry_keeps_the_new_dm(
    h: SlackHarness,
) -> None:
    runtime = runtime_of(h)
    _owner, (ann,), event, _dms = await submitted(h, approvers=1)
    await all_dispatched(runtime, event["id"])
    [submit] = await events_of(runtime, event["id"])
    restart = ServiceEvent(
        f"restart-{event['id']}", APPROVAL_UPDATE, submit.organisation_id,
        runtime.clock.now_ms(),
        {**submit.data, "action": "restarted", "by": {"id": ann.id, "name": ann.name}},
    )
    for _ in range(2):  # the event, then its retry
        await runtime.bus.dispatch(restart)
        await asyncio.sleep(0.2)
        await quiet(h)
    assert posts_to(h, ann) == 2
    [update] = updates_to(h, ann)
    assert "the approval starts again" in update
    rows = await h.bot.deps.sender.sent_with_ref(f"approval:{event['id']}:")
    assert [bool(row.context.get("outcome")) for row in rows] == [True, False]
    assert len(await outbox_rows(runtime, ann.member.email, "review")) == 2


async def test_an_away_approver_makes_the_others_dm_say_why(h: SlackHarness) -> None:
    """Issue 28: once an approver of a quorum-"any" stage is known to be away, a dispatch
    asks the other one again, in the DM too, with the reason; once."""
    runtime = runtime_of(h)
    _owner, (ann, bob), event, _dms = await submitted(h, approvers=2)
    await all_dispatched(runtime, event["id"])
    await record_absence(runtime.state_sessions, organisation_id=h.org.id, approver_id=ann.id,
                         until=None, seen_ms=runtime.clock.now_ms(), message_key="<ooo@ann>")
    for _ in range(2):
        for row in await events_of(runtime, event["id"]):
            await runtime.bus.dispatch(ServiceEvent(
                row.delivery_id, row.event, row.organisation_id, row.timestamp_ms,
                dict(row.data)))
        await quiet(h)
    assert [posts_to(h, a) for a in (ann, bob)] == [1, 2]
    again = [c for c in h.fake.calls_to("chat.postMessage")
             if c.args.get("channel") == bob.slack_id][-1]
    assert "Appr0 is away (return date unknown)" in text_of(again)
