"""Debian's headless Chromium, driven by Playwright, for the tests that look at pages."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
# Without the background-networking flags Chromium calls out at start, which this machine's
# closed network refuses.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
AVAILABLE = CHROMIUM.exists()


@asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    """A launched browser; skips the test where Chromium is truly absent."""
    if not AVAILABLE:
        pytest.skip("/usr/bin/chromium is absent (Debian package `chromium`; CI installs it)")
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            await browser.close()
