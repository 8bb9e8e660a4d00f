"""Slack in the person's language and formats (#24), over the signed events endpoint with the
fake Slack Web API: a German person who chose DD.MM.YYYY and h:mm reads the App Home tab, the
review DMs and their outcome and the Friday nudge in German; the default (nothing chosen)
stays English."""

from __future__ import annotations

from typing import Any

from tests.bot.slack.fake_slack import Call
from tests.bot.slack.harness import SlackHarness, SlackMember
from tests.bot.slack.test_approvals import person_stages, text_of
from tests.bot.slack.test_nudges import settle
from tests.bot.slack.test_time_commands import ADD_ALLOWANCE, BERLIN_2026, BERLIN_2027
from tests.service.test_approvals_support import WEEK, add_record, approve, submit
from tests.support import DAY_MS, HOUR_MS

GERMAN = """mutation($id: SvcId!) {
  editPersonLang(id: $id, lang: "de") { id }
  editPersonLocalisationDateFormat(id: $id, dateFormat: "DD.MM.YYYY") { id }
  editPersonTimeSettingsDurationFormat(id: $id, durationFormat: 0) { id }
}"""


def home_text(view: dict[str, Any]) -> str:
    return "\n".join(str((b.get("text") or {}).get("text", "")) for b in view["blocks"])


async def test_home_speaks_german_in_the_persons_formats(h: SlackHarness) -> None:
    h.live.clock.set(WEEK + 2 * DAY_MS)
    hans = await h.slack_member("Hans")
    await h.org.admin.gql(GERMAN, {"id": hans.id})
    await add_record(hans.member, hans.member, day=0, hours=3)
    await add_record(hans.member, hans.member, day=1, hours=5)
    await h.slack.event({"type": "app_home_opened", "user": hans.slack_id, "tab": "home",
                         "channel": "D" + hans.slack_id[1:]})
    view = (await h.fake.wait_for("views.publish", user_id=hans.slack_id))[0].args["view"]
    text = home_text(view)
    assert view["blocks"][0]["text"]["text"] == "Diese Woche (Mo. 02.03.2026 bis So. 08.03.2026)"
    assert "Mo. 02.03.2026: 3:00" in text and "Di. 03.03.2026: 5:00" in text
    assert "*Gesamt 8:00 von 40:00 erwartet*" in text
    assert "*Stundenzettel:* Entwurf (nicht eingereicht)" in text
    assert "This week" not in text and "Total" not in text


async def test_an_unknown_language_reads_english(h: SlackHarness) -> None:
    h.live.clock.set(WEEK + 2 * DAY_MS)
    pia = await h.slack_member("Pia")
    await h.org.admin.gql('mutation($id: SvcId!) { editPersonLang(id: $id, lang: "it") { id } }',
                          {"id": pia.id})
    await h.slack.event({"type": "app_home_opened", "user": pia.slack_id, "tab": "home",
                         "channel": "D" + pia.slack_id[1:]})
    view = (await h.fake.wait_for("views.publish", user_id=pia.slack_id))[0].args["view"]
    assert view["blocks"][0]["text"]["text"].startswith("This week (Mon 02 Mar")
    assert "*Timesheet:* Draft (not submitted)" in home_text(view)


async def test_review_dms_and_their_outcome_in_each_approvers_language(h: SlackHarness) -> None:
    sam = await h.slack_member("Sam")
    hans = await h.slack_member("Hans")
    ann = await h.slack_member("Ann")
    await h.org.admin.gql(GERMAN, {"id": hans.id})
    await person_stages(h, sam, [hans, ann])
    await add_record(sam.member, sam.member, day=0, hours=3)
    event = await submit(sam.member, sam.member)
    [to_hans] = await h.fake.wait_for("chat.postMessage", channel=hans.slack_id)
    [to_ann] = await h.fake.wait_for("chat.postMessage", channel=ann.slack_id)
    german, english = text_of(to_hans), text_of(to_ann)
    assert ("*Sam* hat den Stundenzettel für *Mo. 02.03.2026 bis So. 08.03.2026* eingereicht "
            "(Genehmigung).") in german
    assert "*Gesamt 3:00*" in german and "*Pro Tag:* Mo. 02.03.2026 3:00" in german
    assert labels(to_hans) == ["Genehmigen", "Ablehnen"]
    assert "*Sam* submitted the timesheet for *Mon 02 Mar - Sun 08 Mar 2026* (approval)." \
        in english and "*Total 3h*" in english
    assert labels(to_ann) == ["Approve", "Reject"]
    # Ann decides: Hans's message becomes the outcome, in German.
    await approve(ann.member, event["submitId"])
    updates = [text_of(call) for call in await h.fake.wait_for("chat.update", count=2)]
    assert any("Genehmigt von Ann am" in text for text in updates), updates
    assert any("Approved by Ann at" in text for text in updates), updates


def labels(call: Call) -> list[str]:
    return [element["text"]["text"] for block in call.args.get("blocks") or []
            for element in block.get("elements") or [] if element.get("type") == "button"]


async def test_the_staff_nudge_speaks_german(h: SlackHarness) -> None:
    """The Friday nudge (and its "Submit now" button) in the person's language and dates;
    an English reader's stays as it was."""
    h.live.clock.set(WEEK + 4 * DAY_MS + 16 * HOUR_MS + 30 * 60_000)  # Friday 16:30 UTC
    greta = await h.slack_member("Greta")
    ed = await h.slack_member("Ed")
    await h.org.admin.gql(GERMAN, {"id": greta.id})
    await add_record(greta.member, greta.member)
    await add_record(ed.member, ed.member)
    h.bot.nudges.discover_every = 0  # match the workspace's members to people on every tick
    await h.bot.nudges.tick()
    await settle(h)

    def nudges(who: SlackMember) -> list[Call]:
        return [c for c in h.fake.calls_to("chat.postMessage")
                if c.args["channel"] == who.slack_id and any(
                    block.get("block_id") == "submit" for block in c.args.get("blocks") or [])]

    [german] = nudges(greta)
    assert german.args["text"] == ("Die Woche endet: Ihr Stundenzettel für Mo. 02.03.2026 bis "
                                   "So. 08.03.2026 ist noch nicht eingereicht.")
    assert "Jetzt einreichen" in str(german.args["blocks"])
    [english] = nudges(ed)
    assert english.args["text"] == ("The week is ending: your timesheet for Mon 02 Mar - "
                                    "Sun 08 Mar 2026 is not submitted yet.")
    assert "'Submit now'" in str(english.args["blocks"])


async def test_home_waiting_approvals_and_time_off_in_the_persons_formats(
    h: SlackHarness,
) -> None:
    """What Hans approves and his time off left, on his Home tab, are in his formats too
    (#43): the waiting timesheet's total in h:mm, the balance in German with his date."""
    h.live.clock.set(WEEK + 2 * DAY_MS)
    hans = await h.slack_member("Hans Approver")
    otto = await h.slack_member("Otto Owner")
    await h.org.admin.gql(GERMAN, {"id": hans.id})
    await person_stages(h, otto, [hans])
    await add_record(otto.member, otto.member, day=0, hours=7)
    await submit(otto.member, otto.member)
    leave = (await h.org.admin.gql('mutation { addAbsenceType(name: "Urlaub Home") { id } }'))[
        "addAbsenceType"]["id"]
    await h.org.admin.gql(ADD_ALLOWANCE, {"p": hans.id, "a": leave, "s": BERLIN_2026,
                                          "e": BERLIN_2027})
    await h.slack.event({"type": "app_home_opened", "user": hans.slack_id, "tab": "home",
                         "channel": "D" + hans.slack_id[1:]})
    view = (await h.fake.wait_for("views.publish", user_id=hans.slack_id))[0].args["view"]
    text = home_text(view)
    assert "*Otto Owner* - Mo. 02.03.2026 bis So. 08.03.2026 - 7:00" in text, text
    assert "Urlaub Home übrig: 2 Tage (bis 31.12.2026)" in text, text
