"""Helpers of the sign-in tests: a browser-like HTTP client (its own cookie jar and client
address), the code read from the Maildir outbox, the CSRF token read from the account page."""

from __future__ import annotations

import asyncio
import mailbox
import re
import uuid
from email import message_from_bytes
from email.header import decode_header, make_header
from pathlib import Path
from typing import Any

import httpx

from tests.support import LiveServer

CODE_SUBJECT = re.compile(r"sign-in code: (\d{6})")


def new_ip() -> str:
    """A client address of its own for each browser (sent as X-Forwarded-For, which uvicorn
    honours from the loopback proxy): the per-address rate limit is then the test's own."""
    value = uuid.uuid4().int
    return f"10.{value % 250}.{(value >> 8) % 250}.{(value >> 16) % 250 + 1}"


def browser(live: LiveServer, ip: str | None = None) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=live.base_url,
        timeout=30,
        follow_redirects=False,
        headers={"x-forwarded-for": ip or new_ip(), "user-agent": "signin-test"},
    )


def local_browser(live: LiveServer) -> httpx.AsyncClient:
    """A browser on the server's own machine: loopback, no forwarding header."""
    return httpx.AsyncClient(
        base_url=live.base_url, timeout=30, follow_redirects=False,
        headers={"user-agent": "signin-test"},
    )


def codes_sent_to(outbox: Path, address: str) -> list[str]:
    found: list[str] = []
    if not outbox.exists():
        return found
    for _key, message in mailbox.Maildir(str(outbox), create=False).iteritems():
        parsed = message_from_bytes(message.as_bytes())
        to = str(make_header(decode_header(parsed.get("To", ""))))
        subject = str(make_header(decode_header(parsed.get("Subject", ""))))
        match = CODE_SUBJECT.search(subject)
        if match and address.lower() in to.lower():
            found.append(match.group(1))
    return found


async def wait_for_code(live: LiveServer, address: str, seen: list[str] | None = None) -> str:
    """The code mailed to `address` that is not among `seen` (the codes there were before
    asking: the Maildir lists its messages in no particular order)."""
    for _ in range(300):
        fresh = [
            code for code in codes_sent_to(live.settings.outbox_dir, address)
            if code not in (seen or [])
        ]
        if fresh:
            assert len(fresh) == 1, f"several new codes for {address}: {fresh}"
            return fresh[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no sign-in code reached {address}")


async def request_code(client: httpx.AsyncClient, email: str) -> httpx.Response:
    return await client.post("/signin/code", data={"email": email})


async def sign_in(live: LiveServer, client: httpx.AsyncClient, email: str) -> None:
    seen = codes_sent_to(live.settings.outbox_dir, email)
    response = await request_code(client, email)
    assert response.status_code == 200, response.text
    code = await wait_for_code(live, email, seen)
    response = await client.post("/signin/pin", data={"pin": code})
    assert response.status_code == 303, response.text
    assert response.headers["location"] == "/account"


def csrf_of(page: str) -> str:
    match = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert match, "the page has no CSRF token"
    return match.group(1)


async def account(client: httpx.AsyncClient) -> tuple[str, str]:
    """The account page's HTML and its CSRF token."""
    response = await client.get("/account")
    assert response.status_code == 200, response.text
    return response.text, csrf_of(response.text)


async def gql(
    client: httpx.AsyncClient, query: str, variables: dict[str, Any] | None = None,
    csrf: str | None = None,
) -> dict[str, Any]:
    headers = {"x-timebot-csrf": csrf} if csrf else {}
    response = await client.post(
        "/graphql", json={"query": query, "variables": variables or {}}, headers=headers
    )
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]
