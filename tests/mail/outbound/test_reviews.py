"""Review requests by e-mail, driven by submissions through GraphQL and the service's real
webhook deliveries: one e-mail per pending approver per stage, none after the decision, the
summary, headers and links, what changed since a rejection, the digest preference."""

from __future__ import annotations

from mail.outbound.digest import send_digests
from tests.mail.reviews_support import (
    APPROVE,
    REJECT,
    WEEK,
    add_record,
    component,
    html_part,
    jobs,
    links,
    mails,
    outbox_rows,
    runtime_of,
    set_stages,
    settle,
    submit,
    text_part,
    wait_for,
)
from tests.support import DAY_MS, HOUR_MS, Org
from timebot.events.bus import ServiceEvent
from timebot.secret_key.tokens import find_token_candidates, verify_token


async def test_one_review_mail_per_pending_approver_per_stage_none_after_decision(
    org: Org,
) -> None:
    runtime = runtime_of(org)
    owner = await org.add_member("Olive Owner")
    first_a = await org.add_member("Ann Approver", "manager")
    first_b = await org.add_member("Abe Approver", "manager")
    second = await org.add_member("Bea Boss", "manager")
    await set_stages(org, (first_a, first_b), (second,))
    await runtime.subscriptions.ensure(org.id)
    await add_record(owner, day=0, hours=3, comment="Kickoff workshop")
    await add_record(owner, day=1, hours=5)
    submitted = await submit(owner)
    assert submitted["status"] == "s"

    await settle(runtime, org.id, 1)
    await wait_for(lambda: outbox_rows(runtime, first_b.email, "review"), what="review mail")
    for approver in (first_a, first_b):
        [message] = await mails(runtime, approver, "review")
        assert message["From"] == runtime.settings.mail_from
        assert message["To"] == approver.email
        assert "Olive Owner" in message["Subject"] and "stage 1 of 2" in message["Subject"]
        assert message["Auto-Submitted"] == "auto-generated"
        reply_to = str(message["Reply-To"])
        assert reply_to.startswith("approvals+")
        assert reply_to.endswith("@" + runtime.settings.mail_domain)
        token = reply_to.split("+", 1)[1].split("@", 1)[0]
        content = verify_token(runtime.settings.secret_key, "reply", token,
                               now_ms=runtime.clock.now_ms())
        assert (content.event_id, content.approver_id, content.stage) == (
            submitted["submitId"], approver.id, 0
        )
        # Our Message-ID carries the same token.
        assert find_token_candidates(
            [("In-Reply-To", str(message["Message-ID"]))], runtime.settings.mail_domain
        ) == [token]
        text, html = text_part(message), html_part(message)
        assert "8h" in text and "Kickoff workshop" in text and "3h" in text
        assert "Kickoff workshop" in html and "Approve" in html
        found = links(message)
        assert set(found) >= {"a", "r", "prefs"}
        assert found["a"] in html and found["r"] in html

    # Stage 1 approved by Ann: Bea (stage 2) gets one; Abe gets nothing more.
    await org.gql_for(first_a.apikey)(APPROVE, {"id": submitted["submitId"]})
    await settle(runtime, org.id, 2)
    await wait_for(lambda: outbox_rows(runtime, second.email, "review"), what="stage 2 mail")
    [to_second] = await mails(runtime, second, "review")
    assert "stage 2 of 2" in to_second["Subject"]

    # A redelivered event (every subscriber is called again) sends nothing twice.
    for row in await runtime.events.all():
        if row.organisation_id == org.id:
            await runtime.bus.dispatch(ServiceEvent(
                row.delivery_id, row.event, row.organisation_id, row.timestamp_ms,
                dict(row.data),
            ))

    await org.gql_for(second.apikey)(APPROVE, {"id": submitted["submitId"]})
    await settle(runtime, org.id, 3)
    for approver in (first_a, first_b, second):
        assert len(await mails(runtime, approver, "review")) == 1, approver.name
    assert not await mails(runtime, owner, "review")


async def test_a_late_event_for_a_decided_timesheet_sends_nothing(org: Org) -> None:
    runtime = runtime_of(org)
    owner = await org.add_member("Lou Late")
    approver = await org.add_member("Max Manager", "manager")
    await set_stages(org, (approver,))
    await add_record(owner)
    submitted = await submit(owner)  # not subscribed: the event arrives only when we say
    await org.gql_for(approver.apikey)(APPROVE, {"id": submitted["submitId"]})
    late = ServiceEvent(
        f"late-{submitted['submitId']}", "approvalEventUpdate", org.id, runtime.clock.now_ms(),
        {"action": "submitted", "submitId": submitted["submitId"], "status": "s", "stage": 0,
         "stageCount": 1, "pendingApprovers": [{"id": approver.id, "name": approver.name}],
         "person": {"id": owner.id}},
    )
    assert await jobs(org).reviews.handle(late) == 0
    assert not await mails(runtime, approver)


async def test_a_resubmission_says_what_changed_since_the_rejection(org: Org) -> None:
    runtime = runtime_of(org)
    owner = await org.add_member("Rita Redo")
    approver = await org.add_member("Carl Checker", "manager")
    await set_stages(org, (approver,))
    await runtime.subscriptions.ensure(org.id)
    await add_record(owner, day=2)
    first = await submit(owner)
    await settle(runtime, org.id, 1)
    await org.gql_for(approver.apikey)(REJECT, {"id": first["submitId"], "st": 0,
                                                 "c": "Wednesday is missing"})
    await add_record(owner, day=3, hours=4)
    second = await submit(owner)
    assert second["submitId"] != first["submitId"]
    await settle(runtime, org.id, 3)

    async def two() -> bool:
        return len(await mails(runtime, approver, "review")) == 2

    await wait_for(two, what="the second review mail")
    newest = (await mails(runtime, approver, "review"))[-1]
    assert "Changed since the rejected submission: 1 added" in text_part(newest)
    assert "7h" in text_part(newest)


async def test_digest_preference_one_mail_a_day_with_links(org: Org) -> None:
    runtime = runtime_of(org)
    approver = await org.add_member("Dora Digest", "manager")
    first_owner = await org.add_member("Eve Early")
    second_owner = await org.add_member("Fred Friday")
    await set_stages(org, (approver,))
    await org.admin.gql(
        "mutation($id: SvcId!) { editPersonLocalisationTimeZone(id: $id, "
        "timeZone: \"Asia/Tokyo\") { id } }", {"id": approver.id},
    )
    await runtime.subscriptions.ensure(org.id)
    await add_record(first_owner)
    await submit(first_owner)
    await settle(runtime, org.id, 1)
    await wait_for(lambda: outbox_rows(runtime, approver.email, "review"), what="instant mail")
    [instant] = await mails(runtime, approver, "review")

    # She switches to the digest with the link in the footer.
    prefs = links(instant)["prefs"]
    page = await org.http.get(prefs)
    assert page.status_code == 200 and "As a digest" in page.text
    saved = await org.http.post(prefs, data={"mode": "digest"})
    assert saved.status_code == 200 and 'id="saved"' in saved.text

    await add_record(second_owner)
    await submit(second_owner)
    await settle(runtime, org.id, 2)
    assert len(await mails(runtime, approver, "review")) == 1  # no instant mail any more

    # 07:00 in Tokyo: not yet; 08:00: one digest listing both, each with its links.
    morning = WEEK + 14 * DAY_MS  # Monday 00:00 UTC = 09:00 Tokyo
    runtime.clock.set(morning - 2 * HOUR_MS)  # 07:00 Tokyo
    await send_digests(component(org).ctx)
    assert not await mails(runtime, approver, "digest")
    runtime.clock.set(morning - HOUR_MS)  # 08:00 Tokyo
    await send_digests(component(org).ctx)
    await send_digests(component(org).ctx)
    [digest] = await mails(runtime, approver, "digest")
    text = text_part(digest)
    assert "2 timesheets" in digest["Subject"]
    assert "Eve Early" in text and "Fred Friday" in text
    assert text.count("/a/") == 2 and text.count("/r/") == 2
    # The next day: another digest (nothing decided yet).
    runtime.clock.set(morning + DAY_MS)
    await send_digests(component(org).ctx)
    assert len(await mails(runtime, approver, "digest")) == 2
