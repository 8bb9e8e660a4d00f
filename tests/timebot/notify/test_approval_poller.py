"""The approval-state poller (a hosted service without webhooks), against the embedded service
with the webhook path unused: it turns what it sees into the same events, once each, and the
review requests and reminders follow from them."""

from __future__ import annotations

from tests.mail.reviews_support import (
    APPROVE,
    add_record,
    jobs,
    mails,
    org_events,
    outbox_rows,
    runtime_of,
    set_stages,
    settle,
    submit,
    wait_for,
)
from tests.support import DAY_MS, Org


async def test_polling_feeds_the_bus_like_webhooks(org: Org) -> None:
    runtime = runtime_of(org)
    poller = jobs(org).poller
    first = await org.add_member("Pia Poll", "manager")
    second = await org.add_member("Quentin Second", "manager")
    owner = await org.add_member("Owen Polled")
    await set_stages(org, (first,), (second,))
    await org.admin.gql(
        "mutation { editOrganisationTimeSettingsApprovalReminder(approvalReminder: 2) { id } }"
    )
    assert await runtime.subscriptions.secret_for(org.id) is None  # no webhook at all
    await add_record(owner)
    submitted = await submit(owner)

    assert await poller.poll_organisation(org.id) == 1
    assert await poller.poll_organisation(org.id) == 0  # nothing changed, nothing new
    await settle(runtime, org.id, 1)
    await wait_for(lambda: outbox_rows(runtime, first.email, "review"), what="review mail")

    # Two days at the stage: the approvalReminder the service would have sent.
    runtime.clock.advance(2 * DAY_MS + 1)
    assert await poller.poll_organisation(org.id) == 1
    await settle(runtime, org.id, 2)
    await wait_for(lambda: outbox_rows(runtime, first.email, "approval-reminder"),
                   what="reminder")

    # Stage 1 approved: the next stage's request; then the decision.
    await org.gql_for(first.apikey)(APPROVE, {"id": submitted["submitId"]})
    assert await poller.poll_organisation(org.id) == 1
    await settle(runtime, org.id, 3)
    await wait_for(lambda: outbox_rows(runtime, second.email, "review"), what="stage 2")
    await org.gql_for(second.apikey)(APPROVE, {"id": submitted["submitId"]})
    assert await poller.poll_organisation(org.id) == 1
    assert await poller.poll_organisation(org.id) == 0
    await settle(runtime, org.id, 4)
    kinds = [(row.event, row.data.get("status")) for row in await org_events(runtime, org.id)]
    assert sorted(kinds) == [("approvalEventUpdate", "a"), ("approvalEventUpdate", "s"),
                             ("approvalEventUpdate", "s"), ("approvalReminder", "s")]
    assert all(row.delivery_id.startswith("poll:") for row in await org_events(runtime, org.id))
    for member in (first, second):
        assert len(await mails(runtime, member, "review")) == 1
