"""The bot's webhook consumer: subscription, signature check, one row per delivery, dispatch to
the bus — fed by the embedded service's deliveries (in-process, as `timebot serve` runs it
with the service embedded) and by signed POSTs to /svc/webhooks."""

from __future__ import annotations

import asyncio
import json

from sqlalchemy import select

from tests.support import HOUR_MS, Org
from timebot.events.bus import ServiceEvent
from timebot.events.subscriptions import REFRESHES_A_MINUTE
from timebot.events.webhooks import WEBHOOK_PATH, sign
from timebot.process.runtime import Runtime

WEEK_START = 1_788_220_800_000  # Monday 2026-09-01 00:00 UTC


def runtime_of(org: Org) -> Runtime:
    return org.live.app.state.runtime  # type: ignore[no-any-return]


async def test_service_events_reach_the_bus_once(org: Org) -> None:
    runtime = runtime_of(org)
    seen: list[ServiceEvent] = []

    async def probe(event: ServiceEvent) -> None:
        if event.organisation_id == org.id:
            seen.append(event)

    runtime.bus.subscribe("test-probe", probe, ("approvalEventUpdate",))
    try:
        await runtime.subscriptions.ensure(org.id)
        # Subscribing twice registers one webhook.
        await runtime.subscriptions.ensure(org.id, refresh=True)
        hooks = (await org.admin.gql(
            "{ currentOrganisation { integrations { webhooks { url } } } }"
        ))["currentOrganisation"]["integrations"]["webhooks"]
        assert [hook["url"] for hook in hooks] == [runtime.subscriptions.url]
        await org.admin.gql(
            "mutation($p: SvcId!, $s: SvcTimestamp!, $d: Int!) {"
            " addTimeRecord(personId: $p, startTime: $s, duration: $d) { id } }",
            {"p": org.admin.id, "s": WEEK_START + 9 * HOUR_MS, "d": 2 * HOUR_MS},
        )
        await org.admin.gql(
            "mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {"
            " submitTimesheet(personId: $p, startTime: $s, endTime: $e) { id status } }",
            {"p": org.admin.id, "s": WEEK_START, "e": WEEK_START + 7 * 24 * HOUR_MS},
        )
        for _ in range(200):
            if seen:
                break
            await asyncio.sleep(0.05)
        assert seen, "the service's approvalEventUpdate reached the bus"
        event = seen[0]
        assert event.event == "approvalEventUpdate"
        assert event.data["person"]["id"] == org.admin.id
        assert event.data["status"] == "a"  # no workflow: approved at once
    finally:
        runtime.bus.subscribers.remove(("test-probe", probe, frozenset({"approvalEventUpdate"})))


async def test_unsigned_or_forged_deliveries_are_refused_and_duplicates_ignored(org: Org) -> None:
    runtime = runtime_of(org)
    secret = await runtime.subscriptions.ensure(org.id)
    url = f"{org.live.base_url}{WEBHOOK_PATH}"
    body = json.dumps(
        {"id": f"d-{org.id}", "event": "approvalEventUpdate", "organisationId": org.id,
         "timestamp": 1, "data": {"status": "s"}}
    ).encode()
    forged = await org.http.post(url, content=body, headers={"X-Svc-Signature": sign("x", body)})
    assert forged.status_code == 401
    missing = await org.http.post(url, content=body)
    assert missing.status_code == 401
    garbage = await org.http.post(url, content=b"{}", headers={"X-Svc-Signature": "sha256=0"})
    assert garbage.status_code == 400
    # An organisation id no column takes, read before the signature (it names the secret):
    # 400, not the 500 of its lookup (a NUL on PostgreSQL, a lone surrogate on both).
    for hostile in ('"a\\u0000b"', '"\\ud800"', '"' + "x" * 65 + '"'):
        forged_org = body.replace(f'"{org.id}"'.encode(), hostile.encode())
        refused = await org.http.post(url, content=forged_org,
                                      headers={"X-Svc-Signature": "sha256=0"})
        assert refused.status_code == 400, (hostile, refused.status_code, refused.text[:200])
    # Unsigned deliveries naming ever new organisations: nothing is read again for an
    # organisation we hold no registration of, so nothing is remembered of them either.
    subscriptions = runtime.subscriptions
    asked: list[str] = []
    real_ensure = subscriptions.ensure

    async def counted_ensure(organisation_id: str, *, refresh: bool = False) -> str:
        asked.append(organisation_id)
        return await real_ensure(organisation_id, refresh=refresh)

    subscriptions.ensure = counted_ensure  # type: ignore[method-assign]
    try:
        for index in range(6):
            other = body.replace(org.id.encode(), f"{index:024x}".encode())
            answered = await org.http.post(url, content=other,
                                           headers={"X-Svc-Signature": "sha256=0"})
            assert answered.status_code == 401
        assert asked == [] and set(subscriptions._refreshed_ms) <= {org.id}
    finally:
        subscriptions.ensure = real_ensure  # type: ignore[method-assign]
    headers = {"X-Svc-Signature": sign(secret, body)}
    first = await org.http.post(url, content=body, headers=headers)
    second = await org.http.post(url, content=body, headers=headers)
    assert first.json() == {"ok": True, "duplicate": False}
    assert second.json() == {"ok": True, "duplicate": True}
    rows = [row for row in await runtime.events.all() if row.delivery_id == f"d-{org.id}"]
    assert len(rows) == 1


async def test_a_rotated_secret_is_read_again_at_most_once_a_minute(org: Org) -> None:
    """The secret we hold went stale (the webhook was made again): a delivery signed with
    the service's current one is verified after reading it again, which happens at most once a
    minute an organisation and for at most REFRESHES_A_MINUTE organisations."""
    from timebot.state.models import WebhookRegistration

    runtime = runtime_of(org)
    subscriptions = runtime.subscriptions
    secret = await subscriptions.ensure(org.id)
    async with subscriptions.sessions() as session:
        registration = await session.get(WebhookRegistration, org.id)
        assert registration is not None
        webhook_id = registration.webhook_id
    url = f"{org.live.base_url}{WEBHOOK_PATH}"

    def delivery(number: int) -> bytes:
        return json.dumps(
            {"id": f"rotated-{number}-{org.id}", "event": "approvalEventUpdate",
             "organisationId": org.id, "timestamp": 1, "data": {"status": "s"}}
        ).encode()

    await subscriptions._store(org.id, webhook_id, "stale")
    subscriptions._refreshed_ms.pop(org.id, None)
    first = delivery(1)
    answered = await org.http.post(url, content=first,
                                   headers={"X-Svc-Signature": sign(secret, first)})
    assert answered.json() == {"ok": True, "duplicate": False}
    assert await subscriptions.secret_for(org.id) == secret
    # Stale again within the minute: not read again, refused (the service retries).
    await subscriptions._store(org.id, webhook_id, "stale")
    second = delivery(2)
    refused = await org.http.post(url, content=second,
                                  headers={"X-Svc-Signature": sign(secret, second)})
    assert refused.status_code == 401
    # With this minute's organisations spent, none is read again.
    subscriptions._refreshed_ms.pop(org.id, None)
    subscriptions.refresh_tracked = 0
    try:
        refused = await org.http.post(url, content=second,
                                      headers={"X-Svc-Signature": sign(secret, second)})
        assert refused.status_code == 401
    finally:
        subscriptions.refresh_tracked = REFRESHES_A_MINUTE
        await subscriptions.ensure(org.id, refresh=True)
    assert await subscriptions.secret_for(org.id) == secret


async def test_an_in_process_delivery_handed_over_again_is_received_once(org: Org) -> None:
    """The embedded service hands its events to the fronts in-process. A crash between the
    hand-over and its mark makes the delivery due again: it is received once all the same."""
    from sqlalchemy import update

    from service.timesheets.models import DELIVERY_DELIVERED, DELIVERY_PENDING, WebhookDelivery

    runtime = runtime_of(org)
    service = org.live.service
    await runtime.subscriptions.ensure(org.id)
    assert runtime.subscriptions.url == "inprocess:timebot"
    await org.admin.gql(
        "mutation($p: SvcId!, $s: SvcTimestamp!, $d: Int!) {"
        " addTimeRecord(personId: $p, startTime: $s, duration: $d) { id } }",
        {"p": org.admin.id, "s": WEEK_START + 9 * HOUR_MS, "d": 2 * HOUR_MS},
    )
    await org.admin.gql(
        "mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {"
        " submitTimesheet(personId: $p, startTime: $s, endTime: $e) { id } }",
        {"p": org.admin.id, "s": WEEK_START, "e": WEEK_START + 7 * 24 * HOUR_MS},
    )

    async def statuses() -> list[str]:
        async with service.sessions() as session:
            return list(await session.scalars(
                select(WebhookDelivery.status).where(WebhookDelivery.organisation_id == org.id)))

    async def received() -> list[str]:
        return [row.delivery_id for row in await runtime.events.all()
                if row.organisation_id == org.id]

    for _ in range(200):
        if await statuses() == [DELIVERY_DELIVERED] and await received():
            break
        await asyncio.sleep(0.05)
    first = await received()
    assert len(first) == 1 and await statuses() == [DELIVERY_DELIVERED]
    async with service.sessions() as session, session.begin():  # "crashed before the mark"
        await session.execute(update(WebhookDelivery).where(
            WebhookDelivery.organisation_id == org.id).values(
            status=DELIVERY_PENDING, next_attempt_ms=0))
    service.webhooks.kick()
    for _ in range(200):
        if await statuses() == [DELIVERY_DELIVERED]:
            break
        await asyncio.sleep(0.05)
    assert await statuses() == [DELIVERY_DELIVERED]
    assert await received() == first


WEBHOOKS = "{ currentOrganisation { integrations { webhooks { id url events } } } }"


async def test_the_webhook_subscribes_to_the_events_the_fronts_handle(org: Org) -> None:
    """Issue #40: timebot's webhook subscribes to what its bus subscribers declared they
    handle, not "*". One registered with "*" (an older timebot) is set to that list, by two
    processes at once as by one: one webhook, the same events; and an event nobody handles
    (a Journal comment in a deployment without chat) is no longer queued for timebot."""
    from service.models import WebhookDelivery
    from tests.protocol.reply_helpers import submitted_sheet
    from tests.service.timesheets.test_journal import ADD_MESSAGE

    runtime = runtime_of(org)
    wanted = runtime.bus.events()
    assert "*" not in wanted and {"approvalEventUpdate", "approvalReminder",
                                  "timesheetReminder", "settingsUpdate"} <= set(wanted)
    assert "journalMessage" not in wanted  # no chat front in this server: nobody mirrors it
    await runtime.subscriptions.ensure(org.id)

    async def ours() -> list[dict[str, object]]:
        data = await org.admin.gql(WEBHOOKS)
        return [hook for hook in data["currentOrganisation"]["integrations"]["webhooks"]
                if hook["url"] == runtime.subscriptions.url]

    [hook] = await ours()
    assert hook["events"] == wanted
    await org.admin.gql(
        "mutation($id: SvcId!) { editIntegrationWebhookEvents(id: $id, events: [\"*\"]) { id } }",
        {"id": hook["id"]})
    await asyncio.gather(*(runtime.subscriptions.sync_events(org.id) for _ in range(2)))
    assert await ours() == [{**hook, "events": wanted}]

    sheet, _ = await submitted_sheet(org)
    await sheet.approver.gql(ADD_MESSAGE, {"c": "Friday looks short",
                                           "r": {"id": sheet.event_id, "type": "approvalEvent"}})
    async with org.live.service.sessions() as session:
        queued = set(await session.scalars(select(WebhookDelivery.event).where(
            WebhookDelivery.organisation_id == org.id)))
    assert queued == {"approvalEventUpdate"}, queued


async def test_a_subscriber_is_handed_only_the_events_it_declared() -> None:
    from timebot.events.bus import EventBus

    bus, seen, changes = EventBus(), [], []
    bus.on_change.append(lambda: changes.append(bus.events()))

    async def record(event: ServiceEvent) -> None:
        seen.append(event.event)

    bus.subscribe("settings", record, ("settingsUpdate",))
    bus.subscribe("again", record, ("settingsUpdate",))  # no new kind: no change
    bus.subscribe("journal", record, ("journalMessage", "settingsUpdate"))
    for kind in ("settingsUpdate", "journalMessage", "approvalEventUpdate"):
        await bus.dispatch(ServiceEvent("d", kind, "o", 1, {}))
    assert seen == ["settingsUpdate"] * 3 + ["journalMessage"]
    assert changes == [["settingsUpdate"], ["journalMessage", "settingsUpdate"]]
