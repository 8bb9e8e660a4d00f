"""The full-work baseline for mail replies: bench.same_work_baseline, doing all of an approval's
required work rather than the plainest approval (issue #26, "the cost of one reply").

On top of the same-work program (SMTP DATA committed to an inbox table before the 250, DKIM
verified, the reply token's HMAC checked, one loopback HTTP POST, a receipt to a Maildir), each
reply:

1. sends the approver's API key with the POST; the endpoint authenticates it (SHA-256 of the
   key looked up with its person, refused when revoked or the person is archived);
2. resolves the timesheet's current stage and checks the approver is one of its approvers, and
   that the stage still waits (quorum "any");
3. in one SQLite transaction writes the approval event, the timesheet's state, the audit row
   (the operation and its arguments as JSON), the Journal entry, a signed event row (HMAC-SHA256
   over its JSON payload, as webhooks are signed) and the reply's words as a Journal message;
4. answers with the owner (name, address), so that the program writes the receipt and the
   owner's notice to the Maildir.

Plain sqlite3, no ORM, no GraphQL. Run by bench.mail_replies in a process of its own:
    python -m bench.full_work_baseline SMTP_PORT HTTP_PORT DIR SECRET_KEY DKIM_TXT_FILE
"""

from __future__ import annotations

import email
import hashlib
import hmac
import json
import time
import uuid
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse

from bench.same_work_baseline import DOMAIN, Program, run_program

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS persons (id TEXT PRIMARY KEY, name TEXT, email TEXT, "
    "archived INTEGER)",
    "CREATE TABLE IF NOT EXISTS api_keys (hash TEXT PRIMARY KEY, person TEXT, revoked INTEGER)",
    "CREATE TABLE IF NOT EXISTS stage_approvers (stage INTEGER, person TEXT, "
    "PRIMARY KEY (stage, person))",
    "CREATE TABLE IF NOT EXISTS sheets (id TEXT PRIMARY KEY, owner TEXT, stage INTEGER, "
    "status TEXT)",
    "CREATE TABLE IF NOT EXISTS approval_events (id TEXT PRIMARY KEY, sheet TEXT, stage INTEGER, "
    "approver TEXT, kind TEXT, at REAL)",
    "CREATE TABLE IF NOT EXISTS audit (id TEXT PRIMARY KEY, actor TEXT, operation TEXT, "
    "arguments TEXT, at REAL)",
    "CREATE TABLE IF NOT EXISTS journal (id TEXT PRIMARY KEY, sheet TEXT, author TEXT, kind TEXT, "
    "text TEXT, at REAL)",
    "CREATE TABLE IF NOT EXISTS events (id TEXT PRIMARY KEY, payload TEXT, signature TEXT, "
    "at REAL)",
)
OWNER = "owner"


def api_key_for(secret: str, person: str) -> str:
    """The approver's key, as timebot's directory holds one per person."""
    return hmac.new(secret.encode(), f"key:{person}".encode(), hashlib.sha256).hexdigest()


def reply_words(message: email.message.Message) -> str:
    """The reply's own words, kept as a Journal message: its first text part (decoded) up to
    the signature ("-- "), the quote's attribution ("On … wrote:") or Outlook's rule above the
    quoted headers, without quoted (`>`) lines."""
    for part in message.walk():
        if part.get_content_type() == "text/plain":
            payload = part.get_payload(decode=True)
            text = payload.decode(part.get_content_charset() or "utf-8", "replace") \
                if isinstance(payload, bytes) else ""
            words = []
            for line in text.splitlines():
                if line.rstrip() == "--" or line.startswith("____") or (
                        line.startswith("On ") and line.rstrip().endswith("wrote:")):
                    break
                if not line.startswith(">"):
                    words.append(line)
            return "\n".join(words).strip()
    return ""


class FullProgram(Program):
    def __init__(self, directory: Path, secret: str, txt_file: Path, http_port: int) -> None:
        super().__init__(directory, secret, txt_file, http_port)
        db = self.service
        for statement in SCHEMA:
            db.execute(statement)
        db.execute("INSERT OR IGNORE INTO persons VALUES (?, 'Bob', 'bob@example.com', 0)",
                   (OWNER,))
        db.executemany("INSERT OR IGNORE INTO sheets VALUES (?, ?, 0, 'submitted')",
                       [(event, OWNER) for (event,) in
                        db.execute("SELECT id FROM timesheets").fetchall()])
        self.known: set[str] = set()

    def _know(self, approver: str, address: str) -> None:
        """The approver's person, key and place in the workflow: set up once per approver
        (what an organisation holds before any reply)."""
        if approver in self.known:
            return
        key_hash = hashlib.sha256(api_key_for(self.secret, approver).encode()).hexdigest()
        db = self.service
        db.execute("INSERT OR IGNORE INTO persons VALUES (?, 'Approver', ?, 0)",
                   (approver, address))
        db.execute("INSERT OR IGNORE INTO api_keys VALUES (?, ?, 0)", (key_hash, approver))
        db.execute("INSERT OR IGNORE INTO stage_approvers VALUES (0, ?)", (approver,))
        self.known.add(approver)

    async def process(self, row_id: str, raw: bytes, recipients: list[str]) -> None:
        message, token = self.verified(raw, recipients)
        self._know(token.approver_id, str(message["From"]))
        assert self.http is not None
        response = await self.http.post(self.url, json={
            "event": token.event_id, "stage": token.stage, "decision": "approve",
            "words": reply_words(message),
        }, headers={"Authorization": f"Bearer {api_key_for(self.secret, token.approver_id)}"})
        response.raise_for_status()
        owner = response.json()["owner"]
        subject = message["Subject"]
        for to, text in ((message["From"], "Your approval was recorded."),
                         (f"{owner['name']} <{owner['email']}>",
                          "Your timesheet was approved.")):
            self.maildir.add((
                f"From: timebot <timebot@{DOMAIN}>\r\nTo: {to}\r\n"
                f"Subject: Approved: {subject}\r\nIn-Reply-To: {message['Message-ID']}\r\n"
                f"Message-ID: <{uuid.uuid4().hex}@{DOMAIN}>\r\n\r\n{text}\r\n").encode())
        self.inbox.execute("UPDATE inbox SET status = 'done' WHERE id = ?", (row_id,))

    async def approve(self, request: Request) -> JSONResponse:
        body = json.loads(await request.body())
        key = request.headers.get("authorization", "").removeprefix("Bearer ")
        db = self.service
        now = time.time()
        db.execute("BEGIN IMMEDIATE")
        try:
            actor = db.execute(
                "SELECT p.id FROM api_keys k JOIN persons p ON p.id = k.person "
                "WHERE k.hash = ? AND k.revoked = 0 AND p.archived = 0",
                (hashlib.sha256(key.encode()).hexdigest(),)).fetchone()
            if actor is None:
                db.execute("ROLLBACK")
                return JSONResponse({"error": "APIKeyError:InvalidKey"}, 401)
            sheet = db.execute("SELECT owner, stage, status FROM sheets WHERE id = ?",
                               (body["event"],)).fetchone()
            allowed = sheet is not None and db.execute(
                "SELECT 1 FROM stage_approvers WHERE stage = ? AND person = ?",
                (sheet[1], actor[0])).fetchone()
            if sheet is None or sheet[2] != "submitted" or not allowed:
                db.execute("ROLLBACK")
                return JSONResponse({"error": "not waiting for this approver"}, 409)
            event_id = uuid.uuid4().hex
            db.execute("INSERT INTO approval_events VALUES (?, ?, ?, ?, 'approve', ?)",
                       (event_id, body["event"], sheet[1], actor[0], now))
            db.execute("UPDATE sheets SET status = 'approved' WHERE id = ?", (body["event"],))
            db.execute("INSERT INTO audit VALUES (?, ?, 'approveTimesheet', ?, ?)",
                       (uuid.uuid4().hex, actor[0], json.dumps({"id": body["event"]}), now))
            db.execute("INSERT INTO journal VALUES (?, ?, ?, 'approved', '', ?)",
                       (uuid.uuid4().hex, body["event"], actor[0], now))
            payload = json.dumps({"type": "timesheet.approved", "id": event_id,
                                  "timesheet": body["event"], "by": actor[0], "at": now})
            signature = hmac.new(self.secret.encode(), payload.encode(),
                                 hashlib.sha256).hexdigest()
            db.execute("INSERT INTO events VALUES (?, ?, ?, ?)",
                       (event_id, payload, signature, now))
            if body["words"]:
                db.execute("INSERT INTO journal VALUES (?, ?, ?, 'message', ?, ?)",
                           (uuid.uuid4().hex, body["event"], actor[0], body["words"], now))
            owner = db.execute("SELECT name, email FROM persons WHERE id = ?",
                               (sheet[0],)).fetchone()
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return JSONResponse({"ok": True, "owner": {"name": owner[0], "email": owner[1]}})


if __name__ == "__main__":
    run_program(FullProgram)
