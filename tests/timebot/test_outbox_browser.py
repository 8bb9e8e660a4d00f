"""GET /outbox in headless Chromium: a review e-mail shows its HTML part (sandboxed: no script
runs, its links open in the tab), its Approve link opens the confirmation page and decides
nothing; the page's button decides. Outside the demo (this server) the page has no "Answer as …"
form and says why."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.mail.reviews_support import (
    STATE,
    WEEK,
    WEEK_END,
    add_record,
    outbox_rows,
    runtime_of,
    set_stages,
    settle,
    submit,
    wait_for,
)
from tests.support import Member, Org
from tests.timebot.chromium import chromium


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Any]:
    async with chromium() as launched:
        yield launched


async def status_of(org: Org, owner: Member) -> str:
    data = await org.admin.gql(STATE, {"p": owner.id, "s": WEEK, "e": WEEK_END})
    return str(data["getApprovalState"]["status"])


async def test_outbox_shows_the_html_part_and_its_approve_link_works(
    org: Org, browser: Any, tmp_path: Path
) -> None:
    runtime = runtime_of(org)
    approver = await org.add_member("Vera Viewer", "manager")
    owner = await org.add_member("Hugo Html")
    await set_stages(org, (approver,))
    await runtime.subscriptions.ensure(org.id)
    await add_record(owner, hours=5)
    await submit(owner)
    await settle(runtime, org.id, 1)
    await wait_for(lambda: outbox_rows(runtime, approver.email, "review"), what="review mail")

    page = await browser.new_page(viewport={"width": 1000, "height": 1400})
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog.message))
    try:
        async def listed() -> bool:
            await page.goto(f"{org.live.base_url}/outbox")
            return await page.locator("#messages a", has_text="Hugo Html").count() == 1

        await wait_for(listed, what="the review e-mail in /outbox")
        await page.locator("#messages a", has_text="Hugo Html").click()
        frame_element = page.locator("#html-body")
        await frame_element.wait_for()
        sandbox = await frame_element.get_attribute("sandbox") or ""
        assert "allow-scripts" not in sandbox and "allow-same-origin" not in sandbox
        assert "allow-forms" not in sandbox
        assert await page.locator("#answer-as").count() == 0
        assert "--demo" in await page.locator("#answer-demo-only").inner_text()
        frame = page.frame_locator("#html-body")
        approve = frame.locator("a[href*='/a/']").first
        await approve.wait_for()
        assert "Hugo Html" in await frame.locator("body").inner_text()
        await page.screenshot(path=str(tmp_path / "outbox-message.png"), full_page=True)

        await approve.click()  # the whole tab goes to the confirmation page
        await page.wait_for_url("**/a/**")
        assert await page.locator("#person").inner_text() == "Hugo Html"
        assert await status_of(org, owner) == "s", "opening the link decides nothing"
        await page.screenshot(path=str(tmp_path / "approve-confirmation.png"), full_page=True)
        await page.click("#approve")
        await page.locator("#outcome").wait_for()
        assert await page.locator("#outcome").inner_text() == "Approved"
        assert await status_of(org, owner) == "a"
    finally:
        await page.close()
    assert dialogs == []
