"""Threads of approval DMs ⇄ the timesheet's Journal; the App Home tab; delivery within
Slack's rate limits (429 with Retry-After, one message per second per channel)."""

from __future__ import annotations

import asyncio
import itertools
import time

from tests.bot.slack.harness import SlackHarness
from tests.bot.slack.test_approvals import buttons, person_stages, submitted
from tests.service.test_approvals_support import WEEK, add_record, submit
from tests.support import DAY_MS

MESSAGES = ("query($r: SvcReferenceInput!) { getMessages(of: $r) { content type "
            "author { id } } }")
ADD = ("mutation($c: SvcMessageContent!, $r: SvcReferenceInput!) { addMessage(content: $c, "
       "reference: $r) { id } }")


async def test_thread_replies_become_journal_messages_and_back(h: SlackHarness) -> None:
    h.fake.enforce_channel_rate(1.0)
    try:
        owner, (ann,), event, _dms = await submitted(h, approvers=1)
        im = "D" + ann.slack_id[1:]
        request_ts = h.fake.by_channel[im][-1]
        reference = {"id": event["id"], "type": "approvalEvent"}
        # Ann answers in the thread of the request DM: a Journal message, written as Ann.
        response = await h.slack.event({
            "type": "message", "channel": im, "channel_type": "im", "user": ann.slack_id,
            "text": "Why 5 hours on Tuesday?", "ts": f"{time.time():.6f}",
            "thread_ts": request_ts})
        assert response.status_code == 200
        for _ in range(100):
            thread = (await h.org.admin.gql(MESSAGES, {"r": reference}))["getMessages"]
            mine = [m for m in thread if m["content"] == "Why 5 hours on Tuesday?"]
            if mine:
                break
            await asyncio.sleep(0.05)
        assert mine and mine[0]["author"]["id"] == ann.id
        # Sam answers three times elsewhere (the web, an e-mail reply): posted into the thread,
        # one per second at most, and Ann's own message is not echoed back.
        for n in range(3):
            await owner.member.gql(ADD, {"c": f"Answer {n}", "r": reference})
        posts = await h.fake.wait_for("chat.postMessage", count=3, seconds=15, channel=im)
        in_thread = [p for p in posts if p.args.get("thread_ts") == request_ts]
        assert [p.args["text"].split("\n")[1] for p in in_thread] == [
            "Answer 0", "Answer 1", "Answer 2"]
        assert "Sam* wrote in the Journal" in in_thread[0].args["text"]
        assert not any("Why 5 hours" in str(p.args.get("text"))
                       for p in h.fake.calls_to("chat.postMessage"))
        gaps = [b.at - a.at for a, b in itertools.pairwise(in_thread)]
        assert all(gap >= 0.95 for gap in gaps), gaps
        assert h.fake.rate_limited == []
    finally:
        h.fake.enforce_channel_rate(None)


async def test_rate_limited_calls_wait_for_retry_after_and_are_not_dropped(
    h: SlackHarness,
) -> None:
    h.fake.rate_limit("chat.postMessage", times=2, retry_after=1)
    started = time.monotonic()
    _owner, (ann, bob), _event, dms = await submitted(h)
    assert len(h.fake.rate_limited) == 2
    assert {d.args["channel"] for d in dms} == {ann.slack_id, bob.slack_id}
    assert len(h.fake.calls_to("chat.postMessage")) == 2  # each delivered once
    assert time.monotonic() - started >= 1.0  # Retry-After was waited out


async def test_home_tab_shows_the_week_and_what_waits(h: SlackHarness) -> None:
    h.live.clock.set(WEEK + 2 * DAY_MS)
    sam = await h.slack_member("Sam")
    ann = await h.slack_member("Ann")
    await person_stages(h, sam, [ann])
    await add_record(sam.member, sam.member, day=0, hours=3)
    await add_record(sam.member, sam.member, day=1, hours=5)
    event = await submit(sam.member, sam.member)
    # The request DM is out before Ann decides on Home: deciding there updates it in place.
    # (A DM still queued when the decision lands is rewritten before it goes, no update.)
    await h.fake.wait_for("chat.postMessage", channel=ann.slack_id)
    await h.slack.event({"type": "app_home_opened", "user": sam.slack_id, "tab": "home",
                         "channel": "D" + sam.slack_id[1:]})
    home = (await h.fake.wait_for("views.publish", user_id=sam.slack_id))[0].args["view"]
    text = "\n".join(str((b.get("text") or {}).get("text", "")) for b in home["blocks"])
    assert "Mon 02 Mar: 3h" in text and "Tue 03 Mar: 5h" in text
    # No schedule is set: the service's default week of Monday to Friday, 8 hours a day.
    assert "Total 8h of 40h expected" in text
    assert "Submitted, waiting for approval" in text
    assert not any(b["type"] == "actions" for b in home["blocks"])
    await h.slack.event({"type": "app_home_opened", "user": ann.slack_id, "tab": "home",
                         "channel": "D" + ann.slack_id[1:]})
    view = (await h.fake.wait_for("views.publish", user_id=ann.slack_id))[0].args["view"]
    waiting = [b for b in view["blocks"] if b["type"] == "actions"]
    assert len(waiting) == 1
    assert set(buttons_of(waiting[0])) == {"timebot_approve", "timebot_reject"}
    assert event["id"] in buttons_of(waiting[0])["timebot_approve"]
    # The Home button decides like the DM's.
    await h.slack.action(user=ann.slack_id, action_id="timebot_approve",
                         value=buttons_of(waiting[0])["timebot_approve"],
                         view={"id": "VHOME", "type": "home"})
    update = await h.fake.wait_for("chat.update")
    assert "Approved by Ann" in update[0].args["text"]
    # The Home tab is published again: nothing waits any more.
    again = (await h.fake.wait_for("views.publish", user_id=ann.slack_id, count=2))[1]
    assert not any(b["type"] == "actions" for b in again.args["view"]["blocks"])


def buttons_of(block: dict[str, object]) -> dict[str, str]:
    elements = block.get("elements")
    assert isinstance(elements, list)
    return {e["action_id"]: e["value"] for e in elements}


assert buttons is not None


async def test_home_tab_shows_the_time_off_left(h: SlackHarness) -> None:
    h.live.clock.set(WEEK + 2 * DAY_MS)  # Wednesday 4 March 2026
    tia = await h.slack_member("Tia")
    gql = h.org.admin.gql
    vacation = (await gql('mutation { addAbsenceType(name: "Vacation") { id } }'))[
        "addAbsenceType"]["id"]
    await gql(f'mutation {{ editAbsenceTypeAccrualEnabled(id: "{vacation}", isEnabled: true)'
              " { id } }")
    await gql(f'mutation {{ editAbsenceTypeAccrualQuantity(id: "{vacation}", quantity: 2)'
              " { id } }")
    await gql("mutation($p: SvcId!, $a: SvcId!) { addPersonAbsenceQuota(personId: $p,"
              " absenceId: $a, startTime: 1767225600000, endTime: 1798761600000, available: 3,"
              " recurrent: true) { id } }", {"p": tia.member.id, "a": vacation})
    await tia.member.gql(
        "mutation($p: SvcId!, $a: SvcId!) { addTimeRecord(personId: $p, absenceId: $a,"
        f" startTime: {WEEK}, duration: {8 * 3_600_000}) {{ id }} }}",
        {"p": tia.member.id, "a": vacation})
    await h.slack.event({"type": "app_home_opened", "user": tia.slack_id, "tab": "home",
                         "channel": "D" + tia.slack_id[1:]})
    home = (await h.fake.wait_for("views.publish", user_id=tia.slack_id))[0].args["view"]
    text = "\n".join(str((b.get("text") or {}).get("text", "")) for b in home["blocks"])
    # 3 available + 2 on the 1st of January, February and March - 1 day taken
    assert "*Time off:* Vacation left: 8 days (until 31 Dec 2026)" in text
    assert "Mon 02 Mar: 8h" in text


async def test_home_tab_leaves_out_time_off_the_person_may_not_use(h: SlackHarness) -> None:
    h.live.clock.set(WEEK + 2 * DAY_MS)
    uma = await h.slack_member("Uma")
    gql = h.org.admin.gql
    kinds = {}
    for name in ("Vacation", "Training"):
        kinds[name] = (await gql("mutation($n: SvcName!) { addAbsenceType(name: $n) { id } }",
                                 {"n": name}))["addAbsenceType"]["id"]
        await gql("mutation($p: SvcId!, $a: SvcId!) { addPersonAbsenceQuota(personId: $p,"
                  " absenceId: $a, startTime: 1767225600000, endTime: 1798761600000,"
                  " available: 3) { id } }", {"p": uma.member.id, "a": kinds[name]})
    # Uma is excluded from Training (its list, with every type shown by default).
    await gql("mutation($p: SvcId!, $a: SvcId!) { assignAbsenceTypeToPerson(personId: $p,"
              " absenceTypeId: $a) { id } }", {"p": uma.member.id, "a": kinds["Training"]})
    await h.slack.event({"type": "app_home_opened", "user": uma.slack_id, "tab": "home",
                         "channel": "D" + uma.slack_id[1:]})
    home = (await h.fake.wait_for("views.publish", user_id=uma.slack_id))[0].args["view"]
    text = "\n".join(str((b.get("text") or {}).get("text", "")) for b in home["blocks"])
    assert "*Time off:* Vacation left: 3 days (until 31 Dec 2026)" in text
    assert "Training" not in text
