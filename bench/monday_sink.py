"""The relay of bench.monday: an aiosmtpd sink in a process of its own (TIMEBOT_SMTP_RELAY
points at it) that answers 250 to every message and records when each arrived, and the bench's
reading of that record.

    python -m bench.monday_sink PORT DIR

writes each message to DIR/<n>.eml and a line to DIR/index.jsonl: {"at": arrival (s since the
epoch), "n": n, "from": MAIL FROM, "to": [RCPT TO…]}, flushed before the 250.
"""

from __future__ import annotations

import asyncio
import email
import json
import sys
import time
from dataclasses import dataclass, field
from email.message import Message
from email.utils import parseaddr
from pathlib import Path
from typing import Any

from aiosmtpd.smtp import SMTP, Envelope, Session

from timebot.secret_key.tokens import TokenError, verify_token

REMINDER_SUBJECT = "Please submit your timesheet"


class _Recorder:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.index = (directory / "index.jsonl").open("a", encoding="utf-8")
        self.count = 0

    async def handle_DATA(self, server: Any, session: Session, envelope: Envelope) -> str:
        arrived = time.time()
        self.count += 1
        (self.directory / f"{self.count}.eml").write_bytes(bytes(envelope.original_content
                                                                 or b""))
        self.index.write(json.dumps({"at": arrived, "n": self.count,
                                     "from": envelope.mail_from,
                                     "to": list(envelope.rcpt_tos)}) + "\n")
        self.index.flush()
        return "250 2.0.0 OK"


async def _serve(port: int, directory: Path) -> None:
    recorder = _Recorder(directory)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: SMTP(recorder, data_size_limit=None),
                                      "127.0.0.1", port)
    async with server:
        await server.serve_forever()


@dataclass
class Arrival:
    at: float
    mail_from: str
    to: list[str]
    headers: Message
    path: Path

    def header(self, name: str) -> str:
        return "".join(str(self.headers.get(name, "") or "").split())


@dataclass
class Arrivals:
    """What the sink has recorded so far, sorted into the mails bench.monday follows: review
    requests by submission, receipts by the reply they answer, period reminders."""

    directory: Path
    secret: str
    reviews: dict[str, list[Arrival]] = field(default_factory=dict)
    receipts: dict[str, list[Arrival]] = field(default_factory=dict)
    reminders: list[Arrival] = field(default_factory=list)
    others: int = 0
    total: int = 0
    _read: int = 0

    def refresh(self) -> None:
        """Reads the lines written since the last call (whole lines only)."""
        index = self.directory / "index.jsonl"
        if not index.exists():
            return
        with index.open("rb") as lines:
            lines.seek(self._read)
            chunk = lines.read()
        complete = chunk[: chunk.rfind(b"\n") + 1]
        self._read += len(complete)
        for line in complete.splitlines():
            record = json.loads(line)
            self.total += 1
            path = self.directory / f"{record['n']}.eml"
            head = path.read_bytes().split(b"\r\n\r\n", 1)[0]
            self._sort(Arrival(record["at"], record["from"], record["to"],
                               email.message_from_bytes(head + b"\r\n\r\n"), path))

    def _sort(self, mail: Arrival) -> None:
        if mail.mail_from in ("", "<>") and mail.header("In-Reply-To"):
            self.receipts.setdefault(mail.header("In-Reply-To"), []).append(mail)
            return
        event = self._review_event(str(mail.headers.get("Reply-To", "") or ""))
        if event is not None:
            self.reviews.setdefault(event, []).append(mail)
        elif str(mail.headers.get("Subject", "")).startswith(REMINDER_SUBJECT):
            self.reminders.append(mail)
        else:
            self.others += 1

    def _review_event(self, reply_to: str) -> str | None:
        """The submission a review request's reply address names (its signed token)."""
        local = parseaddr(reply_to)[1].split("@", 1)[0]
        if "+" not in local:
            return None
        try:
            token = verify_token(self.secret, "reply", local.split("+", 1)[1],
                                 now_ms=int(time.time() * 1000))
        except TokenError:
            return None
        return token.event_id


if __name__ == "__main__":
    import uvloop

    Path(sys.argv[2]).mkdir(parents=True, exist_ok=True)
    uvloop.run(_serve(int(sys.argv[1]), Path(sys.argv[2])))
