"""The IMAP poller against a real Dovecot: messages are copied into the durable inbox with
BODY.PEEK (still unseen), flagged \\Seen only once processed, a failed one stays unseen, and a
message already received over SMTP is not processed twice."""

from __future__ import annotations

import asyncio
import shutil
import time
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
from sqlalchemy import delete

from mail.inbound.imap_poller import ImapPoller, ImapSettings
from mail.queues.inbox import InboundMessage, Inbox, InboxWorker
from plumbing.clock import Clock
from tests.protocol.conftest import StateDB
from tests.protocol.dovecot import PASSWORD, Dovecot, start_dovecot
from timebot.state.models import ImapMessage, InboxMessage

pytestmark = pytest.mark.skipif(shutil.which("dovecot") is None, reason="dovecot is not installed")


@pytest.fixture(scope="module")
def dovecot() -> Iterator[Dovecot]:
    server = start_dovecot()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def inbox(state_db: StateDB) -> AsyncIterator[Inbox]:
    async with state_db.sessions() as session:
        await session.execute(delete(InboxMessage))
        await session.execute(delete(ImapMessage))
        await session.commit()
    yield Inbox(state_db.sessions, Clock())


def mail(subject: str) -> bytes:
    return (
        f"From: ann@example.com\r\nTo: bot@example.com\r\nSubject: {subject}\r\n"
        f"Message-ID: <{uuid.uuid4().hex}@example.com>\r\n\r\n{subject} body\r\n"
    ).encode()


def settings(dovecot: Dovecot, user: str) -> ImapSettings:
    return ImapSettings.parse(f"imap://{user}:{PASSWORD}@127.0.0.1:{dovecot.port}/INBOX")


async def test_flagged_only_after_processing_and_failures_stay_unseen(
    dovecot: Dovecot, inbox: Inbox, state_db: StateDB
) -> None:
    user = f"bot-{uuid.uuid4().hex[:6]}"
    dovecot.deliver(user, mail("good"))
    dovecot.deliver(user, mail("bad"))
    poller = ImapPoller(settings(dovecot, user), inbox, state_db.sessions)
    client = await poller.connect()
    try:
        assert await poller.sync(client) == 2
        assert len(dovecot.unseen(user)) == 2, "fetched with BODY.PEEK: still unseen"

        async def process(message: InboundMessage) -> str:
            if b"bad body" in message.raw:
                raise RuntimeError("cannot process")
            return "ok"

        worker = InboxWorker(inbox, process, max_attempts=1)
        assert await worker.run_once() == 2
        await poller.sync(client)
        unseen = dovecot.unseen(user)
        assert len(unseen) == 1, "the processed message is flagged, the failed one is not"
        statuses = sorted(row.status for row in await inbox.all())
        assert statuses == ["done", "failed"]
        assert await poller.sync(client) == 0, "nothing is fetched twice"
    finally:
        await client.logout()


async def test_a_message_already_received_by_smtp_has_one_effect(
    dovecot: Dovecot, inbox: Inbox, state_db: StateDB
) -> None:
    user = f"bot-{uuid.uuid4().hex[:6]}"
    raw = mail("twice")
    assert await inbox.accept(raw, "ann@example.com", ["approvals@x"], "smtp")
    dovecot.deliver(user, raw)
    poller = ImapPoller(settings(dovecot, user), inbox, state_db.sessions)
    client = await poller.connect()
    try:
        assert await poller.sync(client) == 0
        assert len(await inbox.all()) == 1
    finally:
        await client.logout()


async def test_idle_picks_up_new_mail(
    dovecot: Dovecot, inbox: Inbox, state_db: StateDB
) -> None:
    user = f"bot-{uuid.uuid4().hex[:6]}"
    dovecot.deliver(user, mail("first"))
    arrived = asyncio.Event()
    poller = ImapPoller(settings(dovecot, user), inbox, state_db.sessions, arrived.set,
                        idle_seconds=5)
    poller.start()
    try:
        await asyncio.wait_for(arrived.wait(), timeout=15)
        arrived.clear()
        await asyncio.to_thread(dovecot.deliver, user, mail("second"))
        await asyncio.wait_for(arrived.wait(), timeout=15)
        assert len(await inbox.all()) == 2
    finally:
        await poller.stop()


class ArrivingPoller(ImapPoller):
    """A poller during whose first FETCH another message arrives: Dovecot announces it
    (EXISTS) in the answer to that FETCH, after the search that could have found it."""

    def __init__(self, dovecot: Dovecot, user: str, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.dovecot, self.user, self.arrived = dovecot, user, False

    async def _fetch(self, client: object, uid: int) -> bytes | None:
        if not self.arrived:
            self.arrived = True
            await asyncio.to_thread(self.dovecot.deliver, self.user, mail("meanwhile"))
        return await super()._fetch(client, uid)  # type: ignore[arg-type]


async def test_a_message_that_arrives_during_a_sync_is_fetched_by_it(
    dovecot: Dovecot, inbox: Inbox, state_db: StateDB
) -> None:
    """Nothing is flagged meanwhile: the announcement alone makes the sync search again (an
    IDLE would never report the message, which waited for the next one)."""
    user = f"bot-{uuid.uuid4().hex[:6]}"
    dovecot.deliver(user, mail("first"))
    poller = ArrivingPoller(dovecot, user, settings(dovecot, user), inbox, state_db.sessions)
    client = await poller.connect()
    try:
        assert await poller.sync(client) == 2
        assert sorted(b"meanwhile" in row.raw for row in await inbox.all()) == [False, True]
        assert await poller.sync(client) == 0
        # A count the server repeats is not new mail (a sync would search forever), a higher
        # one is; an expunged message lowers it.
        poller._announced = False
        client.protocol._untagged_response(b"* 2 EXISTS")
        assert not poller._announced
        client.protocol._untagged_response(b"* 2 EXPUNGE")
        client.protocol._untagged_response(b"* 2 EXISTS")
        assert poller._announced
    finally:
        await client.logout()


def unseen_read_only(dovecot: Dovecot, user: str) -> list[bytes]:
    """UNSEEN as a separate client sees it, through EXAMINE (changes nothing on the server)."""
    client = dovecot.client(user)
    try:
        client.select("INBOX", readonly=True)
        _, data = client.uid("search", "UNSEEN")
        return data[0].split() if data and data[0] else []
    finally:
        client.logout()


async def test_a_processed_message_is_seen_at_once_without_new_mail(
    dovecot: Dovecot, inbox: Inbox, state_db: StateDB
) -> None:
    """The poller is in IDLE (300 s) when the worker finishes: the flag does not wait for the
    next mail, a server notice or the IDLE timeout."""
    user = f"bot-{uuid.uuid4().hex[:6]}"
    arrived = asyncio.Event()
    poller = ImapPoller(settings(dovecot, user), inbox, state_db.sessions, arrived.set)
    processed = asyncio.Event()

    async def process(message: InboundMessage) -> str:
        await processed.wait()  # held until the poller is back in IDLE
        return "ok"

    worker = InboxWorker(inbox, process, poll_seconds=0.1)
    poller.start()
    worker.start()
    try:
        await asyncio.to_thread(dovecot.deliver, user, mail("decide"))
        await asyncio.wait_for(arrived.wait(), timeout=15)
        assert len(await asyncio.to_thread(unseen_read_only, dovecot, user)) == 1
        processed.set()
        deadline = time.monotonic() + 15
        while await asyncio.to_thread(unseen_read_only, dovecot, user):
            assert time.monotonic() < deadline, "still unseen after processing"
            await asyncio.sleep(0.1)
        assert [row.status for row in await inbox.all()] == ["done"]
    finally:
        await worker.stop()
        await poller.stop()


def test_imap_url_parse() -> None:
    parsed = ImapSettings.parse("imaps://bot%40x.com:p%40ss@imap.example.com/Approvals?processed=Done")
    assert parsed == ImapSettings("imap.example.com", 993, "bot@x.com", "p@ss", "Approvals", True,
                                  "Done")
    with pytest.raises(ValueError, match="TIMEBOT_IMAP_URL"):
        ImapSettings.parse("http://x")


class SwallowingPoller(ImapPoller):
    """A poller whose sync loses the first cancellation it meets, as Python 3.11's
    `asyncio.wait_for` (used by aioimaplib) does when its result arrives with it (gh-86296)."""

    swallowed = 0

    async def sync(self, client: object) -> int:  # type: ignore[override]
        handled = await super().sync(client)  # type: ignore[arg-type]
        if not self.swallowed:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                self.swallowed += 1
        return handled


async def test_stop_ends_the_poller_even_when_a_cancellation_was_lost(
    dovecot: Dovecot, inbox: Inbox, state_db: StateDB
) -> None:
    """The suite once hung here: stopping a poller whose cancellation was lost waited forever
    while it went on polling."""
    user = f"bot-{uuid.uuid4().hex[:6]}"
    dovecot.deliver(user, mail("first"))
    poller = SwallowingPoller(settings(dovecot, user), inbox, state_db.sessions)
    poller.start()
    for _ in range(300):
        if await inbox.all():
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.1)  # in the swallowing sleep
    stopping = asyncio.create_task(poller.stop())
    done, _ = await asyncio.wait({stopping}, timeout=20)  # a hang's bound, not a pace
    if not done:
        stopping.cancel()
        await asyncio.wait({stopping})
    assert done, "stop() waited for a poller that went on polling"
    assert poller.swallowed == 1
