"""Issue 28: while an approver of a quorum-"any" stage is away (an out-of-office auto-reply
recorded it: timebot.state.away), the review dispatch also asks the stage's other pending
approvers, with the reason in the mail, once; nothing once the timesheet is decided; under
quorum "all" nobody else. Submissions through GraphQL, the service's real webhook deliveries,
re-dispatches of the recorded events; the outbox read. SQLite and PostgreSQL (`org`)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from tests.mail.reviews_support import (
    APPROVE,
    add_record,
    mails,
    outbox_rows,
    runtime_of,
    set_stages,
    settle,
    submit,
    text_part,
    wait_for,
)
from tests.support import Member, Org
from timebot.events.bus import ServiceEvent
from timebot.l10n import Localisation, using
from timebot.notify.away_asks import away_asks
from timebot.process.runtime import Runtime
from timebot.state.away import Absence, record_absence


async def redispatch(runtime: Runtime, org: Org) -> None:
    """Every recorded event of the organisation dispatched again (as the reconciler and a
    redelivery do)."""
    for row in await runtime.events.all():
        if row.organisation_id == org.id:
            await runtime.bus.dispatch(ServiceEvent(
                row.delivery_id, row.event, row.organisation_id, row.timestamp_ms,
                dict(row.data)))


def today(runtime: Runtime) -> date:
    return datetime.fromtimestamp(runtime.clock.now_ms() / 1000, UTC).date()


async def away(runtime: Runtime, org: Org, approver: Member, until: date | None) -> None:
    await record_absence(runtime.state_sessions, organisation_id=org.id,
                         approver_id=approver.id, until=until,
                         seen_ms=runtime.clock.now_ms(), message_key=f"<{approver.id}@ooo>")


async def test_the_others_are_asked_once_while_an_approver_is_away(org: Org) -> None:
    runtime = runtime_of(org)
    owner = await org.add_member("Olive Owner")
    grace = await org.add_member("Grace Hopper", "manager")
    hal = await org.add_member("Hal Abelson", "manager")
    await set_stages(org, (grace, hal))
    await runtime.subscriptions.ensure(org.id)
    await add_record(owner)
    submitted = await submit(owner)
    await settle(runtime, org.id, 1)
    await wait_for(lambda: outbox_rows(runtime, hal.email, "review"), what="review mail")
    assert len(await mails(runtime, hal, "review")) == 1

    # Grace's auto-reply said she is away: the next dispatch asks Hal again, with the reason.
    back = today(runtime) + timedelta(days=6)
    await away(runtime, org, grace, back)
    await redispatch(runtime, org)
    first, second = await mails(runtime, hal, "review")
    reason = f"Grace Hopper is away until {back.strftime('%a %d %b %Y')}"
    assert reason not in text_part(first) and reason in text_part(second)
    assert len(await mails(runtime, grace, "review")) == 1
    # once
    await redispatch(runtime, org)
    assert len(await mails(runtime, hal, "review")) == 2

    # decided: nothing more, whatever is dispatched
    await org.gql_for(hal.apikey)(APPROVE, {"id": submitted["submitId"]})
    await settle(runtime, org.id, 2)
    await away(runtime, org, hal, None)  # (now Hal too)
    await redispatch(runtime, org)
    assert len(await mails(runtime, hal, "review")) == 2
    assert len(await mails(runtime, grace, "review")) == 1


async def test_first_asked_while_someone_is_away_one_mail_with_the_reason(org: Org) -> None:
    runtime = runtime_of(org)
    owner = await org.add_member("Olive Owner")
    grace = await org.add_member("Grace Hopper", "manager")
    hal = await org.add_member("Hal Abelson", "manager")
    await set_stages(org, (grace, hal))
    await away(runtime, org, grace, None)
    await runtime.subscriptions.ensure(org.id)
    await add_record(owner)
    await submit(owner)
    await settle(runtime, org.id, 1)
    await wait_for(lambda: outbox_rows(runtime, hal.email, "review"), what="review mail")
    [only] = await mails(runtime, hal, "review")
    assert "Grace Hopper is away (return date unknown)" in text_part(only)
    [to_grace] = await mails(runtime, grace, "review")
    assert "is away" not in text_part(to_grace)
    await redispatch(runtime, org)
    assert len(await mails(runtime, hal, "review")) == 1


async def test_quorum_all_asks_nobody_else(org: Org) -> None:
    runtime = runtime_of(org)
    owner = await org.add_member("Olive Owner")
    grace = await org.add_member("Grace Hopper", "manager")
    hal = await org.add_member("Hal Abelson", "manager")
    await set_stages(org, (grace, hal), quorum="all")
    await runtime.subscriptions.ensure(org.id)
    await add_record(owner)
    await submit(owner)
    await settle(runtime, org.id, 1)
    await wait_for(lambda: outbox_rows(runtime, hal.email, "review"), what="review mail")
    await away(runtime, org, grace, None)
    await redispatch(runtime, org)
    [only] = await mails(runtime, hal, "review")
    assert "is away" not in text_part(only)


def test_away_asks_pure() -> None:
    now = int(datetime(2026, 11, 26, tzinfo=UTC).timestamp() * 1000)
    pending = (("g", "Grace"), ("h", "Hal"), ("i", "Ida"))
    recorded = {"g": [Absence("o", "g", "auto-reply", date(2026, 12, 2), now)],
                "i": [Absence("o", "i", "auto-reply", date(2026, 11, 25), now)]}  # back
    asks = away_asks(pending, recorded, "any", now)
    assert [(a.approver_id, a.away_id, str(a.reason)) for a in asks] == [
        ("h", "g", "Grace is away until Wed 02 Dec 2026"),
        ("i", "g", "Grace is away until Wed 02 Dec 2026"),
    ]
    # Written for its reader (#43): their language and date format, not the English built
    # before the reader was known.
    french = Localisation(lang="fr", date_format="DD/MM/YYYY")
    assert asks[0].reason.text(french) == "Grace est absent(e) jusqu'au mer. 02/12/2026"
    with using(Localisation(date_format="MM/DD/YYYY")):
        assert str(asks[0].reason) == "Grace is away until Wed 12/02/2026"
    unknown = away_asks(pending, {"g": [Absence("o", "g", "auto-reply", None, now)]}, "any",
                        now)
    assert unknown[0].reason.text(Localisation(lang="de")) == (
        "Grace ist abwesend (Rückkehrdatum unbekannt)")
    assert away_asks(pending, recorded, "all", now) == []
    assert away_asks(pending, {}, "any", now) == []
