"""The scheduler's escalation pass (issue 28): each tick, in each organisation, every timesheet
waiting at a stage is looked at with the facts of absence (timebot.notify.away_facts) and the
pure decisions of timebot.notify.escalations:

- someone away, another approver there: the stage's review requests are dispatched again
  (the review dispatch asks the others with the reason, once: timebot.notify.away_asks), so an
  absence that began after the timesheet was submitted is noticed too;
- nobody there who may decide, the delay passed: each administrator is asked (mail and DM,
  with the reason), once (dedupe key `escalate:<submit>:<stage>:<admin>`), and the Journal of
  the timesheet says so, once (claimed first in timebot's state: `escalation_claims`);
- a stage waiting 2N days with approval reminders every N: the approver's people managers
  (or the administrators) are told, once each (`climb:…`), by the dispatch's climb channels
  (mail.outbound.climb_mail, bot.slack.climb_dm): not a review request; an administrator decides.

Administrators are the holders of the integration person's role: the schema does not say a
role's kind (SvcRole has none; `authorisations` are a role's own additions, and
getGlobalAuthorisations is the caller's), so a second admin-kind role is not found.

What is sent is what the channels hold under those keys: a second tick, a second process or
a restart sends nothing twice. `plans` is also what `timebot reminders preview` shows."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import structlog

from timebot.client import operation
from timebot.events.bus import APPROVAL_UPDATE, ServiceEvent
from timebot.notify.approvals import setting_of, time_zone_of
from timebot.notify.away_asks import QUORUM, AwayReason, away_reason, stage_quorum
from timebot.notify.away_facts import away_facts, away_now
from timebot.notify.decisions import ReviewRequest
from timebot.notify.escalations import (
    DAY_MS,
    Calendar,
    ClimbRequest,
    StageWait,
    climb_due_ms,
    climb_key,
    climb_reason,
    delay_days,
    escalation,
    escalation_key,
    journal_text,
)
from timebot.notify.ground import Ground
from timebot.notify.periods import working_days, zone
from timebot.notify.review_dispatch import ReviewDispatch
from timebot.person_pages import page_query, person_pages
from timebot.state.away import claim_escalation, release_escalation
from timebot.summary import load_summary

log = structlog.get_logger("timebot.notify.escalation_tick")

AWAY, ESCALATION, CLIMB = "away", "escalation", "climbing reminder"
IDLE_S = 300.0

PENDING = operation(
    """query EscalationPending {
      currentPerson { role { id } }
      getPendingApprovals(showAll: true) {
        person { id name } startTime { ts } endTime { ts } status currentStage submitId
        stageDetails { stage approvedBy { ts } pending { id name } }
      }
    }"""
)
SUBMITTED_AT = operation(
    """query EscalationSubmittedAt($id: SvcId!) { getApprovalEventById(id: $id) { ts { ts } } }"""
)
# Administrators hold the integration person's role (read with the pending list): that
# role's people, read by filter.
ADMINS = operation(
    """query EscalationAdmins($role: [SvcPersonFilter]) {
      getPersons(filter: $role) { id name archived role { id } }
    }"""
)
IS_ADMINISTRATOR = operation(
    """query IsAdministrator($id: SvcId!) {
      currentPerson { role { id } }
      getPerson(id: $id) { archived role { id } }
    }"""
)
MANAGERS = operation(
    """query EscalationManagers($id: SvcId!) {
      getPerson(id: $id) { relations { managedBy { value { id name archived } } } }
    }"""
)
DELAY_EXTENSION = operation(
    """query EscalationDelay($id: SvcId!) {
      getPerson(id: $id) { timeSettings { approvalEscalationDelay { value } } }
    }"""
)
REMINDERS = page_query("EscalationReminders",
                       "id timeSettings { approvalReminder { value } }")
OWNER_ZONE = operation(
    """query EscalationOwnerZone($id: SvcId!) {
      getPerson(id: $id) { localisation { timeZone { value } } }
    }"""
)
OWNER_DAYS_EXTENSION = operation(
    """query EscalationOwnerDays($id: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {
      getPerson(id: $id) {
        localisation { timeZone { value } }
        scheduledDays(startTime: $s, endTime: $e) { date { ts } workingDay }
      }
    }"""
)
SCHEDULE_DAYS = 31  # the delay's working days are read this far; beyond: Monday to Friday
JOURNAL = operation(
    """query EscalationJournal($ref: SvcReferenceInput!) { getMessages(of: $ref) { content } }"""
)
ADD_MESSAGE = operation(
    """mutation EscalationNote($c: SvcMessageContent!, $ref: SvcReferenceInput) {
      addMessage(content: $c, reference: $ref) { id }
    }"""
)


@dataclass(frozen=True)
class Plan:
    """Someone to ask about a waiting stage, from `due_ms` on."""

    kind: str  # AWAY (the others are asked: a dispatch), ESCALATION or CLIMB
    wait: StageWait
    entry: dict[str, Any]  # the getPendingApprovals item
    recipients: tuple[tuple[str, str], ...]  # (id, name)
    due_ms: int
    reason: str  # in English house style: the preview's, the Journal's
    about: str  # the approver the plan is about (a climb), "" for an escalation
    about_name: str = ""  # (a climb) that approver's name
    away: AwayReason | None = None  # who is away (a climb: that approver), for each reader
    admins: tuple[tuple[str, str], ...] = ()  # (a climb) the administrators (id, name)


def stage_entered(entry: dict[str, Any]) -> int | None:
    """Pure: the last approval of an earlier stage (None: the stage is the first one reached)."""
    stage = int(entry.get("currentStage") or 0)
    earlier = [int(a["ts"]) for detail in entry.get("stageDetails") or [] if detail
               and int(detail["stage"]) < stage for a in detail.get("approvedBy") or [] if a]
    return max(earlier) if earlier else None


class Escalator:
    def __init__(self, runtime: Ground, reviews: ReviewDispatch) -> None:
        self.runtime = runtime
        self.reviews = reviews
        self._idle: dict[str, float] = {}  # organisation -> monotonic time to look again

    async def _entered(self, key: str, entry: dict[str, Any]) -> int | None:
        found = stage_entered(entry)
        if found is not None:
            return found
        event = (await self.runtime.client.execute(
            SUBMITTED_AT, {"id": entry["submitId"]}, apikey=key)).get("getApprovalEventById") or {}
        return int(event["ts"]["ts"]) if event.get("ts") else None

    async def _admins(self, key: str, role: str | None) -> list[tuple[str, str]]:
        if not role:
            return []
        data = await self.runtime.client.execute(ADMINS, {"role": [{"roleId": role}]},
                                                 apikey=key)
        return [(str(p["id"]), str(p["name"])) for p in data.get("getPersons") or []
                if p and not p.get("archived") and (p.get("role") or {}).get("id") == role]

    async def _managers(self, key: str, person_id: str) -> list[tuple[str, str]]:
        data = await self.runtime.client.execute(MANAGERS, {"id": person_id}, apikey=key,
                                                 allow_partial=True)
        relations = ((data.get("getPerson") or {}).get("relations") or {}).get("managedBy")
        return [(str(r["value"]["id"]), str(r["value"]["name"])) for r in relations or []
                if r and r.get("value") and not r["value"].get("archived")]

    async def _delay(self, key: str, owner_id: str) -> int:
        if not await self.runtime.client.offers(
                "SvcTimeSettings", "approvalEscalationDelay", apikey=key):
            return delay_days(None)
        data = await self.runtime.client.execute(DELAY_EXTENSION, {"id": owner_id}, apikey=key,
                                                 allow_partial=True)
        return delay_days(setting_of(data.get("getPerson") or {}, "approvalEscalationDelay"))

    async def plans(self, organisation_id: str) -> list[Plan]:
        """Everyone to ask about the waiting timesheets of an organisation, due now or later.
        Reads: the waiting timesheets, the facts of absence of all their approvers and the
        owners' reminder settings at once; the rest only for a stage that calls for it."""
        runtime = self.runtime
        key = await runtime.directory.integration_key(organisation_id)
        now_ms = runtime.clock.now_ms()
        answer = await runtime.client.execute(PENDING, apikey=key)
        role = ((answer.get("currentPerson") or {}).get("role") or {}).get("id")
        pending = [entry for entry in answer.get("getPendingApprovals") or []
                   if entry and entry.get("status") == "s" and entry.get("submitId")]
        if not pending:
            return []
        waits = [(entry, _waiting(entry)) for entry in pending]
        approvers = sorted({pid for _, waiting in waits for pid, _ in waiting})
        facts = await away_facts(runtime, key, organisation_id, approvers)
        away = {pid for pid in approvers if any(away_now(a, now_ms) for a in facts[pid])}
        reminders = await self._reminder_days(
            key, [str(entry["person"]["id"]) for entry, _ in waits])
        admins: list[tuple[str, str]] | None = None
        plans: list[Plan] = []
        for entry, waiting in waits:
            owner_id = str(entry["person"]["id"])
            every = reminders.get(owner_id)
            if not waiting or (not every and not away.intersection(p for p, _ in waiting)):
                continue
            entered = await self._entered(key, entry)
            if entered is None:
                continue
            stage = int(entry.get("currentStage") or 0)
            quorum = "any"
            if away.intersection(p for p, _ in waiting):
                owner = (await runtime.client.execute(QUORUM, {"id": owner_id}, apikey=key)
                         ).get("getPerson")
                quorum = stage_quorum(owner, stage) or "any"
            wait = StageWait(str(entry["submitId"]), stage, owner_id,
                             str(entry["person"]["name"]), entered, waiting, quorum)
            if away.intersection(p for p, _ in waiting):
                due = escalation(wait, facts, await self._delay(key, owner_id), now_ms,
                                 await self._working(key, owner_id, entered))
                if due is None:
                    plans.append(Plan(AWAY, wait, entry, (), now_ms, "", ""))
                else:
                    admins = admins if admins is not None else await self._admins(key, role)
                    plans.append(Plan(ESCALATION, wait, entry,
                                      await self._available(key, organisation_id, admins, wait),
                                      due.due_ms, due.reason(), "", away=due.why))
            climb = climb_due_ms(entered, every)
            if climb is None or every is None:
                continue
            admins = admins if admins is not None else await self._admins(key, role)
            for approver_id, name in waiting:
                people = [m for m in await self._managers(key, approver_id)
                          if m[0] not in (approver_id, owner_id)]
                if not people:
                    people = [a for a in admins if a[0] not in (approver_id, owner_id)]
                days = max(2 * every, (now_ms - entered) // DAY_MS)
                plans.append(Plan(CLIMB, wait, entry, tuple(people), climb,
                                  climb_reason(name, int(days), every), approver_id, name,
                                  away_reason(name, facts.get(approver_id, []), now_ms),
                                  tuple(admins)))
        return plans

    async def _working(self, key: str, owner_id: str, entered_ms: int) -> Calendar:
        """The days the delay counts, in the timesheet owner's time zone: the owner's working
        days (holidays included) where the service offers them (the `scheduledDays`
        extension), read from the day the stage began; {} (Monday to Friday) where it does
        not. One request."""
        client = self.runtime.client
        if not await client.offers("SvcPerson", "scheduledDays", apikey=key):
            data = await client.execute(OWNER_ZONE, {"id": owner_id}, apikey=key,
                                        allow_partial=True)
            return Calendar({}, zone(time_zone_of(data.get("getPerson") or {})).key)
        start = entered_ms - entered_ms % DAY_MS - DAY_MS  # holds the local day, any zone
        data = await client.execute(
            OWNER_DAYS_EXTENSION, {"id": owner_id, "s": start, "e": start + SCHEDULE_DAYS * DAY_MS},
            apikey=key, allow_partial=True)
        owner = data.get("getPerson") or {}
        time_zone = zone(time_zone_of(owner)).key  # unknown to this machine: UTC
        return Calendar(working_days(owner.get("scheduledDays") or [], time_zone), time_zone)

    async def _reminder_days(self, key: str, owner_ids: list[str]) -> dict[str, int]:
        """The owners' approvalReminder (days; absent: none), read a page at a time."""
        found: dict[str, int] = {}
        async for page in person_pages(self.runtime.client, key, REMINDERS, owner_ids):
            for person in page:
                days = setting_of(person, "approvalReminder")
                if days:
                    found[str(person["id"])] = days
        return found

    async def _available(self, key: str, organisation_id: str, admins: list[tuple[str, str]],
                         wait: StageWait) -> tuple[tuple[str, str], ...]:
        """The administrators to ask: not the owner, not away (all of them if all are)."""
        candidates = [a for a in admins if a[0] != wait.owner_id]
        now_ms = self.runtime.clock.now_ms()
        facts = await away_facts(self.runtime, key, organisation_id, [a for a, _ in candidates])
        there = [a for a in candidates
                 if not any(away_now(f, now_ms) for f in facts.get(a[0], []))]
        return tuple(there or candidates)

    async def _ask_others(self, organisation_id: str, entry: dict[str, Any],
                          wait: StageWait) -> None:
        """The stage's review requests dispatched again (asks the others, once)."""
        data: dict[str, Any] = {
            "action": "submitted" if wait.stage == 0 else "approved",
            "submitId": wait.submit_id, "person": {"id": wait.owner_id},
            "startTime": int(entry["startTime"]["ts"]), "endTime": int(entry["endTime"]["ts"]),
            "status": "s", "stage": wait.stage,
            "stageCount": len(entry.get("stageDetails") or []) or 1,
            "pendingApprovers": [{"id": pid, "name": name} for pid, name in wait.pending],
            "by": None, "comment": None, "reconciled": True,
        }
        event = ServiceEvent(f"away-tick:{wait.submit_id}:{wait.stage}", APPROVAL_UPDATE,
                             organisation_id, self.runtime.clock.now_ms(), data)
        await self.reviews.handle(event)

    async def tick(self, organisation_id: str) -> int:
        """The scheduler's pass: `run`, except that an organisation where nothing waits for
        anyone away and nothing climbs is looked at again only IDLE_S later (wall clock): an
        absence or a setting that appears meanwhile is noticed within IDLE_S; a known one is
        acted on at the first tick after it is due."""
        if time.monotonic() < self._idle.get(organisation_id, 0.0):
            return 0
        plans = await self.plans(organisation_id)
        if not plans:
            self._idle[organisation_id] = time.monotonic() + IDLE_S
        return await self.run(organisation_id, plans)

    async def run(self, organisation_id: str, plans: list[Plan] | None = None) -> int:
        """Ask whoever is due now (the clock read after the plans: a plan due when it was
        made is due); returns how many requests were queued."""
        plans = plans if plans is not None else await self.plans(organisation_id)
        now_ms = self.runtime.clock.now_ms()
        queued = 0
        for plan in plans:
            if plan.due_ms > now_ms:
                continue
            if plan.kind == AWAY:
                await self._ask_others(organisation_id, plan.entry, plan.wait)
            else:
                queued += await self._send(organisation_id, plan)
        return queued

    async def _send(self, organisation_id: str, plan: Plan) -> int:
        wait, runtime = plan.wait, self.runtime
        keys = {pid: (escalation_key(wait.submit_id, wait.stage, pid) if not plan.about
                      else climb_key(wait.submit_id, wait.stage, plan.about, pid))
                for pid, _ in plan.recipients}
        unsent = self.reviews.climb_unsent if plan.about else self.reviews.unsent
        todo = [pid for pid, _ in plan.recipients if await unsent(keys[pid])]
        if not todo and plan.about:
            return 0
        key = await runtime.directory.integration_key(organisation_id)
        entry = plan.entry
        queued = 0
        if todo:
            summary = await load_summary(runtime.client, key, wait.owner_id,
                                         int(entry["startTime"]["ts"]),
                                         int(entry["endTime"]["ts"]), wait.submit_id)
            stages = len(entry.get("stageDetails") or []) or 1
            if plan.about:
                admin_ids = {a for a, _ in plan.admins}
                queued = await self.reviews.deliver_climbs([ClimbRequest(
                    organisation_id, wait.submit_id, wait.stage, stages, pid, plan.about_name,
                    summary, wait.entered_ms, plan.away, pid in admin_ids,
                    tuple(n for _, n in plan.admins), keys[pid]) for pid in todo])
            else:
                queued = await self.reviews.deliver([ReviewRequest(
                    organisation_id=organisation_id, submit_id=wait.submit_id, timesheet_id="",
                    stage=wait.stage, stage_count=stages, approver_id=pid, summary=summary,
                    dedupe_key=keys[pid], digest=False, reason=plan.away) for pid in todo])
            # Nothing queued (mails turned off, no channel reaches them) recurs each pass.
            (log.info if queued else log.debug)(
                "approval_escalated", kind=plan.kind, submit=wait.submit_id,
                stage=wait.stage, to=todo, queued=queued)
        if not plan.about:
            await self._journal(key, wait, plan)
        return queued

    async def _journal(self, key: str, wait: StageWait, plan: Plan) -> None:
        """The timesheet's Journal says the administrators were asked, once per stage: a
        durable claim in timebot's state first (two processes at once: one wins), then the
        Journal (a claim made before this table existed: the Journal's own text)."""
        runtime = self.runtime
        claim = f"journal:{wait.submit_id}:{wait.stage}"
        if not await claim_escalation(runtime.state_sessions, claim, runtime.clock.now_ms()):
            return
        try:
            ref = {"id": wait.submit_id, "type": "approvalEvent"}
            mark = f"Stage {wait.stage + 1}: timebot asked the administrators"
            messages = (await runtime.client.execute(JOURNAL, {"ref": ref}, apikey=key)
                        ).get("getMessages") or []
            if any(str((m or {}).get("content") or "").startswith(mark) for m in messages):
                return
            text = f"Stage {wait.stage + 1}: " + journal_text(
                plan.reason, [name for _, name in plan.recipients])
            await runtime.client.execute(ADD_MESSAGE, {"c": text, "ref": ref}, apikey=key)
        except BaseException:
            await release_escalation(runtime.state_sessions, claim)
            raise


async def is_administrator(client: Any, key: str, person_id: str) -> bool:
    """Whether the person holds the administrators' role (the integration person's)."""
    data = await client.execute(IS_ADMINISTRATOR, {"id": person_id}, apikey=key,
                                allow_partial=True)
    role = ((data.get("currentPerson") or {}).get("role") or {}).get("id")
    person = data.get("getPerson") or {}
    theirs = (person.get("role") or {}).get("id")
    return role is not None and theirs == role and not person.get("archived")


def _waiting(entry: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """Pure: (id, name) of the pending approvers of the entry's current stage."""
    stage = int(entry.get("currentStage") or 0)
    return tuple((str(p["id"]), str(p["name"])) for d in entry.get("stageDetails") or []
                 if d and int(d["stage"]) == stage for p in d.get("pending") or [] if p)
