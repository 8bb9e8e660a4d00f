"""Issue 28 in Slack: a status that says its person is away (`user_change` through the signed
Events endpoint) is recorded as that approver's absence until the status's expiration; a
cleared status clears it. With the stage's only approver away, the escalation pass DMs the
administrator with the reason, once. SQLite and PostgreSQL (the package's harness)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from tests.bot.slack.harness import SlackHarness, SlackMember
from tests.bot.slack.test_approvals import person_stages, text_of
from tests.mail.reviews_support import add_record, submit, wait_for
from tests.support import DAY_MS
from timebot.notify.install import jobs_of
from timebot.runtime import Runtime
from timebot.state.away import ApproverAbsence

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow


def runtime_of(h: SlackHarness) -> Runtime:
    return h.live.app.state.runtime  # type: ignore[no-any-return]


async def recorded(h: SlackHarness, member: SlackMember) -> list[ApproverAbsence]:
    async with runtime_of(h).state_sessions() as session:
        return list(await session.scalars(select(ApproverAbsence).where(
            ApproverAbsence.approver_id == member.id)))


async def status(h: SlackHarness, member: SlackMember, text: str, emoji: str,
                 expiration: int = 0, tz: str = "UTC") -> None:
    answer = await h.slack.event({"type": "user_change", "user": {
        "id": member.slack_id, "is_bot": False, "tz": tz, "profile": {
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


async def test_a_status_ends_on_the_persons_own_day(h: SlackHarness) -> None:
    """A status in New York that expires at New York's midnight ends the day before there,
    not the next day (which its UTC date would say, 05:00 UTC)."""
    ned = await h.slack_member("Ned York", "manager")
    now = datetime.fromtimestamp(h.live.clock.now_ms() / 1000, ZoneInfo("America/New_York"))
    midnight = datetime(now.year, now.month, now.day, tzinfo=ZoneInfo("America/New_York"))
    back = midnight + timedelta(days=5)
    await status(h, ned, "On vacation", "", int(back.timestamp()), tz="America/New_York")
    [absence] = await wait_for(lambda: recorded(h, ned), what="the absence recorded")
    assert absence.until == back.date() - timedelta(days=1)


async def _none(h: SlackHarness, member: SlackMember) -> bool:
    return not await recorded(h, member)


async def test_the_climbing_reminder_dm_buttons_only_for_an_administrator(
    h: SlackHarness
) -> None:
    """A stage waiting twice the approval-reminder interval: Grace's people manager gets a DM
    saying who has not decided whose timesheet since when, and what she can do, without
    buttons (she may not decide); Hal has no manager: the administrator gets it with the
    Approve / Reject buttons. Once each."""
    owner = await h.slack_member("Sol Owner")
    grace = await h.slack_member("Gail Hopper", "manager")
    hal = await h.slack_member("Hal Abelson", "manager")
    mona = await h.slack_member("Mona Manager", "manager")
    if not any(u.email == h.org.admin.email for u in h.fake.users.values()):
        h.fake.add_user("U" + uuid.uuid4().hex[:10].upper(), h.org.admin.email, name="Admin")
    await h.org.admin.gql("mutation($m: SvcId!, $p: SvcId!) { makeManagerOfPerson(managerId: "
                          "$m, personId: $p) { id } }", {"m": mona.id, "p": grace.id})
    await h.org.admin.gql(
        "mutation { editOrganisationTimeSettingsApprovalReminder(approvalReminder: 1) { id } }")
    await person_stages(h, owner, [grace, hal])
    await add_record(owner.member, day=1)
    await submit(owner.member)
    await h.fake.wait_for("chat.postMessage", channel=hal.slack_id)
    h.live.clock.advance(2 * DAY_MS)
    escalator = jobs_of(runtime_of(h)).escalator
    await escalator.run(h.org.id)

    def dms(channel: str) -> list[Any]:
        """The climbing DMs to a channel; ADMIN: those about Hal (the administrator's Slack
        user is the module's, whatever this test adds)."""
        return [c for c in h.fake.calls_to("chat.postMessage") if "has not decided" in
                text_of(c) and (c.args.get("channel") == channel or (channel == ADMIN
                                and "Hal Abelson has not decided" in text_of(c)))]

    def buttons(call: Any) -> list[Any]:
        return [b for b in call.args.get("blocks") or [] if b.get("type") == "actions"]

    await wait_for(lambda: _listed(dms(mona.slack_id)), what="the manager's DM")
    await wait_for(lambda: _listed(dms(ADMIN)), what="the administrator's DM")
    [told] = dms(mona.slack_id)
    assert "Gail Hopper has not decided Sol Owner's timesheet for " in text_of(told)
    assert "You can remind Gail Hopper to decide it, or ask an administrator" in text_of(told)
    assert buttons(told) == []  # a plain manager may not decide: no buttons
    [asked] = dms(ADMIN)
    assert "Hal Abelson has not decided" in text_of(asked)
    assert "As an administrator you may decide it yourself" in text_of(asked)
    assert len(buttons(asked)) == 1
    await escalator.run(h.org.id)  # the next pass: nothing twice
    assert len(dms(mona.slack_id)) == 1 and len(dms(ADMIN)) == 1


ADMIN = "the administrator"


async def _listed(found: list[Any]) -> list[Any]:
    return found
