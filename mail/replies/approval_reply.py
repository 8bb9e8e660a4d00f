"""An approver's reply to a review request or reminder (`approvals+<token>@`), the handler of
the APPROVAL_REPLY recipient kind. After mail.inbound.process has read the message and the loop
guard let it through, a reply goes through, in order:

1. the reply token: envelope recipients, then To, Cc, Delivered-To, X-Original-To, then our
   Message-IDs in In-Reply-To / References (timebot.secret_key.tokens); an expired one is answered
   "link expired";
2. the sender: the From address must be the token's approver's own (people directory), and
   authenticated (mail.inbound.sender_auth: a trusted Authentication-Results, or our own DKIM
   check). Mail from a sender who did not authenticate is logged and dropped, unanswered (its From
   may be anyone's: no backscatter); an authenticated stranger (someone else's reply address) gets
   one plain refusal without the token, at most one an hour (mail.outbound.receipt_sender). Every
   receipt goes through `Replier.answer`, which withholds it from an unauthenticated sender;
   A reply to a daily digest (its token's purpose is "digest-reply") goes from here to
   mail.replies.digest_reply, which decides the digest's items one by one as below;
3. the decision on the reply's own text (mail.reading.decide);
4. for a decision (a comment needs none), the approval state, read with the integration key:
   the token's submission must still be the current one, its stage the current stage, the
   approver one of its pending approvers (mail.replies.approval_state);
5. the decision applied with the approver's OWN key (approveTimesheet / rejectTimesheet), or
   the text added to the timesheet's Journal (addMessage);
6. a receipt (mail.outbound.receipts), once per reply.

Idempotent: the inbox makes the same message (by Message-ID) one row; for a retry after a crash
between acting and answering, the intent is recorded first (`mail_replies`), and a retry that
finds the approver's decision already in place answers as the first attempt would have.
"""

from __future__ import annotations

from typing import Any

import structlog

from mail.inbound.handling import InboundMail, Replier
from mail.outbound import receipts
from mail.outbound.receipts import TimesheetInfo
from mail.reading.decide import Approve, Comment, Reject, RejectWithoutReason, decide
from mail.replies.approval_state import StateView, after_approval, judge
from mail.replies.digest_reply import process_digest_reply
from mail.replies.reply_records import finish, prior_reply, record_intent
from timebot.errors import AccountInactive, DirectoryError, PermissionRefused, ServiceRequestError
from timebot.l10n.loading import speak_to
from timebot.l10n.settings import LOCALISATION_FIELDS, localisation_of
from timebot.l10n.texts import switch
from timebot.notify.escalation_tick import is_administrator
from timebot.owner_notice import PERSON_FIELDS, person_details
from timebot.secret_key.tokens import (
    REPLY_PURPOSES,
    ApprovalToken,
    PeriodHint,
    Purpose,
    TokenError,
    TokenExpired,
    TokenMissing,
    find_token_candidates,
    period_hint,
    verify_token,
)

log = structlog.get_logger("mail.approval_reply")

MAX_MESSAGE_CHARS = 10_000

# Only what the reply uses: the period, the rejected stage (judge) and the owner (the receipt;
# noted in the directory for the owner's notice that follows a decision).
_EVENT_FIELDS = f"rejectedStage startTime {{ ts }} endTime {{ ts }} person {{ {PERSON_FIELDS} }}"
EVENT_QUERY = (
    f"query ReplyEvent($id: SvcId!) {{ getApprovalEventById(id: $id) {{ {_EVENT_FIELDS} }} }}"
)
# The event with the approver's localisation (the receipt's language), in one request: what a
# reply reads first. An answer with any error or refusal is read again the old way, one read
# each (`_event_and_language`), so that each failure means what it meant alone.
_EVENT_AND_APPROVER = (
    f"getApprovalEventById(id: $id) {{ {_EVENT_FIELDS} }} "
    f"approver: getPerson(id: $me) {{ id {LOCALISATION_FIELDS} }}"
)
EVENT_AND_LANGUAGE_QUERY = (
    f"query ReplyEventAndLanguage($id: SvcId!, $me: SvcId!) {{ {_EVENT_AND_APPROVER} }}"
)
_STATE_FIELD = """getApprovalState(personId: $p, startTime: $s, endTime: $e) {
    status currentStage submitId pendingApprovers { id name }
    stageDetails { type skipped approvedBy { person { id } } pending { id name } }
  }"""
STATE_QUERY = (
    f"query ReplyState($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {{ {_STATE_FIELD} }}"
)
# The first read with the approval state of the period the reply's Message-ID hints at
# (timebot.secret_key.tokens.period_hint): the state is used only when the event read with it
# has that very owner and period, else it is read again as without a hint.
EVENT_LANGUAGE_AND_STATE_QUERY = (
    "query ReplyEventLanguageAndState($id: SvcId!, $me: SvcId!, $p: SvcId!, "
    f"$s: SvcTimestamp!, $e: SvcTimestamp!) {{ {_EVENT_AND_APPROVER} {_STATE_FIELD} }}"
)
APPROVE_MUTATION = (
    "mutation ReplyApprove($id: SvcId!) { approveTimesheet(id: $id) { status stage } }"
)
# An approval with the reply's words, in one request: the approval first (a refused one stops
# the request, its non-null field failing), then the Journal message, each in a savepoint of
# the request's one transaction. Both are in place or neither: a retry never has to look for
# the message.
APPROVE_WITH_MESSAGE_MUTATION = (
    "mutation ReplyApproveWithMessage($id: SvcId!, $c: SvcMessageContent!, "
    "$r: SvcReferenceInput) { approveTimesheet(id: $id) { status stage } "
    "addMessage(content: $c, reference: $r) { id } }"
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


def find_reply_token(mail: InboundMail, secret_key: str, domain: str, now_ms: int
                     ) -> tuple[str, ApprovalToken, Purpose]:
    """The first candidate that verifies (envelope recipients first) as a review's reply token
    or a digest's; raise the first error."""
    envelope = [] if mail.inbound.source == "imap" else [
        ("to", address) for address in mail.inbound.rcpt_tos
    ]
    candidates = find_token_candidates([*envelope, *mail.read.headers], domain)
    first_error: TokenError | None = None
    for candidate in candidates:
        for purpose in REPLY_PURPOSES:
            try:
                verified = verify_token(secret_key, purpose, candidate, now_ms=now_ms)
            except TokenExpired as error:  # genuine: what it was for is known
                first_error = error if not isinstance(first_error, TokenExpired) else first_error
                break
            except TokenError as error:  # tampered under one purpose may be the other's
                first_error = first_error or error
                continue
            return candidate, verified, purpose
    if first_error is not None:
        raise first_error
    raise TokenMissing("the message carries no reply token of ours")


async def process_approval_reply(processor: Replier, mail: InboundMail) -> str:
    runtime, settings = processor.runtime, processor.settings
    # An intent is recorded only while processing this message's one inbox row (the inbox
    # keeps one row per message key, for good): on the row's first attempt there is none.
    prior = await prior_reply(runtime, mail.key) if mail.inbound.attempts > 1 else None
    if prior is not None and prior.outcome is not None:
        return f"already processed: {prior.outcome}"
    try:
        token_text, token, purpose = find_reply_token(
            mail, settings.secret_key, settings.mail_domain, runtime.clock.now_ms()
        )
    except TokenExpired as expired:
        # (answered only to an authenticated sender, like every refusal: Replier.answer)
        return await processor.answer(
            mail, receipts.link_expired(expired.token.expires_at_ms), last=True)
    except (TokenMissing, TokenError) as error:
        # Not a reply to anything of ours (an IMAP mailbox also receives other mail).
        detail = (
            "it carries no reply address" if isinstance(error, TokenMissing)
            else "its reply address is damaged or not ours"
        )
        return await processor.answer(mail, receipts.unknown_link(detail), last=True)

    sender = mail.read.from_address
    try:
        approver = await runtime.directory.find_by_person_id(token.approver_id)
    except DirectoryError:
        return await processor.answer(
            mail, receipts.unknown_link("its approver is unknown"), last=True)
    if sender is None or sender != approver.email.strip().lower():
        # Someone else's reply address: never its token (the Reply-To of a receipt) to them.
        log.info("wrong_sender", id=mail.inbound.id, sender=sender)
        return await processor.answer(
            mail, receipts.wrong_sender(sender or "this sender"), last=True)
    verdict = await processor.authenticate(mail)
    if not verdict.authenticated:
        # The approver's address, but not proven theirs: anyone may have written it, so it is
        # not answered either (that would mail the approver on a stranger's behalf).
        log.info("sender_not_verified", id=mail.inbound.id, sender=sender,
                 reason=_short(verdict.reason))
        return f"sender-not-verified; no receipt: {_short(verdict.reason, 200)}"
    org_id = approver.organisation_id
    integration = await runtime.directory.integration_key(org_id)
    if purpose == "digest-reply":
        await speak_to(runtime.client, integration, approver.person_id)  # the receipt's
        return await process_digest_reply(processor, mail, token_text, token, approver)

    decision = decide(mail.read.text)
    client = runtime.client
    hint = period_hint(mail.read.headers, token_text, settings.mail_domain)
    event, read_state = await _event_and_language(processor, integration, token.event_id,
                                                  approver.person_id, hint)
    if not event:
        return await processor.answer(
            mail, receipts.unknown_link("its timesheet no longer exists"), token=token_text,
            last=True,
        )
    owner = person_details(event["person"])
    runtime.directory.note_details(owner)
    sheet = TimesheetInfo(
        str(event["person"]["name"]), int(event["startTime"]["ts"]), int(event["endTime"]["ts"]),
        owner.time_zone,
    )

    state: StateView | None = None  # read for a decision only: a comment needs none
    if isinstance(decision, Comment):
        if not decision.text.strip():
            return await processor.answer(mail, receipts.empty_reply(sheet), token=token_text,
                                          last=True)
        action, detail = "comment", decision.text.strip()
    else:
        if read_state is None:
            read_state = await processor.reads.execute(
                STATE_QUERY, {"p": owner.person_id, "s": sheet.start_ms, "e": sheet.end_ms},
                apikey=integration,
            )
        state = StateView.parse(read_state["getApprovalState"] or {})
        if isinstance(decision, RejectWithoutReason):
            refusal = judge("reject", token, sheet, state, rejected_stage=None, ours=False)
            return await processor.answer(
                mail, refusal or receipts.reason_missing(sheet), token=token_text, last=True,
            )
        if isinstance(decision, Reject):
            action, detail = "reject", decision.reason.strip()
        else:
            assert isinstance(decision, Approve)
            action, detail = "approve", decision.comment.strip()

    ours = prior is not None and prior.action == action
    if state is not None:
        # An administrator asked because the stage's approvers are away may decide it too.
        override = state.current_stage == token.stage and token.approver_id not in {
            pid for pid, _ in state.pending} and await is_administrator(
            processor.reads, integration, token.approver_id)
        refusal = judge(
            action, token, sheet, state, rejected_stage=event.get("rejectedStage"), ours=ours,
            reason=prior.detail if ours and prior is not None else detail, override=override,
        )
        if refusal is not None:
            return await processor.answer(
                mail, refusal, token=token_text, record=finish(mail.key, refusal.code),
                last=True,
            )

    await record_intent(runtime, mail.key, org_id, token.event_id, token.approver_id,
                        token.stage, action, detail)
    try:
        apikey = await runtime.directory.apikey_for(org_id, token.approver_id)
        reference = {"id": token.event_id, "type": "approvalEvent"}
        if action == "approve":
            assert state is not None
            result = await _approve(client, apikey, token.event_id, reference, detail)
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
        if action != "comment":
            # Someone else decided meanwhile (an administrator asked because the approver was
            # away, and the approver's own late reply): say what happened instead.
            data = await client.execute(
                STATE_QUERY, {"p": owner.person_id, "s": sheet.start_ms, "e": sheet.end_ms},
                apikey=integration)
            now = StateView.parse(data["getApprovalState"] or {})
            outcome = judge(action, token, sheet, now, rejected_stage=None, ours=False,
                            reason=detail) or outcome
    return await processor.answer(
        mail, outcome, token=token_text, record=finish(mail.key, outcome.code), last=True,
    )


async def _event_and_language(
    processor: Replier, integration: str, event_id: str, approver_id: str,
    hint: PeriodHint | None,
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The token's event (None: unreadable), the approver's language made the receipt's
    (`speak_to`), and with a hint that the event bears out, the approval state of its period
    (`{"getApprovalState": …}`; else None: to be read): one read, or, when its answer carries
    any error or refusal, each on its own as before."""
    variables: dict[str, Any] = {"id": event_id, "me": approver_id}
    query = EVENT_AND_LANGUAGE_QUERY
    if hint is not None:
        query = EVENT_LANGUAGE_AND_STATE_QUERY
        variables.update(p=hint.person_id, s=hint.start_ms, e=hint.end_ms)
    answer = await processor.reads.execute_raw(query, variables, apikey=integration)
    data = answer.data or {}
    if not (answer.errors or answer.refused) and data.get("approver"):
        switch(localisation_of(data["approver"]))
        found = data.get("getApprovalEventById")
        if not found:
            return None, None
        state = None
        if hint is not None and _bears_out(found, hint):
            state = {"getApprovalState": data.get("getApprovalState")}
        return dict(found), state
    return await _event_alone(processor, integration, event_id, approver_id), None


def _bears_out(event: dict[str, Any], hint: PeriodHint) -> bool:
    """Whether the event read is of the hinted owner and period."""
    try:
        return (str(event["person"]["id"]) == hint.person_id
                and int(event["startTime"]["ts"]) == hint.start_ms
                and int(event["endTime"]["ts"]) == hint.end_ms)
    except (KeyError, TypeError, ValueError):
        return False


async def _event_alone(processor: Replier, integration: str, event_id: str,
                       approver_id: str) -> dict[str, Any] | None:
    """The event and the approver's language, each read on its own."""
    client = processor.runtime.client
    await speak_to(client, integration, approver_id)
    try:
        found = (await processor.reads.execute(EVENT_QUERY, {"id": event_id},
                                               apikey=integration))["getApprovalEventById"]
    except AccountInactive:
        raise
    except (ServiceRequestError, PermissionRefused):
        return None
    return dict(found) if found else None


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def _approve(client: Any, apikey: str, event_id: str, reference: dict[str, str],
                   text: str) -> dict[str, Any]:
    """approveTimesheet, with the reply's words as a Journal message in the same request when
    there are any: what approveTimesheet answered. The approval refused, the exception of
    `client.execute`; the approval made but the message refused (which cannot undo it),
    logged."""
    if not text:
        data = await client.execute(APPROVE_MUTATION, {"id": event_id}, apikey=apikey)
        return dict(data["approveTimesheet"])
    answer = await client.execute_raw(
        APPROVE_WITH_MESSAGE_MUTATION,
        {"id": event_id, "c": text[:MAX_MESSAGE_CHARS], "r": reference}, apikey=apikey,
    )
    approved = (answer.data or {}).get("approveTimesheet")
    if not approved:
        client.interpret(answer)  # raises what the refusal amounts to
        raise ServiceRequestError(["the service answered no approval"])
    if answer.errors or answer.refused:
        log.warning("reply_message_refused", event=event_id,
                    errors=[str(e.get("message", e)) for e in answer.errors] + answer.refused)
    return dict(approved)


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


