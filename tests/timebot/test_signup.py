"""Signing up over GraphQL and the /signup pages (SQLite and PostgreSQL): the code arrives by
mail through the outbox; `signup` in the same browser creates the organisation with the
person as its administrator (audited under them); reuse, wrong and expired codes, bad input
and the rate limits (each naming its limit) are refused."""

from __future__ import annotations

import re
import uuid

from tests.support import Org
from tests.timebot.joining_support import wait_for_mail
from tests.timebot.signin_support import account, browser, gql, new_ip
from tests.timebot.test_signin import ME

REQUEST = """mutation($o: SvcName!, $n: SvcName!, $e: SvcEmail!, $c: SvcCountry) {
  requestSignup(organisation: $o, name: $n, email: $e, country: $c) { expire { ts } debugPin } }"""
SIGNUP = """mutation($pin: Int!) { signup(pin: $pin) {
  person { id name email role { name } } organisation { id name } expire { ts } } }"""
CODE = re.compile(r"sign-up code: (\d{6})")


def _address() -> str:
    return f"founder.{uuid.uuid4().hex[:10]}@example.com"


async def _code(org: Org, address: str, seen: frozenset[str] = frozenset()) -> int:
    text = await wait_for_mail(org.live, address, "sign-up code", seen)
    match = re.search(r"^\s+(\d{6})$", text, re.MULTILINE)
    assert match, text
    return int(match.group(1))


async def test_the_mailed_code_creates_the_organisation_once(org: Org) -> None:
    address = _address()
    async with browser(org.live) as client:
        asked = await gql(client, REQUEST, {"o": "Initech", "n": "Peter Gibbons",
                                            "e": address.upper(), "c": "us"})
        assert asked["data"]["requestSignup"]["debugPin"] is None  # not a --demo server
        text = await wait_for_mail(org.live, address, "sign-up code")
        assert "to create the organisation Initech" in text and "/signup" in text
        pin = await _code(org, address)
        made = (await gql(client, SIGNUP, {"pin": pin}))["data"]["signup"]
        assert made["person"]["name"] == "Peter Gibbons" and made["person"]["email"] == address
        assert made["person"]["role"] == {"name": "Admin"}
        assert made["organisation"]["name"] == "Initech"
        _html, csrf = await account(client)
        me = (await gql(client, ME, csrf=csrf))["data"]["currentPerson"]
        assert me == {"id": made["person"]["id"]}
        trail = await gql(client, "{ getAuditTrails(operations: [\"signup\"]) { person { id } } }",
                          csrf=csrf)
        assert trail["data"]["getAuditTrails"] == [{"person": {"id": made["person"]["id"]}}]
        # The code was single use.
        again = await gql(client, SIGNUP, {"pin": pin})
        assert again["data"] is None
        assert "not valid" in again["errors"][0]["message"] or \
            "No sign-up" in again["errors"][0]["message"]
    async with browser(org.live) as other:  # nor does another browser hold it
        assert "No sign-up is waiting" in (await gql(other, SIGNUP, {"pin": pin}))[
            "errors"][0]["message"]


async def test_wrong_expired_and_bad_input_are_refused(org: Org) -> None:
    address = _address()
    async with browser(org.live) as client:
        bad = await gql(client, REQUEST, {"o": "Initech", "n": "P", "e": address, "c": "USA"})
        assert bad["errors"][0]["message"].startswith('Invalid argument "country"')
        control = await gql(client, REQUEST, {"o": "Ini\u0000tech", "n": "P", "e": address})
        assert 'Invalid argument "organisation"' in control["errors"][0]["message"]
        await gql(client, REQUEST, {"o": "Initech", "n": "P", "e": address})
        pin = await _code(org, address)
        wrong = 100_000 if pin != 100_000 else 100_001
        for _ in range(5):
            body = await gql(client, SIGNUP, {"pin": wrong})
            assert 'Invalid argument "pin"' in body["errors"][0]["message"]
        assert "void" in (await gql(client, SIGNUP, {"pin": pin}))["errors"][0]["message"]
    second = _address()
    async with browser(org.live) as client:
        await gql(client, REQUEST, {"o": "Initech", "n": "P", "e": second})
        pin = await _code(org, second)
        org.live.clock.advance(5 * 60_000 + 1000)
        expired = await gql(client, SIGNUP, {"pin": pin})
        assert 'Invalid argument "pin"' in expired["errors"][0]["message"]
    # Nothing else runs without credentials.
    async with browser(org.live) as client:
        anonymous = await gql(client, '{ checkEmailExists(email: "a@b.cd") }')
        assert anonymous["errors"][0]["message"] == "APIKeyError:InvalidKey"


async def test_rate_limits_name_the_limit(org: Org) -> None:
    address = _address()
    for _ in range(5):
        async with browser(org.live) as client:
            assert "errors" not in await gql(client, REQUEST, {"o": "X", "n": "P", "e": address})
    async with browser(org.live) as client:
        sixth = await gql(client, REQUEST, {"o": "X", "n": "P", "e": address})
        assert sixth["errors"][0]["message"] == (
            "Rate limit: signing up is allowed at most 5 codes every 15 minutes per e-mail "
            "address; try again later")
    ip = new_ip()
    for _ in range(10):
        async with browser(org.live, ip) as client:
            assert "errors" not in await gql(client, REQUEST, {"o": "X", "n": "P",
                                                               "e": _address()})
    async with browser(org.live, ip) as client:
        eleventh = await gql(client, REQUEST, {"o": "X", "n": "P", "e": _address()})
        assert "at most 10 codes every 15 minutes per client address" in \
            eleventh["errors"][0]["message"]


async def test_the_signup_pages(org: Org) -> None:
    address = _address()
    async with browser(org.live) as client:
        form = await client.get("/signup")
        assert form.status_code == 200 and 'name="organisation"' in form.text
        origin = {"origin": org.live.base_url}
        sent = await client.post("/signup/code", headers=origin, data={
            "organisation": "Hooli", "name": "Gavin", "email": address, "country": ""})
        assert sent.status_code == 200 and 'name="pin"' in sent.text
        pin = await _code(org, address)
        done = await client.post("/signup/pin", headers=origin, data={"pin": f"{pin:06d}"})
        assert done.status_code == 303 and done.headers["location"] == "/account"
        html, _csrf = await account(client)
        assert "Gavin" in html
        cross = await client.post("/signup/code", headers={"origin": "https://evil.example"},
                                  data={"organisation": "X", "name": "Y", "email": address})
        assert cross.status_code == 403
