"""`process_message`: the one processing of an inbound message, whichever way it came in (SMTP,
LMTP, IMAP): the InboxWorker's processor.

An approver's reply goes through, in order:

1. read (mail.reading) and the loop guard (mail.loop_guard): auto-replies, bounces, our own
   mail, the null sender — never acted on, never answered;
2. the reply token: envelope recipients, then To, Cc, Delivered-To, X-Original-To, then our
   Message-IDs in In-Reply-To / References (timebot.tokens); an expired one is answered
   "link expired";
3. the sender: the From address must be the token's approver's own (people directory), and
   authenticated (mail.sender_auth: a trusted Authentication-Results, or our own DKIM check);
4. the decision on the reply's own text (mail.decide);
5. the approval state, read with the integration key: the token's submission must still be
   the current one, its stage the current stage, the approver one of its pending approvers;
6. the decision applied with the approver's OWN key (approveTimesheet / rejectTimesheet), or
   the text added to the timesheet's Journal (addMessage);
7. a receipt (mail.receipts), once per reply.

Idempotent: the inbox makes the same message (by Message-ID) one row; for a retry after a crash
between acting and answering, the intent is recorded first (`mail_replies`), and a retry that
finds the approver's decision already in place answers as the first attempt would have.

Mail to other recipient kinds is dispatched through HANDLERS (time@: quick time entry).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from email.utils import getaddresses
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from mail import receipts
from mail.addresses import Recipient, RecipientKind, classify_recipient
from mail.decide import Approve, Comment, Reject, RejectWithoutReason, decide
from mail.errors import DkimKeyFileError
from mail.inbox import InboundMessage
from mail.loop_guard import why_not_act
from mail.parts import MailParts
from mail.reading import ReadMessage, read_message
from mail.receipts import Outcome, ReceiptSender, TimesheetInfo, Verdict, stage_words
from mail.sender_auth import DnsFunc, SenderVerdict, authenticate_sender, txt_file_dnsfunc
from mail.time_entry import process_time_entry
from timebot.errors import (
    AccountInactive,
    DirectoryError,
    PermissionRefused,
    ServiceRequestError,
    ServiceUnavailable,
)
from timebot.read_batching import ReadBatcher
from timebot.state.db import insert_ignoring, unit_of_work
from timebot.state.models import MailReply
from timebot.tokens import (
    ApprovalToken,
    TokenError,
    TokenExpired,
    TokenMissing,
    find_token_candidates,
    verify_token,
)

if TYPE_CHECKING:
    from timebot.runtime import Runtime

log = structlog.get_logger("mail.process")

MAX_MESSAGE_CHARS = 10_000
UNAVAILABLE_PAUSE_SECONDS = 1.0

EVENT_QUERY = """query ReplyEvent($id: SvcId!) {
  getApprovalEventById(id: $id) {
    id status stage rejectedStage comment startTime { ts } endTime { ts }
    person { id name localisation { timeZone { value } } }
  }
}"""
STATE_QUERY = """query ReplyState($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {
  getApprovalState(personId: $p, startTime: $s, endTime: $e) {
    status currentStage submitId pendingApprovers { id name }
    stageDetails { stage type skipped approvedBy { person { id } } pending { id name } }
  }
}"""
APPROVE_MUTATION = (
    "mutation ReplyApprove($id: SvcId!) { approveTimesheet(id: $id) { status stage } }"
)
REJECT_MUTATION = (
    "mutation ReplyReject($id: SvcId!, $st: Int!, $c: String!) "
    "{ rejectTimesheet(id: $id, stage: $st, comment: $c) { id } }"
)
ADD_MESSAGE_MUTATION = (
    "mutation ReplyComment($c: SvcMessageContent!, $r: SvcReferenceInput) "
    "{ addMessage(content: $c, reference: $r) { id } }"
)
MESSAGES_QUERY = (
    "query ReplyMessages($r: SvcReferenceInput!) { getMessages(of: $r) "
    "{ content author { id } } }"
)


# --- the approval state, as read from the service (pure from here to `judge`) --------------


def _time_zone(person: dict[str, Any]) -> str:
    """The person's time zone setting (UTC when unset)."""
    return str(((person.get("localisation") or {}).get("timeZone") or {}).get("value") or "UTC")


@dataclass(frozen=True)
class StageView:
    type: str
    skipped: bool
    approved_by: frozenset[str]
    pending: tuple[tuple[str, str], ...]  # (id, name)


@dataclass(frozen=True)
class StateView:
    status: str  # d s a r
    current_stage: int | None
    submit_id: str | None
    pending: tuple[tuple[str, str], ...]
    stages: tuple[StageView, ...]

    @classmethod
    def parse(cls, data: dict[str, Any]) -> StateView:
        def people(items: Any) -> tuple[tuple[str, str], ...]:
            return tuple((str(p["id"]), str(p.get("name") or "")) for p in items or [] if p)

        stages = tuple(
            StageView(
                type=str(detail.get("type") or ""),
                skipped=bool(detail.get("skipped")),
                approved_by=frozenset(
                    str(given["person"]["id"])
                    for given in detail.get("approvedBy") or []
                    if given and given.get("person")
                ),
                pending=people(detail.get("pending")),
            )
            for detail in data.get("stageDetails") or []
        )
        return cls(
            status=str(data.get("status") or "d"),
            current_stage=data.get("currentStage"),
            submit_id=data.get("submitId"),
            pending=people(data.get("pendingApprovers")),
            stages=stages,
        )

    def where(self, stage: int) -> str:
        kind = self.stages[stage].type if 0 <= stage < len(self.stages) else None
        return stage_words(stage, len(self.stages), kind)

    def waiting(self) -> str:
        return ", ".join(name for _, name in self.pending)

    def last_stage(self) -> int | None:
        active = [index for index, stage in enumerate(self.stages) if not stage.skipped]
        return active[-1] if active else None

    def approved_at(self, stage: int, person_id: str) -> bool:
        return 0 <= stage < len(self.stages) and person_id in self.stages[stage].approved_by


def approved_outcome(sheet: TimesheetInfo, state: StateView, stage: int) -> Outcome:
    """The Approved receipt, from the state after the approval."""
    if state.status == "a":
        return receipts.approved(sheet, state.where(stage), True, None)
    if state.current_stage is not None and state.current_stage != stage:
        waiting = state.waiting()
        nxt = state.where(state.current_stage) + (f" ({waiting})" if waiting else "")
        return receipts.approved(sheet, state.where(stage), False, nxt)
    waiting = state.waiting()
    return receipts.approved(sheet, state.where(stage), False, waiting or None)


def after_approval(
    sheet: TimesheetInfo, before: StateView, stage: int, me: str, status: str, now_at: int
) -> Outcome:
    """The Approved receipt from the state read before the approval and what approveTimesheet
    answered (the submit event's new status and stage): no second read of the state."""
    if status == "a":
        return receipts.approved(sheet, before.where(stage), True, None)
    if now_at != stage and 0 <= now_at < len(before.stages):
        waiting = ", ".join(name for _, name in before.stages[now_at].pending)
        nxt = before.where(now_at) + (f" ({waiting})" if waiting else "")
        return receipts.approved(sheet, before.where(stage), False, nxt)
    waiting = ", ".join(name for person, name in before.pending if person != me)
    return receipts.approved(sheet, before.where(stage), False, waiting or None)


def judge(
    action: str,
    token: ApprovalToken,
    sheet: TimesheetInfo,
    state: StateView,
    *,
    rejected_stage: int | None,
    ours: bool,
    reason: str = "",
) -> Outcome | None:
    """May `action` ("approve" / "reject") of the token's approver go ahead? None: yes. Else the
    receipt's outcome: a refusal, or — when `ours` (this very reply was already being acted on
    and the decision is in place) — the success the first attempt would have answered."""
    me, stage = token.approver_id, token.stage
    if state.submit_id != token.event_id:
        return receipts.superseded(sheet)
    if state.status == "a":
        if action == "approve":
            if ours and state.approved_at(stage, me):
                return approved_outcome(sheet, state, stage)
            return receipts.already_decided(
                sheet, "is already approved",
                "nothing. An administrator or an approver of its last stage can still "
                "reject it.",
            )
        if stage == state.last_stage() and state.approved_at(stage, me):
            return None  # a last-stage approver may still reject an approved timesheet
        return receipts.already_decided(
            sheet, "is already approved",
            "Only an administrator or an approver of its last stage can still reject it.",
        )
    if state.status == "r":
        if action == "reject" and ours and rejected_stage == stage:
            return receipts.rejected(sheet, reason)
        return receipts.already_decided(
            sheet, "has already been rejected",
            f"nothing now; you will get a new review e-mail when {sheet.person_name} "
            "resubmits it.",
        )
    if state.status != "s" or state.current_stage is None:
        return receipts.superseded(sheet)
    current = state.current_stage
    if current > stage:
        if action == "approve" and ours and state.approved_at(stage, me):
            return approved_outcome(sheet, state, stage)
        return receipts.stage_moved_on(sheet, state.where(stage), state.where(current))
    if current < stage:
        return receipts.not_your_turn(sheet, state.where(current), state.waiting())
    pending = {person for person, _ in state.pending}
    if action == "approve":
        if state.approved_at(stage, me):
            if ours:
                return approved_outcome(sheet, state, stage)
            return receipts.already_decided(
                sheet, f"already has your approval at {state.where(stage)}",
                f"nothing; it now waits for {state.waiting() or 'the other approvers'}.",
            )
        if me not in pending:
            return receipts.not_your_turn(sheet, state.where(current), state.waiting())
        return None
    if me not in pending and not state.approved_at(stage, me):
        return receipts.not_your_turn(sheet, state.where(current), state.waiting())
    return None


# --- the message and its dispatch -----------------------------------------------------------


@dataclass(frozen=True)
class InboundMail:
    """One inbound message being processed."""

    inbound: InboundMessage
    read: ReadMessage
    key: str  # the inbox message key (Message-ID, or a hash of the bytes)
    kind: RecipientKind
    recipient: str | None  # the address of that kind it was sent to, when known


Handler = Callable[["MessageProcessor", InboundMail], Awaitable[str]]

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
        self, runtime: Runtime, mail: MailParts,
        handlers: dict[RecipientKind, Handler] | None = None,
    ):
        settings = runtime.settings
        self.runtime = runtime
        self.settings = settings
        self.mail = mail
        self.handlers = dict(handlers or HANDLERS)
        self.receipts = ReceiptSender(
            runtime.state_sessions, mail.outbox, runtime.clock,
            mail_from=settings.mail_from, mail_domain=settings.mail_domain,
            wake=mail.outbox_worker.wake,
        )
        self._dkim = _DkimKeys(settings.dkim_txt_file)
        # The event and state reads of messages processed at once share requests.
        self.reads = ReadBatcher(runtime.client)

    # -- shared by every handler --

    async def authenticate(self, mail: InboundMail) -> SenderVerdict:
        """Is the From address authenticated (trusted Authentication-Results, or DKIM)?

        An answer written at GET /outbox counts as authenticated: that page exists only
        without a relay (a local demo, `make run`), where there is no mail server to vouch
        for anyone and the page is the demo's own mail client. Never trust a header for it."""
        if mail.inbound.source == OUTBOX_SOURCE and not self.settings.smtp_relay:
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
        record: Callable[[AsyncSession], Awaitable[None]] | None = None,
    ) -> str:
        """Queue the receipt (once; error receipts at most hourly per sender)."""
        sent = await self.receipts.send(
            outcome, mail.read, mail.key, token=token, also=record
        )
        return f"{outcome.code}; receipt {sent}"

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
        if refusal is not None:
            log.info("mail_ignored", id=inbound.id, kind=refusal.kind, detail=refusal.detail)
            return f"ignored ({refusal.kind}): {refusal.detail}"
        kind, recipient = recipient_kind(recipients_of(inbound, read, settings.mail_domain))
        mail = InboundMail(inbound, read, inbound.message_key, kind, recipient)
        try:
            outcome = await self.handlers[kind](self, mail)
        except AccountInactive:
            outcome = await self.answer(mail, receipts.account_inactive())
        except ServiceUnavailable:
            # the service is down or not up yet: pause so that retries do not burn out at once
            await asyncio.sleep(UNAVAILABLE_PAUSE_SECONDS)
            raise
        log.info("mail_processed", id=inbound.id, kind=kind.value, outcome=outcome)
        return outcome

    __call__ = process_message


# --- approval replies -----------------------------------------------------------------------


def _find_token(mail: InboundMail, secret_key: str, domain: str, now_ms: int
                ) -> tuple[str, ApprovalToken]:
    """The first candidate that verifies (envelope recipients first); raise the first error."""
    envelope = [] if mail.inbound.source == "imap" else [
        ("to", address) for address in mail.inbound.rcpt_tos
    ]
    candidates = find_token_candidates([*envelope, *mail.read.headers], domain)
    first_error: TokenError | None = None
    for candidate in candidates:
        try:
            return candidate, verify_token(secret_key, "reply", candidate, now_ms=now_ms)
        except TokenError as error:
            first_error = first_error or error
    if first_error is not None:
        raise first_error
    raise TokenMissing("the message carries no reply token of ours")


async def process_approval_reply(processor: MessageProcessor, mail: InboundMail) -> str:
    runtime, settings = processor.runtime, processor.settings
    # An intent is recorded only while processing this message's one inbox row (the inbox
    # keeps one row per message key, for good): on the row's first attempt there is none.
    prior = await _prior(runtime, mail.key) if mail.inbound.attempts > 1 else None
    if prior is not None and prior.outcome is not None:
        return f"already processed: {prior.outcome}"
    try:
        token_text, token = _find_token(
            mail, settings.secret_key, settings.mail_domain, runtime.clock.now_ms()
        )
    except TokenExpired as expired:
        return await processor.answer(mail, receipts.link_expired(expired.token.expires_at_ms))
    except (TokenMissing, TokenError) as error:
        # Not a reply to anything of ours (an IMAP mailbox also receives other mail): answer
        # only a sender whose address is authenticated, never a possibly forged one.
        if not (await processor.authenticate(mail)).authenticated:
            return "ignored: no valid reply token, and the sender is not authenticated"
        detail = (
            "it carries no reply address" if isinstance(error, TokenMissing)
            else "its reply address is damaged or not ours"
        )
        return await processor.answer(mail, receipts.unknown_link(detail))

    sender = mail.read.from_address
    try:
        approver = await runtime.directory.find_by_person_id(token.approver_id)
    except DirectoryError:
        return await processor.answer(mail, receipts.unknown_link("its approver is unknown"))
    if sender is None or sender != approver.email.strip().lower():
        return await processor.answer(
            mail, receipts.wrong_sender(sender or "this sender"), token=token_text
        )
    verdict = await processor.authenticate(mail)
    if not verdict.authenticated:
        log.info("sender_not_verified", id=mail.inbound.id, reason=verdict.reason)
        return await processor.answer(
            mail, receipts.sender_not_verified(sender, _short(verdict.reason)), token=token_text
        )

    decision = decide(mail.read.text)
    org_id = approver.organisation_id
    integration = await runtime.directory.integration_key(org_id)
    client = runtime.client
    try:
        event = (await processor.reads.execute(EVENT_QUERY, {"id": token.event_id},
                                               apikey=integration))["getApprovalEventById"]
    except AccountInactive:
        raise
    except (ServiceRequestError, PermissionRefused):
        event = None
    if not event:
        return await processor.answer(
            mail, receipts.unknown_link("its timesheet no longer exists"), token=token_text
        )
    sheet = TimesheetInfo(
        str(event["person"]["name"]), int(event["startTime"]["ts"]), int(event["endTime"]["ts"]),
        _time_zone(event["person"]),
    )

    data = await processor.reads.execute(
        STATE_QUERY,
        {"p": event["person"]["id"], "s": sheet.start_ms, "e": sheet.end_ms},
        apikey=integration,
    )
    state = StateView.parse(data["getApprovalState"] or {})
    if isinstance(decision, Comment):
        if not decision.text.strip():
            return await processor.answer(mail, receipts.empty_reply(sheet), token=token_text)
        action, detail = "comment", decision.text.strip()
    elif isinstance(decision, RejectWithoutReason):
        refusal = judge("reject", token, sheet, state, rejected_stage=None, ours=False)
        return await processor.answer(
            mail, refusal or receipts.reason_missing(sheet), token=token_text
        )
    elif isinstance(decision, Reject):
        action, detail = "reject", decision.reason.strip()
    else:
        assert isinstance(decision, Approve)
        action, detail = "approve", decision.comment.strip()

    ours = prior is not None and prior.action == action
    if action != "comment":
        refusal = judge(
            action, token, sheet, state, rejected_stage=event.get("rejectedStage"), ours=ours,
            reason=prior.detail if ours and prior is not None else detail,
        )
        if refusal is not None:
            return await processor.answer(
                mail, refusal, token=token_text, record=_finish(mail.key, refusal.code)
            )

    await _record_intent(runtime, mail.key, org_id, token, action, detail)
    try:
        apikey = await runtime.directory.apikey_for(org_id, token.approver_id)
        reference = {"id": token.event_id, "type": "approvalEvent"}
        if action == "approve":
            result = (await client.execute(APPROVE_MUTATION, {"id": token.event_id},
                                           apikey=apikey))["approveTimesheet"]
            if detail:
                await _add_message_once(client, apikey, token.approver_id, reference, detail,
                                        retry=ours)
            outcome = after_approval(sheet, state, token.stage, token.approver_id,
                                     str(result["status"]), int(result["stage"]))
        elif action == "reject":
            await client.execute(
                REJECT_MUTATION, {"id": token.event_id, "st": token.stage, "c": detail},
                apikey=apikey,
            )
            outcome = receipts.rejected(sheet, detail)
        else:
            await _add_message_once(client, apikey, token.approver_id, reference, detail,
                                    retry=prior is not None)
            outcome = receipts.comment_added(sheet)
    except AccountInactive:
        raise
    except (ServiceRequestError, PermissionRefused, DirectoryError) as error:
        outcome = receipts.refused(sheet, str(error))
    return await processor.answer(
        mail, outcome, token=token_text, record=_finish(mail.key, outcome.code)
    )


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def _add_message_once(
    client: Any, apikey: str, author_id: str, reference: dict[str, str], text: str, *,
    retry: bool,
) -> None:
    """addMessage; on a retry, not when the same text by the same author is already there."""
    content = text[:MAX_MESSAGE_CHARS]
    if retry:
        data = await client.execute(MESSAGES_QUERY, {"r": reference}, apikey=apikey)
        for message in data.get("getMessages") or []:
            author = (message or {}).get("author") or {}
            if author.get("id") == author_id and message.get("content") == content:
                return
    await client.execute(ADD_MESSAGE_MUTATION, {"c": content, "r": reference}, apikey=apikey)


async def _prior(runtime: Runtime, key: str) -> MailReply | None:
    async with runtime.state_sessions() as session:
        return await session.get(MailReply, key)


async def _record_intent(
    runtime: Runtime, key: str, org_id: str, token: ApprovalToken, action: str, detail: str
) -> None:
    values = {
        "message_key": key, "organisation_id": org_id, "event_id": token.event_id,
        "approver_id": token.approver_id, "stage": token.stage, "action": action,
        "detail": detail, "created_ms": runtime.clock.now_ms(),
    }
    async with unit_of_work(runtime.state_sessions) as session:
        await session.execute(insert_ignoring(session, MailReply, ("message_key",)), values)


def _finish(key: str, code: str) -> Callable[[AsyncSession], Awaitable[None]]:
    async def record(session: AsyncSession) -> None:
        await session.execute(
            update(MailReply).where(MailReply.message_key == key).values(outcome=code)
        )

    return record


OUTBOX_SOURCE = "outbox"


# --- the dispatch by recipient kind (time@: quick time entry, mail/time_entry.py) ---------


HANDLERS: dict[RecipientKind, Handler] = {
    RecipientKind.APPROVAL_REPLY: process_approval_reply,
    RecipientKind.TIME_ENTRY: process_time_entry,
}
"""The dispatch by recipient kind: one handler per kind of our addresses."""


__all__ = [
    "HANDLERS",
    "InboundMail",
    "MessageProcessor",
    "StateView",
    "Verdict",
    "judge",
    "process_approval_reply",
    "recipient_kind",
    "recipients_of",
]
