"""One-click links from the review e-mails, over real HTTP and in headless Chromium: a GET
only shows what would be decided (whose timesheet, the period, the hours, "stage 1 of 2") and
changes nothing — mail scanners open every link —; the POST of its button decides; single use
(a second POST says what happened), tampered, forged (another key) and expired links, a
cross-site POST, a stage that moved on; the service's state is checked over GraphQL after
each."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.mail.reviews_support import (
    APPROVE,
    STATE,
    WEEK,
    WEEK_END,
    add_record,
    links,
    mails,
    outbox_rows,
    runtime_of,
    set_stages,
    settle,
    submit,
    wait_for,
)
from tests.support import DAY_MS, Member, Org
from tests.timebot.chromium import chromium
from timebot.secret_key.tokens import make_token


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Any]:
    async with chromium() as launched:
        yield launched


async def review_mail_links(
    org: Org, approvers: tuple[Member, ...], *later_stages: tuple[Member, ...]
) -> tuple[Member, dict[str, Any], dict[str, dict[str, str]]]:
    """An owner's submitted timesheet and each (first-stage) approver's links from their
    review mail."""
    runtime = runtime_of(org)
    owner = await org.add_member("Owen Owner")
    await set_stages(org, approvers, *later_stages)
    await runtime.subscriptions.ensure(org.id)
    await add_record(owner, hours=6)
    submitted = await submit(owner)
    await settle(runtime, org.id, 1)
    found = {}
    for approver in approvers:
        address = approver.email

        async def arrived(address: str = address) -> bool:
            return bool(await outbox_rows(runtime, address, "review"))

        await wait_for(arrived, what="review mail")
        [message] = await mails(runtime, approver, "review")
        found[approver.id] = links(message)
    return owner, submitted, found


async def state_of(org: Org, owner: Member) -> dict[str, Any]:
    data = await org.admin.gql(STATE, {"p": owner.id, "s": WEEK, "e": WEEK_END})
    return dict(data["getApprovalState"])


async def test_approve_link_in_the_browser_then_a_second_click(org: Org, browser: Any) -> None:
    approver = await org.add_member("Amy Approver", "manager")
    owner, submitted, found = await review_mail_links(org, (approver,))
    page = await browser.new_page()
    try:
        await page.goto(found[approver.id]["a"])
        assert await page.locator("#person").inner_text() == "Owen Owner"
        assert "stage 1 of 1" in await page.locator("#stage").inner_text()
        assert (await state_of(org, owner))["status"] == "s", "opening the link decides nothing"
        await page.click("#approve")
        await page.locator("#outcome").wait_for()
        assert await page.locator("#outcome").inner_text() == "Approved"
        assert "now approved" in await page.locator("#detail").inner_text()
        assert (await state_of(org, owner))["status"] == "a"
        # Again, and the reject link of the same mail: they say what happened.
        for url in (found[approver.id]["a"], found[approver.id]["r"]):
            await page.goto(url)
            assert await page.locator("#outcome").inner_text() == "This link was already used"
            assert "You approved" in await page.locator("#detail").inner_text()
    finally:
        await page.close()
    events = await org.admin.gql(
        "query($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getApprovalEvents("
        "personId: $p, startTime: $s, endTime: $e) { status by { id } } }",
        {"p": owner.id, "s": WEEK, "e": WEEK_END},
    )
    approvals = [e for e in events["getApprovalEvents"] if e["by"] and e["by"]["id"] ==
                 approver.id]
    assert len(approvals) == 1, "approved once, as the approver"
    assert submitted["status"] == "s"


async def test_reject_link_asks_for_the_reason(org: Org, browser: Any) -> None:
    approver = await org.add_member("Rex Rejecter", "manager")
    owner, _submitted, found = await review_mail_links(org, (approver,))
    url = found[approver.id]["r"]
    empty = await org.http.post(url, data={"reason": "  "})
    assert empty.status_code == 400 and "A reason is required" in empty.text
    assert (await state_of(org, owner))["status"] == "s"
    page = await browser.new_page()
    try:
        await page.goto(url)
        assert await page.locator("#person").inner_text() == "Owen Owner"
        assert "stage 1 of 1" in await page.locator("#stage").inner_text()
        assert "6h" in await page.content()
        await page.fill("#reason", "Friday is missing")
        await page.click("#reject")
        await page.locator("#outcome").wait_for()
        assert await page.locator("#outcome").inner_text() == "Rejected"
        assert (await state_of(org, owner))["status"] == "r"
        await page.goto(url)
        assert await page.locator("#outcome").inner_text() == "This link was already used"
        await page.goto(found[approver.id]["a"])
        assert "You rejected" in await page.locator("#detail").inner_text()
    finally:
        await page.close()
    journal = await org.admin.gql(
        "query($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getApprovalEvents("
        "personId: $p, startTime: $s, endTime: $e) { status comment } }",
        {"p": owner.id, "s": WEEK, "e": WEEK_END},
    )
    assert "Friday is missing" in [e["comment"] for e in journal["getApprovalEvents"]]


async def test_tampered_and_expired_links_change_nothing(org: Org, browser: Any) -> None:
    approver = await org.add_member("Tia Tamper", "manager")
    owner, _submitted, found = await review_mail_links(org, (approver,))
    approve = found[approver.id]["a"]
    last = approve[-1]
    tampered = approve[:-1] + ("a" if last != "a" else "b")
    page = await browser.new_page()
    try:
        response = await page.goto(tampered)
        assert response is not None and response.status == 400
        assert await page.locator("#outcome").inner_text() == "This link is not valid"
        response = await page.goto(approve[: approve.rindex("/") + 1] + "garbage")
        assert response is not None and response.status == 400
        runtime_of(org).clock.advance(15 * DAY_MS)
        response = await page.goto(approve)
        assert response is not None and response.status == 410
        assert await page.locator("#outcome").inner_text() == "This link has expired"
        response = await page.goto(found[approver.id]["r"])
        assert response is not None and response.status == 410
    finally:
        await page.close()
    assert (await state_of(org, owner))["status"] == "s"


async def test_a_stage_that_moved_on_is_reported(org: Org, browser: Any) -> None:
    quick = await org.add_member("Quinn Quick", "manager")
    slow = await org.add_member("Sam Slow", "manager")
    owner, submitted, found = await review_mail_links(org, (quick, slow))
    await org.gql_for(quick.apikey)(APPROVE, {"id": submitted["submitId"]})
    page = await browser.new_page()
    try:
        await page.goto(found[slow.id]["a"])
        assert await page.locator("#outcome").inner_text() == "Nothing changed"
        assert "already approved" in await page.locator("#detail").inner_text()
    finally:
        await page.close()
    # The quick approver's own link: the stage is done, nothing is approved twice.
    response = await org.http.get(found[quick.id]["a"])
    assert "Nothing changed" in response.text
    response = await org.http.post(found[quick.id]["a"])
    assert "Nothing changed" in response.text
    assert (await state_of(org, owner))["status"] == "a"


# --- over plain HTTP: a GET shows, a POST decides ----------------------------------------------


async def approvals_by(org: Org, owner: Member, approver: Member) -> int:
    events = await org.admin.gql(
        "query($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getApprovalEvents("
        "personId: $p, startTime: $s, endTime: $e) { status by { id } } }",
        {"p": owner.id, "s": WEEK, "e": WEEK_END},
    )
    return len([e for e in events["getApprovalEvents"] if (e["by"] or {}).get("id") ==
                approver.id])


async def test_get_shows_what_would_be_decided_and_the_post_decides(org: Org) -> None:
    first = await org.add_member("Fay First", "manager")
    second = await org.add_member("Sid Second", "manager")
    owner, _submitted, found = await review_mail_links(org, (first,), (second,))
    approve = found[first.id]["a"]
    for _ in range(2):  # a mail scanner, then the person: nothing decided
        shown = await org.http.get(approve)
        assert shown.status_code == 200, shown.text
        assert shown.headers["cache-control"] == "no-store"
        assert 'id="person">Owen Owner<' in shown.text
        assert 'id="period">Mon 05 Oct to Sun 11 Oct 2026<' in shown.text
        assert "Total: 6h" in shown.text
        assert "stage 1 of 2" in shown.text
        assert '<form method="post"' in shown.text and 'id="approve"' in shown.text
    rejecting = await org.http.get(found[first.id]["r"])
    assert "stage 1 of 2" in rejecting.text and "Total: 6h" in rejecting.text
    assert 'id="person">Owen Owner<' in rejecting.text
    before = await state_of(org, owner)
    assert (before["status"], before["currentStage"]) == ("s", 0)
    assert await approvals_by(org, owner, first) == 0

    decided = await org.http.post(approve)
    assert decided.status_code == 200
    assert 'id="outcome">Approved<' in decided.text
    assert "Owen Owner" in decided.text and "waits for stage 2" in decided.text
    after = await state_of(org, owner)
    assert (after["status"], after["currentStage"]) == ("s", 1)

    again = await org.http.post(approve)
    assert "This link was already used" in again.text and "You approved" in again.text
    shown = await org.http.get(approve)
    assert "This link was already used" in shown.text and 'id="approve"' not in shown.text
    assert await approvals_by(org, owner, first) == 1
    assert (await state_of(org, owner))["currentStage"] == 1


async def test_a_link_forged_with_another_key_is_refused(org: Org) -> None:
    approver = await org.add_member("Ida Approver", "manager")
    owner, submitted, found = await review_mail_links(org, (approver,))
    now = runtime_of(org).clock.now_ms()
    base = found[approver.id]["a"].rsplit("/", 2)[0]
    for key in ("change-me-to-a-long-random-string", "tests-only-another-key-0123456789abcdef"):
        for purpose, path in (("approve-link", "a"), ("reject-link", "r")):
            token = make_token(key, purpose, event_id=submitted["submitId"],
                               approver_id=approver.id, stage=0, expires_at_ms=now + DAY_MS)
            url = f"{base}/{path}/{token}"
            for response in (await org.http.get(url),
                             await org.http.post(url, data={"reason": "forged"})):
                assert response.status_code == 400
                assert "This link is not valid" in response.text
    assert (await state_of(org, owner))["status"] == "s"
    assert await approvals_by(org, owner, approver) == 0


async def test_a_cross_site_post_is_refused(org: Org) -> None:
    approver = await org.add_member("Cyd Approver", "manager")
    owner, _submitted, found = await review_mail_links(org, (approver,))
    for url, data in ((found[approver.id]["a"], None),
                      (found[approver.id]["r"], {"reason": "from elsewhere"})):
        refused = await org.http.post(url, data=data,
                                      headers={"Origin": "https://evil.example"})
        assert refused.status_code == 403 and "another site" in refused.text
    assert (await state_of(org, owner))["status"] == "s"
    # Our own origin (and the `null` a no-referrer page sends) are fine.
    origin = org.live.base_url
    decided = await org.http.post(found[approver.id]["a"], headers={"Origin": origin})
    assert 'id="outcome">Approved<' in decided.text
    assert (await state_of(org, owner))["status"] == "a"


async def test_an_archived_approvers_links_are_no_longer_valid(org: Org) -> None:
    approver = await org.add_member("Arch Approver", "manager")
    owner, _submitted, found = await review_mail_links(org, (approver,))
    await org.admin.gql("mutation($id: SvcId!) { archivePerson(id: $id) { id } }",
                        {"id": approver.id})
    for url, data in ((found[approver.id]["a"], None),
                      (found[approver.id]["r"], {"reason": "from an archived approver"})):
        for response in (await org.http.get(url), await org.http.post(url, data=data)):
            assert response.status_code == 403, response.text
            assert "This link is no longer valid" in response.text
            assert "Arch Approver is no longer an active person" in response.text
    assert (await state_of(org, owner))["status"] == "s"
    assert await approvals_by(org, owner, approver) == 0
    # Unarchived, the same (unused) link decides.
    await org.admin.gql("mutation($id: SvcId!) { unarchivePerson(id: $id) { id } }",
                        {"id": approver.id})
    decided = await org.http.post(found[approver.id]["a"])
    assert 'id="outcome">Approved<' in decided.text
    assert await approvals_by(org, owner, approver) == 1


async def test_a_reject_reason_of_any_shape_is_answered(org: Org) -> None:
    """The reason of a real reject link: NUL, 20,000 characters, repeated, not UTF-8, or a
    body that is no form: each answered, never a 500, and nothing decided; a reason the service
    refuses does not use the link up (it did: "already used" although nothing changed), so the
    mended reason rejects."""
    approver = await org.add_member("Hal Hostile", "manager")
    owner, _submitted, found = await review_mail_links(org, (approver,))
    reject = found[approver.id]["r"]
    form = "application/x-www-form-urlencoded"
    bodies: list[dict[str, Any]] = [
        {"data": {"reason": "no\x00pe"}}, {"data": {"reason": "x" * 20_001}},
        {"data": {"reason": ["a\x00", "b\x00"]}},
        {"content": b"reason=%FF%FE%00", "headers": {"content-type": form}},
        {"content": b'{"reason": "json"}', "headers": {"content-type": "application/json"}},
        {"content": b"\x00" * 5000, "headers": {"content-type": "multipart/form-data"}},
    ]
    for options in bodies:
        answered = await org.http.post(reject, **options)
        assert answered.status_code < 500, (options, answered.status_code, answered.text[:300])
        assert "already used" not in answered.text, options
        assert (await state_of(org, owner))["status"] == "s", options
    refused = await org.http.post(reject, data={"reason": "no\x00pe"})
    assert "contains a NUL character" in refused.text and "Nothing changed" in refused.text
    decided = await org.http.post(reject, data={"reason": "Hours on Friday are wrong"})
    assert 'id="outcome">Rejected<' in decided.text, decided.text[-500:]
    assert (await state_of(org, owner))["status"] == "r"
    again = await org.http.post(reject, data={"reason": "once more"})
    assert "This link was already used" in again.text
