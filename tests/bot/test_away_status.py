"""Issue 28 in Slack: a status that says its person is away (`user_change` through the signed
Events endpoint) is recorded as that approver's absence until the status's expiration; a
cleared status clears it. With the stage's only approver away, the escalation pass DMs the
administrator with the reason, once. SQLite and PostgreSQL (the package's harness)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy import select

from tests.bot.harness import SlackHarness, SlackMember
from tests.bot.test_approvals import person_stages, text_of
from tests.mail.reviews_support import add_record, submit, wait_for
from tests.support import DAY_MS
from timebot.notify.install import jobs_of
from timebot.runtime import Runtime
from timebot.state.away import ApproverAbsence


def runtime_of(h: SlackHarness) -> Runtime:
    return h.live.app.state.runtime  # type: ignore[no-any-return]


async def recorded(h: SlackHarness, member: SlackMember) -> list[ApproverAbsence]:
    async with runtime_of(h).state_sessions() as session:
        return list(await session.scalars(select(ApproverAbsence).where(
            ApproverAbsence.approver_id == member.id)))


async def status(h: SlackHarness, member: SlackMember, text: str, emoji: str,
                 expiration: int = 0) -> None:
    answer = await h.slack.event({"type": "user_change", "user": {
        "id": member.slack_id, "is_bot": False, "profile": {
            "email": member.member.email, "status_text": text, "status_emoji": emoji,
            "status_expiration": expiration}}})
    assert answer.status_code == 200


async def test_a_vacation_status_is_an_absence_and_the_administrator_is_asked(
    h: SlackHarness
) -> None:
    owner = await h.slack_member("Sol")
    grace = await h.slack_member("Gail Hopper", "manager")
    admin_slack = "U" + uuid.uuid4().hex[:10].upper()
    h.fake.add_user(admin_slack, h.org.admin.email, name="Admin", tz="UTC", tz_offset=0)
    await person_stages(h, owner, [grace])
    await add_record(owner.member, day=1)
    sheet = await submit(owner.member)
    await h.fake.wait_for("chat.postMessage", channel=grace.slack_id)

    now = datetime.fromtimestamp(h.live.clock.now_ms() / 1000, UTC)
    back = datetime(now.year, now.month, now.day, tzinfo=UTC).timestamp() + 9 * 86_400
    await status(h, grace, "Vacationing", ":palm_tree:", int(back))
    [absence] = await wait_for(lambda: recorded(h, grace), what="the absence recorded")
    # it expires at midnight: away until the day before
    assert absence.source == "slack-status" and absence.until is not None
    assert (absence.until - now.date()).days == 8
    await status(h, grace, "Vacationing", ":palm_tree:", int(back))  # the same: no change
    assert len(await recorded(h, grace)) == 1
    # hostile: a user_change whose user is not an object is refused before any listener
    bad = await h.slack.event({"type": "user_change", "user": grace.slack_id})
    assert bad.status_code == 400
    # someone the organisation does not know records nothing
    stranger = "U" + uuid.uuid4().hex[:10].upper()
    await h.slack.event({"type": "user_change", "user": {"id": stranger, "profile": {
        "email": "nobody@elsewhere.example", "status_text": "Out of office"}}})

    h.live.clock.advance(4 * DAY_MS)  # past one working day, whatever today is
    escalator = jobs_of(runtime_of(h)).escalator
    await escalator.run(h.org.id)
    reason = f"Gail Hopper is away until {absence.until:%a %d %b %Y}"

    async def asked() -> list[str]:
        return [text_of(c) for c in h.fake.calls_to("chat.postMessage")
                if c.args.get("channel") == admin_slack and reason in text_of(c)]

    await wait_for(asked, what="the administrator's DM")
    await escalator.run(h.org.id)
    assert len(await asked()) == 1

    # Back: the status cleared clears the absence; the administrator may still decide.
    await status(h, grace, "", "")
    await wait_for(lambda: _none(h, grace), what="the absence cleared")
    approved = await h.org.admin.gql(
        "mutation($id: SvcId!) { approveTimesheet(id: $id) { status } }",
        {"id": sheet["submitId"]})
    assert approved["approveTimesheet"]["status"] == "a"


async def _none(h: SlackHarness, member: SlackMember) -> bool:
    return not await recorded(h, member)
