"""The pure rules of the one-click links (web/links.py): what a page says (`Outcome`), the
key a link's use is recorded under, why a review link may not act now, and whether a POST
came from another site.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.requests import Request

from timebot.l10n import N_, _
from timebot.notify.approvals import ApprovalSnapshot
from timebot.secret_key.tokens import ApprovalToken
from timebot.stages import stage_number
from timebot.state.models import UsedLink

STATUS_WORDS = {"a": "approved", "r": "rejected", "s": "waiting for approval", "d": "a draft"}
# The submit link's answers, whole sentences per status (each language agrees them)
YOURS_ALREADY = {"a": N_("Your timesheet for {period} is already approved."),
                 "s": N_("Your timesheet for {period} is already waiting for approval.")}
YOURS_NOW = {"a": N_("Your timesheet for {period} is now approved."),
             "r": N_("Your timesheet for {period} is now rejected."),
             "s": N_("Your timesheet for {period} is now waiting for approval."),
             "d": N_("Your timesheet for {period} is now a draft.")}
ALREADY = {"a": N_("The timesheet is already approved."),
           "r": N_("The timesheet is already rejected."),
           "s": N_("The timesheet is already waiting for approval."),
           "d": N_("The timesheet is already a draft.")}
DECIDED = N_("The timesheet is already decided.")


@dataclass(frozen=True)
class Outcome:
    title: str
    detail: str
    kind: str  # ok, notice, error
    status: int = 200


def no_longer_valid(name: str) -> Outcome:
    """The page of a link whose person may no longer act (archived, or gone)."""
    return Outcome(_("This link is no longer valid"),
                   _("{name} is no longer an active person of the organisation, so this link "
                     "cannot act for them. Nothing was changed.").format(name=name),
                   "error", 403)


def expired_page() -> Outcome:
    return Outcome(_("This link has expired"),
                   _("Links in our e-mails work for a limited time. Nothing was changed; open "
                     "the timesheet in the service, or reply to the e-mail."), "error", 410)


def invalid_page() -> Outcome:
    return Outcome(_("This link is not valid"),
                   _("The link is incomplete or was altered. Nothing was changed; copy the "
                     "whole link from the e-mail."), "error", 400)


def unreachable() -> Outcome:
    return Outcome(_("The time tracking service is unreachable"),
                   _("Nothing was changed. Please try the link again in a moment."), "error", 503)


def review_link_key(token: ApprovalToken) -> str:
    return f"review:{token.event_id}:{token.approver_id}:{token.stage}"


def token_link_key(kind: str, token: str) -> str:
    return f"{kind}:{hashlib.sha256(token.strip().lower().encode()).hexdigest()[:40]}"


def refusal(snapshot: ApprovalSnapshot | None, token: ApprovalToken, approver: str) -> str | None:
    """Pure: why a review link may not act now (the state moved on), or None (in the
    language in force, `timebot.l10n`)."""
    if snapshot is None:
        return _("This timesheet is not known to the service.")
    if snapshot.submit_id != token.event_id:
        return _("This submission was replaced by a later one; a new request was sent for it.")
    if snapshot.status != "s":
        return _(ALREADY.get(snapshot.status or "d", DECIDED))
    if snapshot.stage != token.stage:
        return _("Stage {stage} has already been decided; the timesheet is now at stage "
                 "{now}.").format(stage=stage_number(token.stage),
                                  now=stage_number(snapshot.stage or 0))
    if token.approver_id not in snapshot.pending_ids():
        if approver in snapshot.approved_by.get(token.stage, ()):
            return _("You have already approved this stage.")
        return _("You are not a pending approver of this stage any more.")
    return None


def foreign_origin(request: Request, public_url: str) -> str | None:
    """The Origin of a cross-site request, or None when it is absent, `null`, our public
    URL's origin or the origin the request was sent to."""
    origin = (request.headers.get("origin") or "").strip().rstrip("/")
    if not origin or origin == "null":
        return None
    public = urlsplit(public_url)
    allowed = {f"{public.scheme}://{public.netloc}".lower(),
               f"{request.url.scheme}://{request.url.netloc}".lower()}
    return None if origin.lower() in allowed else origin


def already_page(row: UsedLink) -> Outcome:
    return Outcome(_("This link was already used"),
                   f"{row.outcome} " + _("Nothing changed this time."), "notice")
