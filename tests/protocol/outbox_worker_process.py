"""A timebot outbox worker in a process of its own, for the crash tests: it drains the outbox
of the database at argv[1] into the Maildir at argv[2], and prints its owner name. The disk is
slow here (each message's write is followed by a pause) so that a SIGKILL lands mid-batch."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from mail.queues.outbox import MaildirOutbox, Outbox, OutboxWorker
from plumbing.clock import Clock
from timebot.state.db import create_engine, session_factory


class SlowDisk(MaildirOutbox):
    async def deliver(
        self, raw: bytes, envelope_from: str, rcpt_tos: list[str], *, key: str
    ) -> None:
        await super().deliver(raw, envelope_from, rcpt_tos, key=key)
        await asyncio.sleep(0.1)


async def main(url: str, path: str) -> None:
    engine = create_engine(url)
    worker = OutboxWorker(Outbox(session_factory(engine), Clock()), SlowDisk(Path(path)),
                          batch=20, concurrency=4, poll_seconds=0.2)
    print(worker.owner, flush=True)
    while True:
        if not await worker.run_once():
            await asyncio.sleep(0.1)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
