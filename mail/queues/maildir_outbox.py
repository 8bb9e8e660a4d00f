"""The outbox's deliverer without a relay: each message a file of the local Maildir outbox
(`<data dir>/outbox/`), which GET /outbox shows."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path

from mail.queues.relay import DeliveryError


class MaildirOutbox:
    """Without a relay, mail is delivered here (`<data dir>/outbox/new/`) for GET /outbox.

    Each message's file is named after its outbox row (`outbox.<key>`): written in `tmp/`,
    then linked into `new/`, which fails if the name is there (a second attempt, or another
    process at the same moment). A message already in `new/` or moved to `cur/` (a reader's
    `outbox.<key>:2,S`) is not written again."""

    idempotent = True

    def __init__(self, path: Path) -> None:
        self.path = path
        for folder in ("tmp", "new", "cur"):
            (path / folder).mkdir(parents=True, exist_ok=True)

    @staticmethod
    def file_name(key: str) -> str:
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in key)
        return f"outbox.{safe}"

    def delivered(self, key: str) -> bool:
        return self.delivered_name(self.file_name(key))

    def _write(self, name: str, content: bytes) -> None:
        if self.delivered_name(name):
            return
        temporary = self.path / "tmp" / f"{name}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
        try:
            with open(temporary, "xb") as file:
                file.write(content)
            try:
                os.link(temporary, self.path / "new" / name)
            except FileExistsError:  # written by another attempt meanwhile
                pass
        finally:
            temporary.unlink(missing_ok=True)

    def delivered_name(self, name: str) -> bool:
        if os.path.exists(os.path.join(self.path, "new", name)):
            return True
        # In cur/ a reader may have added any info suffix (`:2,S`, `:2,RS`…).
        moved = name + ":"
        return any(entry == name or entry.startswith(moved)
                   for entry in os.listdir(os.path.join(self.path, "cur")))

    async def deliver(
        self, raw: bytes, envelope_from: str, rcpt_tos: list[str], *, key: str
    ) -> None:
        envelope = f"X-Timebot-Envelope-From: <{envelope_from}>\r\n".encode()
        envelope += f"X-Timebot-Envelope-To: {', '.join(rcpt_tos)}\r\n".encode()
        try:
            await asyncio.to_thread(self._write, self.file_name(key), envelope + raw)
        except OSError as error:  # a full disk, a permission: not the message's fault
            raise DeliveryError(f"cannot write to the outbox: {error}", False) from error
