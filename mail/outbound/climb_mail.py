"""The climbing reminder by e-mail (issue 28): a stage that waited twice the approval-reminder
interval is brought to the approver's people manager (or the administrators). It is not a
review request: it says who has not decided whose timesheet since when (and why, when the
approver is away) and what the reader can do. Only an administrator, who may decide, gets
Approve / Reject links and a reply address; a plain manager gets none.

Mail's channel of `timebot.notify.review_dispatch`'s climbing reminders; queued in the outbox
under the reminder's dedupe key (`climb:…`), once."""

from __future__ import annotations

from html import escape

from mail.outbound.reviews import MailContext, already_queued, build_message, review_links
from mail.outbound.templating import RenderedMail
from timebot import l10n
from timebot.l10n import _, localisation_of
from timebot.notify.approvals import period_label, person_info
from timebot.notify.escalations import ClimbRequest, climb_paragraphs, climb_subject
from timebot.notify.person_notify import EMAIL, gets, person_notify


class ClimbMails:
    """Mail's `timebot.notify.escalations.ClimbChannel`."""

    def __init__(self, ctx: MailContext) -> None:
        self.ctx = ctx

    async def already_sent(self, dedupe_key: str) -> bool:
        return await already_queued(self.ctx.runtime, dedupe_key)

    async def climb_request(self, request: ClimbRequest) -> bool:
        runtime = self.ctx.runtime
        settings = runtime.settings
        key = await runtime.directory.integration_key(request.organisation_id)
        reader = await person_info(runtime.client, key, request.recipient_id)
        if reader is None or not reader.get("email") or reader.get("archived"):
            return False
        if not gets((await person_notify(runtime.client, key, request.recipient_id)).settings,
                    "review", EMAIL):
            return False
        summary = request.summary
        token = None
        with l10n.using(localisation_of(reader)):
            period = period_label(summary.start_ms, summary.end_ms, summary.time_zone)
            said = [_("Hello {name},").format(name=reader["name"]),
                    *climb_paragraphs(request, period)]
            links: list[tuple[str, str]] = []
            if request.may_decide:
                found = review_links(settings, request.submit_id, request.recipient_id,
                                     request.stage, runtime.clock.now_ms())
                token = found.reply_token
                links = [(_("Approve"), found.approve_url), (_("Reject"), found.reject_url)]
                said.append(_("Or reply to this e-mail with \"approve\" or \"reject\"."))
            subject = climb_subject(request, period)
        text = "\n\n".join(said[:-1] if links else said)
        if links:
            text += "\n\n" + "\n".join(f"{label}: {url}" for label, url in links)
            text += "\n\n" + said[-1]
        html = "".join(f"<p>{escape(p)}</p>" for p in (said[:-1] if links else said))
        html += "".join(f'<p><a href="{escape(url)}">{escape(label)}</a></p>'
                        for label, url in links)
        if links:
            html += f"<p>{escape(said[-1])}</p>"
        message = build_message(settings, RenderedMail(subject, text + "\n", html),
                                to=str(reader["email"]), reply_token=token)
        queued: bool = await self.ctx.mail.outbox.enqueue(
            message, kind="review", envelope_from=settings.mail_from,
            dedupe_key=request.dedupe_key)
        if queued:
            self.ctx.mail.outbox_worker.wake()
        return queued
