"""A reply to a daily digest (`approvals+<digest token>@`): "approve all", "approve 1 3",
"reject 2 <reason>" (mail.reading.decide_digest) decide the items the digest listed, in its
numbering (timebot.state.digests). mail.replies.approval_reply has found the token and checked the
sender (the digest's approver, authenticated) before handing the reply here.

Each item is judged and decided like a reply to its own review e-mail (mail.replies.approval_state
`judge`, then approveTimesheet / rejectTimesheet with the approver's OWN key): an item decided
meanwhile by someone else, moved on, resubmitted or no longer waiting for this approver is
reported, not an error; a refusal of the service is reported with its reason.

One receipt lists every item's outcome. Its first line (shared/contract.md, Mail): `Rejected`
when at least one item was rejected, else `Approved` when at least one was approved, else
`Nothing changed`.

Idempotent like a single reply: the inbox keeps one row per message; an intent is recorded per
item (`mail_replies`, keyed by the message and the item) before it is decided, so a retry after
a crash answers "approved" for what the first attempt already did, and the whole reply's row
records the outcome once its receipt is queued. A second, different reply finds the items
already decided (reported as such).
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass

import structlog

from mail.inbound.handling import InboundMail, Replier
from mail.outbound import receipts
from mail.outbound.receipts import Outcome, TimesheetInfo, Verdict
from mail.reading.decide_digest import ItemPlan, plan_digest, read_digest_reply, reported
from mail.replies.approval_state import StateView, after_approval, judge
from mail.replies.reply_records import finish, prior_reply, record_intent
from timebot.directory.people import DirectoryEntry
from timebot.errors import AccountInactive, DirectoryError, PermissionRefused, ServiceRequestError
from timebot.secret_key.tokens import ApprovalToken
from timebot.state.digests import DigestItem, load_digest

log = structlog.get_logger("mail.digest_reply")

STATE_QUERY = """query DigestReplyState($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {
  getApprovalState(personId: $p, startTime: $s, endTime: $e) {
    status currentStage submitId pendingApprovers { id name }
    stageDetails { type skipped approvedBy { person { id } } pending { id name } }
  }
}"""
REJECTED_STAGE_QUERY = (
    "query DigestReplyEvent($id: SvcId!) { getApprovalEventById(id: $id) { rejectedStage } }"
)
APPROVE_MUTATION = (
    "mutation DigestApprove($id: SvcId!) { approveTimesheet(id: $id) { status stage } }"
)
REJECT_MUTATION = (
    "mutation DigestReject($id: SvcId!, $st: Int!, $c: String!) "
    "{ rejectTimesheet(id: $id, stage: $st, comment: $c) { id } }"
)
HINT = ('reply "approve all", "approve" followed by the numbers ("approve 1 3"), or "reject", '
        'a number and the reason ("reject 2 too many hours")')

# the word an item's line starts with, per outcome code
_LABELS = {
    "approved": "approved",
    "rejected": "rejected",
    "already-decided": "already decided",
    "stage-moved-on": "already decided",
    "not-your-turn": "no longer yours",
    "superseded": "no longer yours",
}


@dataclass(frozen=True)
class ItemResult:
    number: int
    outcome: Outcome


def item_key(message_key: str, number: int) -> str:
    """The `mail_replies` key of one item of a reply (bounded, whatever the Message-ID)."""
    return f"digest:{hashlib.sha256(message_key.encode()).hexdigest()[:48]}#{number}"


def receipt_outcome(results: list[ItemResult], notes: list[str], count: int) -> Outcome:
    """Pure: the one receipt for the whole reply (first line: see the module docstring)."""
    codes = {result.outcome.code for result in results}
    if "rejected" in codes:
        verdict, code = Verdict.REJECTED, "digest-rejected"
    elif "approved" in codes:
        verdict, code = Verdict.APPROVED, "digest-approved"
    else:
        verdict, code = Verdict.NOTHING_CHANGED, "digest-unchanged"
    lines = [f"Your reply to the digest ({count} timesheet{'s' if count != 1 else ''}):", ""]
    for result in results:
        outcome = result.outcome
        label = _LABELS.get(outcome.code, "refused")
        line = f"{result.number}. {label}: {outcome.why}"
        if outcome.code == "rejected" and outcome.reason:
            reason = " ".join(outcome.reason.split())
            line += f" Reason: {reason if len(reason) <= 300 else reason[:299] + '…'}"
        lines.append(line)
    lines.extend(notes)
    todo = "" if verdict is not Verdict.NOTHING_CHANGED else f"To decide, {HINT}."
    return Outcome(verdict, code, "\n".join(lines), todo)


def _notes(plan_unknown: tuple[int, ...], twice: tuple[int, ...], no_reason: tuple[int, ...],
           count: int) -> list[str]:
    named, more = reported(plan_unknown)
    notes = [f"{n}. no such item: the digest listed {count}; nothing done." for n in named]
    if more:
        notes.append(f"… and {more} more numbers the digest did not list.")
    notes += [f"{n}. refused: named by two different decisions; nothing done." for n in twice]
    notes += [f"{n}. refused: a rejection needs a reason; nothing done." for n in no_reason]
    return notes


async def process_digest_reply(
    processor: Replier, mail: InboundMail, token_text: str, token: ApprovalToken,
    approver: DirectoryEntry,
) -> str:
    runtime = processor.runtime
    digest = await load_digest(runtime.state_sessions, token.event_id)
    if digest is None or digest.approver_id != token.approver_id:
        return await processor.answer(
            mail, receipts.unknown_link("its digest is no longer kept"), token=token_text
        )
    count = len(digest.items)
    commands = read_digest_reply(mail.read.text)
    if not commands:
        unclear = Outcome(
            Verdict.NOTHING_CHANGED, "digest-unclear",
            "Your reply did not say which timesheets of the digest to decide, so nothing was "
            "done.", f"To decide, {HINT}.",
        )
        return await processor.answer(mail, unclear, token=token_text)
    plan = plan_digest(commands, count)
    org_id = digest.organisation_id
    await record_intent(runtime, mail.key, org_id, token.event_id, token.approver_id, 0,
                        "digest", "")
    integration = await runtime.directory.integration_key(org_id)
    states = await asyncio.gather(*(
        _read_state(processor, digest.items[entry.number - 1], integration)
        for entry in plan.items
    ))
    results = []
    for entry, state in zip(plan.items, states, strict=True):
        item = digest.items[entry.number - 1]
        outcome = await _decide_item(processor, mail, approver, org_id, integration, entry,
                                     item, state, token.expires_at_ms)
        results.append(ItemResult(entry.number, outcome))
    outcome = receipt_outcome(
        results, _notes(plan.unknown, plan.twice, plan.no_reason, count), count
    )
    log.info("digest_reply", id=mail.inbound.id, items=len(results), code=outcome.code)
    return await processor.answer(mail, outcome, token=token_text,
                                  record=finish(mail.key, outcome.code))


async def _read_state(processor: Replier, item: DigestItem, integration: str) -> StateView:
    """The item's approval state now; a person or period the service no longer has reads as
    nothing waiting (the item is then reported as no longer yours)."""
    try:
        data = await processor.reads.execute(
            STATE_QUERY, {"p": item.person_id, "s": item.start_ms, "e": item.end_ms},
            apikey=integration,
        )
    except AccountInactive:
        raise
    except (ServiceRequestError, PermissionRefused):
        data = {}
    return StateView.parse(data.get("getApprovalState") or {})


async def _decide_item(
    processor: Replier, mail: InboundMail, approver: DirectoryEntry, org_id: str,
    integration: str, entry: ItemPlan, item: DigestItem, state: StateView, expires_ms: int,
) -> Outcome:
    runtime = processor.runtime
    sheet = TimesheetInfo(item.person_name, item.start_ms, item.end_ms, item.time_zone)
    as_token = ApprovalToken(item.submit_id, approver.person_id, item.stage, expires_ms)
    key = item_key(mail.key, entry.number)
    prior = await prior_reply(runtime, key) if mail.inbound.attempts > 1 else None
    ours = prior is not None and prior.action == entry.action
    reason = prior.detail if ours and prior is not None else entry.reason
    rejected_stage = None
    try:
        if ours and state.status == "r":
            event = (await processor.reads.execute(
                REJECTED_STAGE_QUERY, {"id": item.submit_id}, apikey=integration
            )).get("getApprovalEventById") or {}
            rejected_stage = event.get("rejectedStage")
        refusal = judge(entry.action, as_token, sheet, state, rejected_stage=rejected_stage,
                        ours=ours, reason=reason)
        if refusal is not None:
            return refusal
        await record_intent(runtime, key, org_id, item.submit_id, approver.person_id, item.stage,
                      entry.action, entry.reason)
        apikey = await runtime.directory.apikey_for(org_id, approver.person_id)
        if entry.action == "approve":
            result = (await runtime.client.execute(
                APPROVE_MUTATION, {"id": item.submit_id}, apikey=apikey
            ))["approveTimesheet"]
            return after_approval(sheet, state, item.stage, approver.person_id,
                                  str(result["status"]), int(result["stage"]))
        await runtime.client.execute(
            REJECT_MUTATION, {"id": item.submit_id, "st": item.stage, "c": entry.reason},
            apikey=apikey,
        )
        return receipts.rejected(sheet, entry.reason)
    except AccountInactive:
        raise
    except (ServiceRequestError, PermissionRefused, DirectoryError) as error:
        return receipts.refused(sheet, str(error))


