"""`/time` and `/timesheet` answer in the person's language and formats (#24), through the
running Slack app (signed commands and clicks, answers read from the fake Slack): a French
person who chose DD/MM/YYYY, decimal hours and a comma, a German one who chose DD.MM.YYYY.
How an entry was read is in their formats (#43); what reads back as an entry (the Edit form,
the choices of an ambiguous entry) keeps `/time`'s own words: the grammar understands those.
English answers are those of test_time_commands."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from bot.slack.time_commands import EDIT, UNDO
from tests.bot.slack.test_time_commands import (  # noqa: F401  (the module's server)
    ADD_ALLOWANCE,
    BERLIN_2026,
    BERLIN_2027,
    World,
    buttons,
    world,
)
from tests.timebot.timeentry_setup import NOW_MS, records_of

TEN_MARCH = int(datetime(2026, 3, 10, tzinfo=ZoneInfo("Europe/Berlin")).timestamp() * 1000)
LOCALISE = """mutation($id: SvcId!, $lang: String!, $date: SvcDateFormat, $dec: SvcDecimalFormat,
                       $dur: Int) {
  editPersonLang(id: $id, lang: $lang) { id }
  editPersonLocalisationDateFormat(id: $id, dateFormat: $date) { id }
  editPersonLocalisationDecimalFormat(id: $id, decimalFormat: $dec) { id }
  editPersonTimeSettingsDurationFormat(id: $id, durationFormat: $dur) { id }
}"""


async def test_time_answers_in_french(world: World) -> None:  # noqa: F811
    world.live.clock.set(NOW_MS)  # Wednesday 18 March 2026
    user, member = await world.user("Fanny French")
    gql = world.fx.org.admin.gql
    await gql(LOCALISE, {"id": member.id, "lang": "fr", "date": "DD/MM/YYYY", "dec": ",",
                         "dur": 1})
    answer = await world.run("/time", "2h30 @acme/web fixing the header; 1h @alp", user)
    lines = answer["text"].splitlines()
    assert lines[0] == ("Enregistré : 2,5 h le mer. 18/03/2026 · @Acme/Website · "
                        "“fixing the header”"), lines
    assert lines[1] == ("Non enregistré : 1h @alp — @alp peut désigner plusieurs cibles : "
                        "Alpha, Alps."), lines
    labels = {b["action_id"]: b["text"]["text"] for b in buttons(answer)}
    assert labels[UNDO] == "Annuler" and labels[EDIT] == "Modifier"

    listing = (await world.run("/time", "list", user))["text"]
    assert listing.startswith("Vos saisies (les plus récentes d\u2019abord) :\n1. 2,5 h le "
                              "mer. 18/03/2026 · Website · “fixing the header”"), listing
    assert "Modifiez-en une avec `/time edit &lt;n&gt; &lt;entry&gt;`" in listing
    week = (await world.run("/time", "week", user))["text"]
    assert week.splitlines()[0] == ("Semaine du lun. 16/03/2026 : 2,5 h · feuille de temps "
                                    "brouillon (non soumise)"), week
    status = (await world.run("/timesheet", "status", user))["text"]
    assert status.splitlines()[0] == ("Cette semaine (lun. 16/03/2026 au dim. 22/03/2026) : "
                                      "brouillon (non soumise)"), status
    assert (await world.run("/time", "delete 9", user))["text"] == (
        "Il n'y a pas de saisie 9 dans votre liste : voyez `/time list`.")

    # The rules refuse early, in French, the setting's name as it is.
    await gql("mutation($id: SvcId!, $l: SvcTimestamp) { editPersonTimeSettingsLockDate("
              "id: $id, lockDate: $l) { id } }", {"id": member.id, "l": TEN_MARCH})
    world.live.app.state.runtime.entry_rules.forget(world.fx.org.id)
    locked = (await world.run("/time", "1h @acme 2026-03-02 design review", user))["text"]
    assert ("Les saisies avant le mar. 10/03/2026 sont verrouillées (lockDate) : saisissez "
            "du temps le mar. 10/03/2026 ou après.") in locked, locked
    assert len(await records_of(world.fx.org, member.id)) == 1

    undone = (await world.run("/time", "undo", user))["text"]
    assert undone == "Annulé : 2,5 h le mer. 18/03/2026 · @Acme/Website · “fixing the header”"
    nothing = (await world.run("/time", "undo", user))["text"]
    assert nothing == "Rien à annuler : vous n'avez rien enregistré avec /time ni par e-mail."


async def test_time_answers_in_german(world: World) -> None:  # noqa: F811
    world.live.clock.set(NOW_MS)
    user, member = await world.user("Hans German")
    gql = world.fx.org.admin.gql
    await gql(LOCALISE, {"id": member.id, "lang": "de", "date": "DD.MM.YYYY", "dec": None,
                         "dur": None})
    await gql(ADD_ALLOWANCE, {"p": member.id, "a": world.fx.ids["vacation"],
                              "s": BERLIN_2026, "e": BERLIN_2027})
    first = (await world.run("/time", "1d vacation monday", user))["text"]
    assert first == ("Erfasst: 1d am Mo. 16.03.2026 · Vacation (1d als 8h gezählt (ein "
                     "Arbeitstag hat 8h)) — Vacation übrig: 1 Tag (bis 31.12.2026)"), first
    second = (await world.run("/time", "2x @acme", user))["text"]
    assert second.startswith("Nicht verstanden, nichts erfasst:"), second
    helped = (await world.run("/time", "help", user))["text"]
    assert helped.startswith("Zeit erfassen: `/time 2h @acme/website fixing the header`")
    assert "Per E-Mail: schreiben Sie einen Eintrag pro Zeile an time@" in helped
    usage = (await world.run("/time", "week next", user))["text"]
    assert usage == "Schreiben Sie `/time week` oder `/time week last`."
    submitted = (await world.run("/timesheet", "submit", user))["text"]
    assert submitted == ("Stundenzettel für die Woche vom Mo. 16.03.2026 bis So. 22.03.2026 "
                         "eingereicht und genehmigt (kein Genehmigungsablauf gilt)."), submitted


async def test_an_english_reader_keeps_their_decimal_comma(world: World) -> None:  # noqa: F811
    """English, no date format, but decimal hours with a comma: every duration `/time` says
    (the receipt, the minimum the rules refuse under) has the comma (#43)."""
    world.live.clock.set(NOW_MS)
    user, member = await world.user("Carla Comma")
    gql = world.fx.org.admin.gql
    await gql(LOCALISE, {"id": member.id, "lang": "en", "date": None, "dec": ",", "dur": 1})
    await gql("mutation($id: SvcId!) { editPersonTimeSettingsMinimumTimeEntry(id: $id,"
              " minimumTimeEntry: 5400000) { id } }", {"id": member.id})
    world.live.app.state.runtime.entry_rules.forget(world.fx.org.id)
    logged = (await world.run("/time", "2h30 @acme/web fixing the header", user))["text"]
    assert logged.startswith("Logged: 2,5 h on Wed 18 Mar 2026"), logged
    listing = (await world.run("/time", "list", user))["text"]
    assert "1. 2,5 h on Wed 18 Mar 2026" in listing, listing
    short = (await world.run("/time", "1h @acme call", user))["text"]
    assert ("Entries shorter than 1,5 h are not accepted (minimumTimeEntry): log at least "
            "1,5 h.") in short, short
