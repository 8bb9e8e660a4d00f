"""The approver's nudges, the daily digest with its "Approve all" dialog and its outcome, and
a manager's team reminder, in each reader's language and formats (#24): signed requests to
the Slack app, the messages read from the fake Slack Web API; English readers unchanged."""

from __future__ import annotations

from typing import Any

from tests.bot.slack.harness import SlackHarness, SlackMember
from tests.bot.slack.test_approvals import buttons, person_stages, text_of
from tests.bot.slack.test_nudges import REMIND_AFTER, settle
from tests.service.test_approvals_support import WEEK, add_record, manage, state, submit
from tests.support import DAY_MS, HOUR_MS

LOCALISE = """mutation($id: SvcId!, $lang: String!, $date: SvcDateFormat) {
  editPersonLang(id: $id, lang: $lang) { id }
  editPersonLocalisationDateFormat(id: $id, dateFormat: $date) { id }
}"""


async def speaks(h: SlackHarness, who: SlackMember, lang: str, date: str | None = None) -> None:
    await h.org.admin.gql(LOCALISE, {"id": who.id, "lang": lang, "date": date})


def posted(h: SlackHarness, who: SlackMember, words: str) -> list[Any]:
    return [c for c in h.fake.calls_to("chat.postMessage")
            if c.args["channel"] == who.slack_id and words in str(c.args.get("text"))]


async def test_digest_and_approve_all_speak_german(h: SlackHarness) -> None:
    await h.org.admin.gql(REMIND_AFTER, {"d": 1})
    h.live.clock.set(WEEK + 7 * DAY_MS + 7 * HOUR_MS)
    owners = [await h.slack_member(f"Owner{i}") for i in range(2)]
    dan = await h.slack_member("Dan")
    await speaks(h, dan, "de", "DD.MM.YYYY")
    for owner in owners:
        await person_stages(h, owner, [dan])
        await add_record(owner.member, owner.member)
        await submit(owner.member, owner.member)
    await h.fake.wait_for("chat.postMessage", channel=dan.slack_id, count=2)
    await h.slack.command("/timesheet", "nudges digest", user=dan.slack_id)
    await h.fake.wait_for("response_url")
    h.live.clock.advance(DAY_MS + 3 * HOUR_MS)  # 10:00 the next day
    await h.bot.nudges.tick()
    await settle(h)
    [digest] = posted(h, dan, "zur Genehmigung offen")
    assert digest.args["text"] == "2 Stundenzettel zur Genehmigung offen:"
    text = text_of(digest)
    assert "Owner0 - Mo. 02.03.2026 bis So. 08.03.2026 - seit <!date^" in text
    assert "{date_short_pretty} um {time}" in text
    [button] = [element for block in digest.args["blocks"]
                for element in block.get("elements") or []
                if element.get("action_id") == "timebot_approve_all"]
    assert button["text"]["text"] == "Alle genehmigen (2)"
    assert button["confirm"]["title"]["text"] == "Alle genehmigen?"
    assert button["confirm"]["text"]["text"] == "Die 2 hier aufgeführten Stundenzettel genehmigen?"
    assert button["confirm"]["confirm"]["text"] == "2 genehmigen"
    assert button["confirm"]["deny"]["text"] == "Abbrechen"
    labels = [str(element["text"]["text"]) for block in digest.args["blocks"]
              for element in block.get("elements") or [] if element.get("type") == "button"]
    assert "Genehmigen" in labels and "1 Stunde pausieren" in labels and "Approve" not in labels

    # Dan confirms: the outcome in German, each timesheet approved.
    await h.slack.action(user=dan.slack_id, action_id="timebot_approve_all",
                         value=buttons(digest)["timebot_approve_all"],
                         channel="D" + dan.slack_id[1:], ts="1.0")
    [outcome] = await h.fake.wait_for("chat.postEphemeral", user=dan.slack_id)
    lines = outcome.args["text"].splitlines()
    assert lines[0] == "Sie haben 2 von 2 Stundenzetteln genehmigt:"
    assert lines[1] == "1. Owner0, Mo. 02.03.2026 bis So. 08.03.2026: genehmigt"
    for owner in owners:
        assert (await state(h.org.admin, owner.member))["status"] == "a"


async def test_the_approver_nudge_speaks_french_and_english_stays(h: SlackHarness) -> None:
    await h.org.admin.gql(REMIND_AFTER, {"d": 2})
    h.live.clock.set(WEEK + 7 * DAY_MS + 10 * HOUR_MS)
    sam = await h.slack_member("Sam")
    ann = await h.slack_member("Ann")
    eli = await h.slack_member("Eli")
    await speaks(h, ann, "fr", "DD/MM/YYYY")
    for approver, owner in ((ann, sam), (eli, await h.slack_member("Sue"))):
        await person_stages(h, owner, [approver])
        await add_record(owner.member, owner.member)
        await submit(owner.member, owner.member)
        await h.fake.wait_for("chat.postMessage", channel=approver.slack_id)
    h.live.clock.advance(2 * DAY_MS)
    await h.bot.nudges.tick()
    await settle(h)
    [french] = posted(h, ann, "Rappel")
    assert french.args["text"].startswith(
        "Rappel : la feuille de temps de Sam pour lun. 02/03/2026 au dim. 08/03/2026 attend "
        "votre approbation depuis <!date^")
    assert "{date_short_pretty} à {time}" in french.args["text"]
    assert set(buttons(french)) >= {"timebot_nudge_snooze", "timebot_nudge_off"}
    labels = str(french.args["blocks"])
    assert "Reporter d\u2019une heure" in labels and "Désactiver les relances" in labels
    assert "Approuver" in labels and "Rejeter" in labels
    await h.slack.action(user=ann.slack_id, action_id="timebot_nudge_snooze", value="1h",
                         channel="D" + ann.slack_id[1:], ts="1.0")
    [snoozed] = await h.fake.wait_for("chat.postEphemeral", user=ann.slack_id)
    assert snoozed.args["text"].startswith("Relances reportées jusqu'à <!date^")
    [english] = posted(h, eli, "Reminder:")
    assert english.args["text"].startswith(
        "Reminder: the timesheet of Sue for Mon 02 Mar - Sun 08 Mar 2026 has waited for your "
        "approval since <!date^")
    assert "Snooze 1 hour" in str(english.args["blocks"])


async def test_a_team_reminder_speaks_each_readers_language(h: SlackHarness) -> None:
    h.live.clock.set(WEEK + 2 * DAY_MS)
    mia = await h.slack_member("Mia", "manager")
    tom = await h.slack_member("Tom")
    await speaks(h, mia, "es", "DD-MM-YYYY")
    await speaks(h, tom, "de", "DD.MM.YYYY")
    await manage(h.org, mia.member, tom.member)
    await add_record(tom.member, tom.member)
    h.fake.reset()
    await h.slack.command("/timesheet", "remind", user=mia.slack_id)
    answer = (await h.fake.wait_for("response_url"))[0].args["text"]
    assert answer == "Recordatorio enviado a 1 para lun 02-03-2026 al dom 08-03-2026: Tom."
    [dm] = await h.fake.wait_for("chat.postMessage", channel=tom.slack_id)
    assert dm.args["text"] == ("Mia erinnert Sie daran, Ihren Stundenzettel für Mo. 02.03.2026 "
                               "bis So. 08.03.2026 einzureichen.")
    assert "Jetzt einreichen" in str(dm.args["blocks"])
