"""Quick time entry by mail: `time@<mail domain>` (issue 6).

A mail to time@ from a verified sender — the same rules as approval replies: its From is a
person of the service (people directory) and the sending server authenticated it
(mail.inbound.sender_auth, through the processor: mail.inbound.handling.Replier.authenticate) — has
its lines logged, each line on its own (a line may hold several entries separated by `;`), with the
person's own key and in their time zone (the service's person settings, `getPerson
{ localisation }`). Quoted text and signatures are left out (mail.reading.quotes). The receipt lists
each entry created, or why not; it answers in the same thread (In-Reply-To, References, `Re:`
subject, envelope sender <>, Auto-Submitted: auto-replied) and is queued once per mail (outbox
dedupe key).

Refusals (unknown sender, nothing to log) are error receipts: "Nothing changed", at most one
per sender an hour (mail.outbound.receipt_sender), and only to a sender who authenticated
(`Replier.answer`): mail from a sender who did not is logged and dropped, unanswered (its From
may be anyone's). A mail processed twice (a retry after a crash) creates its records once:
each line is remembered under the mail's key. Once the sender is known and authenticated, the
receipt is in their language and formats (`timebot.l10n`); before, in English.
"""

from __future__ import annotations

from email.message import EmailMessage
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import structlog

from mail.inbound.handling import InboundMail, Replier
from mail.outbound.receipt_sender import receipt_dedupe_key
from mail.outbound.receipts import Outcome, Verdict, thread_subject
from mail.queues.outbox import new_message
from mail.reading.message import ReadMessage
from mail.reading.quotes import extract_reply
from mail.replies.time_submit import submit_receipt, submit_request
from timebot.errors import DirectoryError, ServiceClientError, ServiceUnavailable
from timebot.l10n import N_, _, ngettext
from timebot.l10n.loading import speak_to
from timebot.timeentry import LogResult, Memory, QuickTime, Who
from timebot.timeentry.actions import refusal
from timebot.timeentry.gateway import Gateway

log = structlog.get_logger("mail.time_entry")

MAX_LINES = 50
HOW_TO = N_(
    "Write one entry a line, e.g. “2h @acme/website fixing the header” or “1d vacation "
    "friday”, and send it from your own mailbox to {address}."
)
FOOTER = N_("timebot (this is an automatic answer to your e-mail)")


def receipt_body(lines: list[tuple[str, LogResult]], zone: str) -> tuple[str, int, int]:
    """The receipt's text (pure): one paragraph per line of the mail; (text, created, failed)."""
    out: list[str] = []
    created = failed = 0
    for line, result in lines:
        if result.parse_error is not None:
            failed += 1
            out.append(_("Not logged: {entry}").format(entry=line) + "\n  " + _(
                "Not understood: {problem}").format(problem=result.parse_error))
            continue
        for outcome in result.outcomes:
            if outcome.created:
                created += 1
                out.append(outcome.line())
            else:
                failed += 1
                out.append(_("Not logged: {entry}").format(entry=outcome.text.strip())
                           + f"\n  {outcome.problem}")
                for choice in outcome.choices:
                    out.append("  - " + _("did you mean: {entry}").format(entry=choice.text))
    head = ngettext("Logged {n} entry", "Logged {n} entries", created).format(n=created)
    if failed:
        head += ", " + _("{n} not logged").format(n=failed)
    body = [head, "", *out, "", _("(Dates read in your time zone, {zone}.)").format(zone=zone),
            _("Undo in Slack with /time undo, or see your week with /time week."),
            "", "-- ", _(FOOTER)]
    return "\n".join(body) + "\n", created, failed


def compose(read: ReadMessage, text: str, *, to: str, mail_from: str,
            mail_domain: str) -> EmailMessage:
    headers = {"Auto-Submitted": "auto-replied", "X-Auto-Response-Suppress": "All"}
    if read.message_id:
        headers["In-Reply-To"] = read.message_id
        parents = list(read.references) or list(read.in_reply_to[-1:])
        headers["References"] = " ".join([*parents, read.message_id])
    subject = thread_subject(read.subject) or _("your time entries")
    return new_message(mail_from=mail_from, to=to, subject=f"Re: {subject}", text=text,
                       mail_domain=mail_domain, headers=headers)


def _refusal(code: str, why: str, address: str) -> Outcome:
    return Outcome(Verdict.NOTHING_CHANGED, code, why, _(HOW_TO).format(address=address))


async def _speak_to(processor: Replier, organisation_id: str, person_id: str) -> None:
    """The rest of the answer in the sender's language (English when it cannot be read)."""
    runtime = processor.runtime
    try:
        key = await runtime.directory.integration_key(organisation_id)
    except DirectoryError:
        return
    await speak_to(runtime.client, key, person_id)


async def process_time_entry(processor: Replier, mail: InboundMail) -> str:
    runtime, settings = processor.runtime, processor.settings
    address = mail.recipient or f"time@{settings.mail_domain}"
    sender = mail.read.from_address
    if sender is None:
        log.info("no_single_sender", id=mail.inbound.id)
        return "unknown-sender; no receipt: no single From address"
    try:
        person = await runtime.directory.find_by_email(sender)
    except DirectoryError:
        # (answered only to an authenticated sender: Replier.answer)
        return await processor.answer(mail, _refusal(
            "unknown-sender",
            _("{sender} is not the address of a person of the time tracking service, so "
              "nothing was logged.").format(sender=sender), address))
    verdict = await processor.authenticate(mail)
    if not verdict.authenticated:
        log.info("sender_not_verified", id=mail.inbound.id, sender=sender,
                 reason=verdict.reason[:200])
        return f"sender-not-verified; no receipt: {verdict.reason[:200]}"
    await _speak_to(processor, person.organisation_id, person.person_id)
    text = extract_reply(mail.read.text)
    lines = [line.strip() for line in text.splitlines() if line.strip()][:MAX_LINES]
    if not lines and mail.read.subject.strip():
        lines = [thread_subject(mail.read.subject)]
    if not lines:
        return await processor.answer(mail, _refusal(
            "empty", _("Your mail holds no entries, so nothing was logged."), address))
    org_id = person.organisation_id
    apikey = await runtime.directory.apikey_for(org_id, person.person_id)
    try:
        zone_name = await Gateway(runtime.client, apikey, person.person_id).time_zone() or "UTC"
        zone = ZoneInfo(zone_name)
    except ZoneInfoNotFoundError:
        zone = ZoneInfo("UTC")
    except ServiceUnavailable:
        raise  # retried by the inbox worker
    except ServiceClientError as error:
        return await processor.answer(mail, _refusal("refused", refusal(error), address))
    quick = QuickTime(runtime.client, Memory(runtime.state_sessions), runtime.clock.now_ms,
                      runtime.entry_rules)
    who = Who(org_id, person.person_id, apikey, zone)
    last = submit_request(lines)  # `submit [last]`: mail.replies.time_submit
    if last is not None:
        body, created, failed = submit_receipt(await quick.submit(who, last), zone.key), 0, 0
    else:
        results: list[tuple[str, LogResult]] = []
        for index, line in enumerate(lines):
            key = f"mail:{mail.key}"[:180] + f":{index}"
            results.append((line, await quick.log(who, line, source="mail", source_key=key)))
        body, created, failed = receipt_body(results, zone.key)
    message = compose(mail.read, body, to=sender, mail_from=settings.mail_from,
                      mail_domain=settings.mail_domain)
    queued = await processor.mail.outbox.enqueue(
        message, kind="receipt", envelope_from="", rcpt_tos=[sender],
        dedupe_key=receipt_dedupe_key(mail.key),
    )
    if queued:
        processor.mail.outbox_worker.wake_express()
    state = "queued" if queued else "already queued"
    if last is not None:
        return f"submit: {body.splitlines()[0]}; receipt {state}"
    return f"time entries: {created} logged, {failed} not; receipt {state}"
