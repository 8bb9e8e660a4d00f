"""`process_message`: the one processing of an inbound message, whichever way it came in (SMTP,
LMTP, IMAP): the InboxWorker's processor.

It reads the message (mail.reading.message) and asks the loop guard (mail.inbound.loop_guard): mail
from machines (bounces, auto-replies, list managers, abuse reports, no-reply senders) and our own
mail are never acted on, never answered. Then it hands the message to the handler of its
recipient kind (mail.inbound.handling): the handlers are given to it (mail.inbound_component wires
them: mail.replies.approval_reply for `approvals+<token>@`, mail.replies.time_entry for time@), and
it serves them what every handler needs — the sender's authentication (checked once a message) and
the receipt.

No receipt goes to a sender who did not authenticate (`answer`): the From of such mail may be
anyone's, and answering it would make timebot mail a third party (backscatter). The receipt is
withheld and the message logged (`receipt_withheld`), whatever the handler asked.

An auto-reply sent to a reply address is not answered either, but it is read first (the
`auto_replies` reader it is given, mail.replies.away_notice: an out-of-office reply records that the
approver is away).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from email.utils import getaddresses
from pathlib import Path

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from mail.errors import DkimKeyFileError
from mail.inbound.addresses import Recipient, RecipientKind, classify_recipient
from mail.inbound.handling import AutoReplyReader, Handler, InboundMail
from mail.inbound.loop_guard import why_not_act
from mail.inbound.sender_auth import DnsFunc, SenderVerdict, authenticate_sender, txt_file_dnsfunc
from mail.outbound import receipts
from mail.outbound.receipt_sender import ReceiptSender
from mail.outbound.receipts import Outcome
from mail.queues.inbox import InboundMessage, Processed, mark_processed
from mail.queues.parts import MailParts
from mail.reading.message import ReadMessage, read_message
from timebot import l10n
from timebot.errors import AccountInactive
from timebot.process.runtime import Runtime
from timebot.read_batching import ReadBatcher
from timebot.state.db import unit_of_work

log = structlog.get_logger("mail.process")

OUTBOX_SOURCE = "outbox"
"""The inbox source of answers written at the local outbox page (timebot.outbox_page)."""

_RECIPIENT_HEADERS = ("to", "cc", "delivered-to", "x-original-to")


def recipients_of(inbound: InboundMessage, read: ReadMessage, mail_domain: str) -> list[Recipient]:
    """Our recipients: the envelope's (SMTP, LMTP), else the address headers' (IMAP)."""
    addresses = list(inbound.rcpt_tos) if inbound.source != "imap" else []
    if not addresses:
        values = [value for name, value in read.headers if name.lower() in _RECIPIENT_HEADERS]
        try:
            addresses = [address for _, address in getaddresses(values) if address]
        except Exception:  # a broken header yields nothing
            addresses = []
    found: list[Recipient] = []
    for address in addresses:
        verdict = classify_recipient(address, mail_domain, lambda _token: True)
        if isinstance(verdict, Recipient):
            found.append(verdict)
    return found


def recipient_kind(recipients: list[Recipient]) -> tuple[RecipientKind, str | None]:
    """A reply address wins; else time@; else (an IMAP mailbox of replies) an approval reply
    whose token is looked for in the threading headers."""
    for wanted in (RecipientKind.APPROVAL_REPLY, RecipientKind.TIME_ENTRY):
        for recipient in recipients:
            if recipient.kind is wanted:
                return wanted, recipient.address
    return RecipientKind.APPROVAL_REPLY, None


class _DkimKeys:
    """TIMEBOT_DKIM_TXT_FILE, re-read when it changes (None: DNS)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._mtime: float | None = None
        self._func: DnsFunc | None = None

    def dnsfunc(self) -> DnsFunc | None:
        if self.path is None:
            return None
        mtime = self.path.stat().st_mtime
        if self._func is None or mtime != self._mtime:
            self._func = txt_file_dnsfunc(self.path)
            self._mtime = mtime
        return self._func


class MessageProcessor:
    """Holds what processing needs; `process_message` is the InboxWorker's processor."""

    def __init__(
        self, runtime: Runtime, mail: MailParts, handlers: dict[RecipientKind, Handler],
        auto_replies: AutoReplyReader | None = None,
    ) -> None:
        settings = runtime.settings
        self.runtime = runtime
        self.settings = settings
        self.mail = mail
        self.handlers = dict(handlers)
        self.auto_replies = auto_replies
        self.receipts = ReceiptSender(
            runtime.state_sessions, mail.outbox, runtime.clock,
            mail_from=settings.mail_from, mail_domain=settings.mail_domain,
            wake=mail.outbox_worker.wake_express,
        )
        self._dkim = _DkimKeys(settings.dkim_txt_file)
        # The event and state reads of messages processed at once share requests.
        self.reads = ReadBatcher(runtime.client)
        # The sender's verdict of each message being processed (by id of its InboundMessage;
        # dropped when its processing ends): a handler and `answer` ask once between them.
        self._verdicts: dict[int, SenderVerdict] = {}

    # -- shared by every handler --

    async def authenticate(self, mail: InboundMail) -> SenderVerdict:
        """Is the From address authenticated (trusted Authentication-Results, or DKIM)?
        Checked once a message."""
        known = self._verdicts.get(id(mail.inbound))
        if known is None:
            known = self._verdicts[id(mail.inbound)] = await self._authenticate(mail)
        return known

    async def _authenticate(self, mail: InboundMail) -> SenderVerdict:
        """An answer written at GET /outbox counts as authenticated in the demo alone
        (`--demo` without a relay, `make run`), where there is no mail server to vouch for
        anyone and the page, served only to this machine, is the demo's own mail client.
        Outside the demo the page writes no answer, and one left in the inbox by an earlier
        demo run is mail like any other. Never trust a header for it."""
        if (mail.inbound.source == OUTBOX_SOURCE and self.settings.demo
                and not self.settings.smtp_relay):
            return SenderVerdict(True, "local-outbox", None, "written at the local outbox page")
        try:
            dnsfunc = self._dkim.dnsfunc()
        except (DkimKeyFileError, OSError) as error:
            log.error("dkim_key_file_unreadable", error=str(error))
            return SenderVerdict(False, None, None, "our DKIM key file is unreadable")
        # Authentication-Results count only on mail from our MTA: over SMTP/LMTP from a peer
        # in TIMEBOT_MAIL_TRUSTED_NETWORKS, or fetched over IMAP (see InboundHandler). Mail
        # sent straight to the listener from elsewhere is judged by its DKIM signature alone.
        trusted_ids = self.settings.trusted_authserv_ids if mail.inbound.headers_trusted else ()
        if not mail.inbound.headers_trusted and self.settings.trusted_authserv_ids:
            log.info("authentication_results_ignored", reason="peer outside trusted networks",
                     inbox_id=mail.inbound.id)
        return await asyncio.to_thread(
            authenticate_sender, mail.inbound.raw, mail.read,
            trusted_authserv_ids=trusted_ids, dnsfunc=dnsfunc,
        )

    async def answer(
        self, mail: InboundMail, outcome: Outcome, *, token: str | None = None,
        record: Callable[[AsyncSession], Awaitable[None]] | None = None, last: bool = False,
    ) -> str:
        """Queue the receipt (once; error receipts at most hourly per sender), only to a sender
        who authenticated: otherwise log and drop it (`record` still runs). `last`: the
        handler's last act, so the inbox message is marked processed in the same transaction
        (`mail.queues.inbox.mark_processed`): its receipt and its done mark are one commit."""
        verdict = await self.authenticate(mail)
        now_ms = self.runtime.clock.now_ms()
        done: list[str] = []

        async def processed(session: AsyncSession, text: str) -> None:
            if last and await mark_processed(session, mail.inbound, text, now_ms) is not None:
                done.append(text)

        if not verdict.authenticated:
            log.info("receipt_withheld", id=mail.inbound.id, code=outcome.code,
                     sender=mail.read.from_address, reason=verdict.reason[:200])
            text = f"{outcome.code}; no receipt: the sender is not authenticated"
            if record is not None or last:
                async with unit_of_work(self.runtime.state_sessions) as session:
                    if record is not None:
                        await record(session)
                    await processed(session, text)
            return Processed(text) if done else text

        async def then(session: AsyncSession, sent: str) -> None:
            await processed(session, f"{outcome.code}; receipt {sent}")

        sent = await self.receipts.send(
            outcome, mail.read, mail.key, token=token, also=record, then=then
        )
        text = f"{outcome.code}; receipt {sent}"
        return Processed(text) if done else text

    # -- the entry point --

    async def process_message(self, inbound: InboundMessage) -> str:
        read = read_message(inbound.raw)
        settings = self.settings
        refusal = why_not_act(
            read,
            own_addresses=[settings.mail_from],
            mail_domain=settings.mail_domain,
            envelope_sender=None if inbound.source == "imap" else inbound.mail_from,
        )
        kind, recipient = recipient_kind(recipients_of(inbound, read, settings.mail_domain))
        mail = InboundMail(inbound, read, inbound.message_key, kind, recipient)
        if refusal is not None:
            log.info("mail_ignored", id=inbound.id, kind=refusal.kind, detail=refusal.detail)
            ignored = f"ignored ({refusal.kind}): {refusal.detail}"
            if (refusal.kind == "auto-reply" and kind is RecipientKind.APPROVAL_REPLY
                    and self.auto_replies is not None):
                ignored += f"; {await self.auto_replies(self, mail, refusal)}"
            return ignored
        try:
            # English until the handler knows whom it answers (`l10n.loading.speak_to`)
            with l10n.using(l10n.ENGLISH):
                try:
                    outcome = await self.handlers[kind](self, mail)
                except AccountInactive:
                    outcome = await self.answer(mail, receipts.account_inactive())
        finally:
            self._verdicts.pop(id(inbound), None)
        log.info("mail_processed", id=inbound.id, kind=kind.value, outcome=outcome)
        return outcome

    __call__ = process_message
