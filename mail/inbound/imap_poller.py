"""The IMAP poller (aioimaplib): another way into the same durable inbox as SMTP and LMTP.

- IDLE, with a search before and after each IDLE (nothing that arrived in between is missed),
  and a search again when the server announced new mail while the last one ran (below);
- fetch with BODY.PEEK[] so that a message stays unseen until it is processed;
- \\Seen (and, if configured, a move to a folder) only once its inbox row is processed: a
  message whose processing failed stays unseen, visible to a person; and as soon as it is
  processed: a worker of this process that records processed rows ends the IDLE
  (`Inbox.processed`), and while fetched messages wait (processed perhaps by another
  process) the IDLE lasts at most PENDING_CHECK_SECONDS;
- reconnect with backoff when the server goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

import aioimaplib
import structlog
from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from mail.queues.inbox import Inbox, message_key
from timebot.state.db import unit_of_work
from timebot.state.models import ImapMessage, InboxMessage
from timebot.state.queue import DONE

log = structlog.get_logger("mail.imap")

BACKOFF_SECONDS = (1, 2, 5, 10, 30, 60)
PENDING_CHECK_SECONDS = 5.0
_UID = re.compile(rb"UID (\d+)")
_UIDVALIDITY = re.compile(rb"UIDVALIDITY (\d+)")
_EXISTS = re.compile(rb"\* (\d+) EXISTS\b")
_EXPUNGE = re.compile(rb"\* \d+ EXPUNGE\b")


@dataclass(frozen=True)
class ImapSettings:
    host: str
    port: int
    user: str
    password: str
    mailbox: str = "INBOX"
    tls: bool = False
    move_to: str | None = None

    @classmethod
    def parse(cls, url: str) -> ImapSettings:
        """`imap[s]://user:password@host:port/MAILBOX[?processed=FOLDER]`."""
        parts = urlsplit(url)
        if parts.scheme not in ("imap", "imaps") or not parts.hostname or not parts.username:
            raise ValueError("TIMEBOT_IMAP_URL must be imap[s]://user:password@host:port/MAILBOX")
        tls = parts.scheme == "imaps"
        query = parse_qs(parts.query)
        return cls(
            host=parts.hostname,
            port=parts.port or (993 if tls else 143),
            user=unquote(parts.username),
            password=unquote(parts.password or ""),
            mailbox=unquote(parts.path.lstrip("/")) or "INBOX",
            tls=tls,
            move_to=query.get("processed", [None])[0],
        )


class ImapError(Exception):
    pass


def _check(response: aioimaplib.Response, what: str) -> aioimaplib.Response:
    if response.result != "OK":
        raise ImapError(f"{what}: {response.result} {response.lines}")
    return response


class ImapPoller:
    def __init__(
        self,
        settings: ImapSettings,
        inbox: Inbox,
        sessions: async_sessionmaker[AsyncSession],
        on_accepted: Callable[[], None] = lambda: None,
        *,
        idle_seconds: float = 300.0,
    ) -> None:
        self.settings = settings
        self.inbox = inbox
        self.sessions = sessions
        self.on_accepted = on_accepted
        self.idle_seconds = idle_seconds
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._client: aioimaplib.IMAP4 | None = None
        self._uidvalidity = 0
        self._flag_now = asyncio.Event()
        self._pending = 0  # fetched messages not flagged yet
        self._announced = False  # the server said "new mail" since the last search began
        self._exists = 0  # the messages in the mailbox, as the server last said

    def processed(self) -> None:
        """Rows were processed: flag them on the server now, not at the next wake-up."""
        self._flag_now.set()

    async def connect(self) -> aioimaplib.IMAP4:
        settings = self.settings
        client: aioimaplib.IMAP4 = (
            aioimaplib.IMAP4_SSL(host=settings.host, port=settings.port)
            if settings.tls
            else aioimaplib.IMAP4(host=settings.host, port=settings.port)
        )
        self._hear_announcements(client)
        await client.wait_hello_from_server()
        _check(await client.login(settings.user, settings.password), "LOGIN")
        selected = _check(await client.select(settings.mailbox), "SELECT")
        for line in selected.lines:
            found = _UIDVALIDITY.search(bytes(line))
            if found:
                self._uidvalidity = int(found.group(1))
        self._client = client
        return client

    def _hear_announcements(self, client: aioimaplib.IMAP4) -> None:
        """Note each "* N EXISTS" the server sends. Dovecot announces a message that arrived
        while a command ran in that command's answer (a SEARCH that did not see it, a FETCH,
        a STORE), and never again: the IDLE that follows stays silent about it. aioimaplib
        drops such lines (only those of the command's own kind are kept), so they are heard
        where every untagged line passes. Only a count above the last one is new mail: a
        server may repeat the count in any answer."""
        protocol = client.protocol
        untagged = protocol._untagged_response
        self._exists = 0

        def hearing(line: bytes) -> object:
            if found := _EXISTS.match(line):
                self._announced = self._announced or int(found.group(1)) > self._exists
                self._exists = int(found.group(1))
            elif _EXPUNGE.match(line):
                self._exists = max(0, self._exists - 1)
            return untagged(line)

        protocol._untagged_response = hearing

    async def sync(self, client: aioimaplib.IMAP4) -> int:
        """Copy new unseen messages into the inbox, flag the processed ones; returns new ones.
        Searches again while the server announced new mail (EXISTS) in the answer to one of
        these commands: a message that arrived meanwhile, which the IDLE that follows would
        never report."""
        fetched = 0
        while True:
            self._announced = False
            fetched += await self._fetch_unseen(client)
            await self._flag_processed(client)
            if not self._announced:
                return fetched

    async def _fetch_unseen(self, client: aioimaplib.IMAP4) -> int:
        response = _check(await client.uid_search("UNSEEN", charset=None), "UID SEARCH")
        uids = [int(part) for line in response.lines[:1] for part in bytes(line).split()
                if part.isdigit()]
        async with self.sessions() as session:
            known = set(
                await session.scalars(
                    select(ImapMessage.uid).where(
                        ImapMessage.mailbox == self.settings.mailbox,
                        ImapMessage.uidvalidity == self._uidvalidity,
                    )
                )
            )
        new = 0
        for uid in uids:
            if uid in known:
                continue
            raw = await self._fetch(client, uid)
            if raw is None:
                continue
            # Trusted headers as they are: the Authentication-Results in a mailbox were added
            # by the IMAP server's own MTA on delivery (TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS names
            # it); TIMEBOT_MAIL_TRUSTED_NETWORKS is about SMTP/LMTP peers only.
            if await self.inbox.accept(raw, "", [self.settings.user], "imap"):
                new += 1
                self.on_accepted()
            async with unit_of_work(self.sessions) as session:
                session.add(
                    ImapMessage(
                        mailbox=self.settings.mailbox,
                        uidvalidity=self._uidvalidity,
                        uid=uid,
                        message_key=message_key(raw),
                        fetched_ms=self.inbox.clock.now_ms(),
                    )
                )
        return new

    async def _fetch(self, client: aioimaplib.IMAP4, uid: int) -> bytes | None:
        response = _check(await client.uid("fetch", str(uid), "(UID BODY.PEEK[])"), "UID FETCH")
        lines = response.lines
        for index, line in enumerate(lines[:-1]):
            if isinstance(line, bytes | bytearray) and _UID.search(bytes(line)):
                following = lines[index + 1]
                if isinstance(following, bytearray):
                    return bytes(following)
        log.warning("imap_fetch_empty", uid=uid)
        return None

    async def _flag_processed(self, client: aioimaplib.IMAP4) -> int:
        """Flag (or move) the messages processed since; returns how many."""
        async with self.sessions() as session:
            rows = (
                await session.execute(
                    select(ImapMessage.id, ImapMessage.uid)
                    .join(InboxMessage, InboxMessage.message_key == ImapMessage.message_key)
                    .where(
                        ImapMessage.mailbox == self.settings.mailbox,
                        ImapMessage.uidvalidity == self._uidvalidity,
                        InboxMessage.status == DONE,
                    )
                )
            ).all()
        for row_id, uid in rows:
            _check(await client.uid("store", str(uid), "+FLAGS", "(\\Seen)"), "UID STORE")
            if self.settings.move_to:
                _check(await client.uid("move", str(uid), self.settings.move_to), "UID MOVE")
            async with unit_of_work(self.sessions) as session:
                await session.execute(delete(ImapMessage).where(ImapMessage.id == row_id))
        async with self.sessions() as session:
            self._pending = int(await session.scalar(
                select(func.count()).select_from(ImapMessage).where(
                    ImapMessage.mailbox == self.settings.mailbox,
                    ImapMessage.uidvalidity == self._uidvalidity,
                )
            ) or 0)
        return len(rows)

    async def _wait(self, client: aioimaplib.IMAP4) -> None:
        """IDLE until the server reports something, rows were processed here, or (while
        fetched messages wait to be flagged) PENDING_CHECK_SECONDS."""
        idle = await client.idle_start(timeout=self.idle_seconds)
        seconds = PENDING_CHECK_SECONDS if self._pending else self.idle_seconds + 5
        push = asyncio.ensure_future(client.wait_server_push(timeout=seconds))
        processed = asyncio.ensure_future(self._flag_now.wait())
        try:
            await asyncio.wait({push, processed}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in (push, processed):
                waiting.cancel()
            for waiting in (push, processed):
                try:
                    await waiting
                except (asyncio.CancelledError, TimeoutError):
                    pass
        client.idle_done()
        async with asyncio.timeout(30):  # not wait_for: see plumbing.waiting (gh-86296)
            await idle

    async def _session(self) -> None:
        client = await self.connect()
        try:
            while not self._stopping:
                self._flag_now.clear()  # what is processed from now on ends the next IDLE
                await self.sync(client)
                await self._wait(client)
        finally:
            try:
                if client.has_pending_idle():  # else LOGOUT waits for the IDLE to time out
                    client.idle_done()
                async with asyncio.timeout(5):
                    await client.logout()
            except Exception:  # the connection is already gone
                pass

    async def run_forever(self) -> None:
        failures = 0
        while not self._stopping:
            try:
                await self._session()
            except asyncio.CancelledError:
                raise
            except Exception as error:
                delay = BACKOFF_SECONDS[min(failures, len(BACKOFF_SECONDS) - 1)]
                failures += 1
                log.warning("imap_reconnecting", error=str(error), in_seconds=delay)
                await asyncio.sleep(delay)
            else:
                failures = 0

    def start(self) -> None:
        if self._task is None:
            self.inbox.processed_listeners.append(self.processed)
            self._task = asyncio.create_task(self.run_forever(), name="imap-poller")

    async def stop(self) -> None:
        """Cancel the session and wait for its end. A cancellation that a library swallows
        (Python 3.11's wait_for drops one that arrives with its result, gh-86296) is sent
        again, and the loops end at their next turn anyway."""
        if self._task is not None:
            self.inbox.processed_listeners.remove(self.processed)
            self._stopping = True
            task = self._task
            while not task.done():
                task.cancel()
                await asyncio.wait({task}, timeout=1)
            with contextlib.suppress(asyncio.CancelledError):
                task.result()
            self._task = None
            self._stopping = False
