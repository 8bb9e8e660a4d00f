"""Slash commands through signed requests: verification, who is who (unknown users are told how
to link, linking through the modal), `/timesheet remind`."""

from __future__ import annotations

import asyncio
import time

from tests.bot.slack.harness import SlackHarness
from tests.service.test_approvals_support import (
    WEEK,
    WEEK_END,
    add_record,
    approve,
    manage,
    state,
    submit,
)
from tests.support import DAY_MS

SET_STAGES = ("mutation($id: SvcId!, $s: [SvcApprovalStageInput]) { editPersonApprovalStages("
              "id: $id, stages: $s) { id } }")


async def test_signature_and_timestamp_window(h: SlackHarness) -> None:
    ann = await h.slack_member("Ann")
    bad = await h.slack.command("/timesheet", "", user=ann.slack_id, secret="wrong")
    assert bad.status_code == 401
    stale = await h.slack.command("/timesheet", "", user=ann.slack_id,
                                  timestamp=int(time.time()) - 6 * 60)
    assert stale.status_code == 401
    good = await h.slack.command("/timesheet", "", user=ann.slack_id,
                                 timestamp=int(time.time()) - 4 * 60)
    assert good.status_code == 200
    help_text = await h.fake.wait_for("response_url")
    assert "/timesheet remind" in help_text[0].args["text"]
    assert help_text[0].args["response_type"] == "ephemeral"


async def test_unknown_user_is_told_how_to_link(h: SlackHarness) -> None:
    h.fake.add_user("UNOBODY", "nobody@elsewhere.example", name="Nobody")
    response = await h.slack.command("/timesheet", "remind", user="UNOBODY")
    assert response.status_code == 200
    answer = (await h.fake.wait_for("response_url"))[0].args
    assert answer["response_type"] == "ephemeral"
    assert "nobody@elsewhere.example" in answer["text"] and "/timesheet link" in answer["text"]
    assert answer["blocks"][1]["elements"][0]["action_id"] == "timebot_link_open"
    h.fake.add_user("UNOMAIL", None, name="No mail")
    await h.slack.command("/timesheet", "status", user="UNOMAIL")
    answers = await h.fake.wait_for("response_url", count=2)
    assert "no e-mail" in answers[1].args["text"]


async def test_link_modal_checks_the_key(h: SlackHarness) -> None:
    ann = await h.slack_member("Ann")
    other = await h.org.add_member("Other")
    await h.slack.command("/timesheet", "link", user=ann.slack_id)
    view = (await h.fake.wait_for("views.open"))[0].args["view"]
    assert view["callback_id"] == "timebot_link"

    async def submit_key(key: str) -> dict[str, object]:
        response = await h.slack.view_submission(
            user=ann.slack_id, callback_id="timebot_link",
            values={"apikey": {"value": {"type": "plain_text_input", "value": key}}})
        assert response.status_code == 200
        return response.json() if response.content else {}

    assert (await submit_key("not-a-key"))["response_action"] == "errors"
    wrong = await submit_key(other.apikey)
    assert "belongs to" in str(wrong["errors"])
    assert await submit_key(ann.member.apikey) == {}
    confirmation = await h.fake.wait_for("chat.postMessage", channel=ann.slack_id)
    assert "Linked: you are Ann" in confirmation[0].args["text"]
    people = await h.bot.deps.runtime.directory.entries()
    mine = [p for p in people if p.person_id == ann.id]
    assert mine[0].source == "linked" and mine[0].slack_user_id == ann.slack_id


async def test_remind_nudges_only_those_who_have_not_submitted(h: SlackHarness) -> None:
    h.live.clock.set(WEEK + 3 * DAY_MS)
    mia = await h.slack_member("Mia", role="manager")
    tom = await h.slack_member("Tom")       # draft with entries: reminded
    uma = await h.slack_member("Uma")       # submitted, waiting on Mia: not reminded
    val = await h.slack_member("Val")       # approved: not reminded
    wes = await h.slack_member("Wes")       # rejected: reminded
    for person in (tom, uma, val, wes):
        await manage(h.org, mia.member, person.member)
        await add_record(person.member, person.member)
    for person in (uma, wes):
        await h.org.admin.gql(SET_STAGES, {"id": person.id,
                                           "s": [{"type": "person", "personIds": [mia.id]}]})
    await submit(uma.member, uma.member)
    await submit(val.member, val.member)
    rejected = await submit(wes.member, wes.member)
    await mia.member.gql(
        "mutation($id: SvcId!) { rejectTimesheet(id: $id, stage: 0, comment: \"no\") { id } }",
        {"id": rejected["id"]})
    assert (await state(h.org.admin, val.member))["status"] == "a"
    h.fake.reset()

    await h.slack.command("/timesheet", "remind", user=mia.slack_id)
    answer = (await h.fake.wait_for("response_url"))[0].args["text"]
    assert "Reminded 2" in answer and "Tom" in answer and "Wes" in answer
    assert "Not reminded (submitted or approved): " in answer
    assert "Uma" in answer.split("Not reminded")[1] and "Val" in answer.split("Not reminded")[1]
    dms = [(await h.fake.wait_for("chat.postMessage", channel=p.slack_id))[0]
           for p in (tom, wes)]
    sent = {c.args["channel"] for c in h.fake.calls_to("chat.postMessage")}
    assert uma.slack_id not in sent and val.slack_id not in sent
    assert "Mia reminds you" in dms[0].args["text"]
    assert dms[0].args["blocks"][1]["elements"][0]["action_id"] == "timebot_submit_now"
    # The service recorded the reminder (sendTimesheetReminder, as Mia): a Journal message.
    journal = await tom.member.gql(
        "query { getJournal { content author { id } } }")
    assert any(m["author"] and m["author"]["id"] == mia.id for m in journal["getJournal"])

    # Tom clicks "Submit now" in the DM: submitted as Tom, the DM updated in place.
    tom_dm = next(c for c in dms if c.args["channel"] == tom.slack_id)
    im = "D" + tom.slack_id[1:]
    await h.slack.action(user=tom.slack_id, action_id="timebot_submit_now",
                         value=tom_dm.args["blocks"][1]["elements"][0]["value"],
                         channel=im, ts=h.fake.by_channel[im][-1])
    update = await h.fake.wait_for("chat.update", channel=im)
    assert "Submitted your timesheet" in update[0].args["text"]
    assert (await state(h.org.admin, tom.member))["status"] == "a"

    # A second run the same day reminds nobody twice in Slack, and Tom is done now.
    await h.slack.command("/timesheet", "remind", user=mia.slack_id)
    second = (await h.fake.wait_for("response_url", count=2))[1].args["text"]
    assert "Reminded 1" in second and "Wes" in second
    await asyncio.sleep(0.5)
    wes_dms = [c for c in h.fake.calls_to("chat.postMessage")
               if c.args["channel"] == wes.slack_id and "reminds you" in str(c.args["text"])]
    assert len(wes_dms) == 1  # not twice the same day


async def test_submit_now_finds_its_dm_before_slack_s_answer_is_recorded(
    h: SlackHarness,
) -> None:
    """The button finds its DM by what was queued, not by the (channel, ts) Slack answers:
    that answer is recorded only after the call, so a prompt click must not depend on it.
    Here Tom clicks while his DM waits out a 429: it is posted, then updated in place."""
    h.live.clock.set(WEEK + 3 * DAY_MS)
    mia = await h.slack_member("Mia", role="manager")
    tom = await h.slack_member("Tom")
    await manage(h.org, mia.member, tom.member)
    await add_record(tom.member, tom.member)
    h.fake.rate_limit("chat.postMessage", times=1, retry_after=1, channel=tom.slack_id)
    await h.slack.command("/timesheet", "remind", user=mia.slack_id)
    refused = (await h.fake.wait_for("chat.postMessage", refused=True,
                                     channel=tom.slack_id))[0]
    im = "D" + tom.slack_id[1:]
    await h.slack.action(user=tom.slack_id, action_id="timebot_submit_now",
                         value=refused.args["blocks"][1]["elements"][0]["value"],
                         channel=im, ts="1699999999.000100")
    update = (await h.fake.wait_for("chat.update", channel=im))[0]
    posts = h.fake.calls_to("chat.postMessage")
    dm = [c for c in posts if c.args["channel"] == tom.slack_id]
    assert len(dm) == 1 and "Mia reminds you" in dm[0].args["text"]
    assert update.args["ts"] == h.fake.by_channel[im][-1] and update.at > dm[0].at
    assert "Submitted your timesheet" in update.args["text"]
    assert not [c for c in h.fake.calls_to("chat.postEphemeral")
                if c.args["user"] == tom.slack_id]
    assert (await state(h.org.admin, tom.member))["status"] == "a"


async def test_remind_by_someone_managing_nobody(h: SlackHarness) -> None:
    ann = await h.slack_member("Ann")
    await h.slack.command("/timesheet", "remind", user=ann.slack_id)
    answer = (await h.fake.wait_for("response_url"))[0].args["text"]
    assert answer == "You manage nobody, so there is no one to remind."
    assert WEEK_END > WEEK and approve is not None
