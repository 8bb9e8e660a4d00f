"""The interactive paths of bench.scale that go through the fronts, on a second start of
`timebot serve` on the same databases (after the fan-out figures, which a Slack workspace
would change), now with a Slack workspace (the fake Slack of tests/bot/slack/fake_slack.py, in its
own process, knowing the first approver) and the SMTP listener (DKIM checked against a key
published through TIMEBOT_DKIM_TXT_FILE):

- scale_home_p99: p99 ms from a signed `app_home_opened` of the first approver at
  /slack/events to the fake Slack recording the `views.publish` of their Home (with their
  pending timesheets: checked), polled every 2 ms.
- scale_reply_p99: p99 ms from the start of an approval reply's SMTP transaction (DKIM-signed,
  `approve` with a quoted history, as bench.mail_load writes them) to its receipt delivered
  from the outbox; one reply at a time, each for another approver's timesheet, so the
  approver's list and the organisation are what the size makes them.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import formatdate
from pathlib import Path
from typing import Any

import aiosmtplib
import dkim
import httpx
from sqlalchemy import select

from bench.mail_load import DOMAIN, Key, Mail, free_port, new_key, p99
from bench.mail_world import spawn
from bench.scale_seed import Org
from bench.slack_ack import stop, wait_up
from bot.chat.approve_all import APPROVE_ALL
from plumbing.clock import SYSTEM_CLOCK
from plumbing.db import session_factory
from tests.bot.slack.fake_slack import FakeSlack
from tests.bot.slack.signing import SlackRequests
from timebot.state.models import OutboxMessage
from timebot.tokens import make_token, reply_address

SECRET = "bench-signing-secret"
TOKEN = "xoxb-bench-scale"
APPROVER_USER = "UAPPROVER0"
SEED_DOMAIN = "scale.example"  # the seeded people's addresses (bench.scale_seed)
ALL_PENDING = "{ getPendingApprovals(showAll: true) { submitId pendingApprovers { id name } } }"


class Fronts:
    """The fake Slack's process and the reply key, for a `timebot serve` given `env()`."""

    def __init__(self, root: Path, approver_email: str) -> None:
        self.fake = FakeSlack(free_port())
        self.process = spawn([sys.executable, "-m", "tests.bot.slack.fake_slack",
                              str(self.fake.port), f"{APPROVER_USER}={approver_email}"],
                             None, root / "fake_slack.log")
        wait_up(f"{self.fake.base_url}/response/up", self.process)
        self.smtp_port = free_port()
        made = new_key()
        # The seeded people write from scale.example: its key, published in the TXT file.
        self.key = Key(made.private_pem, made.txt_line.replace(
            "s1._domainkey.example.com", f"s1._domainkey.{SEED_DOMAIN}"))
        self.txt = root / "dkim.txt"
        self.txt.write_text(self.key.txt_line + "\n")

    def env(self) -> dict[str, str]:
        return {"SLACK_BOT_TOKEN": TOKEN, "SLACK_SIGNING_SECRET": SECRET,
                "TIMEBOT_SLACK_API_URL": self.fake.api_url,
                "TIMEBOT_SMTP_PORT": str(self.smtp_port), "TIMEBOT_MAIL_DOMAIN": DOMAIN,
                "TIMEBOT_DKIM_TXT_FILE": str(self.txt)}

    def close(self) -> None:
        stop(self.process)


def _published(http: httpx.AsyncClient, fake: FakeSlack) -> Any:
    return http.get(f"{fake.base_url}/count/views.publish")


async def home_p99(base: str, fronts: Fronts, rounds: int) -> float:
    """p99 ms of the approver's Home, `rounds` times (after 3 to warm)."""
    samples: list[float] = []
    async with httpx.AsyncClient(timeout=60) as http:
        slack = SlackRequests(http, f"{base}/slack/events", SECRET, fronts.fake)
        for index in range(rounds + 3):
            before = (await _published(http, fronts.fake)).json()["count"]
            started = time.perf_counter()
            answer = await slack.event({"type": "app_home_opened", "user": APPROVER_USER,
                                        "tab": "home", "channel": "D" + APPROVER_USER[1:]})
            if answer.status_code != 200:
                raise RuntimeError(f"app_home_opened: HTTP {answer.status_code}")
            deadline = started + 120
            while (await _published(http, fronts.fake)).json()["count"] <= before:
                if time.perf_counter() > deadline:
                    raise RuntimeError("no views.publish within 120 s of app_home_opened")
                await asyncio.sleep(0.002)
            if index >= 3:
                samples.append((time.perf_counter() - started) * 1000)
            else:
                view = (await http.get(f"{fronts.fake.base_url}/last/views.publish")).json()
                if APPROVE_ALL not in json.dumps(view):
                    raise RuntimeError(f"the approver's Home lists nothing to approve: {view}")
    return p99(samples)


def _reply(key: Key, sender: str, token: str) -> Mail:
    """bench.mail_load's approval reply, from a seeded person's address."""
    message = EmailMessage()
    message["From"] = f"Approver <{sender}>"
    message["To"] = reply_address(token, DOMAIN)
    message["Subject"] = "Re: Timesheet"
    message["Date"] = formatdate()
    message["Message-ID"] = f"<{uuid.uuid4().hex}@{SEED_DOMAIN}>"
    message.set_content(
        "Approved, thanks!\n\nOn Mon, 9 Mar 2026 at 09:00, timebot wrote:\n> Reply approve.\n")
    raw = message.as_bytes(policy=SMTP)
    signature = dkim.sign(raw, b"s1", SEED_DOMAIN.encode(), key.private_pem,
                          include_headers=[b"from", b"to", b"subject", b"message-id", b"date"])
    return reply_address(token, DOMAIN), bytes(signature) + raw


def _address(name: str) -> str:
    """The seeded approver's address: "Approver 12" writes from a12@scale.example."""
    return f"a{name.rsplit(' ', 1)[1]}@{SEED_DOMAIN}"


class Replies:
    """Approval replies for timesheets of approvers other than the first (whose Home is
    measured), one timesheet each, taken in order."""

    def __init__(self, pending: list[dict[str, Any]], org: Org) -> None:
        found = [(item["submitId"], approver["id"], _address(approver["name"]))
                 for item in pending for approver in item["pendingApprovers"][:1]]
        # The first approver's own last (a tiny organisation has no other approver).
        self.waiting = sorted(found, key=lambda each: each[1] == org.approver_id)

    def rounds(self, wanted: int, runs: int) -> int:
        """Replies a run may measure (each run warms with 2 more)."""
        return max(1, min(wanted, len(self.waiting) // runs - 2))

    def next(self, fronts: Fronts, secret: str) -> Mail:
        event, approver, address = self.waiting.pop(0)
        token = make_token(secret, "reply", event_id=event, approver_id=approver, stage=0,
                           expires_at_ms=SYSTEM_CLOCK.now_ms() + 7 * 86_400_000)
        return _reply(fronts.key, address, token)


async def _receipt_ms(state_engine: Any, rcpt: str, deadline: float) -> int:
    """When the receipt answering `rcpt` (its Reply-To) was delivered (ms since the epoch)."""
    import email

    seen: set[str] = set()
    while time.perf_counter() < deadline:
        async with session_factory(state_engine)() as session:
            rows = (await session.execute(
                select(OutboxMessage.id, OutboxMessage.raw, OutboxMessage.sent_ms).where(
                    OutboxMessage.kind == "receipt", OutboxMessage.status == "done"))).all()
        for row_id, raw, sent_ms in rows:
            if row_id in seen:
                continue
            seen.add(row_id)
            if sent_ms is not None and "".join(
                    str(email.message_from_bytes(raw)["Reply-To"] or "").split()) == rcpt:
                return int(sent_ms)
        await asyncio.sleep(0.01)
    raise RuntimeError(f"no receipt for the reply to {rcpt}")


async def reply_p99(fronts: Fronts, replies: Replies, secret: str, state_engine: Any,
                    rounds: int) -> float:
    """p99 ms of `rounds` replies sent one after the other (after 2 to warm)."""
    samples: list[float] = []
    for index in range(rounds + 2):
        rcpt, raw = replies.next(fronts, secret)
        started = time.time()
        await aiosmtplib.send(raw, sender=f"approver@{SEED_DOMAIN}", recipients=[rcpt],
                              hostname="127.0.0.1", port=fronts.smtp_port, start_tls=False,
                              timeout=60)
        delivered = await _receipt_ms(state_engine, rcpt, time.perf_counter() + 120)
        if index >= 2:
            samples.append(delivered - started * 1000)
    return p99(samples)
