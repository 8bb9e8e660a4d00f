"""Every HTTP route of `timebot serve` (the service's, the pages', the one-click links', the
operator's), with hostile path parameters, query strings and bodies: each is answered — never
a 5xx — on SQLite and PostgreSQL. As a stranger without a session, then as an employee and as
an administrator signed in, whose forms carry their valid CSRF token and origin (so that the
hostile fields get past the form's checks to its handling); signing out comes last.

The routes are read from the running app, so a route added later is swept too."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.routing import Mount, Route

from tests.support import LiveServer, Org
from tests.timebot.signin_support import account, browser, sign_in

# Names the pages' forms and the callbacks' query strings use, and a few they do not.
FIELDS = ("email", "code", "pin", "name", "token", "csrf", "csrf_token", "next", "state",
          "decision", "reason", "comment", "organisation", "apikey", "frequency", "enabled",
          "credential", "id", "language", "timezone", "url", "provider", "issuer",
          "client_id", "client_secret", "domain", "confirm", "error", "session")
VALUES = ("", "x" * 5000, "\x00", "\U0001f642\u202e", "../../../etc/passwd",
          "http://169.254.169.254/latest/meta-data/", "-1", "1e309", "[]", "{\"a\": [",
          "%00%ff", "javascript:alert(1)")
PATH_VALUES = ("x", "..%2f..%2fetc%2fpasswd", "%00", "a" * 3000, "%F0%9F%99%82",
               "0" * 24, "aa.bb.cc")
BODIES: tuple[tuple[str, bytes], ...] = (
    ("application/x-www-form-urlencoded", b""),
    ("application/json", b"{\"a\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["),
    ("application/json", b"[1, 2, 3]"),
    ("multipart/form-data; boundary=zz", b"--zz\r\nContent-Disposition: form-data; name=\"a\""
     b"\r\n\r\n" + b"b" * 70_000 + b"\r\n--zz--\r\n"),
    ("text/plain; charset=utf-16", b"\xff\xfe\x00\xd8"),
    ("application/octet-stream", bytes(range(256)) * 40),
)


def routes(app: Any, prefix: str = "") -> Iterator[tuple[str, set[str]]]:
    for route in app.routes:
        if isinstance(route, Mount):
            yield from routes(route, prefix + route.path)
        elif isinstance(route, Route):
            yield prefix + route.path, set(route.methods or ())


def concrete(path: str) -> Iterator[str]:
    """The path with each hostile value in its parameters (`/a/{token}` → `/a/x`, …)."""
    if "{" not in path:
        yield path
        return
    for value in PATH_VALUES:
        filled = path
        while "{" in filled:
            start = filled.index("{")
            filled = filled[:start] + value + filled[filled.index("}", start) + 1:]
        yield filled


def _form(index: int, csrf: str | None) -> dict[str, str]:
    form = {name: VALUES[(index + offset) % len(VALUES)] for offset, name in enumerate(FIELDS)}
    if csrf is not None:
        form["csrf"] = form["csrf_token"] = csrf
    return form


async def sweep(client: httpx.AsyncClient, live: LiveServer, csrf: str | None = None
                ) -> tuple[int, list[str]]:
    """Every route with hostile values: (requests answered, what failed)."""
    failures: list[str] = []
    calls = 0
    ordered = sorted(routes(live.app), key=lambda route: (route[0] == "/signout", route[0]))
    for path, methods in ordered:
        for url_path in concrete(path):
            attempts: list[tuple[str, dict[str, Any]]] = []
            if "GET" in methods:
                attempts += [("GET", {"params": _form(index, csrf)}) for index in range(3)]
                attempts.append(("GET", {}))
            if "POST" in methods:
                attempts += [("POST", {"data": _form(index, csrf)}) for index in range(3)]
                attempts += [("POST", {"content": body, "headers": {"content-type": kind}})
                             for kind, body in BODIES]
            for method, options in attempts:
                headers = {**options.pop("headers", {}), "origin": live.base_url}
                try:
                    response = await client.request(method, live.base_url + url_path,
                                                     headers=headers, **options)
                except httpx.HTTPError as error:
                    failures.append(f"{method} {url_path[:80]}: {type(error).__name__}")
                    continue
                calls += 1
                if response.status_code >= 500:
                    failures.append(f"{method} {url_path[:80]} {str(options)[:120]}: "
                                    f"{response.status_code} {response.text[:200]}")
    return calls, failures


async def test_every_route_answers_a_stranger_without_a_5xx(live: LiveServer) -> None:
    swept = {path for path, _ in routes(live.app)}
    assert {"/graphql", "/api/v2", "/signin", "/a/{token}", "/account"} <= swept, swept
    async with browser(live) as client:
        calls, failures = await sweep(client, live)
    assert calls > 500
    assert not failures, f"{len(failures)} failed:\n" + "\n".join(failures)


@pytest.mark.parametrize("role", ["employee", "admin"])
async def test_every_route_answers_a_signed_in_person_without_a_5xx(org: Org, role: str) -> None:
    person = org.admin if role == "admin" else await org.add_member("Erin Employee")
    async with browser(org.live) as client:
        await sign_in(org.live, client, person.email)
        _page, csrf = await account(client)
        calls, failures = await sweep(client, org.live, csrf)
    assert calls > 500
    assert not failures, f"{len(failures)} failed:\n" + "\n".join(failures)
