"""A Journal message timebot posted into the thread of an approval DM follows its edits and
its deletion (editMessage, deleteMessage through GraphQL; the service's webhook events; the
Slack sender's chat.update / chat.delete on the fake Slack); an approver who turned Slack
(push) off gets no review DM."""

from __future__ import annotations

from tests.bot.slack.harness import SlackHarness
from tests.bot.slack.test_approvals import person_stages, submitted
from tests.mail.reviews_support import settle
from tests.service.test_approvals_support import add_record, submit

ADD = ("mutation($c: SvcMessageContent!, $r: SvcReferenceInput!) { addMessage(content: $c, "
       "reference: $r) { id } }")
EDIT = ("mutation($id: SvcId!, $c: SvcMessageContent!) { editMessage(id: $id, content: $c) "
        "{ id } }")
DELETE = "mutation($id: SvcId!) { deleteMessage(id: $id) { id } }"
CATEGORIES = ("mentions", "managedEntityMentions", "assignedEntityMentions", "approvalUpdate",
              "budgetAlert")
NOTIFY = ("mutation($id: SvcId!, $n: SvcNotificationSettingsInput) { "
          "editPersonNotificationSettings(id: $id, notification: $n) { id } }")


async def test_an_edited_message_is_updated_in_the_thread_and_a_deleted_one_removed(
    h: SlackHarness,
) -> None:
    owner, (ann,), event, _dms = await submitted(h, approvers=1)
    im = "D" + ann.slack_id[1:]
    reference = {"id": event["id"], "type": "approvalEvent"}
    added = await owner.member.gql(ADD, {"c": "Tuesday was training", "r": reference})
    message_id = added["addMessage"]["id"]
    [post] = await h.fake.wait_for("chat.postMessage", channel=im, text=(
        "*Sam* wrote in the Journal:\nTuesday was training"))
    ts = h.fake.by_channel[im][-1]
    assert h.fake.messages[(im, ts)]["thread_ts"] == post.args["thread_ts"]

    # Ann may not edit Sam's message; Sam edits it: the post in the thread is updated.
    assert await ann.member.gql.denied(EDIT, {"id": message_id, "c": "x"}) == [
        "Mutation.editMessage"]
    await owner.member.gql(EDIT, {"id": message_id, "c": "Tuesday was a workshop"})
    [update] = await h.fake.wait_for("chat.update", channel=im, ts=ts)
    assert update.args["text"] == ("*Sam* wrote in the Journal:\nTuesday was a workshop"
                                   "\n_(edited)_")
    assert h.fake.messages[(im, ts)]["text"] == update.args["text"]

    # The workflow's own entries are not edited, not even by an administrator.
    thread = await h.org.admin.gql("query($r: SvcReferenceInput!) { getMessages(of: $r) "
                                   "{ id type } }", {"r": reference})
    entry = next(m for m in thread["getMessages"] if m["type"] != "message")
    refused = await h.org.admin.gql.error(EDIT, {"id": entry["id"], "c": "rewritten"})
    assert "cannot be edited" in refused, refused

    # An administrator deletes it: the post is removed from the thread.
    await h.org.admin.gql(DELETE, {"id": message_id})
    await h.fake.wait_for("chat.delete", channel=im, ts=ts)
    assert (im, ts) not in h.fake.messages
    assert len(h.fake.calls_to("chat.update")) == 1


async def test_an_approver_with_slack_off_gets_no_review_dm(h: SlackHarness) -> None:
    sam = await h.slack_member("Sam")
    quiet = await h.slack_member("Quinn")
    other = await h.slack_member("Otto")
    await person_stages(h, sam, [quiet, other])
    settings = {c: {"frequency": "instant"} for c in CATEGORIES}
    await quiet.member.gql(NOTIFY, {"id": quiet.member.id, "n": {**settings, "push": False}})
    events = len([e for e in await h.live.app.state.runtime.events.all()
                  if e.organisation_id == h.org.id and e.event != "settingsUpdate"])
    await add_record(sam.member, sam.member, day=0, hours=3)
    await submit(sam.member, sam.member)
    await h.fake.wait_for("chat.postMessage", channel=other.slack_id)
    await settle(h.live.app.state.runtime, h.org.id, events + 1)
    assert h.fake.calls_to("chat.postMessage") and not [
        c for c in h.fake.calls_to("chat.postMessage")
        if c.args.get("channel") in (quiet.slack_id, "D" + quiet.slack_id[1:])]
