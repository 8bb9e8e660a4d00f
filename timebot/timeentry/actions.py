"""Quick time entry's use cases, shared by Slack and mail: log, list, edit, delete, undo, week,
submit, status. Each reads the pure decisions (plan, texts), calls the service through the
Gateway as the person, and remembers creations in the bot's database (Memory)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from functools import partial
from zoneinfo import ZoneInfo

from plumbing.periods import NOUNS
from timebot import l10n
from timebot.client import ServiceClient
from timebot.errors import (
    PermissionRefused,
    ServiceClientError,
    ServiceRequestError,
    ServiceUnavailable,
)
from timebot.grammar import ParseError, parse_entry
from timebot.l10n import N_, _
from timebot.summary import summarise
from timebot.timeentry.balances import balance_text, day_bounds, time_off_left
from timebot.timeentry.gateway import Gateway
from timebot.timeentry.memory import Memory
from timebot.timeentry.plan import (
    Catalogue,
    Choice,
    RecordPlan,
    Unresolved,
    plain_words,
    plan_entry,
)
from timebot.timeentry.rules import Rules, RulesCache
from timebot.timeentry.rules import refusal as rules_refusal
from timebot.timeentry.texts import (
    Period,
    entry_text,
    format_listing,
    format_record,
    format_week,
    local_day,
    local_midnight_ms,
    period_status,
    reader,
    sort_recent,
    today_in,
    week_of,
)

UNREACHABLE = N_("The time tracking service could not be reached; nothing was logged. Try "
                 "again.")
LIST_DAYS = 14
LIST_LIMIT = 20


@dataclass(frozen=True)
class Who:
    """The person acting, with their own key, and their zone."""

    organisation_id: str
    person_id: str
    apikey: str
    zone: ZoneInfo


@dataclass(frozen=True)
class Outcome:
    """What became of one entry: created (record_id) or not (problem, maybe choices)."""

    text: str
    plan: RecordPlan | None = None
    record_id: str | None = None
    problem: str | None = None
    choices: tuple[Choice, ...] = ()
    #: for a logged absence: what is left of the person's allowance(s), when they have one
    balance: str = ""

    @property
    def created(self) -> bool:
        return self.record_id is not None

    def line(self) -> str:
        if self.plan is not None and self.record_id is not None:
            note = f" ({self.plan.note})" if self.plan.note else ""
            left = f" — {self.balance}" if self.balance else ""
            return _("Logged: {entry}").format(entry=self.plan.reading) + note + left
        return _("Not logged: {entry} — {problem}").format(entry=self.text.strip(),
                                                           problem=self.problem)


@dataclass(frozen=True)
class LogResult:
    outcomes: tuple[Outcome, ...] = ()
    parse_error: ParseError | None = None

    @property
    def created(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.created]


def refusal(error: ServiceClientError) -> str:
    if isinstance(error, ServiceRequestError):
        return plain_words(error.messages)
    if isinstance(error, PermissionRefused):
        return _("You may not do this (the service refused it).")
    return _("The time tracking service could not be reached ({error}); nothing was "
             "changed.").format(error=error)


class QuickTime:
    def __init__(self, client: ServiceClient, memory: Memory, now_ms: Callable[[], int],
                 rules: RulesCache | None = None) -> None:
        self.client = client
        self.memory = memory
        self.now_ms = now_ms
        # The person's rules of entry and period (read once; None: weeks, the service decides)
        self.rules = rules

    async def _rules(self, who: Who) -> Rules | None:
        if self.rules is None:
            return None
        return await self.rules.rules(who.organisation_id, who.person_id, who.apikey)

    async def show(self, who: Who) -> Callable[[int], str]:
        """How the person's durations are shown: their `durationFormat` where one is set,
        else `2h 30m` (in a reader's own numbers where their language or formats differ
        from the house style)."""
        local = l10n.current()
        if reader() is None:
            rules = await self._rules(who)
            if rules is not None and rules.duration_format is not None:
                local = replace(local, duration_format=rules.duration_format)
        return partial(l10n.format_duration, local=local)

    async def _refused(self, who: Who, plan: RecordPlan, source: str) -> str | None:
        """Why the rules the front knows refuse the entry (None: ask the service)."""
        rules = await self._rules(who)
        if rules is None:
            return None
        return rules_refusal(rules, plan.start_ms, plan.duration_ms, plan.comment, plan.project_ids,
                       self.now_ms(), "/time" if source == "slack" else "")

    def gateway(self, who: Who) -> Gateway:
        return Gateway(self.client, who.apikey, who.person_id)

    async def log(self, who: Who, text: str, *, source: str,
                  source_key: str | None = None) -> LogResult:
        """Parse and log every entry of `text`; each entry is created whole or not at all.

        `source_key`: entry i is remembered as `<source_key>:<i>`, and an entry already
        remembered under that key is not created again (a mail processed twice); with it, an
        unreachable service raises ServiceUnavailable (the mail is retried) instead of
        reporting the entry as not logged."""
        parsed = parse_entry(text, who.zone, today_in(who.zone, self.now_ms()))
        if isinstance(parsed, ParseError):
            return LogResult(parse_error=parsed)
        gateway = self.gateway(who)
        catalogue: Catalogue | None = None
        outcomes: list[Outcome] = []
        for index, entry in enumerate(parsed):
            piece = text[entry.span[0]:entry.span[1]]
            key = f"{source_key}:{index}" if source_key else None
            if key is not None:
                known = await self.memory.by_source_key(key)
                if known is not None:
                    outcomes.append(Outcome(piece, _known_plan(known.reading), known.record_id))
                    continue
            try:
                if catalogue is None:
                    catalogue = await gateway.catalogue()
                plan = plan_entry(entry, catalogue)
                if isinstance(plan, Unresolved):
                    outcomes.append(Outcome(piece, problem=plan.reason, choices=plan.choices))
                    continue
                refused = await self._refused(who, plan, source)
                if refused is not None:
                    outcomes.append(Outcome(piece, problem=refused))
                    continue
                record = await gateway.create(plan)
            except ServiceUnavailable:
                if source_key is not None:
                    raise  # a mail is retried later; what was created is remembered by key
                outcomes.append(Outcome(piece, problem=_(UNREACHABLE)))
                continue
            except ServiceClientError as error:
                outcomes.append(Outcome(piece, problem=refusal(error)))
                continue
            await self.memory.remember(who.organisation_id, who.person_id, record["id"],
                                       plan.reading, source, self.now_ms(), key)
            balance = await self._left(who, plan) if plan.absence_id else ""
            outcomes.append(Outcome(piece, plan, record["id"], balance=balance))
        return LogResult(tuple(outcomes))

    async def _left(self, who: Who, plan: RecordPlan) -> str:
        """What is left of the allowances of the absence just logged ("" without one, or
        when the service cannot say: the entry is logged either way)."""
        start, end = day_bounds(plan.start_ms, self.now_ms(), who.zone)
        try:
            found = await time_off_left(self.client, who.apikey, who.person_id,
                                        [str(plan.absence_id)], start, end)
        except ServiceClientError:
            return ""
        return "; ".join(balance_text(balance, who.zone) for balance in found)

    async def undo(self, who: Who) -> str:
        last = await self.memory.last_creation(who.organisation_id, who.person_id)
        if last is None:
            return _("Nothing to undo: you have not logged anything with /time or by mail.")
        try:
            await self.gateway(who).delete([last.record_id])
        except ServiceRequestError as error:
            if any("time record" in m and "not" in m.lower() for m in error.messages):
                await self.memory.forget_record(last.record_id, self.now_ms())
                return _("Already gone: {entry}").format(entry=last.reading)
            return _("Could not undo {entry}: {why}").format(entry=last.reading,
                                                             why=refusal(error))
        except ServiceClientError as error:
            return _("Could not undo {entry}: {why}").format(entry=last.reading,
                                                             why=refusal(error))
        await self.memory.forget_record(last.record_id, self.now_ms())
        return _("Undone: {entry}").format(entry=last.reading)

    async def recent(self, who: Who) -> tuple[str, list[str]]:
        """The numbered list of the last two weeks' entries, most recent first (remembered
        for edit <n> / delete <n>)."""
        today = today_in(who.zone, self.now_ms())
        start = local_midnight_ms(today - timedelta(days=LIST_DAYS - 1), who.zone)
        end = local_midnight_ms(today + timedelta(days=8), who.zone)
        records = sort_recent(await self.gateway(who).records(start, end))[:LIST_LIMIT]
        ids = [str(r["id"]) for r in records]
        await self.memory.save_listing(who.organisation_id, who.person_id, ids, self.now_ms())
        return format_listing(records, who.zone, await self.show(who)), ids

    async def _numbered(self, who: Who, number: str) -> str | None:
        ids = await self.memory.listing(who.organisation_id, who.person_id)
        if ids is None:
            _, ids = await self.recent(who)
        try:
            n = int(number.strip().lstrip("#"))
        except ValueError:
            return None
        return ids[n - 1] if 1 <= n <= len(ids) else None

    async def delete(self, who: Who, number: str) -> str:
        record_id = await self._numbered(who, number)
        if record_id is None:
            return no_entry(number)
        gateway = self.gateway(who)
        try:
            record = await gateway.record(record_id)
            await gateway.delete([record_id])
        except ServiceClientError as error:
            return _("Entry {n} was not deleted: {why}").format(n=number.strip(),
                                                               why=refusal(error))
        await self.memory.forget_record(record_id, self.now_ms())
        return _("Deleted: {entry}").format(
            entry=format_record(record, who.zone, await self.show(who)))

    async def edit(self, who: Who, number: str, text: str) -> tuple[str, Outcome | None]:
        """Replace entry n (of the list last shown) with what `text` says."""
        record_id = await self._numbered(who, number)
        if record_id is None:
            return no_entry(number), None
        return await self.replace(who, record_id, text, _("entry {n}").format(n=number.strip()))

    async def replace(self, who: Who, record_id: str, text: str, label: str = ""
                      ) -> tuple[str, Outcome | None]:
        """Replace a record with what `text` says (a whole entry, as `/time` reads it): the
        new record is created first, then the old one deleted; if that fails, the new one
        goes again, so the entry is either replaced or untouched."""
        label = label or _("the entry")
        what = label[:1].upper() + label[1:]
        gateway = self.gateway(who)
        try:
            old = await gateway.record(record_id)
        except ServiceClientError as error:
            return _("{what} cannot be edited: {why}").format(what=what, why=refusal(error)), None
        parsed = parse_entry(text, who.zone, today_in(who.zone, self.now_ms()))
        if isinstance(parsed, ParseError):
            return _("Not understood: {problem}").format(problem=parsed), None
        if len(parsed) != 1:
            return _("Edit one entry at a time (no `;`)."), None
        try:
            plan = plan_entry(parsed[0], await gateway.catalogue())
            if isinstance(plan, Unresolved):
                return _("{what} unchanged: {why}").format(what=what, why=plan.reason), Outcome(
                    text, problem=plan.reason, choices=plan.choices)
            new = await gateway.create(plan)
        except ServiceClientError as error:
            return _("{what} unchanged: {why}").format(what=what, why=refusal(error)), None
        try:
            await gateway.delete([record_id])
        except ServiceClientError as error:
            try:
                await gateway.delete([new["id"]])
            except ServiceClientError:
                pass
            return _("{what} unchanged: {why}").format(what=what, why=refusal(error)), None
        await self.memory.replace_record(who.organisation_id, who.person_id, record_id,
                                         new["id"], plan.reading)
        return (_("Changed {what}: {entry}").format(
            what=label, entry=format_record(old, who.zone, await self.show(who)))
                + f"\n→ {plan.reading}"), Outcome(text, plan, new["id"])

    async def undo_record(self, who: Who, record_id: str) -> str:
        """Undo one creation (the Undo button of its confirmation)."""
        gateway = self.gateway(who)
        try:
            record = await gateway.record(record_id)
            await gateway.delete([record_id])
        except ServiceClientError as error:
            return _("Not undone: {why}").format(why=refusal(error))
        await self.memory.forget_record(record_id, self.now_ms())
        return _("Undone: {entry}").format(
            entry=format_record(record, who.zone, await self.show(who)))

    async def reading_of(self, who: Who, record_id: str) -> str:
        """The record in the words of an entry (what an Edit form starts from)."""
        try:
            record = await self.gateway(who).record(record_id)
        except ServiceClientError:
            return ""
        return entry_text(record, who.zone)

    async def period(self, who: Who, last: bool) -> Period:
        """This (or the last) period of the person's `periodicity` (a week when unknown)."""
        rules = await self._rules(who)
        if rules is None:
            return week_of(today_in(who.zone, self.now_ms()), who.zone, 1 if last else 0)
        start, end = rules.period(self.now_ms(), 1 if last else 0)
        first, after = local_day(start, rules.zone), local_day(end - 1, rules.zone)
        return Period(first, start, end, (after - first).days + 1,
                      NOUNS[rules.periodicity])

    async def week(self, who: Who, last: bool = False) -> str:
        period = await self.period(who, last)
        gateway = self.gateway(who)
        try:
            records = await gateway.records(period.start_ms, period.end_ms)
            state = await gateway.approval_state(period.start_ms, period.end_ms)
        except ServiceClientError as error:
            return refusal(error)
        person = {"id": who.person_id, "name": "", "email": "",
                  "localisation": {"timeZone": {"value": who.zone.key}}}
        summary = summarise(person, records, None, period.start_ms, period.end_ms)
        return format_week(summary, period, state, await self.show(who))

    async def submit(self, who: Who, last: bool = False) -> str:
        period = await self.period(who, last)
        try:
            event = await self.gateway(who).submit(period.start_ms, period.end_ms)
        except ServiceClientError as error:
            return _("Not submitted: {why}").format(why=refusal(error))
        if event.get("status") == "a":
            return _("Timesheet for {period} submitted and approved (no approval workflow "
                     "applies).").format(period=period.label)
        return _("Timesheet for {period} submitted for approval.").format(period=period.label)

    async def status(self, who: Who) -> str:
        lines = []
        gateway = self.gateway(who)
        for last in (False, True):
            period = await self.period(who, last)
            try:
                state = await gateway.approval_state(period.start_ms, period.end_ms)
            except ServiceClientError as error:
                return refusal(error)
            lines.append(period_status(period, last, state))
        return "\n".join(lines)


def no_entry(number: str) -> str:
    return _("There is no entry {n} in your list: see `/time list`.").format(n=number.strip())


def _known_plan(reading: str) -> RecordPlan:
    return RecordPlan(0, None, 0, (), None, None, None, False, None, reading)
