"""One-click links from the review e-mails, followed in headless Chromium: approve, reject with
a reason, single use (a second click says what happened), tampered and expired links, a stage
that moved on; the service's state is checked over GraphQL after each."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
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

CHROMIUM = Path("/usr/bin/chromium")
HAVE_CHROMIUM = CHROMIUM.exists()
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update"]


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Any]:
    if not HAVE_CHROMIUM:
        pytest.skip("/usr/bin/chromium is absent (Debian package `chromium`; CI installs it)")
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            await chromium.close()


async def review_mail_links(org: Org, approvers: tuple[Member, ...]) -> tuple[
    Member, dict[str, Any], dict[str, dict[str, str]]
]:
    """An owner's submitted timesheet and each approver's links from their review mail."""
    runtime = runtime_of(org)
    owner = await org.add_member("Owen Owner")
    await set_stages(org, approvers)
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
    assert (await state_of(org, owner))["status"] == "a"
