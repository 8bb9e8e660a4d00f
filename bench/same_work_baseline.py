"""The same-work baseline for mail replies: the plainest single-process program that does what
an approval reply needs, on the stack timebot uses (aiosmtpd, dkimpy, SQLite, Starlette under
uvicorn, httpx over aiohttp):

1. the SMTP DATA is inserted into an inbox table (committed) before the 250;
2. the message is parsed (compat32), its DKIM signature verified against the key in a TXT
   file, its reply token's HMAC checked;
3. one loopback HTTP POST to an endpoint of the same process that does a SELECT, an INSERT and
   an UPDATE in one SQLite transaction (the approval);
4. a receipt is written to a Maildir, and the inbox row is marked done.

Run by bench.mail_replies in a process of its own:
    python -m bench.same_work_baseline SMTP_PORT HTTP_PORT DIR SECRET_KEY DKIM_TXT_FILE
DIR/events.txt lists the submit event ids to approve (one a line); progress is read from
DIR/inbox.db (rows with status 'done').
"""

from __future__ import annotations

import asyncio
import email
import json
import mailbox
import sqlite3
import sys
import time
import uuid
from email import policy
from email.message import Message
from pathlib import Path
from typing import Any

import dkim
import httpx
import uvicorn
from aiosmtpd.smtp import SMTP, Envelope, Session
from httpx_aiohttp import AiohttpTransport
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from timebot.secret_key.tokens import ApprovalToken, verify_token

DOMAIN = "timebot.localhost"


def open_db(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    return db


def inbox_done(directory: Path) -> int:
    """How many replies the program has finished (read by the bench, from outside)."""
    path = directory / "inbox.db"
    if not path.exists():
        return 0
    db = sqlite3.connect(path)
    try:
        return int(db.execute("SELECT count(*) FROM inbox WHERE status = 'done'").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        db.close()


class Program:
    def __init__(self, directory: Path, secret: str, txt_file: Path, http_port: int) -> None:
        self.secret = secret
        self.inbox = open_db(directory / "inbox.db")
        self.inbox.execute("CREATE TABLE IF NOT EXISTS inbox (id TEXT PRIMARY KEY, raw BLOB, "
                           "status TEXT, received REAL)")
        self.service = open_db(directory / "service.db")
        self.service.execute("CREATE TABLE IF NOT EXISTS timesheets (id TEXT PRIMARY KEY, "
                             "status TEXT, approver TEXT)")
        self.service.execute("CREATE TABLE IF NOT EXISTS decisions (id TEXT PRIMARY KEY, "
                             "timesheet TEXT, approver TEXT, decision TEXT, at REAL)")
        events = (directory / "events.txt").read_text().split()
        self.service.executemany("INSERT OR IGNORE INTO timesheets VALUES (?, 's', NULL)",
                                 [(event,) for event in events])
        txt = txt_file.read_text().split(" ", 1)
        self.txt = {txt[0].encode() + b".": txt[1].strip().encode()}
        self.maildir = mailbox.Maildir(directory / "outbox", create=True)
        self.url = f"http://127.0.0.1:{http_port}/approve"
        self.http: httpx.AsyncClient | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    def dnsfunc(self, name: bytes, timeout: int = 5) -> bytes:
        return self.txt.get(name, b"")

    async def handle_DATA(self, server: Any, session: Session, envelope: Envelope) -> str:
        row_id = uuid.uuid4().hex
        raw = bytes(envelope.original_content or b"")
        self.inbox.execute("INSERT INTO inbox VALUES (?, ?, 'queued', ?)",
                           (row_id, raw, time.time()))
        task = asyncio.create_task(self.process(row_id, raw, list(envelope.rcpt_tos)))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return "250 2.0.0 OK"

    def verified(self, raw: bytes, recipients: list[str]) -> tuple[Message, ApprovalToken]:
        """The message parsed, its DKIM signature and its reply token's HMAC checked."""
        message = email.message_from_bytes(raw, policy=policy.compat32)
        if not dkim.verify(raw, dnsfunc=self.dnsfunc):
            raise RuntimeError("DKIM does not verify")
        local = recipients[0].split("@", 1)[0]
        return message, verify_token(self.secret, "reply", local.split("+", 1)[1],
                                     now_ms=int(time.time() * 1000))

    async def process(self, row_id: str, raw: bytes, recipients: list[str]) -> None:
        message, token = self.verified(raw, recipients)
        assert self.http is not None
        response = await self.http.post(self.url, json={
            "event": token.event_id, "approver": token.approver_id, "decision": "approve",
        })
        response.raise_for_status()
        receipt = (f"From: timebot <timebot@{DOMAIN}>\r\nTo: {message['From']}\r\n"
                   f"Subject: Approved: {message['Subject']}\r\n"
                   f"In-Reply-To: {message['Message-ID']}\r\n"
                   f"Message-ID: <{uuid.uuid4().hex}@{DOMAIN}>\r\n\r\n"
                   "Your approval was recorded.\r\n")
        self.maildir.add(receipt.encode())
        self.inbox.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (row_id,))

    async def approve(self, request: Request) -> JSONResponse:
        body = json.loads(await request.body())
        db = self.service
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute("SELECT status FROM timesheets WHERE id = ?",
                             (body["event"],)).fetchone()
            if row is None or row[0] != "s":
                db.execute("ROLLBACK")
                return JSONResponse({"error": "not waiting for approval"}, 409)
            db.execute("INSERT INTO decisions VALUES (?, ?, ?, ?, ?)",
                       (uuid.uuid4().hex, body["event"], body["approver"], body["decision"],
                        time.time()))
            db.execute("UPDATE timesheets SET status = 'a', approver = ? WHERE id = ?",
                       (body["approver"], body["event"]))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return JSONResponse({"ok": True})


async def main(smtp_port: int, http_port: int, directory: Path, secret: str,
               txt_file: Path, program_class: type[Program] = Program) -> None:
    program = program_class(directory, secret, txt_file, http_port)
    app = Starlette(routes=[Route("/approve", program.approve, methods=["POST"])])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=http_port,
                                           log_level="warning", access_log=False))
    serving = asyncio.create_task(server.serve())
    program.http = httpx.AsyncClient(transport=AiohttpTransport(), timeout=30)
    loop = asyncio.get_running_loop()
    smtp = await loop.create_server(lambda: SMTP(program), "127.0.0.1", smtp_port)
    async with smtp:
        await serving


def run_program(program_class: type[Program]) -> None:
    """The program of `program_class` with the command line's ports, directory and keys."""
    import uvloop

    args = sys.argv[1:]
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(main(int(args[0]), int(args[1]), Path(args[2]), args[3], Path(args[4]),
                        program_class))


if __name__ == "__main__":
    run_program(Program)
