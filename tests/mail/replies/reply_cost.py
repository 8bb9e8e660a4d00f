"""What one approval reply costs, counted deterministically (issue #26), for diagnosis — no
test of the suite (not named test_*): run `pytest tests/mail/replies/reply_cost.py -s`
(REPLY_COST_BACKEND=postgresql for PostgreSQL, REPLY_COST_REPLIES=N replies, default 5).

- test_reply_cost: each reply ("approve", DKIM-signed; as in the bench, one approver Mia
  deciding on Bob's weekly timesheets one after the other) is put in the inbox as the SMTP
  listener puts it there and handled by an inbox worker of the test's own; Python function
  calls (sys.setprofile) and SQL statements (the service's and timebot's state database's)
  are counted in the test's task and in what it schedules (the read batcher's request), not
  in the queue workers and pollers that ran before. (timebot's directory reads again what its
  caches let go of meanwhile: a reply now and then costs more.)
- test_reply_operations_cost: the same of each of the reply's GraphQL operations alone, run
  by the service's executor with the keys the reply uses.

REPLY_COST_STYLE=gmail|outlook|mixed (or several, by commas, in turn) sends the reply as a
mail client writes it (bench.reply_mail: a comment under the decision, a signature, the review
quoted; two parts) instead of the one-line "approve"; the process's CPU ms of each reply's
handling (claim, handler, outcome written) is printed beside, taken on REPLY_COST_REPLIES more
replies not counted (REPLY_COST_PROFILE=<file>: their cProfile).

REPLY_COST_TOP=N prints the N places with the most calls (packages; REPLY_COST_DETAIL=reply or <an
operation's name> names functions instead)."""

from __future__ import annotations

import asyncio
import collections
import contextvars
import cProfile
import os
import statistics
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import httpx
import pytest
from sqlalchemy import event

from bench.reply_mail import ONE_LINE, realistic_reply
from mail.queues.inbox import Inbox, InboxWorker
from mail.replies.approval_reply import APPROVE_MUTATION, EVENT_AND_LANGUAGE_QUERY, STATE_QUERY
from tests.mail.replies.test_reply_commits import KEY, LEASE_MS, _claim
from tests.protocol.reply_helpers import DOMAIN, Sheet, reply, submitted_sheet
from tests.service.test_approvals_support import SUBMIT, WEEK, WEEK_END, add_record
from tests.support import DAY_MS, LiveServer, new_org, start_live_server, stop_live_server
from timebot.secret_key.tokens import PeriodHint, make_token, message_id, reply_address
from timebot.state.models import InboxMessage
from timebot.state.queue import FinishBatch

REPLIES = int(os.environ.get("REPLY_COST_REPLIES", "5"))
HINT = os.environ.get("REPLY_COST_HINT", "1") != "0"
TOP = int(os.environ.get("REPLY_COST_TOP", "0"))
STYLE = os.environ.get("REPLY_COST_STYLE", ONE_LINE)
DETAIL = os.environ.get("REPLY_COST_DETAIL", "")
# Set while a reply is handled: what the handling task schedules inherits it, what ran
# before (pollers, queue workers) does not.
_COUNTED: contextvars.ContextVar[bool] = contextvars.ContextVar("counted", default=False)


class Counts:
    def __init__(self, detail: bool) -> None:
        self.detail = detail
        self.calls: collections.Counter[str] = collections.Counter()
        self.statements: list[str] = []
        self.cpu_s = 0.0

    def statement(self, _conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if _COUNTED.get() and not statement.startswith("BEGIN"):
            self.statements.append(" ".join(statement.split())[:90])

    def call(self, frame: FrameType, what: str, _arg: Any) -> None:
        if what == "call" and _COUNTED.get():
            code = frame.f_code
            area = code.co_filename.split("site-packages/")[-1].split("/reply/")[-1]
            self.calls[f"{area}:{code.co_name}" if self.detail
                       else "/".join(area.split("/")[:2])] += 1


@contextmanager
def counting(live: LiveServer, detail: bool = False) -> Iterator[Counts]:
    counts = Counts(detail)
    engines = {id(e.sync_engine): e.sync_engine for e in (
        live.app.state.runtime.state_engine, live.service.engine, live.service.read_engine)}
    for engine in engines.values():
        event.listen(engine, "before_cursor_execute", counts.statement)
    sys.setprofile(counts.call)
    token = _COUNTED.set(True)
    try:
        yield counts
    finally:
        _COUNTED.reset(token)
        sys.setprofile(None)
        for engine in engines.values():
            event.remove(engine, "before_cursor_execute", counts.statement)


@pytest.fixture(scope="module")
async def live(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LiveServer]:
    root = tmp_path_factory.mktemp("reply-cost")
    (root / "dkim.txt").write_text(f"{KEY.line()}\n")
    server = await start_live_server(
        os.environ.get("REPLY_COST_BACKEND", "sqlite"), root / "data",
        extra_env={"TIMEBOT_MAIL_DOMAIN": DOMAIN,
                   "TIMEBOT_DKIM_TXT_FILE": str(root / "dkim.txt")},
    )
    inbound = server.app.state.mail.wake_inbox.__self__
    for worker in inbound.workers:  # the test's worker alone claims
        await worker.stop()
    try:
        yield server
    finally:
        await stop_live_server(server)


async def _accepted(live: LiveServer, sheet: Sheet, start_ms: int, style: str) -> None:
    """The approver's reply to the review mail, In-Reply-To its Message-ID, which carries
    the timesheet's owner and period (REPLY_COST_HINT=0: an older mail's, without them);
    `style`: bench.reply_mail's (ONE_LINE: "approve" and a short quote)."""
    token = make_token(live.settings.secret_key, "reply", event_id=sheet.event_id,
                       approver_id=sheet.approver.id, stage=0,
                       expires_at_ms=live.clock.now_ms() + DAY_MS)
    hint = PeriodHint(sheet.owner.id, start_ms, start_ms + 7 * DAY_MS) if HINT else None
    in_reply_to = message_id(token, DOMAIN, hint=hint)
    if style == ONE_LINE:
        raw = reply(sheet.approver.email, token, "approve", sign_with=KEY,
                    in_reply_to=in_reply_to)
    else:
        raw = KEY.sign(realistic_reply(
            sender_name="Mia", sender=sheet.approver.email, to=reply_address(token, DOMAIN),
            in_reply_to=in_reply_to, review=None, style=style))
    assert await live.app.state.mail.inbox.accept(
        raw, sheet.approver.email, [reply_address(token, DOMAIN)], "smtp")


async def _one_reply(live: LiveServer, worker: InboxWorker, sheet: Sheet,
                     start_ms: int = WEEK, style: str = ONE_LINE, *, count: bool = True
                     ) -> Counts:
    """One reply accepted and handled; its calls and statements counted (`count`), else the
    process's CPU time of its handling alone (the claim, the handler, the outcome written)."""
    await _accepted(live, sheet, start_ms, style)
    await asyncio.sleep(0.5)  # what the submission set off is done
    with counting(live, DETAIL == "reply") if count else _nothing() as counts, \
            _profiled(not count):
        started = time.process_time()
        [row] = await _claim(live, worker, live.clock.now_ms())
        outcomes = FinishBatch(live.app.state.mail.inbox.sessions, InboxMessage, worker.owner,
                               0.0)
        await worker._handle(row, outcomes)
        await outcomes.flush()
        counts.cpu_s = time.process_time() - started
        _COUNTED.set(False)
        await asyncio.sleep(0.3)  # what the reply scheduled is done
    return counts


@contextmanager
def _nothing() -> Iterator[Counts]:
    yield Counts(False)


_PROFILE = cProfile.Profile() if os.environ.get("REPLY_COST_PROFILE") else None


@contextmanager
def _profiled(timed: bool) -> Iterator[None]:
    """REPLY_COST_PROFILE=<file>: the timed replies' handling profiled into it (cProfile)."""
    if _PROFILE is None or not timed:
        yield
        return
    _PROFILE.enable()
    try:
        yield
    finally:
        _PROFILE.disable()
        _PROFILE.dump_stats(os.environ["REPLY_COST_PROFILE"])


async def _next_sheet(first: Sheet, week: int) -> tuple[Sheet, int]:
    """Bob's timesheet of `week` weeks after the first, submitted."""
    owner = first.owner
    start = WEEK + week * 7 * DAY_MS
    await add_record(owner, owner, day=week * 7 + 1, hours=8)
    submitted = (await owner.gql(SUBMIT, {"p": owner.id, "s": start,
                                          "e": start + 7 * DAY_MS}))["submitTimesheet"]
    return Sheet(first.org, owner, first.approver,
                 submitted["submitId"] or submitted["id"]), start


async def test_reply_cost(live: LiveServer) -> None:
    inbound = live.app.state.mail.wake_inbox.__self__
    inbox: Inbox = live.app.state.mail.inbox
    worker = InboxWorker(inbox, inbound.workers[0].processor, lease_ms=LEASE_MS)
    styles = ["gmail", "outlook"] if STYLE == "mixed" else STYLE.split(",")
    async with httpx.AsyncClient(timeout=30) as http:
        first, _ = await submitted_sheet(await new_org(live, http))
        await _one_reply(live, worker, first, style=styles[0])  # warm: caches, documents, key
        results: list[Counts] = []
        cpu_ms: dict[str, list[float]] = {style: [] for style in styles}
        for week in range(1, 2 * REPLIES + 1):
            sheet, start = await _next_sheet(first, week)
            style = styles[week % len(styles)]
            counted = await _one_reply(live, worker, sheet, start, style, count=week <= REPLIES)
            if week <= REPLIES:
                results.append(counted)
            else:
                cpu_ms[style].append(counted.cpu_s * 1000)
    print(f"\n{STYLE} replies: calls per reply {[sum(r.calls.values()) for r in results]}; "
          f"SQL statements per reply {[len(r.statements) for r in results]}")
    for style, spent in cpu_ms.items():
        print(f"{style}: CPU ms of a reply's handling (uncounted): median "
              f"{statistics.median(spent):.1f} of {sorted(round(ms, 1) for ms in spent)}")
    print("\n".join(results[-1].statements))
    for name, n in results[-1].calls.most_common(TOP):
        print(f"{n:7d} {name}")


async def test_reply_operations_cost(live: LiveServer) -> None:
    service = live.service
    totals: collections.Counter[str] = collections.Counter()
    places: collections.Counter[str] = collections.Counter()
    async with httpx.AsyncClient(timeout=30) as http:
        for round_ in range(REPLIES + 1):  # the first warms
            org = await new_org(live, http)
            sheet, _ = await submitted_sheet(org)
            integration = await live.app.state.runtime.directory.integration_key(org.id)
            runs = [
                ("event+language", EVENT_AND_LANGUAGE_QUERY,
                 {"id": sheet.event_id, "me": sheet.approver.id}, integration),
                ("state", STATE_QUERY, {"p": sheet.owner.id, "s": WEEK, "e": WEEK_END},
                 integration),
                ("approve", APPROVE_MUTATION, {"id": sheet.event_id}, sheet.approver.apikey),
            ]
            for name, document, variables, key in runs:
                await service.executor.documents.prepare(document)
                detail = DETAIL == name
                with counting(live, detail) as counts:
                    response = await service.executor.run(
                        {"query": document, "variables": variables}, key)
                assert "errors" not in response.body, response.body
                if round_:
                    totals[f"{name} calls"] += sum(counts.calls.values())
                    totals[f"{name} statements"] += len(counts.statements)
                    places.update({f"{name} {k}": v for k, v in counts.calls.items()})
    print("\n" + "; ".join(f"{k} {v / REPLIES:.0f}" for k, v in totals.items()))
    for place, n in places.most_common(TOP):
        print(f"{n / REPLIES:7.0f} {place}")
