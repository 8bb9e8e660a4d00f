"""Helpers of the invitation and sign-up tests: the mails in the Maildir outbox (subject and
text), the invitation link in one, the GraphQL documents."""

from __future__ import annotations

import asyncio
import re
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

from tests.support import LiveServer

LINK = re.compile(r"(https?://\S+)/join/([0-9a-f]{24})\?token=([A-Za-z0-9_\-]+)")

INVITE = """mutation($ids: [SvcId]!) { invitePersons(ids: $ids) {
  invited { id email expiration { ts } organisation { id } }
  alreadyInOrg { id } noEmail { id } } }"""
JOIN = """mutation($o: SvcId!, $i: SvcId!) { join(organisationId: $o, invitationId: $i) {
  person { id name } organisation { id } expire { ts } tookOverBy { id } } }"""
GET_INVITATION = "query($id: SvcId!) { getInvitation(id: $id) { id email expiration { ts } }}"


def maildir_files(outbox: Path, containing: str) -> list[Path]:
    """The Maildir's message files whose bytes hold `containing` (read, not parsed: the
    session's outbox may hold thousands)."""
    needle = containing.lower().encode()
    return [path for folder in ("new", "cur") if (outbox / folder).is_dir()
            for path in (outbox / folder).iterdir() if needle in path.read_bytes().lower()]


def mails_to(outbox: Path, address: str) -> list[tuple[str, str]]:
    """(subject, text) of every message to `address` in the Maildir."""
    found: list[tuple[str, str]] = []
    for path in maildir_files(outbox, address):
        parsed = message_from_bytes(path.read_bytes(), policy=policy.default)
        assert isinstance(parsed, EmailMessage)
        if address.lower() not in str(parsed.get("To", "")).lower():
            continue
        body = parsed.get_body(("plain",))
        text = body.get_content() if body is not None else ""
        found.append((str(parsed.get("Subject", "")), str(text)))
    return found


async def wait_for_mail(live: LiveServer, address: str, containing: str,
                        seen: frozenset[str] = frozenset()) -> str:
    """The text of the one mail to `address` whose subject holds `containing` and whose text
    is not among `seen` (the Maildir lists its messages in no particular order)."""
    for _ in range(400):
        fresh = [text for subject, text in mails_to(live.settings.outbox_dir, address)
                 if containing in subject and text not in seen]
        if fresh:
            assert len(fresh) == 1, f"several new mails to {address}"
            return fresh[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no mail with {containing!r} reached {address}")


def invitation_link(text: str) -> tuple[str, str, str]:
    """(path with query, invitation id, token) of the link in an invitation's text."""
    match = LINK.search(text)
    assert match, f"no invitation link in {text!r}"
    return f"/join/{match.group(2)}?token={match.group(3)}", match.group(2), match.group(3)
