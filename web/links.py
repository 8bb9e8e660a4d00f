"""One-click links from the bot's e-mails, working without signing in (the signed token is
the credential):

- GET /a/<token>: shows what would be decided — whose timesheet, the period, the hours, the
  stage ("stage 1 of 2") — and an Approve button; POST /a/<token>: approves as the approver
  the token names. Mail scanners open every link in a message: a GET never decides.
- GET /r/<token>: the same with a form for the reason; POST /r/<token>: rejects with it.
- GET /s/<token>: the period's summary and a Submit button; POST /s/<token>: submits it as
  its owner ("Submit now" of the reminders: two steps, so that a mail scanner following the
  link submits nothing).
- GET/POST /prefs/<token>: how approval updates arrive (instantly or as a digest).

Links are signed, expire, and are single-use: a review link's use is recorded (one row per
submit event, approver and stage, shared by its Approve and Reject links) *before* acting, so
a second click — or two at once — says what already happened instead of acting again (one
the service refused, nothing changed, is not used). The approval state is checked first: a
stage that moved on, a timesheet decided or replaced, is reported and nothing changes. A
tampered, malformed or expired link shows a clear page and changes nothing. Every action
calls the service with the person's OWN key.

The token in the URL is the capability (a forged page elsewhere cannot know it); a POST whose
Origin names another site is refused all the same (`foreign_origin`). The pages send
`Referrer-Policy: no-referrer`, so the browser's own form posts carry `Origin: null`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from sqlalchemy import delete
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

from plumbing.db import unit_of_work
from timebot.errors import (
    DirectoryError,
    InvalidCredentials,
    PermissionRefused,
    ServiceClientError,
    ServiceRequestError,
    ServiceUnavailable,
)
from timebot.l10n import _, localisation_of, switch
from timebot.l10n.loading import speak_to
from timebot.notify.approvals import (
    MODES,
    ApprovalSnapshot,
    approval_snapshot,
    period_label,
    person_info,
    preference,
    set_preference,
)
from timebot.process.runtime import Runtime
from timebot.secret_key.tokens import (
    ApprovalToken,
    Purpose,
    TokenError,
    TokenExpired,
    unpack_period,
    verify_token,
)
from timebot.stages import stage_label, stage_number
from timebot.state.db import insert_ignoring
from timebot.state.models import UsedLink
from timebot.summary import TimesheetSummary, load_summary
from timebot.templating import Templates
from web.link_operations import ACTIVE, APPROVE, REJECT, STATE, SUBMIT
from web.link_rules import (
    YOURS_ALREADY,
    YOURS_NOW,
    Outcome,
    already_page,
    expired_page,
    foreign_origin,
    invalid_page,
    no_longer_valid,
    refusal,
    review_link_key,
    token_link_key,
    unreachable,
)

log = structlog.get_logger("web.links")

class Links:
    def __init__(self, runtime: Runtime, templates: Templates) -> None:
        self.runtime = runtime
        self.templates = templates

    # --- helpers ----------------------------------------------------------------------------

    def page(self, outcome: Outcome, **context: Any) -> HTMLResponse:
        return HTMLResponse(
            self.templates.page(
                "outcome", title=outcome.title, detail=outcome.detail, kind=outcome.kind,
                **context,
            ),
            status_code=outcome.status,
            headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
        )

    async def speak(self, person_id: str) -> None:
        """Speak the language of the person a genuine link was made for (or English)."""
        try:
            entry = await self.runtime.directory.find_by_person_id(person_id)
            key = await self.runtime.directory.integration_key(entry.organisation_id)
        except DirectoryError:
            return
        await speak_to(self.runtime.client, key, person_id)

    async def verify(self, purpose: Purpose, token: str) -> ApprovalToken | Outcome:
        try:
            return verify_token(
                self.runtime.settings.secret_key, purpose, token, now_ms=self.runtime.clock.now_ms()
            )
        except TokenExpired as expired:  # genuine: its person's language
            await self.speak(expired.token.approver_id)
            return expired_page()
        except TokenError:  # anyone's: English
            return invalid_page()

    async def used(self, link_key: str) -> UsedLink | None:
        async with self.runtime.state_sessions() as session:
            return await session.get(UsedLink, link_key)

    async def claim(self, link_key: str, action: str) -> bool:
        async with unit_of_work(self.runtime.state_sessions) as session:
            result: Any = await session.execute(
                insert_ignoring(session, UsedLink, ("link_key",)),
                {"link_key": link_key, "action": action, "status": "working", "outcome": "",
                 "used_ms": self.runtime.clock.now_ms()},
            )
            return bool(result.rowcount)

    async def finish(self, link_key: str, outcome: str) -> None:
        async with unit_of_work(self.runtime.state_sessions) as session:
            if (row := await session.get(UsedLink, link_key)) is not None:
                row.status, row.outcome = "done", outcome

    async def unclaim(self, link_key: str) -> None:
        async with unit_of_work(self.runtime.state_sessions) as session:
            await session.execute(delete(UsedLink).where(UsedLink.link_key == link_key))

    async def act(
        self, link_key: str, action: str, call: Callable[[], Awaitable[Outcome]]
    ) -> Outcome:
        """Claim the link, run the mutation, record what happened."""
        if not await self.claim(link_key, action):
            row = await self.used(link_key)
            assert row is not None
            return already_page(row)
        try:
            outcome = await call()
        except ServiceUnavailable:
            await self.unclaim(link_key)
            return unreachable()
        except InvalidCredentials:  # the person's key no longer answers (archived since)
            await self.unclaim(link_key)
            return no_longer_valid(_("This person"))
        except (ServiceRequestError, PermissionRefused) as error:
            await self.unclaim(link_key)  # nothing changed: a refused reason can be mended
            return Outcome(_("Nothing changed"),
                           _("The service refused: {error}.").format(error=error), "notice")
        await self.finish(link_key, outcome.detail)
        return outcome

    async def archived(self, key: str, person_id: str) -> bool:
        """Whether the person a link acts for is archived (or gone): their links are void."""
        found = (await self.runtime.client.execute(
            ACTIVE, {"id": person_id}, apikey=key, allow_partial=True)).get("getPerson")
        return not found or bool(found.get("archived"))

    async def review_context(
        self, token: ApprovalToken
    ) -> tuple[str, str, ApprovalSnapshot | None] | Outcome:
        """(organisation id, approver name, current approval state), or the page saying the
        approver may no longer act."""
        entry = await self.runtime.directory.find_by_person_id(token.approver_id)
        key = await self.runtime.directory.integration_key(entry.organisation_id)
        # The page in the approver's language (this request's task only: its own context)
        await speak_to(self.runtime.client, key, token.approver_id)
        if await self.archived(key, token.approver_id):
            return no_longer_valid(entry.name)
        snapshot = await approval_snapshot(self.runtime.client, key, token.event_id)
        return entry.organisation_id, entry.name, snapshot

    async def decision_context(
        self, token: ApprovalToken
    ) -> tuple[str, ApprovalSnapshot, TimesheetSummary, str] | Outcome:
        """(organisation id, approval state, summary, period) of a review link that may act
        now, else the page saying why not (already used, or the state moved on)."""
        row = await self.used(review_link_key(token))
        if row is not None:
            await self.speak(token.approver_id)
            return already_page(row)
        context = await self.review_context(token)
        if isinstance(context, Outcome):
            return context
        organisation_id, name, snapshot = context
        why = refusal(snapshot, token, name)
        if why is not None:
            return Outcome(_("Nothing changed"), why, "notice")
        assert snapshot is not None
        key = await self.runtime.directory.integration_key(organisation_id)
        summary = await load_summary(self.runtime.client, key, snapshot.person_id,
                                     snapshot.start_ms, snapshot.end_ms)
        period = period_label(snapshot.start_ms, snapshot.end_ms, summary.time_zone)
        return organisation_id, snapshot, summary, period

    def form_page(self, name: str, token: ApprovalToken, snapshot: ApprovalSnapshot,
                  summary: TimesheetSummary, period: str, status: int = 200,
                  **context: Any) -> HTMLResponse:
        return HTMLResponse(
            self.templates.page(name, summary=summary, period=period,
                                    stage=stage_label(token.stage, snapshot.stage_count),
                                    **context),
            status_code=status,
            headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
        )

    # --- GET/POST /a/<token> ----------------------------------------------------------------

    async def approve(self, request: Request) -> Response:
        token = await self.verify("approve-link", request.path_params["token"])
        if isinstance(token, Outcome):
            return self.page(token)
        found = await self.decision_context(token)
        if isinstance(found, Outcome):
            return self.page(found)
        organisation_id, snapshot, summary, period = found
        if request.method != "POST":  # show what would be decided; decide nothing
            return self.form_page("approve", token, snapshot, summary, period)
        apikey = await self.runtime.directory.apikey_for(organisation_id, token.approver_id)

        async def call() -> Outcome:
            result = (
                await self.runtime.client.execute(APPROVE, {"id": token.event_id}, apikey=apikey)
            )["approveTimesheet"]
            if result["status"] == "a":
                detail = _("You approved the timesheet of {person} for {period}; it is now "
                           "approved.").format(person=summary.person_name, period=period)
            else:
                detail = _("You approved the timesheet of {person} for {period}; it now waits "
                           "for stage {stage}.").format(person=summary.person_name, period=period,
                                                        stage=stage_number(int(result['stage'])))
            return Outcome(_("Approved"), detail, "ok")

        return self.page(await self.act(review_link_key(token), "approve", call))

    # --- GET/POST /r/<token> ----------------------------------------------------------------

    async def reject(self, request: Request) -> Response:
        token = await self.verify("reject-link", request.path_params["token"])
        if isinstance(token, Outcome):
            return self.page(token)
        found = await self.decision_context(token)
        if isinstance(found, Outcome):
            return self.page(found)
        organisation_id, snapshot, summary, period = found
        reason = ""
        if request.method == "POST":
            form = await request.form()
            reason = str(form.get("reason") or "").strip()
            if reason:
                apikey = await self.runtime.directory.apikey_for(
                    organisation_id, token.approver_id
                )

                async def call() -> Outcome:
                    await self.runtime.client.execute(
                        REJECT, {"id": token.event_id, "stage": token.stage, "comment": reason},
                        apikey=apikey,
                    )
                    return Outcome(
                        _("Rejected"),
                        _("You rejected the timesheet for {period}. {person} was told why: "
                          "{reason}").format(period=period, person=summary.person_name,
                                             reason=reason), "ok")

                return self.page(await self.act(review_link_key(token), "reject", call))
        error = _("A reason is required to reject a timesheet.") if request.method == "POST" \
            else ""
        return self.form_page("reject_form", token, snapshot, summary, period,
                              400 if error else 200, error=error, reason=reason)

    # --- GET/POST /s/<token> ----------------------------------------------------------------

    async def submit(self, request: Request) -> Response:
        raw = request.path_params["token"]
        token = await self.verify("submit-link", raw)
        if isinstance(token, Outcome):
            return self.page(token)
        link_key = token_link_key("submit", raw)
        row = await self.used(link_key)
        if row is not None:
            await self.speak(token.approver_id)
            return self.page(already_page(row))
        start, end = unpack_period(token.event_id)
        entry = await self.runtime.directory.find_by_person_id(token.approver_id)
        key = await self.runtime.directory.integration_key(entry.organisation_id)
        await speak_to(self.runtime.client, key, token.approver_id)  # the owner's language
        if await self.archived(key, token.approver_id):
            return self.page(no_longer_valid(entry.name))
        state = (
            await self.runtime.client.execute(
                STATE, {"p": token.approver_id, "s": start, "e": end}, apikey=key
            )
        ).get("getApprovalState") or {}
        summary = await load_summary(self.runtime.client, key, token.approver_id, start, end)
        period = period_label(start, end, summary.time_zone)
        status = state.get("status") or "d"
        if status in ("s", "a"):
            return self.page(Outcome(
                _("Nothing changed"), _(YOURS_ALREADY[status]).format(period=period), "notice"))
        if request.method != "POST":
            return HTMLResponse(
                self.templates.page("submit", summary=summary, period=period),
                headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
            )
        apikey = await self.runtime.directory.apikey_for(entry.organisation_id, token.approver_id)

        async def call() -> Outcome:
            result = (
                await self.runtime.client.execute(
                    SUBMIT, {"p": token.approver_id, "s": start, "e": end}, apikey=apikey
                )
            )["submitTimesheet"]
            now = _(YOURS_NOW.get(result["status"], YOURS_NOW["s"])).format(period=period)
            return Outcome(_("Submitted"), now, "ok")

        return self.page(await self.act(link_key, "submit", call))

    # --- GET/POST /prefs/<token> ------------------------------------------------------------

    async def prefs(self, request: Request) -> Response:
        token = await self.verify("prefs-link", request.path_params["token"])
        if isinstance(token, Outcome):
            return self.page(token)
        organisation_id, person_id = token.event_id, token.approver_id
        key = await self.runtime.directory.integration_key(organisation_id)
        person = await person_info(self.runtime.client, key, person_id)
        if person is None:
            return self.page(Outcome(_("Unknown person"), _("Nothing was changed."), "error",
                                     404))
        switch(localisation_of(person))  # their language from here on
        saved = False
        if request.method == "POST":
            mode = str((await request.form()).get("mode") or "")
            if mode not in MODES:
                return self.page(Outcome(_("Choose instantly or digest"),
                                         _("Nothing was changed."), "error", 400))
            await set_preference(self.runtime, organisation_id, person_id, mode)
            saved = True
        mode = await preference(self.runtime, organisation_id, person_id)
        return HTMLResponse(
            self.templates.page("prefs", localisation_of(person), person_name=person["name"],
                                mode=mode, saved=saved),
            headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
        )

    def guarded(
        self, handler: Callable[[Request], Awaitable[Response]]
    ) -> Callable[[Request], Awaitable[Response]]:
        """A clear page, not a stack trace, when the service or the directory cannot answer."""

        async def endpoint(request: Request) -> Response:
            origin = foreign_origin(request, self.runtime.settings.public_url)
            if request.method == "POST" and origin is not None:
                log.warning("link_cross_site_post", origin=origin, path=request.url.path)
                return self.page(Outcome(
                    _("Nothing changed"),
                    _("This form was sent from another site ({origin}). Open the link from "
                      "the e-mail and confirm there.").format(origin=origin), "error", 403,
                ))
            try:
                return await handler(request)
            except DirectoryError as error:
                log.warning("link_directory_error", error=str(error))
                return self.page(Outcome(
                    _("timebot cannot act for you"),
                    _("{error}. Link your API key (timebot people link), then follow the link "
                      "again. Nothing was changed.").format(error=error), "error", 403,
                ))
            except ServiceClientError as error:
                log.warning("link_service_error", error=str(error))
                return self.page(unreachable())

        return endpoint

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/a/{token}", self.guarded(self.approve), methods=["GET", "POST"]),
            Route("/r/{token}", self.guarded(self.reject), methods=["GET", "POST"]),
            Route("/s/{token}", self.guarded(self.submit), methods=["GET", "POST"]),
            Route("/prefs/{token}", self.guarded(self.prefs), methods=["GET", "POST"]),
        ]
